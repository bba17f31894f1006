package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"masthead/handlers"
	"masthead/internal/config"
	"masthead/internal/pg"
	"masthead/internal/pgrun"
	"masthead/internal/seed"
	"masthead/internal/server"
)

const devSummary = "run everything locally: private PostgreSQL, migrations, demo data, service and dashboard"

func init() {
	commands["dev"] = command{summary: devSummary, run: runDev}
}

// devDatabase is the database dev creates in its private cluster.
const devDatabase = "masthead"

func runDev(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	fs := newFlags("dev", devSummary)
	data := fs.String("data", envOr("MASTHEAD_DATA", ".masthead"), "folder for the private cluster, keys and media (env MASTHEAD_DATA)")
	addr := fs.String("addr", envOr("MASTHEAD_ADDR", "127.0.0.1:8080"), "address to serve on (env MASTHEAD_ADDR)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	// The publishable key and JWT keys come from the environment, else from the data folder,
	// where the first run generates them (below).
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	return dev(ctx, *data, *addr, cfg, stdout, log)
}

// dev runs everything on the data folder and serves on addr, with cfg as runDev read it from
// the environment. It is apart from runDev so that a test can hand it a configuration: tests
// run in parallel and cannot set environment variables.
func dev(ctx context.Context, data, addr string, cfg config.Config, stdout io.Writer, log *slog.Logger) error {
	ln, err := listen(addr, "MASTHEAD_ADDR")
	if err != nil {
		return err
	}
	defer ln.Close()          // already closed once Serve has run; this is for the early returns
	addr = ln.Addr().String() // the port chosen, for --addr 127.0.0.1:0
	mln, err := listenMetrics(cfg.MetricsAddr)
	if err != nil {
		return err
	}
	var opts []server.Option
	if mln != nil {
		defer mln.Close()
		opts = append(opts, server.WithMetricsListener(mln))
	}
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	pgLog, err := os.OpenFile(filepath.Join(data, "postgres.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer pgLog.Close()
	cluster, err := pgrun.Start(ctx, filepath.Join(data, "pg"), pgrun.Options{Log: pgLog})
	if err != nil {
		return err
	}
	defer func() {
		log.Info("stopping postgresql")
		_ = cluster.Stop()
	}()
	if err := ensureDatabase(ctx, cluster.URL(pgrun.Superuser, "postgres"), devDatabase); err != nil {
		return err
	}
	ownerURL := cluster.URL(pgrun.Superuser, devDatabase)
	if err := pg.Migrate(ctx, ownerURL); err != nil {
		return err
	}
	cfg.Addr, cfg.DatabaseURL = addr, cluster.URL(pg.LoginRole, devDatabase)
	if err := server.PrepareDev(data, &cfg); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	// Seeding is idempotent: the first run loads the demo data, later runs keep what is there.
	sum, err := seed.Run(ctx, ownerURL, seed.Options{Password: demoPassword(), BcryptCost: cfg.BcryptCost, MediaDir: cmp.Or(cfg.StorageDir, filepath.Join(data, server.DevMediaDir)), Log: log})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "PostgreSQL:  %s\n", cluster.URL(pg.LoginRole, devDatabase))
	fmt.Fprintf(stdout, "Owner:       %s\n", ownerURL)
	printSeedSummary(stdout, sum)
	fmt.Fprintf(stdout, "Demo logins (password %q): lead@, editor@, reviewer@, viewer@ at northwind.test, acme.test, lumen.test; multi@masthead.test\n", demoPassword())
	var logins []handlers.DemoLogin
	for _, d := range seed.DemoLogins() {
		logins = append(logins, handlers.DemoLogin{Email: d.Email, Roles: d.Roles})
	}
	srv, err := server.New(ctx, cfg, log, append(opts, server.WithDemoLogins(logins, demoPassword()))...)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "Service:     %s\n", cfg.BaseURL())
	fmt.Fprintf(stdout, "Publishable key: %s\n", cfg.PublishableKey)
	return srv.Serve(ctx, ln)
}

// ensureDatabase creates db on the cluster unless it exists.
func ensureDatabase(ctx context.Context, adminURL, db string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `select exists (select 1 from pg_database where datname = $1)`, db).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "create database "+pgx.Identifier{db}.Sanitize()); err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	return nil
}
