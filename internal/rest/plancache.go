package rest

import (
	"net/http"
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
	plans map[planKey]*readPlan
}

// planCacheSize caps the shapes kept; past it the cache empties and fills again.
const planCacheSize = 1024

// planKeyMax is the longest request shape cached; longer ones are planned every time.
const planKeyMax = 4096

// planKey is a read's shape: what its plan depends on besides the schema. The strings are the
// request's own (no key is built per request); a header given more than once makes a request
// that is not cached.
type planKey struct {
	method, table, query                    string
	accept, rng, rangeUnit, prefer, profile string
}

// readKey is the request's shape, and false when it is not worth caching.
func readKey(table string, r *http.Request) (planKey, bool) {
	k := planKey{method: r.Method, table: table, query: r.URL.RawQuery}
	n := len(k.method) + len(k.table) + len(k.query)
	for _, f := range [...]struct {
		name string
		dst  *string
	}{{"Accept", &k.accept}, {"Range", &k.rng}, {"Range-Unit", &k.rangeUnit}, {"Prefer", &k.prefer}, {"Accept-Profile", &k.profile}} {
		switch v := r.Header[f.name]; len(v) {
		case 0:
		case 1:
			*f.dst = v[0]
			n += len(v[0])
		default:
			return planKey{}, false
		}
	}
	if n > planKeyMax {
		return planKey{}, false
	}
	return k, true
}

func (c *planCache) get(key planKey, s *Schema) *readPlan {
	c.mu.Lock()
	p := c.plans[key]
	c.mu.Unlock()
	if p == nil || p.schema != s {
		return nil
	}
	return p
}

func (c *planCache) put(key planKey, p *readPlan) {
	c.mu.Lock()
	if c.plans == nil || len(c.plans) >= planCacheSize {
		c.plans = make(map[planKey]*readPlan, 64)
	}
	c.plans[key] = p
	c.mu.Unlock()
}
