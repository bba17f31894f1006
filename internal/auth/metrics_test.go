package auth_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/metrics/metricstest"
)

// TestGrantsAndLimitsAreCounted: both token endpoints count every request by grant type and
// outcome (an unknown grant type as unsupported), and every rate limit counts its refusals
// under its own name.
func TestGrantsAndLimitsAreCounted(t *testing.T) {
	t.Parallel()
	once := config.Rate{Count: 1, Per: time.Hour, Burst: 1}
	e := newEnv(t, func(c *config.Config) { c.RegisterRateIP, c.AuthorizeRateIP = once, once })
	s := e.signIn(t, e.user.Email, e.user.Password)
	c := e.publicClient(t)
	verifier, challenge := pkce("metrics")

	// OAuth: a code exchanged (ok), then the same code again (refused), then a grant the
	// token endpoint does not offer (unsupported, refused).
	code := e.approve(t, c, challenge, s.access)
	if res := e.exchange(t, c, code, verifier); res.status != http.StatusOK {
		t.Fatalf("exchange: %d %s", res.status, res.raw)
	}
	wantOAuthError(t, e.exchange(t, c, code, verifier), http.StatusBadRequest, "invalid_grant")
	res := e.do(t, request{path: "/auth/v1/oauth/token", noKey: true, form: url.Values{"grant_type": {"client_credentials"}, "client_id": {c.id}}})
	wantOAuthError(t, res, http.StatusBadRequest, "unsupported_grant_type")
	// GoTrue's endpoint: a refresh (ok), a refresh token it never issued (refused), a grant
	// type it does not know.
	if res := e.do(t, request{path: "/auth/v1/token?grant_type=refresh_token", json: map[string]string{"refresh_token": s.refresh}}); res.status != http.StatusOK {
		t.Fatalf("refresh: %d %s", res.status, res.raw)
	}
	if res := e.do(t, request{path: "/auth/v1/token?grant_type=refresh_token", json: map[string]string{"refresh_token": "never-issued"}}); res.status != http.StatusBadRequest {
		t.Fatalf("unknown refresh token: %d %s", res.status, res.raw)
	}
	if res := e.do(t, request{path: "/auth/v1/token?grant_type=magic", json: map[string]string{}}); res.status != http.StatusBadRequest {
		t.Fatalf("unknown grant: %d %s", res.status, res.raw)
	}
	// The registration and authorize limits allow one each: publicClient and approve used them.
	if res := e.do(t, request{path: "/auth/v1/oauth/clients/register", noKey: true,
		json: map[string]any{"redirect_uris": []string{"https://a.test/cb"}, "token_endpoint_auth_method": "none"}}); res.status != http.StatusTooManyRequests {
		t.Fatalf("second registration: %d %s", res.status, res.raw)
	}
	authz, err := http.NewRequest(http.MethodGet, e.URL+"/auth/v1/oauth/authorize?"+authorizeQuery(c, challenge).Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := noFollow.Do(authz)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second authorize: %d", r.StatusCode)
	}

	ts := httptest.NewServer(e.Server.Metrics())
	defer ts.Close()
	got := metricstest.Scrape(t, ts.URL)
	for _, w := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"masthead_auth_grants_total", map[string]string{"grant_type": "password", "outcome": "ok"}, 1},
		{"masthead_auth_grants_total", map[string]string{"grant_type": "authorization_code", "outcome": "ok"}, 1},
		{"masthead_auth_grants_total", map[string]string{"grant_type": "authorization_code", "outcome": "refused"}, 1},
		{"masthead_auth_grants_total", map[string]string{"grant_type": "refresh_token", "outcome": "ok"}, 1},
		{"masthead_auth_grants_total", map[string]string{"grant_type": "refresh_token", "outcome": "refused"}, 1},
		{"masthead_auth_grants_total", map[string]string{"grant_type": "unsupported", "outcome": "refused"}, 2},
		{"masthead_auth_grants_total", map[string]string{"outcome": "error"}, 0},
		{"masthead_rate_limit_refusals_total", map[string]string{"limit": "oauth_register"}, 1},
		{"masthead_rate_limit_refusals_total", map[string]string{"limit": "oauth_authorize"}, 1},
		{"masthead_rate_limit_refusals_total", map[string]string{"limit": "token_ip"}, 0},
	} {
		if v, n := got.Value(w.name, w.labels); n == 0 || v != w.want {
			t.Errorf("%s%v = %v, want %v; have:\n%s", w.name, w.labels, v, w.want, got.Labels(w.name))
		}
	}
}
