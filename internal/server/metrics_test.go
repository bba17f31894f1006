package server_test

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/metrics/metricstest"
	"masthead/internal/server/servertest"
)

// serveWithMetrics starts a service whose /metrics listens on a loopback port of its own
// (MASTHEAD_METRICS_ADDR) and serves it with Serve, as `masthead serve` does; it returns the
// public base URL. The service stops when t ends.
func serveWithMetrics(t *testing.T, change func(*config.Config)) (*servertest.Env, string) {
	t.Helper()
	e := servertest.New(t, func(c *config.Config) {
		c.MetricsAddr = "127.0.0.1:0"
		if change != nil {
			change(c)
		}
	})
	return e, e.Loopback(t)
}

// scrapeText fetches /metrics as text and parses it, so a test can check both the series and
// what the text must never contain.
func scrapeText(t *testing.T, url string) (metricstest.Samples, string) {
	t.Helper()
	res, body := get(t, http.MethodGet, url, nil, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %d %s", url, res.StatusCode, body)
	}
	s, err := metricstest.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	return s, string(body)
}

// TestMetrics: after real traffic, the metrics address reports requests by surface, route
// template and status (never a raw path, id or slug), their latency, a password grant by
// outcome (ok, refused, rate limited), the rate-limit refusal behind the 429, an MCP tool call
// by tool and outcome, a scheduler run, and the database pool; the public address serves no
// /metrics at all.
func TestMetrics(t *testing.T) {
	t.Parallel()
	// Two password sign-ins per client and account: the third attempt is refused with 429.
	e, base := serveWithMetrics(t, func(c *config.Config) {
		c.TokenRateAccount = config.Rate{Count: 2, Per: time.Hour, Burst: 2}
		c.SchedulerInterval = 200 * time.Millisecond
	})
	e.CreateUser(t, "metrics@northwind.test", "metrics password")
	token := accessToken(t, base, e.Key, "metrics@northwind.test", "metrics password")
	signIn := func(password string) int {
		res, body := get(t, http.MethodPost, base+"/auth/v1/token?grant_type=password",
			map[string]string{"apikey": e.Key, "Content-Type": "application/json"},
			strings.NewReader(`{"email":"metrics@northwind.test","password":"`+password+`"}`))
		if res.StatusCode == http.StatusOK {
			t.Fatalf("sign-in with %q succeeded: %s", password, body)
		}
		return res.StatusCode
	}
	if got := signIn("wrong password"); got != http.StatusBadRequest {
		t.Fatalf("wrong password: %d", got)
	}
	if got := signIn("metrics password"); got != http.StatusTooManyRequests {
		t.Fatalf("third sign-in: %d, want 429", got)
	}
	user := map[string]string{"apikey": e.Key, "Authorization": "Bearer " + token}
	const id = "0b6f2a4e-7d1c-4c3e-9a55-2f1e8d7c6b5a"
	for range 3 {
		if res, body := get(t, http.MethodGet, base+"/rest/v1/publications?select=id&id=eq."+id, user, nil); res.StatusCode != http.StatusOK {
			t.Fatalf("rest: %d %s", res.StatusCode, body)
		}
	}
	// A dashboard page with a slug and an id in its path, signed out: redirected to /login.
	res, err := noRedirects.Get(base + "/p/northwind/publications/" + id)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	pageStatus := res.StatusCode

	s, text := scrapeText(t, e.MetricsURL)
	counts := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"masthead_http_requests_total", map[string]string{"surface": "rest", "method": "GET", "route": "/rest/v1/:table", "status": "200"}, 3},
		{"masthead_http_request_duration_seconds", map[string]string{"surface": "rest", "method": "GET", "route": "/rest/v1/:table"}, 3},
		{"masthead_http_requests_total", map[string]string{"surface": "auth", "method": "POST", "route": "/auth/v1/token", "status": "200"}, 1},
		{"masthead_http_requests_total", map[string]string{"surface": "auth", "route": "/auth/v1/token", "status": "400"}, 1},
		{"masthead_http_requests_total", map[string]string{"surface": "auth", "route": "/auth/v1/token", "status": "429"}, 1},
		{"masthead_http_requests_total", map[string]string{"surface": "dashboard", "method": "GET",
			"route": "/p/:slug/publications/:id", "status": strconv.Itoa(pageStatus)}, 1},
		{"masthead_auth_grants_total", map[string]string{"grant_type": "password", "outcome": "ok"}, 1},
		{"masthead_auth_grants_total", map[string]string{"grant_type": "password", "outcome": "refused"}, 1},
		{"masthead_auth_grants_total", map[string]string{"grant_type": "password", "outcome": "rate_limited"}, 1},
		{"masthead_auth_grants_total", map[string]string{"grant_type": "refresh_token"}, 0},
		{"masthead_rate_limit_refusals_total", map[string]string{"limit": "token_account"}, 1},
		{"masthead_rate_limit_refusals_total", map[string]string{"limit": "token_ip"}, 0},
	}
	for _, c := range counts {
		if got, n := s.Value(c.name, c.labels); n == 0 || got != c.want {
			t.Errorf("%s%v = %v (%d series), want %v; have:\n%s", c.name, c.labels, got, n, c.want, s.Labels(c.name))
		}
	}
	for _, raw := range []string{id, "northwind", "metrics@", "/rest/v1/publications"} {
		if strings.Contains(text, raw) {
			t.Errorf("/metrics contains %q: labels must be route templates and fixed values", raw)
		}
	}
	for _, g := range []string{"acquired_connections", "idle_connections", "total_connections", "max_connections", "acquires_total", "acquire_waits_total"} {
		if _, n := s.Value("masthead_db_pool_"+g, map[string]string{"pool": "primary"}); n != 1 {
			t.Errorf("pool series masthead_db_pool_%s missing", g)
		}
	}
	if v, _ := s.Value("masthead_db_pool_max_connections", nil); v < 1 {
		t.Errorf("pool max connections %v", v)
	}
	if v, _ := s.Value("masthead_db_pool_acquires_total", nil); v < 1 {
		t.Errorf("pool acquires %v after requests that used the database", v)
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if _, n := s.Value(name, nil); n == 0 {
			t.Errorf("runtime series %s missing", name)
		}
	}

	// An MCP tool call, counted by tool and outcome.
	res, body := get(t, http.MethodPost, base+"/mcp", map[string]string{
		"Authorization": "Bearer " + token, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18",
	}, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_projects","arguments":{}}}`))
	if res.StatusCode != http.StatusOK || bytes.Contains(body, []byte(`"isError":true`)) {
		t.Fatalf("mcp list_projects: %d %s", res.StatusCode, body)
	}
	// A scheduler run: its counter is recorded before its debug line is written.
	e.Logs.WaitLines(t, time.Minute, 1, `"msg":"scheduler: ran"`)
	s = metricstest.Scrape(t, e.MetricsURL)
	for _, c := range []struct {
		name   string
		labels map[string]string
	}{
		{"masthead_mcp_tool_calls_total", map[string]string{"tool": "list_projects", "outcome": "ok"}},
		{"masthead_mcp_tool_call_duration_seconds", map[string]string{"tool": "list_projects"}},
		{"masthead_http_requests_total", map[string]string{"surface": "mcp", "method": "POST", "route": "/mcp", "status": "200"}},
		{"masthead_scheduler_runs_total", map[string]string{"outcome": "ok"}},
		{"masthead_scheduler_run_duration_seconds", nil},
	} {
		if got, n := s.Value(c.name, c.labels); n == 0 || got < 1 {
			t.Errorf("%s%v = %v, want at least 1; have:\n%s", c.name, c.labels, got, s.Labels(c.name))
		}
	}
	if got, _ := s.Value("masthead_mcp_tool_calls_total", map[string]string{"tool": "list_projects", "outcome": "ok"}); got != 1 {
		t.Errorf("list_projects calls = %v, want 1", got)
	}

	// Never on the public address, whichever way it is reached.
	for _, u := range []string{base + "/metrics", e.URL + "/metrics"} {
		res, body := get(t, http.MethodGet, u, nil, nil)
		if res.StatusCode != http.StatusNotFound || bytes.Contains(body, []byte("masthead_")) {
			t.Errorf("GET %s: %d %.200s", u, res.StatusCode, body)
		}
	}
}

