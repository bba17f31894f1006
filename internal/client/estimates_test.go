package client

import (
	"strconv"
	"testing"
	"time"
)

// TestEstimatesCache: an estimate is found again for the same token and arguments until
// EstimateTTL has passed, never for another token or other arguments, and the cache never
// holds more than estimateCacheSize entries.
func TestEstimatesCache(t *testing.T) {
	t.Parallel()
	e := newEstimates()
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	args := map[string]any{"phrase": "the", "project": "p1", "statuses": []string{"reviewing"}}
	k := estimateKey("token-a", args)
	e.put(k, searchCount{Total: 9900}, now)
	for _, c := range []struct {
		name  string
		token string
		args  map[string]any
		after time.Duration
		found bool
	}{
		{"same token and arguments", "token-a", map[string]any{"statuses": []string{"reviewing"}, "project": "p1", "phrase": "the"}, 0, true},
		{"just before the TTL", "token-a", args, EstimateTTL - time.Millisecond, true},
		{"at the TTL", "token-a", args, EstimateTTL, false},
		{"another token", "token-b", args, 0, false},
		{"another phrase", "token-a", map[string]any{"phrase": "then", "project": "p1", "statuses": []string{"reviewing"}}, 0, false},
		{"another filter", "token-a", map[string]any{"phrase": "the", "project": "p1"}, 0, false},
	} {
		n, ok := e.get(estimateKey(c.token, c.args), now.Add(c.after))
		if ok != c.found || (ok && n.Total != 9900) {
			t.Errorf("%s: got %v %v, want found %v", c.name, n, ok, c.found)
		}
	}
	for i := range 2 * estimateCacheSize {
		e.put(estimateKey("token-"+strconv.Itoa(i), args), searchCount{Total: i}, now)
		if e.c.Len() > estimateCacheSize {
			t.Fatalf("the cache holds %d estimates, more than %d", e.c.Len(), estimateCacheSize)
		}
	}
}
