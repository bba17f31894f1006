package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"

	"masthead/internal/config"
	"masthead/internal/server"
)

func init() {
	commands["serve"] = command{summary: "run the service and the dashboard against DATABASE_URL", run: func(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
		return runServe(ctx, "serve", args, log)
	}}
	commands["api"] = command{summary: "run the service only (/auth/v1, /rest/v1, /storage/v1, /mcp) against DATABASE_URL", run: func(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
		return runServe(ctx, "api", args, log, server.WithoutDashboard())
	}}
}

// runServe reads the config from the environment and flags, then serves until ctx ends.
func runServe(ctx context.Context, name string, args []string, log *slog.Logger, opts ...server.Option) error {
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	log.Info("masthead: starting", cfg.Redacted()...)
	srv, err := server.New(ctx, cfg, log, opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	return srv.Run(ctx)
}
