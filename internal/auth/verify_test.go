package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"

	"masthead/internal/auth"
)

// forger signs arbitrary tokens with the service's own key and with others.
type forger struct {
	t      testing.TB
	key    jwk.Key // the service's signing key
	kid    string
	claims map[string]any // a real session's claims
}

func newForger(t testing.TB, e *env) *forger {
	set, err := jwk.Parse([]byte(e.Config.JWTKeys))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := set.Key(0)
	kid, _ := key.KeyID()
	s := e.signIn(t, e.user.Email, e.user.Password)
	_, claims := jwtParts(t, s.access)
	return &forger{t: t, key: key, kid: kid, claims: claims}
}

func (f *forger) payload(change map[string]any) []byte {
	c := map[string]any{}
	for k, v := range f.claims {
		c[k] = v
	}
	for k, v := range change {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

func (f *forger) es256(change map[string]any) string {
	return sign(f.t, jwa.ES256(), f.key, map[string]any{"kid": f.kid, "typ": "JWT"}, f.payload(change))
}

func b64(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestRefusedTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	f := newForger(t, e)
	now := time.Now().Unix()

	stranger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	valid := f.es256(nil)
	parts := strings.Split(valid, ".")
	pubJWK, err := jwk.PublicKeyOf(f.key)
	if err != nil {
		t.Fatal(err)
	}
	var pub ecdsa.PublicKey
	if err := jwk.Export(pubJWK, &pub); err != nil {
		t.Fatal(err)
	}
	pubJSON, _ := json.Marshal(pubJWK)
	var priv ecdsa.PrivateKey // a raw key, so jwx adds no kid of its own
	if err := jwk.Export(f.key, &priv); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		token string
	}{
		{"expired", f.es256(map[string]any{"exp": now - 120, "iat": now - 3720})},
		{"not yet valid", f.es256(map[string]any{"nbf": now + 600})},
		{"no exp", f.es256(map[string]any{"exp": nil})},
		{"tampered claims", parts[0] + "." + b64(mustClaims(f, map[string]any{"email": "mallory@northwind.test"})) + "." + parts[2]},
		{"tampered signature", parts[0] + "." + parts[1] + "." + flip(parts[2])},
		{"alg none", b64(map[string]any{"alg": "none", "typ": "JWT", "kid": f.kid}) + "." + parts[1] + "."},
		{"alg none with signature", b64(map[string]any{"alg": "none", "kid": f.kid}) + "." + parts[1] + "." + parts[2]},
		{"unknown kid", sign(t, jwa.ES256(), stranger, map[string]any{"kid": "stranger"}, f.payload(nil))},
		{"our kid, another key", sign(t, jwa.ES256(), stranger, map[string]any{"kid": f.kid}, f.payload(nil))},
		{"no kid", sign(t, jwa.ES256(), &priv, map[string]any{}, f.payload(nil))},
		{"HS256 keyed with the public JWK", sign(t, jwa.HS256(), pubJSON, map[string]any{"kid": f.kid}, f.payload(nil))},
		{"HS256 keyed with the public point", sign(t, jwa.HS256(), mustBytes(t, &pub), map[string]any{"kid": f.kid}, f.payload(nil))},
		{"wrong audience", f.es256(map[string]any{"aud": "service_role"})},
		{"wrong issuer", f.es256(map[string]any{"iss": "https://evil.example/auth/v1"})},
		{"service role", f.es256(map[string]any{"role": "service_role"})},
		{"no session", f.es256(map[string]any{"session_id": nil})},
		{"no subject", f.es256(map[string]any{"sub": nil})},
		{"two segments", parts[0] + "." + parts[1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: tt.token}), 403, "bad_jwt")
			r := httptest.NewRequest(http.MethodGet, "/rest/v1/publications", nil)
			r.Header.Set("Authorization", "Bearer "+tt.token)
			if _, err := e.Server.Auth().Caller(r); !errors.Is(err, auth.ErrInvalidToken) {
				t.Fatalf("Caller: err = %v, want ErrInvalidToken", err)
			}
		})
	}

	t.Run("the untouched forgery baseline is accepted", func(t *testing.T) {
		if res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: valid}); res.status != http.StatusOK {
			t.Fatalf("baseline token refused: %d %s", res.status, res.raw)
		}
	})
	t.Run("array audience is accepted", func(t *testing.T) {
		tok := f.es256(map[string]any{"aud": []string{"other", "authenticated"}})
		if res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: tok}); res.status != http.StatusOK {
			t.Fatalf("got %d %s", res.status, res.raw)
		}
	})
	t.Run("clock skew within the leeway is accepted", func(t *testing.T) {
		tok := f.es256(map[string]any{"exp": now - 5})
		if res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: tok}); res.status != http.StatusOK {
			t.Fatalf("got %d %s", res.status, res.raw)
		}
	})
}

func mustBytes(t testing.TB, pub *ecdsa.PublicKey) []byte {
	b, err := pub.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustClaims(f *forger, change map[string]any) map[string]any {
	var c map[string]any
	if err := json.Unmarshal(f.payload(change), &c); err != nil {
		f.t.Fatal(err)
	}
	return c
}

// flip changes one character in the middle of a base64url string.
func flip(s string) string {
	b := []byte(s)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}
