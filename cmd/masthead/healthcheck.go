package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"
)

func init() {
	commands["healthcheck"] = command{summary: healthcheckSummary, run: runHealthcheck}
}

const healthcheckSummary = "ask a running instance's /readyz; exit 0 when ready (for container health checks)"

// runHealthcheck is the container image's HEALTHCHECK: the image has no curl or wget, and the
// binary already knows where the service listens (MASTHEAD_ADDR, as `serve` reads it).
func runHealthcheck(ctx context.Context, args []string, stdout io.Writer, _ *slog.Logger) error {
	fs := newFlags("healthcheck", healthcheckSummary)
	url := fs.String("url", "", "URL to ask (default http://<MASTHEAD_ADDR>/readyz, a wildcard host asked on loopback)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *url == "" {
		u, err := readyzURL(envOr("MASTHEAD_ADDR", "127.0.0.1:8080"))
		if err != nil {
			return err
		}
		*url = u
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return fmt.Errorf("bad --url %q: %v", *url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap()
		}
		return fmt.Errorf("not ready: %s: %v", *url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("not ready: %s answered %s", *url, resp.Status)
	}
	fmt.Fprintf(stdout, "ready: %s\n", *url)
	return nil
}

// readyzURL is /readyz at addr; a wildcard host (0.0.0.0, ::, none) is asked on loopback.
func readyzURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("MASTHEAD_ADDR %q is not host:port", addr)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}
