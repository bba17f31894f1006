package auth_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

func TestPasswordGrantShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	tests := []struct {
		name string
		req  request
	}{
		{"json", request{path: "/auth/v1/token?grant_type=password", json: map[string]string{"email": e.user.Email, "password": e.user.Password}}},
		{"form", request{path: "/auth/v1/token", form: url.Values{"grant_type": {"password"}, "email": {e.user.Email}, "password": {e.user.Password}}}},
		{"email in another case", request{path: "/auth/v1/token?grant_type=password", json: map[string]string{"email": "ADA@Northwind.test", "password": e.user.Password}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now().Unix()
			res := e.do(t, tt.req)
			if res.status != http.StatusOK {
				t.Fatalf("status %d: %s", res.status, res.raw)
			}
			b := res.body
			if b["token_type"] != "bearer" || b["expires_in"] != float64(3600) {
				t.Errorf("token_type/expires_in: %s", res.raw)
			}
			if exp := int64(b["expires_at"].(float64)); exp < before+3600 || exp > time.Now().Unix()+3600 {
				t.Errorf("expires_at %d is not now+3600", exp)
			}
			if rt, _ := b["refresh_token"].(string); len(rt) < 40 {
				t.Errorf("refresh_token %q is too short to be unguessable", rt)
			}
			if res.header.Get("Cache-Control") != "no-store" {
				t.Errorf("token responses must not be cached")
			}
			u := b["user"].(map[string]any)
			for k, want := range map[string]any{"id": e.user.ID, "aud": "authenticated", "role": "authenticated", "email": e.user.Email} {
				if u[k] != want {
					t.Errorf("user.%s = %v, want %v", k, u[k], want)
				}
			}
			for _, k := range []string{"created_at", "updated_at", "last_sign_in_at", "email_confirmed_at"} {
				if _, err := time.Parse(time.RFC3339Nano, u[k].(string)); err != nil {
					t.Errorf("user.%s: %v", k, err)
				}
			}
			if am := u["app_metadata"].(map[string]any); am["provider"] != "email" {
				t.Errorf("app_metadata = %v", am)
			}
			if um := u["user_metadata"].(map[string]any); um["name"] != "ada" {
				t.Errorf("user_metadata = %v", um)
			}

			access := b["access_token"].(string)
			hdr, claims := jwtParts(t, access)
			if hdr["alg"] != "ES256" || hdr["kid"] == nil || hdr["kid"] == "" || hdr["typ"] != "JWT" {
				t.Errorf("header = %v", hdr)
			}
			want := map[string]any{
				"iss": e.Config.Issuer(), "sub": e.user.ID, "aud": "authenticated", "role": "authenticated",
				"email": e.user.Email, "aal": "aal1", "is_anonymous": false,
			}
			for k, v := range want {
				if claims[k] != v {
					t.Errorf("claim %s = %v, want %v", k, claims[k], v)
				}
			}
			for _, k := range []string{"exp", "iat", "session_id", "amr", "app_metadata", "user_metadata"} {
				if claims[k] == nil {
					t.Errorf("claim %s missing", k)
				}
			}
			if amr := claims["amr"].([]any); len(amr) != 1 || amr[0].(map[string]any)["method"] != "password" {
				t.Errorf("amr = %v", claims["amr"])
			}
			// An independent check: the published JWK set verifies the token.
			jwks := e.do(t, request{method: http.MethodGet, path: "/auth/v1/.well-known/jwks.json", noKey: true})
			set, err := jwk.Parse(jwks.raw)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := jws.Verify([]byte(access), jws.WithKeySet(set, jws.WithRequireKid(true))); err != nil {
				t.Errorf("token does not verify against the published JWKS: %v", err)
			}
		})
	}
}

func TestJWKSIsPublicAndHoldsNoPrivateKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/.well-known/jwks.json", noKey: true})
	if res.status != http.StatusOK {
		t.Fatalf("status %d", res.status)
	}
	keys := res.body["keys"].([]any)
	if len(keys) != 1 {
		t.Fatalf("keys = %v", keys)
	}
	k := keys[0].(map[string]any)
	if k["d"] != nil {
		t.Fatal("the JWK set publishes a private key")
	}
	if k["kty"] != "EC" || k["crv"] != "P-256" || k["alg"] != "ES256" || k["kid"] == "" {
		t.Fatalf("key = %v", k)
	}
}

func TestTokenErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	owner := e.DB.Owner(t)
	ctx := context.Background()
	if _, err := owner.Exec(ctx, `insert into auth.users (email) values ('nopassword@northwind.test')`); err != nil {
		t.Fatal(err)
	}
	banned := e.CreateUser(t, "banned@northwind.test", "banned password")
	if _, err := owner.Exec(ctx, `update auth.users set banned_until = now() + interval '1 day' where id = $1`, banned.ID); err != nil {
		t.Fatal(err)
	}
	pw := "/auth/v1/token?grant_type=password"
	creds := func(email, password string) map[string]string {
		return map[string]string{"email": email, "password": password}
	}
	tests := []struct {
		name   string
		req    request
		status int
		code   string
	}{
		{"wrong password", request{path: pw, json: creds(e.user.Email, "wrong")}, 400, "invalid_credentials"},
		{"unknown email", request{path: pw, json: creds("nobody@northwind.test", "wrong")}, 400, "invalid_credentials"},
		{"user without password", request{path: pw, json: creds("nopassword@northwind.test", "")}, 400, "validation_failed"},
		{"user without password, any password", request{path: pw, json: creds("nopassword@northwind.test", "x")}, 400, "invalid_credentials"},
		{"banned user", request{path: pw, json: creds(banned.Email, banned.Password)}, 400, "user_banned"},
		{"banned user, wrong password", request{path: pw, json: creds(banned.Email, "x")}, 400, "invalid_credentials"},
		{"missing email", request{path: pw, json: map[string]string{"password": "x"}}, 400, "validation_failed"},
		{"missing password", request{path: pw, json: map[string]string{"email": e.user.Email}}, 400, "validation_failed"},
		{"phone sign-in", request{path: pw, json: map[string]string{"phone": "+15550100", "password": "x"}}, 400, "validation_failed"},
		{"bad json", request{path: pw, raw: `{"email":`}, 400, "bad_json"},
		{"unsupported grant", request{path: "/auth/v1/token?grant_type=magic", json: creds(e.user.Email, e.user.Password)}, 400, "invalid_credentials"},
		{"no grant", request{path: "/auth/v1/token", json: creds(e.user.Email, e.user.Password)}, 400, "invalid_credentials"},
		{"refresh without token", request{path: "/auth/v1/token?grant_type=refresh_token", json: map[string]string{}}, 400, "validation_failed"},
		{"unknown refresh token", request{path: "/auth/v1/token?grant_type=refresh_token", json: map[string]string{"refresh_token": "not-a-token"}}, 400, "refresh_token_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do(t, tt.req), tt.status, tt.code)
		})
	}

	t.Run("unknown email and wrong password answer alike", func(t *testing.T) {
		a := e.do(t, request{path: pw, json: creds(e.user.Email, "wrong")})
		b := e.do(t, request{path: pw, json: creds("nobody@northwind.test", "wrong")})
		if string(a.raw) != string(b.raw) {
			t.Fatalf("bodies differ: %s vs %s", a.raw, b.raw)
		}
	})
}

func TestAPIKeyRequired(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	tests := []struct {
		name string
		req  request
		msg  string
	}{
		{"token without key", request{path: "/auth/v1/token?grant_type=password", noKey: true}, "No API key found in request"},
		{"token with wrong key", request{path: "/auth/v1/token?grant_type=password", key: "sb_publishable_wrong"}, "Invalid API key"},
		{"user without key", request{method: http.MethodGet, path: "/auth/v1/user", bearer: s.access, noKey: true}, "No API key found in request"},
		{"logout without key", request{path: "/auth/v1/logout", bearer: s.access, noKey: true}, "No API key found in request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.do(t, tt.req)
			if res.status != http.StatusUnauthorized || res.body["message"] != tt.msg {
				t.Fatalf("got %d %s", res.status, res.raw)
			}
		})
	}
	t.Run("the key alone is not a user", func(t *testing.T) {
		wantError(t, e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: e.Key}), 403, "bad_jwt")
	})
}

func TestAPIVersion2024ErrorShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	tests := []struct {
		version string
		new     bool
	}{
		{"2024-01-01", true},
		{"2025-06-30", true},
		{"2023-12-31", false},
		{"next tuesday", false},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			res := e.do(t, request{path: "/auth/v1/token?grant_type=password",
				json:    map[string]string{"email": e.user.Email, "password": "wrong"},
				headers: map[string]string{"X-Supabase-Api-Version": tt.version}})
			if res.status != 400 || res.header.Get("x-sb-error-code") != "invalid_credentials" {
				t.Fatalf("got %d %s", res.status, res.raw)
			}
			if tt.new {
				if res.body["code"] != "invalid_credentials" || res.body["message"] != "Invalid login credentials" || len(res.body) != 2 {
					t.Fatalf("2024-01-01 body = %s", res.raw)
				}
				if res.header.Get("X-Supabase-Api-Version") != "2024-01-01" {
					t.Fatal("response does not say which API version it answers in")
				}
				return
			}
			wantError(t, res, 400, "invalid_credentials")
		})
	}
}

func TestUserEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: s.access})
	if res.status != http.StatusOK || res.body["id"] != e.user.ID || res.body["email"] != e.user.Email || res.body["aud"] != "authenticated" {
		t.Fatalf("got %d %s", res.status, res.raw)
	}
	tests := []struct {
		name   string
		req    request
		status int
		code   string
	}{
		{"no authorization", request{method: http.MethodGet, path: "/auth/v1/user"}, 401, "no_authorization"},
		{"not a bearer", request{method: http.MethodGet, path: "/auth/v1/user", headers: map[string]string{"Authorization": "Basic YTpi"}}, 401, "no_authorization"},
		{"garbage", request{method: http.MethodGet, path: "/auth/v1/user", bearer: "garbage"}, 403, "bad_jwt"},
		{"refresh token as bearer", request{method: http.MethodGet, path: "/auth/v1/user", bearer: s.refresh}, 403, "bad_jwt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do(t, tt.req), tt.status, tt.code)
		})
	}
}

// sign makes a token with the given header fields and claims, signed by key with alg.
func sign(t testing.TB, alg jwa.SignatureAlgorithm, key any, hdr map[string]any, claims []byte) string {
	t.Helper()
	h := jws.NewHeaders()
	for k, v := range hdr {
		if err := h.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	out, err := jws.Sign(claims, jws.WithKey(alg, key, jws.WithProtectedHeaders(h)))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestSignInWithAnOddUserAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	res := e.do(t, request{path: "/auth/v1/token?grant_type=password",
		json:    map[string]string{"email": e.user.Email, "password": e.user.Password},
		headers: map[string]string{"User-Agent": "odd \xff agent " + strings.Repeat("x", 600)}})
	if res.status != http.StatusOK {
		t.Fatalf("got %d %s", res.status, res.raw)
	}
}
