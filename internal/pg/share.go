package pg

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Shares keeps one caller from holding more than a fair share of the database pool: each caller
// (see ShareKey) may hold at most per of its connections at once, whichever surface takes them,
// since one set serves all of an instance's surfaces (REST and storage). One more waits up to
// wait for a slot of its own, then is refused with an *OverShareError, while every other caller
// still finds connections free. Without it, one viewer's eight expensive reads, or a page of
// images loading at once, take every pooled connection and another tenant's small read fails.
//
// A slot is held only while a connection is: a surface takes it just before acquiring the
// connection and gives it back as it releases it, never while it streams a file or reads a
// request body.
type Shares struct {
	per  int
	wait time.Duration

	mu    sync.Mutex
	slots map[string]*Share
}

// Share is one caller's slots; Take hands it out, Give takes it back.
type Share struct {
	sem   chan struct{}
	users int // holding or waiting for a slot
}

// DefaultShareWait is how long a request over its caller's share waits when no wait is
// configured (MASTHEAD_POOL_SHARE_WAIT).
const DefaultShareWait = 2 * time.Second

// FairShare is the share one caller may hold of pool when none is configured
// (MASTHEAD_POOL_SHARE): a quarter of its connections, at least 2.
func FairShare(pool *pgxpool.Pool) int {
	return max(2, int(pool.Config().MaxConns)/4)
}

// idleShares is how many callers' entries may stay in the map at zero users. An entry outlives
// its last request so that a caller's next one (a client reading again) finds it instead of
// allocating a share and its semaphore channel anew; past the bound, entries at zero go.
const idleShares = 4096

// NewShares makes a set in which each caller holds at most per connections at once, and one
// more waits at most wait.
func NewShares(per int, wait time.Duration) *Shares {
	return &Shares{per: per, wait: wait, slots: map[string]*Share{}}
}

// OverShareError refuses a request whose caller already held their whole share for as long as
// it waited. Each surface words it in its own error shape, naming the limits.
type OverShareError struct {
	Per  int           // MASTHEAD_POOL_SHARE
	Wait time.Duration // MASTHEAD_POOL_SHARE_WAIT
}

func (e *OverShareError) Error() string {
	return fmt.Sprintf("pg: the caller already holds %d connections, their share of the pool, and waited %s for one of them", e.Per, e.Wait)
}

// Explain is the refusal in the caller's words, naming both limits, for each surface to put in
// its own error shape: "You already have 2 requests running against the database, …".
func (e *OverShareError) Explain() string {
	requests := "requests"
	if e.Per == 1 {
		requests = "request"
	}
	return fmt.Sprintf("You already have %d %s running against the database, the most one caller may (MASTHEAD_POOL_SHARE); this one waited %s (MASTHEAD_POOL_SHARE_WAIT).", e.Per, requests, e.Wait)
}

// Take waits for a slot of key's share and returns the share, to be given back with Give; past
// the wait the error is an *OverShareError, and ctx's error when ctx ends first. (A share
// rather than a release func: the closures were two allocations on every request.)
func (s *Shares) Take(ctx context.Context, key string) (*Share, error) {
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
		sh = &Share{sem: make(chan struct{}, s.per)}
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
		return nil, &OverShareError{Per: s.per, Wait: s.wait}
	}
}

// Give returns the slot Take gave.
func (s *Shares) Give(sh *Share) {
	<-sh.sem
	s.leave(sh)
}

func (s *Shares) leave(sh *Share) {
	s.mu.Lock()
	sh.users--
	s.mu.Unlock()
}

// ShareKey names the caller whose share a request draws on: the user for a signed-in caller
// (all their sessions and apps together), the client address addr for anonymous ones. Every
// surface keys its requests through it, so a caller's requests count against one share.
func ShareKey(caller Caller, addr string) string {
	if caller.Role != RoleAnon {
		if key := subjects.of(caller.Claims); key != "" {
			return key
		}
	}
	return "addr:" + addr
}

// subjects remembers the share key ("user:" and the subject) of claims seen lately: one
// token's claims arrive with every request it makes, and decoding them each time cost more
// than the rest of ShareKey (and caller.Subject would cost a string concatenation each time).
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
