// Package tokencache remembers what verifying a bearer token found, by the token's SHA-256, so
// that a token presented again is not verified again: the access tokens of internal/auth and the
// signed-URL tokens of internal/storage. Only what passed verification goes in; what may change
// with time (expiry) stays the caller's to check on every use. Tokens themselves are never kept,
// only their hashes, so the cache hands out nothing a memory dump could replay.
//
// internal/client keeps its search estimates in a Cache too, keyed by a hash of the access token
// and the search's arguments.
//
// It imports nothing of masthead's.
package tokencache

import (
	"crypto/sha256"
	"maps"
	"sync"
	"unsafe"
)

// Key is a token's SHA-256.
type Key = [sha256.Size]byte

// KeyOf hashes token in place: []byte(token) would copy it to the heap (an access token is about
// 700 bytes, past the stack buffer a conversion may use) on every request. Sum256 only reads
// its argument, so the string's bytes are never written.
func KeyOf(token string) Key {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token)))
}

// Cache maps token hashes to verified values. It holds at most Max entries: when full it first
// drops those expired says are of no further use, and starts over if that frees nothing, which
// costs one verification per live token and needs no eviction bookkeeping. Max 0 (or less)
// remembers nothing. It is safe for concurrent use; set Max before first use.
type Cache[V any] struct {
	Max int
	mu  sync.RWMutex
	m   map[Key]V
}

// Get returns the value remembered for k.
func (c *Cache[V]) Get(k Key) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[k]
	return v, ok
}

// Put remembers v for k; expired tells, when the cache is full, which values may go.
func (c *Cache[V]) Put(k Key, v V, expired func(V) bool) {
	if c.Max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.Max {
		maps.DeleteFunc(c.m, func(_ Key, v V) bool { return expired(v) })
	}
	if c.m == nil || len(c.m) >= c.Max {
		c.m = make(map[Key]V)
	}
	c.m[k] = v
}

// Len is how many values the cache holds.
func (c *Cache[V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
