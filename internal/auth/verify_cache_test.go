package auth

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"masthead/internal/tokencache"
)

// TestVerifiedCacheKeepsCheckingTime: a token remembered after its first verification is still
// refused once it expires, and a token that differs from a remembered one in any byte is
// verified from scratch (so a tampered copy of a good token fails).
func TestVerifiedCacheKeepsCheckingTime(t *testing.T) {
	t.Parallel()
	keys := newTestKeys(t)
	now := time.Now()
	v := NewVerifier(keys, "https://masthead.test/auth/v1")
	v.now = func() time.Time { return now }
	payload, _ := json.Marshal(map[string]any{
		"iss": "https://masthead.test/auth/v1", "aud": "authenticated", "role": "authenticated",
		"sub": "8f0c7a52-0000-4000-8000-000000000001", "session_id": "8f0c7a52-0000-4000-8000-000000000002",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	})
	token, err := keys.sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the second call is served from the cache
		if _, err := v.Verify(token); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, ok := v.cache.Get(tokencache.KeyOf(token)); !ok {
		t.Fatal("a verified token was not remembered")
	}
	parts := strings.Split(token, ".")
	tampered := parts[0] + "." + parts[1] + "x." + parts[2]
	if _, err := v.Verify(tampered); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("tampered copy of a cached token: %v", err)
	}
	now = now.Add(time.Hour + time.Minute)
	if _, err := v.Verify(token); !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("an expired token was accepted from the cache: %v", err)
	}
}

// TestVerifiedCacheBounds: the cache never holds more than its size, makes room by dropping
// expired tokens first (a live one stays remembered), and a negative size remembers nothing.
func TestVerifiedCacheBounds(t *testing.T) {
	t.Parallel()
	keys := newTestKeys(t)
	now := time.Now()
	token := func(exp time.Time, n int) string {
		payload, _ := json.Marshal(map[string]any{
			"iss": "https://masthead.test/auth/v1", "aud": "authenticated", "role": "authenticated",
			"sub": "8f0c7a52-0000-4000-8000-000000000001", "session_id": "8f0c7a52-0000-4000-8000-000000000002",
			"iat": now.Unix(), "exp": exp.Unix(), "n": n,
		})
		tok, err := keys.sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	size := func(v *Verifier) int {
		return v.cache.Len()
	}

	v := NewVerifier(keys, "https://masthead.test/auth/v1").WithCache(3)
	v.now = func() time.Time { return now }
	live := token(now.Add(time.Hour), 0)
	short := []string{token(now.Add(time.Minute), 1), token(now.Add(time.Minute), 2)}
	for _, tok := range append([]string{live}, short...) {
		if _, err := v.Verify(tok); err != nil {
			t.Fatal(err)
		}
	}
	if size(v) != 3 {
		t.Fatalf("%d remembered, want 3", size(v))
	}
	now = now.Add(2 * time.Minute) // the two short tokens have expired (past the leeway)
	if _, err := v.Verify(token(now.Add(time.Hour), 3)); err != nil {
		t.Fatal(err)
	}
	if size(v) != 2 {
		t.Fatalf("%d remembered after making room, want 2 (the live token and the new one)", size(v))
	}
	if _, ok := v.cache.Get(tokencache.KeyOf(live)); !ok {
		t.Fatal("a live token was dropped while expired ones made room")
	}
	for i := range 10 {
		if _, err := v.Verify(token(now.Add(time.Hour), 10+i)); err != nil {
			t.Fatal(err)
		}
		if size(v) > 3 {
			t.Fatalf("%d remembered, more than the size 3", size(v))
		}
	}

	none := NewVerifier(keys, "https://masthead.test/auth/v1").WithCache(-1)
	none.now = func() time.Time { return now }
	if _, err := none.Verify(live); err != nil {
		t.Fatal(err)
	}
	if size(none) != 0 {
		t.Fatal("a verifier without a cache remembered a token")
	}
	if NewVerifier(keys, "x").WithCache(0).cache.Max != DefaultTokenCacheSize {
		t.Fatal("size 0 is not the default")
	}
}

// newTestKeys is a fresh key set to sign test tokens with.
func newTestKeys(t *testing.T) *KeySet {
	t.Helper()
	raw, err := GenerateKeySet()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ParseKeySet(raw)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
