package client

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"time"

	"masthead/internal/tokencache"
)

// EstimateTTL is how long Queue keeps search_estimate's estimate for the same access token,
// phrase and filters: paging through a search asks for it once, not on every page (it was a
// fourth service call on every page of a common phrase, as costly as the visit's). Only
// estimates are kept, shown as "about" anyway; exact counts are asked for every time.
const EstimateTTL = 30 * time.Second

// estimateCacheSize bounds the estimates kept: past it the expired ones are dropped, and if
// none has expired, all of them (a burst of searches by this many people at once; see
// tokencache.Cache).
const estimateCacheSize = 4096

// searchCount is search_estimate's answer.
type searchCount struct {
	Total int  `json:"total"`
	Exact bool `json:"exact"`
}

// estimates remembers the estimates of searches for EstimateTTL, in a tokencache.Cache (the
// bounded cache the identity service keeps its verified tokens in). The key is a hash of the
// access token and the arguments, so an estimate is only ever shown to the holder of the token
// it was made for (RLS decided what it counted).
type estimates struct {
	c tokencache.Cache[estimateEntry]
}

type estimateEntry struct {
	n  searchCount
	at time.Time
}

func newEstimates() *estimates {
	e := &estimates{}
	e.c.Max = estimateCacheSize
	return e
}

func estimateKey(accessToken string, args map[string]any) tokencache.Key {
	b, _ := json.Marshal(args) // map keys sorted: the same arguments, the same bytes
	h := sha256.New()
	h.Write([]byte(accessToken))
	h.Write([]byte{0})
	h.Write(b)
	var k tokencache.Key
	h.Sum(k[:0])
	return k
}

func (e *estimates) get(k tokencache.Key, now time.Time) (searchCount, bool) {
	v, ok := e.c.Get(k)
	if !ok || now.Sub(v.at) >= EstimateTTL {
		return searchCount{}, false
	}
	return v.n, true
}

func (e *estimates) put(k tokencache.Key, n searchCount, now time.Time) {
	e.c.Put(k, estimateEntry{n: n, at: now}, func(v estimateEntry) bool { return now.Sub(v.at) >= EstimateTTL })
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
