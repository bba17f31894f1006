package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReadyzURL(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"0.0.0.0:8080":   "http://127.0.0.1:8080/readyz",
		":9000":          "http://127.0.0.1:9000/readyz",
		"[::]:8080":      "http://[::1]:8080/readyz",
		"10.0.0.5:8080":  "http://10.0.0.5:8080/readyz",
		"127.0.0.1:8081": "http://127.0.0.1:8081/readyz",
	} {
		if got, err := readyzURL(addr); err != nil || got != want {
			t.Errorf("readyzURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	if _, err := readyzURL("8080"); err == nil || !strings.Contains(err.Error(), "MASTHEAD_ADDR") {
		t.Errorf("a bad address: %v", err)
	}
}

// TestHealthcheck: exit 0 on a 200 from /readyz; 1 with the status on anything else, and with
// the reason when nothing answers.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	status := http.StatusOK
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer ts.Close()
	if code, out, errOut := runCmd("healthcheck", "--url", ts.URL+"/readyz"); code != 0 || !strings.Contains(out, "ready") {
		t.Errorf("ready: exit %d, %q %q", code, out, errOut)
	}
	status = http.StatusServiceUnavailable
	if code, _, errOut := runCmd("healthcheck", "--url", ts.URL+"/readyz"); code != 1 || !strings.Contains(errOut, "not ready: "+ts.URL+"/readyz answered 503 Service Unavailable") {
		t.Errorf("unavailable: exit %d, %q", code, errOut)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/readyz"
	ln.Close()
	if code, _, errOut := runCmd("healthcheck", "--url", closed); code != 1 || !strings.Contains(errOut, "not ready: "+closed) || !strings.Contains(errOut, "refused") {
		t.Errorf("nothing listening: exit %d, %q", code, errOut)
	}
}
