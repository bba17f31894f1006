package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
)

// jwkJSON builds one JWK from a raw key with the given fields.
func jwkJSON(t *testing.T, raw any, fields map[string]any) json.RawMessage {
	t.Helper()
	k, err := jwk.Import(raw)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range fields {
		if err := k.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func setJSON(keys ...json.RawMessage) []byte {
	b, _ := json.Marshal(map[string]any{"keys": keys})
	return b
}

func newEC(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestParseKeySetRefuses(t *testing.T) {
	t.Parallel()
	ec := newEC(t)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	tests := []struct {
		name string
		set  []byte
		want string
	}{
		{"not JSON", []byte("{"), "parse"},
		{"no kid", setJSON(jwkJSON(t, ec, nil)), "no kid"},
		{"duplicate kid", setJSON(jwkJSON(t, ec, map[string]any{"kid": "a"}), jwkJSON(t, newEC(t), map[string]any{"kid": "a"})), "twice"},
		{"RSA", setJSON(jwkJSON(t, rsaKey, map[string]any{"kid": "r"})), "P-256"},
		{"P-384", setJSON(jwkJSON(t, p384, map[string]any{"kid": "p"})), "P-256"},
		{"symmetric", setJSON(jwkJSON(t, []byte("0123456789abcdef0123456789abcdef"), map[string]any{"kid": "s"})), "P-256"},
		{"public keys only", setJSON(jwkJSON(t, &ec.PublicKey, map[string]any{"kid": "pub"})), "no private key"},
		{"other alg", setJSON(jwkJSON(t, ec, map[string]any{"kid": "e", "alg": "ES384"})), "only ES256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseKeySet(tt.set)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

// TestKeyRotation: the first private key signs; a retired key (kept public-only or private
// further down) still verifies the tokens it signed until they expire.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	oldKey, newKey := newEC(t), newEC(t)
	before, err := ParseKeySet(setJSON(jwkJSON(t, oldKey, map[string]any{"kid": "old"})))
	if err != nil {
		t.Fatal(err)
	}
	after, err := ParseKeySet(setJSON(
		jwkJSON(t, &oldKey.PublicKey, map[string]any{"kid": "old"}),
		jwkJSON(t, newKey, map[string]any{"kid": "new"}),
	))
	if err != nil {
		t.Fatal(err)
	}
	if after.SigningKID() != "new" {
		t.Fatalf("signing kid = %s, want the private key's", after.SigningKID())
	}
	var published struct{ Keys []map[string]any }
	if err := json.Unmarshal(after.JWKS(), &published); err != nil || len(published.Keys) != 2 {
		t.Fatalf("JWKS = %s", after.JWKS())
	}
	for _, k := range published.Keys {
		if k["d"] != nil {
			t.Fatal("JWKS publishes a private key")
		}
	}
	claims := func() []byte {
		b, _ := json.Marshal(map[string]any{"iss": "i", "sub": "00000000-0000-0000-0000-000000000001", "aud": "authenticated",
			"role": "authenticated", "session_id": "00000000-0000-0000-0000-000000000002", "exp": time.Now().Add(time.Hour).Unix()})
		return b
	}
	oldToken, err := before.sign(claims())
	if err != nil {
		t.Fatal(err)
	}
	newToken, err := after.sign(claims())
	if err != nil {
		t.Fatal(err)
	}
	v := NewVerifier(after, "i")
	for name, tok := range map[string]string{"old": oldToken, "new": newToken} {
		if _, err := v.Verify(tok); err != nil {
			t.Errorf("%s token refused after rotation: %v", name, err)
		}
	}
	if _, err := NewVerifier(before, "i").Verify(newToken); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a verifier without the new key accepted its token: %v", err)
	}
}

func TestGeneratedSecrets(t *testing.T) {
	t.Parallel()
	set, err := GenerateKeySet()
	if err != nil {
		t.Fatal(err)
	}
	ks, err := ParseKeySet(set)
	if err != nil {
		t.Fatalf("a generated set does not parse: %v", err)
	}
	if ks.SigningKID() == "" {
		t.Fatal("no kid")
	}
	a, b := GeneratePublishableKey(), GeneratePublishableKey()
	if a == b || !strings.HasPrefix(a, "sb_publishable_") || len(a) < 40 {
		t.Fatalf("publishable keys %q, %q", a, b)
	}
}

func TestLimiterForgetsIdleClients(t *testing.T) {
	t.Parallel()
	l := newLimiter(Limit{Count: 2, Per: time.Second, Burst: 2})
	now := time.Now()
	for i := range 50 {
		l.allow(string(rune('a'+i)), now)
	}
	if ok, wait := l.allow("a", now); !ok || wait != 0 {
		t.Fatal("second request inside the burst refused")
	}
	if ok, wait := l.allow("a", now); ok || wait <= 0 || wait > time.Second {
		t.Fatalf("third request: ok %v wait %v", ok, wait)
	}
	l.allow("z", now.Add(5*time.Second)) // long after: everyone refilled, the sweep drops them
	if n := len(l.buckets); n != 1 {
		t.Fatalf("%d buckets kept, want only the active one", n)
	}
	if newLimiter(Limit{}) != nil {
		t.Fatal("a zero Limit must mean no limiter")
	}
}

func TestClientUserAgentIsStorable(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"supabase-js/2", "supabase-js/2"},
		{"bad \xff byte", "bad  byte"},
		{strings.Repeat("é", 300), strings.Repeat("é", 256)},
	}
	for _, tt := range tests {
		if got := (Client{UserAgent: tt.in}).userAgent(); got != tt.want {
			t.Errorf("userAgent(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
