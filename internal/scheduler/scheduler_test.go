package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
	"masthead/internal/pgrun"
	"masthead/internal/scheduler"
	"masthead/internal/testwait"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// team is a project with an editor, a reviewer and a lead, on a database reached as the
// service (pool) and as its owner (ownerURL).
type team struct {
	pool                     *pgxpool.Pool
	ownerURL                 string
	project                  string
	editor, reviewer, leader pg.Caller
}

func newTeam(t *testing.T, pool *pgxpool.Pool, ownerURL string) *team {
	t.Helper()
	ctx := context.Background()
	own, err := pgx.Connect(ctx, ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close(ctx)
	tm := &team{pool: pool, ownerURL: ownerURL}
	// No default channels: a publication with a title, summary and body is ready.
	if err := own.QueryRow(ctx, `insert into projects (slug, name) values ('sched', 'Sched') returning id`).Scan(&tm.project); err != nil {
		t.Fatal(err)
	}
	callers := map[string]*pg.Caller{"editor": &tm.editor, "reviewer": &tm.reviewer, "lead": &tm.leader}
	for role, c := range callers {
		var id string
		if err := own.QueryRow(ctx, `insert into auth.users (email) values ($1) returning id`, role+"@sched.test").Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := own.Exec(ctx, `insert into project_members (project_id, user_id, role) values ($1, $2, $3)`, tm.project, id, role); err != nil {
			t.Fatal(err)
		}
		claims, _ := json.Marshal(map[string]any{"sub": id, "role": "authenticated"})
		*c = pg.UserCaller(claims)
	}
	return tm
}

// as runs sql as c.
func (tm *team) as(t *testing.T, c pg.Caller, sql string, args ...any) {
	t.Helper()
	if err := pg.WithCaller(context.Background(), tm.pool, c, pg.ReadWrite, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), sql, args...)
		return err
	}); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// scheduled writes n publications and takes them through review to scheduled, each move made
// by the person allowed to, then (as the owner, as only a superuser could) dates them due a
// minute ago.
func (tm *team) scheduled(t *testing.T, n int, tag string) {
	t.Helper()
	tm.as(t, tm.editor, `insert into publications (project_id, title, slug, summary, body)
		select $1, 'Item ' || g, $2 || '-' || g, 'Summary', 'Body' from generate_series(1, $3) g`, tm.project, tag, n)
	tm.as(t, tm.editor, `update publications set status = 'reviewing' where slug like $1 || '-%'`, tag)
	tm.as(t, tm.reviewer, `update publications set status = 'approved' where slug like $1 || '-%'`, tag)
	tm.as(t, tm.leader, `update publications set status = 'scheduled', scheduled_for = now() + interval '1 hour' where slug like $1 || '-%'`, tag)
	tm.due(t, tag, -time.Minute)
}

