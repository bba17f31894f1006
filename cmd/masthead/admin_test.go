package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"masthead/internal/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestAdminCommands: migrate is idempotent on a migrated database, and users create/list work
// through the command line as an operator would type them.
func TestAdminCommands(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	var out bytes.Buffer
	run := func(name string, args ...string) error {
		out.Reset()
		return commands[name].run(ctx, append(args, "--owner-url", db.OwnerURL), &out, log)
	}
	if err := run("migrate"); err != nil || !strings.Contains(out.String(), "migrations applied") {
		t.Fatalf("migrate: %v %q", err, out.String())
	}
	if _, err := db.Owner(t).Exec(ctx, `insert into projects (slug, name) values ('gazette', 'Gazette')`); err != nil {
		t.Fatal(err)
	}
	if err := run("users", "create", "--email", "ed@gazette.test", "--password", "long-enough", "--project", "gazette", "--role", "editor"); err != nil {
		t.Fatalf("users create: %v", err)
	}
	if err := run("users", "create", "--email", "ed@gazette.test", "--password", "long-enough"); err == nil {
		t.Fatal("creating the same email twice was accepted")
	}
	if err := run("users", "create", "--email", "x@gazette.test", "--password", "long-enough", "--project", "gazette", "--role", "emperor"); err == nil {
		t.Fatal("an unknown role was accepted")
	}
	if err := run("users", "list"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ed@gazette.test") || !strings.Contains(out.String(), "gazette:editor") {
		t.Fatalf("users list:\n%s", out.String())
	}
	if strings.Contains(out.String(), "x@gazette.test") {
		t.Fatal("a refused create left an account behind")
	}
}
