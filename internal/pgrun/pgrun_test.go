package pgrun

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestRestartKeepsData: initdb on first start, a clean stop, and a second start on the same
// folder that finds what the first one wrote.
func TestRestartKeepsData(t *testing.T) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "masthead-pgrun-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Start(ctx, filepath.Join(dir, "pg"), Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	runSQL(t, c, `create table kept (v text); insert into kept values ('still here')`)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pg", "data", "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatalf("postmaster.pid left after a clean stop: %v", err)
	}
	c, err = Start(ctx, filepath.Join(dir, "pg"), Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	conn, err := pgx.Connect(ctx, c.URL(Superuser, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, `select v from kept`).Scan(&v); err != nil || v != "still here" {
		t.Fatalf("after restart: %q, %v", v, err)
	}
}

func runSQL(t *testing.T, c *Cluster, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.URL(Superuser, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}

func TestFindBinDir(t *testing.T) {
	dir, err := FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			t.Errorf("%s missing from %s", b, dir)
		}
	}
}
