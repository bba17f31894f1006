package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"masthead/internal/config"
)

// TestHostileInput: each hostile value gets a clear 4xx in its surface's shape (GoTrue's for
// /auth/v1, RFC 6749's for OAuth) and nothing is stored: no session, no client, no
// authorization, no change to the user's metadata. Values PostgreSQL cannot hold (a NUL or a
// lone surrogate in JSON text, bytes that are not UTF-8) are refused as the caller's, never as
// a 500.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *config.Config) { c.AuthorizeRateIP = config.Rate{Count: 1, Per: time.Hour, Burst: 40} })
	c := e.publicClient(t)
	_, challenge := pkce("hostile")
	ada := e.signIn(t, e.user.Email, e.user.Password)
	counts := func() string {
		var s string
		if err := e.DB.Owner(t).QueryRow(context.Background(), `select (select count(*) from auth.sessions)::text || '/' ||
			(select count(*) from auth.oauth_clients)::text || '/' || (select count(*) from auth.oauth_authorizations)::text || '/' ||
			(select raw_user_meta_data::text from auth.users where email = $1)`, e.user.Email).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := counts()
	authorize := func(change func(url.Values)) (*http.Response, url.Values) {
		q := authorizeQuery(c, challenge)
		change(q)
		res, err := noFollow.Get(e.URL + "/auth/v1/oauth/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		loc, _ := url.Parse(res.Header.Get("Location"))
		if loc == nil {
			return res, nil
		}
		return res, loc.Query()
	}
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"NUL in the sign-in email", func(t *testing.T) {
			res := e.do(t, request{path: "/auth/v1/token?grant_type=password", json: map[string]string{"email": "ada\x00@northwind.test", "password": "x"}})
			wantError(t, res, 400, "validation_failed")
		}},
		{"bidi override in the sign-in email", func(t *testing.T) {
			res := e.do(t, request{path: "/auth/v1/token?grant_type=password", json: map[string]string{"email": "ada\u202e@northwind.test", "password": "x"}})
			wantError(t, res, 400, "validation_failed")
		}},
		{"sign-in email that is not UTF-8", func(t *testing.T) {
			res := e.do(t, request{path: "/auth/v1/token?grant_type=password", form: url.Values{"email": {"ada\xff@northwind.test"}, "password": {"x"}}})
			wantError(t, res, 400, "validation_failed")
		}},
		{"NUL in user_metadata", func(t *testing.T) {
			res := e.do(t, request{method: http.MethodPut, path: "/auth/v1/user", bearer: ada.access, raw: `{"data":{"bio":"a\u0000b"}}`})
			wantError(t, res, 400, "validation_failed")
		}},
		{"NUL in a user_metadata key", func(t *testing.T) {
			res := e.do(t, request{method: http.MethodPut, path: "/auth/v1/user", bearer: ada.access, raw: `{"data":{"b\u0000io":1}}`})
			wantError(t, res, 400, "validation_failed")
		}},
		{"lone surrogate in user_metadata", func(t *testing.T) {
			res := e.do(t, request{method: http.MethodPut, path: "/auth/v1/user", bearer: ada.access, raw: `{"data":{"bio":"\udc00"}}`})
			wantError(t, res, 400, "validation_failed")
		}},
		{"NUL in the OAuth state", func(t *testing.T) {
			res, q := authorize(func(q url.Values) { q.Set("state", "st\x00ate") })
			if res.StatusCode != http.StatusFound || q.Get("error") != "invalid_request" {
				t.Fatalf("%d %v", res.StatusCode, q)
			}
		}},
		{"OAuth state that is not UTF-8", func(t *testing.T) {
			res, q := authorize(func(q url.Values) { q.Set("state", "st\xffate") })
			if res.StatusCode != http.StatusFound || q.Get("error") != "invalid_request" {
				t.Fatalf("%d %v", res.StatusCode, q)
			}
		}},
		{"OAuth nonce that is not UTF-8", func(t *testing.T) {
			res, q := authorize(func(q url.Values) { q.Set("nonce", "n\xff") })
			if res.StatusCode != http.StatusFound || q.Get("error") != "invalid_request" {
				t.Fatalf("%d %v", res.StatusCode, q)
			}
		}},
		{"OAuth resource that is not UTF-8", func(t *testing.T) {
			res, q := authorize(func(q url.Values) { q.Set("resource", e.URL+"/mcp\xff") })
			if res.StatusCode != http.StatusFound || q.Get("error") != "invalid_target" {
				t.Fatalf("%d %v", res.StatusCode, q)
			}
		}},
		{"unknown client stores nothing", func(t *testing.T) {
			res, _ := authorize(func(q url.Values) { q.Set("client_id", "00000000-0000-0000-0000-000000000000") })
			if res.StatusCode != http.StatusBadRequest {
				t.Fatalf("%d", res.StatusCode)
			}
		}},
		{"unregistered redirect stores nothing", func(t *testing.T) {
			res, _ := authorize(func(q url.Values) { q.Set("redirect_uri", "https://evil.test/cb") })
			if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" {
				t.Fatalf("%d %q", res.StatusCode, res.Header.Get("Location"))
			}
		}},
	}
	for _, scheme := range []string{"view-source:https://app.test/cb", "ftp://app.test/cb", "ws://127.0.0.1/cb", "javascript:alert(1)", "cursor://x/cb"} {
		cases = append(cases, struct {
			name string
			run  func(t *testing.T)
		}{"redirect URI " + scheme, func(t *testing.T) {
			res := e.do(t, request{path: "/auth/v1/oauth/clients/register", noKey: true,
				json: map[string]any{"client_name": "x", "redirect_uris": []string{scheme}, "token_endpoint_auth_method": "none"}})
			wantOAuthError(t, res, 400, "invalid_redirect_uri")
		}})
	}
	for _, name := range []string{"Claude\u202e", "Cl\u0000aude", "Cla\u0085ude", "\u2066Claude\u2069"} {
		cases = append(cases, struct {
			name string
			run  func(t *testing.T)
		}{"client_name " + strings.ToValidUTF8(name, "?"), func(t *testing.T) {
			res := e.do(t, request{path: "/auth/v1/oauth/clients/register", noKey: true,
				json: map[string]any{"client_name": name, "redirect_uris": []string{"https://app.test/cb"}, "token_endpoint_auth_method": "none"}})
			wantOAuthError(t, res, 400, "invalid_client_metadata")
		}})
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
	if after := counts(); after != before {
		t.Errorf("sessions/clients/authorizations went from %s to %s", before, after)
	}

	// The authorize endpoint is throttled per client address; the refusal says when to retry.
	var last *http.Response
	for range 45 {
		if last, _ = authorize(func(url.Values) {}); last.StatusCode == http.StatusTooManyRequests {
			break
		}
	}
	if last.StatusCode != http.StatusTooManyRequests || last.Header.Get("Retry-After") == "" {
		t.Errorf("45 authorizations from one address: last %d (Retry-After %q), want 429", last.StatusCode, last.Header.Get("Retry-After"))
	}
}