// TestMetricsOff: without MASTHEAD_METRICS_ADDR (the default) Serve opens no metrics listener
// and the public address still answers /metrics with 404.
func TestMetricsOff(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	if e.Config.MetricsAddr != "" || e.MetricsURL != "" {
		t.Fatalf("metrics on by default: %q", e.Config.MetricsAddr)
	}
	base := e.Loopback(t)
	e.Logs.WaitLines(t, time.Minute, 1, `"msg":"server: listening"`)
	res, _ := get(t, http.MethodGet, base+"/metrics", nil, nil)
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("public /metrics: %d", res.StatusCode)
	}
	if lines := e.Logs.Lines("metrics listening"); len(lines) != 0 {
		t.Errorf("a metrics listener was opened: %v", lines)
	}
}

// TestMetricsCountDashboardCalls: the calls the dashboard makes to the service for a person (in
// process) are counted under their own surfaces, beside the dashboard's request: a sign-in is
// one POST /login of the dashboard and one POST /auth/v1/token of auth.
func TestMetricsCountDashboardCalls(t *testing.T) {
	t.Parallel()
	e, base := serveWithMetrics(t, nil)
	u := e.CreateUser(t, "counted@dashboard.test", "a counted password")
	if got := signIn(t, browserAt(t, "127.0.0.10"), base, u.Email, u.Password); got != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", got)
	}
	// The dashboard's line is written after its request is counted, and may follow its answer.
	e.Logs.WaitLines(t, 30*time.Second, 1, `"msg":"request"`, `"method":"POST"`, `"route":"/login"`)
	s, _ := scrapeText(t, e.MetricsURL)
	for _, c := range []map[string]string{
		{"surface": "dashboard", "method": "POST", "route": "/login", "status": "303"},
		{"surface": "auth", "method": "POST", "route": "/auth/v1/token", "status": "200"},
	} {
		if got, n := s.Value("masthead_http_requests_total", c); n != 1 || got != 1 {
			t.Errorf("masthead_http_requests_total%v = %v (%d series), want 1; have:\n%s", c, got, n, s.Labels("masthead_http_requests_total"))
		}
	}
}
