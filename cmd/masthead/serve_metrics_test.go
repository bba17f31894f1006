package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"masthead/internal/auth"
	"masthead/internal/metrics/metricstest"
	"masthead/internal/pg/pgtest"
	"masthead/internal/server/servertest"
	"masthead/internal/testwait"
)

// TestServeMetricsAndLogFlags: `masthead serve` with --metrics-addr serves /metrics there and
// not on --addr, and --log-format/--log-level replace the logger main built from the
// environment. Not parallel: it points logOutput at its buffer while it runs.
func TestServeMetricsAndLogFlags(t *testing.T) {
	db := pgtest.New(t)
	keys, err := auth.GenerateKeySet()
	if err != nil {
		t.Fatal(err)
	}
	logs := &servertest.Buffer{}
	was := logOutput
	logOutput = logs
	defer func() { logOutput = was }()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- commands["serve"].run(ctx, []string{"--database-url", db.URL, "--jwt-keys", string(keys),
			"--publishable-key", auth.GeneratePublishableKey(), "--storage-dir", t.TempDir(),
			"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--log-format", "json", "--log-level", "info",
			"--bcrypt-cost", "4", "--scheduler-interval", "100ms"},
			&bytes.Buffer{}, slog.New(slog.DiscardHandler))
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	addrOf := func(msg string) string {
		line := logs.WaitLines(t, time.Minute, 1, `"msg":"`+msg+`"`)[0]
		var rec struct{ Addr string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Addr == "" {
			t.Fatalf("%s: %v %s", msg, err, line)
		}
		return "http://" + rec.Addr
	}
	public, metricsURL := addrOf("server: listening"), addrOf("server: metrics listening")+"/metrics"
	if public+"/metrics" == metricsURL {
		t.Fatalf("metrics on the public address %s", public)
	}
	for _, u := range []string{public + "/healthz", public + "/metrics"} {
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if want := map[bool]int{true: 200, false: 404}[strings.HasSuffix(u, "/healthz")]; res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", u, res.StatusCode, want)
		}
	}
	s := metricstest.Scrape(t, metricsURL)
	if v, _ := s.Value("masthead_http_requests_total", map[string]string{"surface": "health", "route": "/healthz", "status": "200"}); v != 1 {
		t.Errorf("healthz requests %v, want 1:\n%s", v, s.Labels("masthead_http_requests_total"))
	}
	if _, n := s.Value("masthead_db_pool_idle_connections", map[string]string{"pool": "primary"}); n != 1 {
		t.Error("no pool series")
	}
	// --log-level info: no debug line, although every scheduler run logs one at debug. A second
	// run starts only after the first logged its line, so wait for two.
	testwait.Until(t, time.Minute, "two scheduler runs", func() (bool, string) {
		v, _ := metricstest.Scrape(t, metricsURL).Value("masthead_scheduler_runs_total", nil)
		return v >= 2, fmt.Sprintf("%v runs", v)
	})
	// --log-format json: every line is JSON, and the start-up line shows the settings without
	// their secrets.
	logs.WaitLines(t, time.Minute, 1, `"msg":"request"`, `"route":"/healthz"`)
	for _, l := range logs.Lines() {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Errorf("not a JSON line: %s", l)
		}
		if rec["level"] == "DEBUG" {
			t.Errorf("a debug line at --log-level info: %s", l)
		}
	}
	if start := logs.Lines(`"msg":"masthead: starting"`, `"log_format":"json"`, `"log_level":"info"`, `"metrics_addr":"127.0.0.1:0"`); len(start) != 1 {
		t.Errorf("start-up line:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), string(keys)[:40]) || strings.Contains(logs.String(), db.URL) {
		t.Error("a secret reached the log")
	}
}

// TestServeMetricsAddressTaken: a metrics address already in use is reported before any
// database work, naming the flag and variable to change.
func TestServeMetricsAddressTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	keys, err := auth.GenerateKeySet()
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCmd("serve", "--database-url", "postgres://authenticator@127.0.0.1:1/none", "--jwt-keys", string(keys),
		"--publishable-key", auth.GeneratePublishableKey(), "--storage-dir", t.TempDir(),
		"--addr", "127.0.0.1:0", "--metrics-addr", taken.Addr().String())
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{taken.Addr().String(), "for metrics", "--metrics-addr", "MASTHEAD_METRICS_ADDR"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("error %q lacks %q", errOut, want)
		}
	}
}
