package pg

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// versionTable records which migrations ran; tern keeps it in the public schema by default, so
// we keep it in app, which the REST surface never exposes.
const versionTable = "app.schema_version"

// Migrate applies every embedded migration that has not run yet, in order, each in its own
// transaction. url must name a role that owns the schema (the cluster superuser in dev).
func Migrate(ctx context.Context, url string) error { return MigrateTo(ctx, url, -1) }

// MigrateTo applies migrations up to and including version, or all of them when version is
// negative. Tests use it to put data in front of a migration that must repair it.
func MigrateTo(ctx context.Context, url string, version int32) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("pg: migrate connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `create schema if not exists app`); err != nil {
		return fmt.Errorf("pg: migrate: %w", err)
	}
	m, err := migrate.NewMigrator(ctx, conn, versionTable)
	if err != nil {
		return fmt.Errorf("pg: migrator: %w", err)
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("pg: migrations: %w", err)
	}
	if err := m.LoadMigrations(sub); err != nil {
		return fmt.Errorf("pg: load migrations: %w", err)
	}
	if version < 0 {
		err = m.Migrate(ctx)
	} else {
		err = m.MigrateTo(ctx, version)
	}
	if err != nil {
		return fmt.Errorf("pg: migrate: %w", err)
	}
	return nil
}
