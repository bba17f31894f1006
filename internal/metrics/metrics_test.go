package metrics_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"masthead/internal/metrics"
	"masthead/internal/metrics/metricstest"
)

func scrape(t *testing.T, m *metrics.Metrics) metricstest.Samples {
	t.Helper()
	ts := httptest.NewServer(m.Handler())
	defer ts.Close()
	return metricstest.Scrape(t, ts.URL)
}

// TestNilRecordsNothing: a package given no metrics records through a nil *Metrics safely.
func TestNilRecordsNothing(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	m.Request(metrics.SurfaceREST, http.MethodGet, "/rest/v1/:table", 200, time.Millisecond)
	m.RateLimited(metrics.LimitTokenIP)
	m.Grant(metrics.GrantPassword, metrics.OutcomeOK)
	m.ToolCall("list_projects", metrics.OutcomeOK, time.Millisecond)
	m.SchedulerRun(1, time.Millisecond, nil)
	if err := m.WatchPool("primary", nil); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("nil handler: %d", rec.Code)
	}
}

// TestLabelsStayBounded: values outside a label's fixed set are recorded as "other" (or, for a
// grant type, "unsupported"), so a client inventing methods, grant types or outcomes cannot
// add series; the fixed sets start at zero.
func TestLabelsStayBounded(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	m.Request("elsewhere", "BREW", "/rest/v1/:table", 418, 20*time.Millisecond)
	m.Request(metrics.SurfaceREST, http.MethodGet, "/rest/v1/:table", 1000, time.Millisecond)
	m.Grant("client_credentials", "maybe")
	m.Grant(metrics.GrantPassword, metrics.OutcomeRefused)
	m.RateLimited("made_up")
	m.RateLimited(metrics.LimitTokenAccount)
	m.ToolCall("approve", "strange", time.Millisecond)
	m.SchedulerRun(3, time.Millisecond, nil)
	m.SchedulerRun(1, time.Millisecond, errors.New("database down"))
	s := scrape(t, m)

	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"masthead_http_requests_total", map[string]string{"surface": "other", "method": "other", "route": "/rest/v1/:table", "status": "418"}, 1},
		{"masthead_http_requests_total", map[string]string{"surface": "rest", "method": "GET", "status": "other"}, 1},
		{"masthead_http_request_duration_seconds", map[string]string{"surface": "other", "method": "other"}, 1},
		{"masthead_auth_grants_total", map[string]string{"grant_type": "unsupported", "outcome": "other"}, 1},
		{"masthead_auth_grants_total", map[string]string{"grant_type": "password", "outcome": "refused"}, 1},
		{"masthead_auth_grants_total", map[string]string{"grant_type": "pkce", "outcome": "ok"}, 0},
		{"masthead_rate_limit_refusals_total", map[string]string{"limit": "other"}, 1},
		{"masthead_rate_limit_refusals_total", map[string]string{"limit": "token_account"}, 1},
		{"masthead_rate_limit_refusals_total", map[string]string{"limit": "oauth_register"}, 0},
		{"masthead_mcp_tool_calls_total", map[string]string{"tool": "approve", "outcome": "other"}, 1},
		{"masthead_scheduler_runs_total", map[string]string{"outcome": "ok"}, 1},
		{"masthead_scheduler_runs_total", map[string]string{"outcome": "error"}, 1},
		{"masthead_scheduler_published_total", nil, 4},
		{"masthead_scheduler_run_duration_seconds", nil, 2},
	}
	for _, tt := range tests {
		if got, n := s.Value(tt.name, tt.labels); n == 0 || got != tt.want {
			t.Errorf("%s%v = %v (%d series), want %v; have:\n%s", tt.name, tt.labels, got, n, tt.want, s.Labels(tt.name))
		}
	}
	// Every grant type × outcome of the fixed sets exists from the start (5 × 4), plus the one
	// "other" outcome recorded above.
	if _, n := s.Value("masthead_auth_grants_total", nil); n != 5*4+1 {
		t.Errorf("grant series: %d\n%s", n, s.Labels("masthead_auth_grants_total"))
	}
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_start_time_seconds"} {
		if _, n := s.Value(name, nil); n == 0 {
			t.Errorf("runtime series %s missing", name)
		}
	}
}
