package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"masthead/internal/pg"
)

// shares keeps one caller from holding more than a fair share of the database pool: each caller
// (a signed-in user, or an anonymous client address) may run at most per requests against the
// database at once. One more waits up to wait for a slot of its own, then is refused with 503
// PGRST003, while every other caller still finds connections free. Without it, one viewer's
// eight expensive reads take every pooled connection and another tenant's small read fails.
type shares struct {
	per  int
	wait time.Duration

	mu    sync.Mutex
	slots map[string]*share
}

type share struct {
	sem   chan struct{}
	users int // requests holding or waiting for a slot
}

// idleShares is how many callers' entries may stay in the map at zero users. An entry outlives
// its last request so that a caller's next one (a client reading again) finds it instead of
// allocating a share and its semaphore channel anew; past the bound, entries at zero go.
const idleShares = 4096

func newShares(per int, wait time.Duration) *shares {
	return &shares{per: per, wait: wait, slots: map[string]*share{}}
}

// take waits for a slot of key's share and returns its release, or PGRST003 naming the limit.
func (s *shares) take(ctx context.Context, key string) (func(), error) {
	s.mu.Lock()
	sh := s.slots[key]
	if sh == nil {
		if len(s.slots) >= idleShares {
			for k, v := range s.slots {
				if v.users == 0 {
					delete(s.slots, k)
				}
			}
		}
		sh = &share{sem: make(chan struct{}, s.per)}
		s.slots[key] = sh
	}
	sh.users++
	s.mu.Unlock()
	leave := func() {
		s.mu.Lock()
		sh.users--
		s.mu.Unlock()
	}
	select {
	case sh.sem <- struct{}{}:
		return func() { <-sh.sem; leave() }, nil
	default:
	}
	t := time.NewTimer(s.wait)
	defer t.Stop()
	select {
	case sh.sem <- struct{}{}:
		return func() { <-sh.sem; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	case <-t.C:
		leave()
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: "PGRST003",
			Message: "Timed out acquiring connection from connection pool.",
			Details: fmt.Sprintf("You already have %d requests running against the database, the most one caller may (MASTHEAD_POOL_SHARE); this one waited %s (MASTHEAD_POOL_SHARE_WAIT).", s.per, s.wait),
			Hint:    "Wait for your other requests to finish, or send fewer at once."}
	}
}

// shareKey names the caller whose share a request draws on: the user for a signed-in caller
// (all their sessions and apps together), the client address for anonymous ones.
func shareKey(rq *request) string {
	if rq.caller.Role != pg.RoleAnon {
		if sub := subjects.of(rq.caller.Claims); sub != "" {
			return "user:" + sub
		}
	}
	return "addr:" + rq.c.RealIP()
}

// subjects remembers the subject of claims seen lately: one token's claims arrive with every
// request it makes, and decoding them each time cost more than the rest of shareKey.
var subjects subjectCache

type subjectCache struct {
	mu   sync.Mutex
	subs map[string]string
}

func (c *subjectCache) of(claims []byte) string {
	c.mu.Lock()
	sub, ok := c.subs[string(claims)]
	c.mu.Unlock()
	if ok {
		return sub
	}
	var v struct {
		Sub string `json:"sub"`
	}
	if json.Unmarshal(claims, &v) != nil {
		return ""
	}
	if len(claims) <= 4096 {
		c.mu.Lock()
		if c.subs == nil || len(c.subs) >= 4096 {
			c.subs = make(map[string]string, 64)
		}
		c.subs[string(claims)] = v.Sub
		c.mu.Unlock()
	}
	return v.Sub
}
