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

// take waits for a slot of key's share and returns the share, to be given back with give, or
// PGRST003 naming the limit. (A share rather than a release func: the closures were two
// allocations on every request.)
func (s *shares) take(ctx context.Context, key string) (*share, error) {
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
	select {
	case sh.sem <- struct{}{}:
		return sh, nil
	default:
	}
	t := time.NewTimer(s.wait)
	defer t.Stop()
	select {
	case sh.sem <- struct{}{}:
		return sh, nil
	case <-ctx.Done():
		s.leave(sh)
		return nil, ctx.Err()
	case <-t.C:
		s.leave(sh)
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: "PGRST003",
			Message: "Timed out acquiring connection from connection pool.",
			Details: fmt.Sprintf("You already have %d requests running against the database, the most one caller may (MASTHEAD_POOL_SHARE); this one waited %s (MASTHEAD_POOL_SHARE_WAIT).", s.per, s.wait),
			Hint:    "Wait for your other requests to finish, or send fewer at once."}
	}
}

// give returns the slot take gave.
func (s *shares) give(sh *share) {
	<-sh.sem
	s.leave(sh)
}

func (s *shares) leave(sh *share) {
	s.mu.Lock()
	sh.users--
	s.mu.Unlock()
}

// shareKey names the caller whose share a request draws on: the user for a signed-in caller
// (all their sessions and apps together), the client address for anonymous ones.
func shareKey(rq *request) string {
	if rq.caller.Role != pg.RoleAnon {
		if key := subjects.of(rq.caller.Claims); key != "" {
			return key
		}
	}
	return "addr:" + rq.c.RealIP()
}

// subjects remembers the share key ("user:" and the subject) of claims seen lately: one
// token's claims arrive with every request it makes, and decoding them each time cost more
// than the rest of shareKey.
var subjects subjectCache

type subjectCache struct {
	mu   sync.Mutex
	keys map[string]string
}

// of is the share key of claims, or "" when they name no subject.
func (c *subjectCache) of(claims []byte) string {
	c.mu.Lock()
	key, ok := c.keys[string(claims)]
	c.mu.Unlock()
	if ok {
		return key
	}
	var v struct {
		Sub string `json:"sub"`
	}
	if json.Unmarshal(claims, &v) != nil {
		return ""
	}
	if v.Sub != "" {
		key = "user:" + v.Sub
	}
	if len(claims) <= 4096 {
		c.mu.Lock()
		if c.keys == nil || len(c.keys) >= 4096 {
			c.keys = make(map[string]string, 64)
		}
		c.keys[string(claims)] = key
		c.mu.Unlock()
	}
	return key
}
