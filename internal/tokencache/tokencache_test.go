package tokencache

import (
	"crypto/sha256"
	"testing"
)

// TestCache: KeyOf is the token's SHA-256; a cache of size 0 remembers nothing; a full cache
// first drops what expired says may go, and starts over when nothing may.
func TestCache(t *testing.T) {
	if KeyOf("token") != sha256.Sum256([]byte("token")) {
		t.Fatal("KeyOf is not the token's SHA-256")
	}
	var none Cache[int]
	none.Put(KeyOf("a"), 1, func(int) bool { return true })
	if _, ok := none.Get(KeyOf("a")); ok || none.Len() != 0 {
		t.Fatal("a cache of size 0 remembered a value")
	}
	c := Cache[int]{Max: 2}
	odd := func(v int) bool { return v%2 == 1 }
	c.Put(KeyOf("1"), 1, odd)
	c.Put(KeyOf("2"), 2, odd)
	c.Put(KeyOf("4"), 4, odd) // full: 1 is dropped
	if _, ok := c.Get(KeyOf("1")); ok {
		t.Error("the expired value survived a full cache")
	}
	for _, k := range []string{"2", "4"} {
		if v, ok := c.Get(KeyOf(k)); !ok || KeyOf(k) != KeyOf(string(rune('0'+v))) {
			t.Errorf("value %s lost or wrong: %d %v", k, v, ok)
		}
	}
	c.Put(KeyOf("6"), 6, odd) // full, nothing expired: starts over
	if _, ok := c.Get(KeyOf("2")); ok || c.Len() != 1 {
		t.Errorf("after starting over: %d values, 2 kept %v", c.Len(), ok)
	}
	if v, ok := c.Get(KeyOf("6")); !ok || v != 6 {
		t.Errorf("the new value: %d %v", v, ok)
	}
}