// due moves the date of tag's scheduled items to now + d, bypassing the workflow's future-only rule.
func (tm *team) due(t *testing.T, tag string, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	own, err := pgx.Connect(ctx, tm.ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close(ctx)
	for _, q := range []string{
		`alter table publications disable trigger publications_guard`,
		`update publications set scheduled_for = now() + make_interval(secs => $2) where slug like $1 || '-%' and status = 'scheduled'`,
		`alter table publications enable trigger publications_guard`,
	} {
		var args []any
		if q[0] == 'u' {
			args = []any{tag, d.Seconds()}
		}
		if _, err := own.Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
}

// published counts tag's publications that are published, and their scheduler events.
func (tm *team) published(t *testing.T, tag string) (items, events int) {
	t.Helper()
	ctx := context.Background()
	own, err := pgx.Connect(ctx, tm.ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close(ctx)
	if err := own.QueryRow(ctx, `select (select count(*) from publications where slug like $1 || '-%' and status = 'published'),
		(select count(*) from status_events e join publications p on p.id = e.publication_id
		  where p.slug like $1 || '-%' and e.via = 'scheduler' and e.to_status = 'published' and e.actor_id is null)`, tag).Scan(&items, &events); err != nil {
		t.Fatal(err)
	}
	return items, events
}

func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// TestTwoInstancesPublishOnce: two schedulers on one database, each with its own pool as two
// service instances would have, drain 200 due items together: each is published exactly once,
// audited as the scheduler's, and the two counts add up.
func TestTwoInstancesPublishOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	tm := newTeam(t, db.Pool, db.OwnerURL)
	tm.scheduled(t, 200, "due")
	second, err := pgxpool.New(context.Background(), db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()

	var wg sync.WaitGroup
	counts := make([]int, 2)
	for i, pool := range []*pgxpool.Pool{db.Pool, second} {
		wg.Go(func() {
			s := scheduler.New(pool, scheduler.Config{Interval: time.Second, Batch: 7}, quiet())
			n, err := s.RunOnce(context.Background())
			if err != nil {
				t.Errorf("instance %d: %v", i, err)
			}
			counts[i] = n
		})
	}
	wg.Wait()
	items, events := tm.published(t, "due")
	if counts[0]+counts[1] != 200 || items != 200 || events != 200 {
		t.Errorf("instances published %v; %d items published with %d scheduler events, want 200 each", counts, items, events)
	}
	t.Logf("instance shares: %v", counts)

	// Not-yet-due and not-ready items stay scheduled.
	tm.scheduled(t, 3, "later")
	tm.due(t, "later", time.Hour)
	tm.scheduled(t, 1, "unready")
	own, err := pgx.Connect(context.Background(), db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close(context.Background())
	if _, err := own.Exec(context.Background(), `update projects set default_channels = '{x}' where id = $1`, tm.project); err != nil {
		t.Fatal(err)
	}
	n, err := scheduler.New(db.Pool, scheduler.Config{}, quiet()).RunOnce(context.Background())
	if err != nil || n != 0 {
		t.Errorf("a run with nothing due and ready published %d (%v)", n, err)
	}
	if items, _ := tm.published(t, "unready"); items != 0 {
		t.Error("the scheduler published an item that is not ready")
	}
	var last time.Time
	if err := own.QueryRow(context.Background(), `select last_run_at from app.scheduler_state`).Scan(&last); err != nil || time.Since(last) > time.Minute {
		t.Errorf("the run was not recorded: %v %v", last, err)
	}
}

// TestLoopSurvivesRestart: the loop publishes what falls due while it runs, keeps running
// through a PostgreSQL restart, publishes again afterwards, and stops when asked.
func TestLoopSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "masthead-sched-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pgdir := filepath.Join(dir, "pg")
	cluster, err := pgrun.Start(ctx, pgdir, pgrun.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	ownerURL := cluster.URL(pgrun.Superuser, "postgres")
	if err := pg.Migrate(ctx, ownerURL); err != nil {
		t.Fatal(err)
	}
	pool, err := pg.Open(ctx, cluster.URL(pg.LoginRole, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	tm := newTeam(t, pool, ownerURL)

	const interval = 200 * time.Millisecond
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	failed := &failures{}
	log := slog.New(failed)
	go func() {
		defer close(done)
		scheduler.New(pool, scheduler.Config{Interval: interval}, log).Run(runCtx)
	}()
	waitPublished := func(tag string, n int) {
		t.Helper()
		testwait.Until(t, interval*2+10*time.Second, tag+": published by the loop", func() (bool, string) {
			items, _ := tm.published(t, tag)
			return items == n, fmt.Sprintf("%d of %d published", items, n)
		})
	}
	tm.scheduled(t, 5, "before")
	waitPublished("before", 5)

	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	// The loop meets the outage, says so, and carries on.
	testwait.Until(t, 10*time.Second, "the loop meets the outage", func() (bool, string) {
		return failed.count() >= 2, fmt.Sprintf("%d failures logged", failed.count())
	})
	if cluster, err = pgrun.Start(ctx, pgdir, pgrun.Options{Ephemeral: true}); err != nil {
		t.Fatal(err)
	}
	tm.scheduled(t, 5, "after")
	waitPublished("after", 5)

	stop()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not stop when its context ended")
	}
}

// failures is a log handler that counts the loop's failed runs.
type failures struct {
	mu sync.Mutex
	n  int
}

func (f *failures) Enabled(context.Context, slog.Level) bool { return true }
func (f *failures) Handle(_ context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && r.Message == "scheduler: run failed; retrying next interval" {
		f.mu.Lock()
		f.n++
		f.mu.Unlock()
	}
	return nil
}
func (f *failures) WithAttrs([]slog.Attr) slog.Handler { return f }
func (f *failures) WithGroup(string) slog.Handler      { return f }
func (f *failures) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}
