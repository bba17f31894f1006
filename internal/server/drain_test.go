package server_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/server/servertest"
)

// TestShutdownDrain: with MASTHEAD_SHUTDOWN_DRAIN set, the stop signal first turns /readyz to
// 503 {"status":"draining"}, so a load balancer takes the instance out, while the listener stays
// open and every other request is served as before; only once the drain has passed does the
// listener close and Serve return. (internal/cluster shows what this buys behind HAProxy.)
func TestShutdownDrain(t *testing.T) {
	t.Parallel()
	const drain = 3 * time.Second
	e := servertest.New(t, func(c *config.Config) { c.ShutdownDrain = drain })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	var serveErr error
	served := make(chan struct{}) // closed when Serve has returned serveErr
	go func() { serveErr = e.Server.Serve(ctx, ln); close(served) }()
	t.Cleanup(func() { stop(); <-served })

	if res, body := get(t, http.MethodGet, base+"/readyz", nil, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("readyz before the stop signal: %d %s", res.StatusCode, body)
	}
	stop()
	stopped := time.Now()
	// Draining: not ready, but serving. Polled, since the stop reaches Serve asynchronously.
	for {
		res, body := get(t, http.MethodGet, base+"/readyz", nil, nil)
		if res.StatusCode == http.StatusServiceUnavailable {
			if !strings.Contains(string(body), `"draining"`) {
				t.Fatalf("readyz while draining: %s", body)
			}
			break
		}
		if time.Since(stopped) > drain {
			t.Fatalf("readyz still %d after the drain period", res.StatusCode)
		}
		// Ask again shortly, unless Serve has already returned: then it never drained.
		select {
		case <-served:
			t.Fatalf("Serve returned (%v) before /readyz ever said draining", serveErr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if res, body := get(t, http.MethodGet, base+"/healthz", nil, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("healthz while draining: %d %s", res.StatusCode, body)
	}
	select {
	case <-served:
		t.Fatalf("Serve returned (%v) %s after the stop signal, within the drain of %s", serveErr, time.Since(stopped), drain)
	default:
	}
	<-served
	if serveErr != nil {
		t.Fatalf("Serve: %v", serveErr)
	}
	if took := time.Since(stopped); took < drain {
		t.Errorf("Serve returned %s after the stop signal, before the drain of %s had passed", took, drain)
	}
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("still accepting connections after Serve returned")
	}
	if len(e.Logs.Lines(`"msg":"server: draining"`, `"for":"3s"`)) != 1 {
		t.Errorf("no drain logged:\n%s", e.Logs.String())
	}
}
