package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

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

// TestSeedHashesAtConfiguredCost: `masthead seed` hashes the demo accounts' password at
// MASTHEAD_BCRYPT_COST (or --bcrypt-cost), the cost the operator chose for every hash the
// binary makes, not at bcrypt's default; a cost outside bcrypt's bounds is refused before
// anything is written.
func TestSeedHashesAtConfiguredCost(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	var out bytes.Buffer
	seedWith := func(args ...string) error {
		out.Reset()
		return commands["seed"].run(ctx, append(args, "--owner-url", db.OwnerURL, "--media-dir", t.TempDir()), &out, log)
	}
	if err := seedWith("--bcrypt-cost", "32"); err == nil || err.Error() != `--bcrypt-cost (MASTHEAD_BCRYPT_COST) must be a number from 4 to 31, not "32"` {
		t.Fatalf("seed --bcrypt-cost 32: %v", err)
	}
	t.Setenv("MASTHEAD_BCRYPT_COST", "5")
	if err := seedWith(); err != nil {
		t.Fatalf("seed: %v\n%s", err, out.String())
	}
	rows, err := db.Owner(t).Query(ctx, `select email, encrypted_password from auth.users order by email`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var email, hash string
		if err := rows.Scan(&email, &hash); err != nil {
			t.Fatal(err)
		}
		n++
		if cost, err := bcrypt.Cost([]byte(hash)); cost != 5 {
			t.Errorf("%s: hash at cost %d (%v), want MASTHEAD_BCRYPT_COST's 5", email, cost, err)
		}
	}
	if rows.Err() != nil || n != 13 {
		t.Fatalf("%d demo accounts (%v), want 13", n, rows.Err())
	}
}
