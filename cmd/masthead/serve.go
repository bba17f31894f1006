package main

import (
	"context"
	"io"
	"log/slog"
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
	ln, err := listen(cfg.Addr, "MASTHEAD_ADDR")
	if err != nil {
		return err
	}
	defer ln.Close() // already closed once Serve has run; this is for the early returns
	log.Info("masthead: starting", cfg.Redacted()...)
	srv, err := server.New(ctx, cfg, log, opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	return srv.Serve(ctx, ln)
}
