package auth_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sort"
	"strconv"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/metrics/metricstest"
)

func TestRateLimitPerIP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *config.Config) { c.TokenRateIP = config.Rate{Count: 3, Per: time.Minute, Burst: 3} })
	for i := range 3 {
		res := e.do(t, request{path: "/auth/v1/token?grant_type=password", json: map[string]string{"email": "x@northwind.test", "password": "x"}})
		if res.status != http.StatusBadRequest {
			t.Fatalf("request %d: %d, want 400 before the limit", i, res.status)
		}
	}
	// Refreshes from the same address count against the same bucket.
	res := e.refresh(t, "whatever")
	wantError(t, res, http.StatusTooManyRequests, "over_request_rate_limit")
	secs, err := strconv.Atoi(res.header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 20 {
		t.Fatalf("Retry-After = %q, want about 20 s (1 token per 20 s)", res.header.Get("Retry-After"))
	}
}

func TestRateLimitPerAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *config.Config) { c.TokenRateAccount = config.Rate{Count: 2, Per: time.Hour, Burst: 2} })
	try := func(email string) response {
		return e.do(t, request{path: "/auth/v1/token?grant_type=password", json: map[string]string{"email": email, "password": "guess"}})
	}
	for range 2 {
		wantError(t, try(e.user.Email), 400, "invalid_credentials")
	}
	wantError(t, try("Ada@Northwind.test"), 429, "over_request_rate_limit") // the same account, however spelt
	wantError(t, try("someone.else@northwind.test"), 400, "invalid_credentials")
}

// TestRateLimitPerClientAndAccount: guesses at an account slow down the client that makes them,
// not the account's owner elsewhere; a looser ceiling per account across all clients answers
// 429 with a Retry-After (it backs off, it never locks).
func TestRateLimitPerClientAndAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *config.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} // clients named by X-Forwarded-For
		c.TokenRateAccount = config.Rate{Count: 2, Per: time.Hour, Burst: 2}
		c.TokenRateAccountTotal = config.Rate{Count: 3, Per: time.Hour, Burst: 3}
	})
	from := func(ip, email string) response {
		return e.do(t, request{path: "/auth/v1/token?grant_type=password", headers: map[string]string{"X-Forwarded-For": ip},
			json: map[string]string{"email": email, "password": "guess"}})
	}
	wantError(t, from("192.0.2.1", e.user.Email), 400, "invalid_credentials")
	wantError(t, from("192.0.2.1", e.user.Email), 400, "invalid_credentials")
	wantError(t, from("192.0.2.1", e.user.Email), 429, "over_request_rate_limit") // this client, this account
	wantError(t, from("192.0.2.2", e.user.Email), 400, "invalid_credentials")     // another client still may
	res := from("192.0.2.3", e.user.Email)                                        // the account-wide ceiling
	wantError(t, res, 429, "over_request_rate_limit")
	if secs, err := strconv.Atoi(res.header.Get("Retry-After")); err != nil || secs < 1 {
		t.Errorf("the ceiling says when to try again: Retry-After %q", res.header.Get("Retry-After"))
	}
	wantError(t, from("192.0.2.3", "someone.else@northwind.test"), 400, "invalid_credentials")

	// Each 429 is counted under the limit that refused it.
	ts := httptest.NewServer(e.Server.Metrics())
	defer ts.Close()
	got := metricstest.Scrape(t, ts.URL)
	for limit, want := range map[string]float64{"token_account": 1, "token_account_total": 1, "token_ip": 0} {
		if v, _ := got.Value("masthead_rate_limit_refusals_total", map[string]string{"limit": limit}); v != want {
			t.Errorf("refusals by %s: %v, want %v; have:\n%s", limit, v, want, got.Labels("masthead_rate_limit_refusals_total"))
		}
	}
}

// TestUnknownEmailTakesAsLongAsWrongPassword guards against user enumeration by timing: an
// unknown email must cost a bcrypt comparison like a wrong password does.
func TestUnknownEmailTakesAsLongAsWrongPassword(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.BcryptCost = 10 })
	u := e.CreateUser(t, "timing@northwind.test", "the real password")
	measure := func(email string) time.Duration {
		start := time.Now()
		wantError(t, e.do(t, request{path: "/auth/v1/token?grant_type=password",
			json: map[string]string{"email": email, "password": "wrong password"}}), 400, "invalid_credentials")
		return time.Since(start)
	}
	var known, unknown []time.Duration
	for range 7 {
		known = append(known, measure(u.Email))
		unknown = append(unknown, measure("nobody@northwind.test"))
	}
	median := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	k, n := median(known), median(unknown)
	t.Logf("median wrong password %v, unknown email %v", k, n)
	if n < k/2 || n > k*2 { // generous bounds: the leak this guards against is 0 vs 100 ms
		t.Fatalf("unknown email takes %v, wrong password %v: the difference tells which emails exist", n, k)
	}
}
