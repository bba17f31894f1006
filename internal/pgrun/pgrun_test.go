package pgrun

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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

// tempCluster starts an ephemeral cluster in a fresh folder and returns the folder too.
func tempCluster(t *testing.T) (*Cluster, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "masthead-pgrun-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pgdir := filepath.Join(dir, "pg")
	c, err := Start(context.Background(), pgdir, Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return c, pgdir
}

// TestSecondInstanceFailsFast: a second server on a folder in use fails at once with
// PostgreSQL's own reason and the first server's PID, instead of waiting forever; the first
// keeps serving.
func TestSecondInstanceFailsFast(t *testing.T) {
	c, pgdir := tempCluster(t)
	start := time.Now()
	second, err := Start(context.Background(), pgdir, Options{Ephemeral: true})
	if err == nil {
		_ = second.Stop()
		t.Fatal("a second server started on the same folder")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the second start took %s to fail", d)
	}
	pid := strconv.Itoa(c.cmd.Process.Pid)
	for _, want := range []string{"another server is running in this folder, PID " + pid, `lock file "postmaster.pid" already exists`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	runSQL(t, c, `select 1`)
}

// TestStopAfterExternalRestart: when the server was stopped from outside and another started
// on the folder, Stop of the first returns at once (it used to wait forever), and the new
// server stops cleanly too.
func TestStopAfterExternalRestart(t *testing.T) {
	c, pgdir := tempCluster(t)
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil { // as pg_ctl stop -m fast does
		t.Fatal(err)
	}
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop on SIGINT")
	}
	again, err := Start(context.Background(), pgdir, Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	runSQL(t, again, `select 1`)
	stopped := make(chan struct{})
	go func() { _ = c.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop hung on a server that had already exited")
	}
	if err := again.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(pgdir, "data", "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatalf("postmaster.pid left after stopping the restarted server: %v", err)
	}
}

// TestStartCanceled: a start whose context ends returns promptly with that error and leaves
// no server behind.
func TestStartCanceled(t *testing.T) {
	_, pgdir := tempCluster(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if c, err := Start(ctx, pgdir+"-other", Options{Ephemeral: true}); err == nil {
		_ = c.Stop()
		t.Fatal("a canceled start succeeded")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a canceled start took %s", d)
	}
}
