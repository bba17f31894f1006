package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"masthead/internal/pg"
)

func init() {
	commands["migrate"] = command{summary: migrateSummary, run: runMigrate}
}

const migrateSummary = "apply database migrations to DATABASE_OWNER_URL"

// ownerURLFlag registers the flag naming a connection that owns the schema. Admin commands use
// it; the service never does (it connects as the unprivileged login role).
func ownerURLFlag(fs *flag.FlagSet) *string {
	return fs.String("owner-url", envOr("DATABASE_OWNER_URL", ""),
		"connection string of a role that owns the schema (env DATABASE_OWNER_URL)")
}

func runMigrate(ctx context.Context, args []string, stdout io.Writer, _ *slog.Logger) error {
	fs := newFlags("migrate", migrateSummary)
	owner := ownerURLFlag(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *owner == "" {
		return errors.New("set --owner-url or DATABASE_OWNER_URL")
	}
	if err := pg.Migrate(ctx, *owner); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}