// TestHostileProviderRedirect: a sign-in through a provider whose redirect_to is a page of this
// site in bytes that are not UTF-8 is refused in GoTrue's shape (400), not answered 500, and
// starts no flow.
func TestHostileProviderRedirect(t *testing.T) {
	t.Parallel()
	// The provider only needs to be discoverable: the flow is refused before anyone is sent there.
	var issuer string
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":"%[1]s/authorize","token_endpoint":"%[1]s/token","jwks_uri":"%[1]s/jwks"}`, issuer)
	}))
	t.Cleanup(provider.Close)
	issuer = provider.URL
	e := newEnv(t, func(c *config.Config) {
		c.OIDC[0].Issuer, c.OIDC[0].ClientID, c.OIDC[0].ClientSecret = issuer, "masthead", "secret"
	})
	_, challenge := pkce("provider")
	q := url.Values{"provider": {e.Config.OIDC[0].Name}, "redirect_to": {e.URL + "/login/callback\xff"},
		"code_challenge": {challenge}, "code_challenge_method": {"s256"}}
	res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/authorize?" + q.Encode(), noKey: true})
	wantError(t, res, 400, "validation_failed")
	var flows int
	if err := e.DB.Owner(t).QueryRow(context.Background(), `select count(*) from auth.flow_state`).Scan(&flows); err != nil {
		t.Fatal(err)
	}
	if flows != 0 {
		t.Errorf("%d flows started", flows)
	}
}
