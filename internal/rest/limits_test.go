package rest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
)

// TestLimits checks what protects the database: db-max-rows, the
// statement timeout and the pool acquisition timeout.
func TestLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	mustExec(t, own, `create function public.slow() returns int language sql stable as $$ select 1 from pg_sleep(2) $$`)
	mustExec(t, own, `grant execute on function public.slow() to authenticated`)
	f.serve(t, Config{MaxRows: 2, StatementTimeout: 100 * time.Millisecond, AcquireTimeout: 100 * time.Millisecond})

	t.Run("db-max-rows caps the page", func(t *testing.T) {
		r := f.do(t, call{user: "editorA", path: "/publications?select=title&order=title", header: prefer("count=exact")})
		if r.status != http.StatusPartialContent || len(r.rows(t)) != 2 || r.header.Get("Content-Range") != "0-1/4" {
			t.Errorf("%d %q %s", r.status, r.header.Get("Content-Range"), r.body)
		}
	})
	t.Run("db-max-rows wins over a larger limit", func(t *testing.T) {
		if r := f.do(t, call{user: "editorA", path: "/publications?select=title&limit=3"}); len(r.rows(t)) != 2 {
			t.Errorf("rows = %s", r.body)
		}
	})
	t.Run("statement timeout", func(t *testing.T) {
		start := time.Now()
		r := f.do(t, call{user: "editorA", path: "/rpc/slow"})
		if r.errCode(t) != "57014" || r.status != pg.HTTPStatus("57014", false) {
			t.Errorf("%d %s", r.status, r.body)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("took %v, want the 100ms timeout to stop it", d)
		}
	})
	t.Run("pool exhausted is 503 PGRST003", func(t *testing.T) {
		ctx := context.Background()
		var held []*pgxpool.Conn
		for range f.db.Pool.Config().MaxConns {
			c, err := f.db.Pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, c)
		}
		start := time.Now()
		r := f.do(t, call{user: "editorA", path: "/channels"})
		took := time.Since(start)
		for _, c := range held {
			c.Release()
		}
		if r.status != http.StatusServiceUnavailable || r.errCode(t) != "PGRST003" {
			t.Errorf("%d %s", r.status, r.body)
		}
		// It waited the configured AcquireTimeout (100ms), no less, and not much more.
		if took < 100*time.Millisecond || took > 2*time.Second {
			t.Errorf("answered after %v, want the 100ms AcquireTimeout", took)
		}
		if r := f.do(t, call{user: "editorA", path: "/channels?limit=1"}); r.status != http.StatusOK {
			t.Errorf("after release: %d %s", r.status, r.body)
		}
	})
}
