// Package pgtest gives each test its own PostgreSQL database on a private cluster: one cluster
// per test process, a template database with every migration applied, and a fresh clone of it
// per test (CREATE DATABASE … TEMPLATE), so tests are isolated, parallel and fast.
//
// Tests connect as the service's login role, which is not a superuser, so row-level security
// applies exactly as in production. Only test code imports this package.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
	"masthead/internal/pgrun"
)

const template = "masthead_template"

var (
	once    sync.Once
	cluster *pgrun.Cluster
	dir     string
	initErr error
	counter atomic.Int64
)

// DB is one test's database.
type DB struct {
	Name     string
	OwnerURL string        // the cluster superuser: migrations, seeding, fixtures
	URL      string        // the service's login role (authenticator)
	Pool     *pgxpool.Pool // a pool on URL
}

// Main runs a package's tests and then stops the private cluster and removes its folder. Call it
// from TestMain: `func TestMain(m *testing.M) { pgtest.Main(m) }`.
func Main(m *testing.M) {
	code := m.Run()
	if cluster != nil {
		_ = cluster.Stop()
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

func start() {
	ctx := context.Background()
	dir, initErr = os.MkdirTemp("", "masthead-pgtest-")
	if initErr != nil {
		return
	}
	if initErr = os.Chmod(dir, 0o755); initErr != nil {
		return
	}
	cluster, initErr = pgrun.Start(ctx, dir, pgrun.Options{Ephemeral: true})
	if initErr != nil {
		return
	}
	admin := cluster.URL(pgrun.Superuser, "postgres")
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		initErr = err
		return
	}
	defer conn.Close(ctx)
	if _, initErr = conn.Exec(ctx, "create database "+template); initErr != nil {
		return
	}
	initErr = pg.Migrate(ctx, cluster.URL(pgrun.Superuser, template))
}

// New creates a fresh, migrated database for t and drops it when t passes; on failure it is kept
// and its URL logged, so the state can be inspected with psql.
func New(t testing.TB) *DB {
	t.Helper()
	once.Do(start)
	if initErr != nil {
		t.Fatalf("pgtest: private cluster: %v", initErr)
	}
	ctx := context.Background()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), counter.Add(1))
	admin := cluster.URL(pgrun.Superuser, "postgres")
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fmt.Sprintf("create database %s template %s", name, template)); err != nil {
		t.Fatalf("pgtest: clone template: %v", err)
	}
	db := &DB{
		Name:     name,
		OwnerURL: cluster.URL(pgrun.Superuser, name),
		URL:      cluster.URL(pg.LoginRole, name),
	}
	db.Pool, err = pg.Open(ctx, db.URL)
	if err != nil {
		t.Fatalf("pgtest: open pool: %v", err)
	}
	t.Cleanup(func() {
		db.Pool.Close()
		if t.Failed() {
			t.Logf("pgtest: kept database for inspection: psql %q", db.OwnerURL)
			return
		}
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, fmt.Sprintf("drop database if exists %s with (force)", name))
	})
	return db
}

// Owner opens a connection as the cluster superuser, for fixtures that no user could write.
func (db *DB) Owner(t testing.TB) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), db.OwnerURL)
	if err != nil {
		t.Fatalf("pgtest: owner connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// PgBouncer starts a PgBouncer in transaction mode in front of the package's cluster for t, for
// tests of the service behind a pooler; it stops when t ends. Reach a database through it with
// Bouncer.URL(pg.LoginRole, db.Name).
func PgBouncer(t testing.TB, opts pgrun.BouncerOptions) *pgrun.Bouncer {
	t.Helper()
	once.Do(start)
	if initErr != nil {
		t.Fatalf("pgtest: private cluster: %v", initErr)
	}
	d := scratch(t, "masthead-pgbouncer-")
	b, err := cluster.StartPgBouncer(context.Background(), d, []string{pg.LoginRole, pgrun.Superuser}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	return b
}

// Replica starts a streaming replica of the package's cluster for t (every database on it,
// t's included); it stops when t ends. Reach a database on it with Cluster.URL.
func Replica(t testing.TB) *pgrun.Cluster {
	t.Helper()
	once.Do(start)
	if initErr != nil {
		t.Fatalf("pgtest: private cluster: %v", initErr)
	}
	d := scratch(t, "masthead-replica-")
	r, err := cluster.StartReplica(context.Background(), d, pgrun.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	return r
}

// scratch is a folder for t that the cluster's system user may enter (t.TempDir is private to
// the test's user), removed when t ends.
func scratch(t testing.TB, prefix string) string {
	t.Helper()
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}
