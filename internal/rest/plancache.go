package rest

import (
	"net/http"
	"strings"
	"sync"

	"masthead/internal/pg"
)

// readPlan is what parsing, planning and building a read produce, which depends only on the
// request's shape (table, method, query string, Accept, Range and Prefer) and the schema: the
// statements and what answering needs besides their rows. It holds no caller data; who may
// see what is decided by PostgreSQL on every run.
type readPlan struct {
	schema    *Schema
	stmts     []pg.Stmt
	offset    int64
	csvHeader string
}

// planCache keeps the reads planned lately, so a repeated request (a dashboard polling its
// queue, a client paging) skips straight to the database. It is bounded: when full it
// starts over, which costs one planning per shape.
type planCache struct {
	mu    sync.Mutex
	plans map[string]*readPlan
}

// planCacheSize caps the shapes kept; past it the cache empties and fills again.
const planCacheSize = 1024

// planKeyMax is the longest request shape cached; longer ones are planned every time.
const planKeyMax = 4096

// readKey is the request's shape, or "" when it is not worth caching.
func readKey(table string, r *http.Request) string {
	var b strings.Builder
	n := len(table) + len(r.Method) + len(r.URL.RawQuery) + 8
	for _, h := range []string{"Accept", "Range", "Range-Unit", "Prefer", "Accept-Profile"} {
		for _, v := range r.Header.Values(h) {
			n += len(v) + 1
		}
	}
	if n > planKeyMax {
		return ""
	}
	b.Grow(n)
	b.WriteString(r.Method)
	b.WriteByte(0)
	b.WriteString(table)
	b.WriteByte(0)
	b.WriteString(r.URL.RawQuery)
	for _, h := range []string{"Accept", "Range", "Range-Unit", "Prefer", "Accept-Profile"} {
		b.WriteByte(0)
		for _, v := range r.Header.Values(h) {
			b.WriteString(v)
			b.WriteByte(1)
		}
	}
	return b.String()
}

func (c *planCache) get(key string, s *Schema) *readPlan {
	if key == "" {
		return nil
	}
	c.mu.Lock()
	p := c.plans[key]
	c.mu.Unlock()
	if p == nil || p.schema != s {
		return nil
	}
	return p
}

func (c *planCache) put(key string, p *readPlan) {
	if key == "" {
		return
	}
	c.mu.Lock()
	if c.plans == nil || len(c.plans) >= planCacheSize {
		c.plans = make(map[string]*readPlan, 64)
	}
	c.plans[key] = p
	c.mu.Unlock()
}
