package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"masthead/internal/config"
	"masthead/internal/server"
)

func init() {
	const serveSummary = "run the service and the dashboard against DATABASE_URL"
	commands["serve"] = command{summary: serveSummary, run: func(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
		return runServe(ctx, "serve", serveSummary, args, stdout, log)
	}}
	const apiSummary = "run the service only (/auth/v1, /rest/v1, /storage/v1, /mcp) against DATABASE_URL"
	commands["api"] = command{summary: apiSummary, run: func(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
		return runServe(ctx, "api", apiSummary, args, stdout, log, server.WithoutDashboard())
	}}
}

// logOutput is where a command writes its log when --log-format or --log-level replace the
// logger main built from the environment; tests point it at a buffer.
var logOutput io.Writer = os.Stderr

// runServe reads the config from the environment and flags, then serves until ctx ends.
func runServe(ctx context.Context, name, summary string, args []string, stdout io.Writer, log *slog.Logger, opts ...server.Option) error {
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	fs := newFlags(name, summary)
	cfg.RegisterFlags(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	// main built the logger from the environment; flags given here win.
	if flagGiven(fs, "log-format", "log-level") {
		log = cfg.Logger(logOutput)
	}
	ln, err := listen(cfg.Addr, "MASTHEAD_ADDR")
	if err != nil {
		return err
	}
	defer ln.Close() // already closed once Serve has run; this is for the early returns
	mln, err := listenMetrics(cfg.MetricsAddr)
	if err != nil {
		return err
	}
	if mln != nil {
		defer mln.Close()
		opts = append(opts, server.WithMetricsListener(mln))
	}
	log.Info("masthead: starting", cfg.Redacted()...)
	srv, err := server.New(ctx, cfg, log, opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	return srv.Serve(ctx, ln)
}

// listenMetrics takes the metrics address, when one is set, before any database work, as
// listen does for the service's own; nil means metrics are off.
func listenMetrics(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s for metrics: %w; choose another address with --metrics-addr or MASTHEAD_METRICS_ADDR", addr, err)
	}
	return ln, nil
}

// flagGiven reports whether any of names was set on the command line.
func flagGiven(fs *flag.FlagSet, names ...string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) {
		for _, n := range names {
			given = given || f.Name == n
		}
	})
	return given
}
