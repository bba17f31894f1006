package auth

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestVerifiedCacheKeepsCheckingTime: a token remembered after its first verification is still
// refused once it expires, and a token that differs from a remembered one in any byte is
// verified from scratch (so a tampered copy of a good token fails).
func TestVerifiedCacheKeepsCheckingTime(t *testing.T) {
	t.Parallel()
	raw, err := GenerateKeySet()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ParseKeySet(raw)
	if err != nil {
		t.Fatal(err)
	}
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
	if _, ok := v.cache.get(sha256Of(token)); !ok {
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
