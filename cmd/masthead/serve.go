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
	commands["serve"] = command{summary: "run the service and the dashboard against DATABASE_URL", run: runServe}
	commands["api"] = command{summary: "run the service only (/auth/v1, /rest/v1, …) against DATABASE_URL", run: runServe}
}

// runServe reads the config from the environment and flags, then serves until ctx ends.
// `serve` and `api` run the same service today; the dashboard mounts in server.New and
// `api` will leave it out once it exists.
func runServe(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	log.Info("masthead: starting", cfg.Redacted()...)
	srv, err := server.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer srv.Close()
	return srv.Run(ctx)
}
