package client

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"
)

// EstimateTTL is how long Queue keeps search_estimate's estimate for the same access token,
// phrase and filters: paging through a search asks for it once, not on every page (it was a
// fourth service call on every page of a common phrase, as costly as the visit's). Only
// estimates are kept, shown as "about" anyway; exact counts are asked for every time.
const EstimateTTL = 30 * time.Second

// estimateCacheSize bounds the estimates kept: past it the expired ones are dropped, and if
// none has expired, all of them (a burst of searches by this many people at once).
const estimateCacheSize = 4096

// searchCount is search_estimate's answer.
type searchCount struct {
	Total int  `json:"total"`
	Exact bool `json:"exact"`
}

// estimates remembers the estimates of searches for EstimateTTL. The key is a hash of the
// access token and the arguments, so an estimate is only ever shown to the holder of the token
// it was made for (RLS decided what it counted).
type estimates struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]estimateEntry
}

type estimateEntry struct {
	n  searchCount
	at time.Time
}

func estimateKey(accessToken string, args map[string]any) [sha256.Size]byte {
	b, _ := json.Marshal(args) // map keys sorted: the same arguments, the same bytes
	h := sha256.New()
	h.Write([]byte(accessToken))
	h.Write([]byte{0})
	h.Write(b)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func (e *estimates) get(k [sha256.Size]byte, now time.Time) (searchCount, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.m[k]
	if !ok || now.Sub(v.at) >= EstimateTTL {
		return searchCount{}, false
	}
	return v.n, true
}

func (e *estimates) put(k [sha256.Size]byte, n searchCount, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[[sha256.Size]byte]estimateEntry{}
	}
	if len(e.m) >= estimateCacheSize {
		for key, v := range e.m {
			if now.Sub(v.at) >= EstimateTTL {
				delete(e.m, key)
			}
		}
		if len(e.m) >= estimateCacheSize {
			clear(e.m)
		}
	}
	e.m[k] = estimateEntry{n: n, at: now}
}

// searchEstimate is search_estimate(args) for the holder of accessToken, an estimate taken
// from the cache when one was made for the same token and arguments within EstimateTTL.
func (c *Client) searchEstimate(ctx context.Context, accessToken string, args map[string]any) (searchCount, error) {
	k := estimateKey(accessToken, args)
	now := time.Now()
	if n, ok := c.estimates.get(k, now); ok {
		return n, nil
	}
	var n searchCount
	if err := c.RPC(ctx, accessToken, "search_estimate", args, &n); err != nil {
		return searchCount{}, err
	}
	if !n.Exact {
		c.estimates.put(k, n, now)
	}
	return n, nil
}
