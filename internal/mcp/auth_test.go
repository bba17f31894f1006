package mcp

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

var errBadToken = errors.New("invalid token")

// fakeAuth accepts the token "good" as user u1 and refuses the rest, as auth.Service would.
type fakeAuth struct{}

func (fakeAuth) Caller(r *http.Request) (pg.Caller, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer good":
		return pg.UserCaller(json.RawMessage(`{"sub":"u1","exp":4102444800,"role":"authenticated"}`)), nil
	case "Bearer anon-key":
		return pg.Anon, nil
	case "Bearer outage":
		return pg.Caller{}, errors.New("auth: check session: connection refused")
	default:
		return pg.Caller{}, errors.Join(errBadToken, errors.New("token is expired"))
	}
}

func newTestServer(t *testing.T) *echo.Echo {
	t.Helper()
	s, err := New(Config{APIURL: "http://127.0.0.1:1", PublishableKey: "k", PublicURL: "https://masthead.example/",
		Auth: fakeAuth{}, InvalidToken: errBadToken})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	s.Mount(e)
	return e
}

// TestUnauthorized checks that every request without a user token is refused with the challenge
// that starts OAuth discovery, and that an outage is not mistaken for a bad token.
func TestUnauthorized(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	const challenge = `Bearer resource_metadata="https://masthead.example/.well-known/oauth-protected-resource"`
	for _, tc := range []struct {
		name, authz string
		status      int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"expired token", "Bearer expired", http.StatusUnauthorized},
		{"publishable key", "Bearer anon-key", http.StatusUnauthorized},
		{"not bearer", "Basic dTpw", http.StatusUnauthorized},
		{"outage", "Bearer outage", http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.authz != "" {
				req.Header.Set("Authorization", tc.authz)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d (%s)", rec.Code, tc.status, rec.Body)
			}
			if tc.status == http.StatusUnauthorized {
				if got := rec.Header().Get("WWW-Authenticate"); got != challenge {
					t.Errorf("WWW-Authenticate = %q, want %q", got, challenge)
				}
			}
			if strings.Contains(rec.Body.String(), "connection refused") {
				t.Errorf("internal cause leaked: %s", rec.Body)
			}
		})
	}
}

// TestMetadata checks both RFC 9728 documents name /mcp as the resource and the service's
// issuer as its authorization server, without asking for any key.
func TestMetadata(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		var doc map[string]any
		body, _ := io.ReadAll(rec.Body)
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		if doc["resource"] != "https://masthead.example/mcp" {
			t.Errorf("%s: resource = %v", path, doc["resource"])
		}
		as, _ := doc["authorization_servers"].([]any)
		if len(as) != 1 || as[0] != "https://masthead.example/auth/v1" {
			t.Errorf("%s: authorization_servers = %v", path, doc["authorization_servers"])
		}
		if bm, _ := doc["bearer_methods_supported"].([]any); len(bm) != 1 || bm[0] != "header" {
			t.Errorf("%s: bearer_methods_supported = %v", path, doc["bearer_methods_supported"])
		}
		if rec.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: not readable cross-origin", path)
		}
	}
}

// TestTokenVerifier checks the offline adapter passes the claims through and refusals keep
// their sentinel, so they are answered 401.
func TestTokenVerifier(t *testing.T) {
	t.Parallel()
	v := TokenVerifier(func(tok string) ([]byte, error) {
		if tok != "good" {
			return nil, errors.Join(errBadToken, errors.New("signature is invalid"))
		}
		return []byte(`{"sub":"u1","role":"authenticated","exp":4102444800}`), nil
	})
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer good")
	c, err := v.Caller(r)
	if err != nil || c.Role != pg.RoleAuthenticated || string(c.Claims) != `{"sub":"u1","role":"authenticated","exp":4102444800}` {
		t.Fatalf("Caller = %+v, %v", c, err)
	}
	r.Header.Set("Authorization", "Bearer forged")
	if _, err := v.Caller(r); !errors.Is(err, errBadToken) {
		t.Fatalf("forged token: %v", err)
	}
}

// TestPreflight checks a browser-based client may call /mcp cross-origin with its token and
// read the challenge.
func TestPreflight(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	req := httptest.NewRequest(http.MethodOptions, "/mcp", nil)
	req.Header.Set("Origin", "https://inspector.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	h := rec.Header()
	if rec.Code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") ||
		!strings.Contains(h.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Fatalf("preflight: %d %v", rec.Code, h)
	}
}
