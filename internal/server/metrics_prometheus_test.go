package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// prometheusPath is Debian's Prometheus; `make test` installs it when missing (deps-prometheus).
const prometheusPath = "/usr/bin/prometheus"

// TestPrometheusScrapesMetrics: Debian's real Prometheus, configured to scrape the service's
// metrics address, stores a masthead series that its query API then returns with the labels
// and value the service reported.
func TestPrometheusScrapesMetrics(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(prometheusPath); err != nil {
		t.Fatalf("prometheus is missing at %s: run `make deps-prometheus` (apt-get install -y prometheus)", prometheusPath)
	}
	e, base := serveWithMetrics(t, nil)
	for range 2 {
		if res, _ := get(t, http.MethodGet, base+"/healthz", nil, nil); res.StatusCode != http.StatusOK {
			t.Fatalf("healthz: %d", res.StatusCode)
		}
	}
	target := strings.TrimSuffix(strings.TrimPrefix(e.MetricsURL, "http://"), "/metrics")
	api := startPrometheus(t, target)

	// Wait for the series to be scraped and stored: Prometheus answers the query with it.
	const query = `masthead_http_requests_total{job="masthead",surface="health",route="/healthz",status="200"}`
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		res := promQuery(t, api.url, query)
		if len(res) == 1 {
			r := res[0]
			if r.Metric["method"] != "GET" || r.Metric["instance"] != target || r.Metric["__name__"] != "masthead_http_requests_total" {
				t.Fatalf("series labels: %v", r.Metric)
			}
			if v, err := strconv.ParseFloat(r.Value[1].(string), 64); err != nil || v != 2 {
				t.Fatalf("value %v, want 2 (two /healthz requests)", r.Value)
			}
			break
		}
		if len(res) > 1 {
			t.Fatalf("several series for one label set: %v", res)
		}
		select {
		case <-tick.C:
		case <-api.exited:
			t.Fatalf("prometheus exited:\n%s", api.out.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus did not return %s within a minute; targets: %s\nlog:\n%s", query, promTargets(api.url), api.out.String())
		}
	}
	// The target is up, and the pool's series came along with the same scrape.
	if res := promQuery(t, api.url, `up{job="masthead"} == 1`); len(res) != 1 {
		t.Fatalf("up: %v", res)
	}
	if res := promQuery(t, api.url, `masthead_db_pool_max_connections{pool="primary"}`); len(res) != 1 {
		t.Fatalf("pool series: %v", res)
	}
}

// prometheus is a running Prometheus: its API base URL, its output, and a channel closed when
// the process exits.
type prometheus struct {
	url    string
	out    *lockedBuffer
	exited chan struct{}
}

// startPrometheus runs Debian's Prometheus scraping target every 200 ms, with its own storage
// folder and web address on a free loopback port, until t ends; it returns once the web API
// answers that it is ready.
func startPrometheus(t *testing.T, target string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 200ms
  scrape_timeout: 200ms
scrape_configs:
  - job_name: masthead
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// A free port for the web address: Prometheus cannot report a port it chose itself.
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := probe.Addr().String()
	probe.Close()
	p := &prometheus{url: "http://" + addr, out: &lockedBuffer{}, exited: make(chan struct{})}
	cmd := exec.Command(prometheusPath,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn")
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("prometheus log:\n%s", p.out.String())
		}
	})
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if res, err := http.Get(p.url + "/-/ready"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-tick.C:
		case <-p.exited:
			t.Fatalf("prometheus exited before it was ready:\n%s", p.out.String())
		case <-deadline.C:
			t.Fatalf("prometheus not ready within a minute:\n%s", p.out.String())
		}
	}
}

// promResult is one series of an instant query's vector result.
type promResult struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// promQuery runs an instant query against Prometheus' HTTP API.
func promQuery(t *testing.T, api, query string) []promResult {
	t.Helper()
	res, body := get(t, http.MethodGet, api+"/api/v1/query?query="+url.QueryEscape(query), nil, nil)
	var out struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promResult `json:"result"`
		} `json:"data"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil || out.Status != "success" || out.Data.ResultType != "vector" {
		t.Fatalf("query %s: %d %s", query, res.StatusCode, body)
	}
	return out.Data.Result
}

// promTargets is Prometheus' view of its targets, for a failure message.
func promTargets(api string) string {
	res, err := http.Get(api + "/api/v1/targets")
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(res.Body)
	return b.String()
}

// lockedBuffer collects a process's output while tests read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
