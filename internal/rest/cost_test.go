package rest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"masthead/internal/pg"
	"masthead/internal/testwait"
)

// TestEmbeddedRowsCap: the rows embedded to-many resources add are counted across the whole
// response, at every depth; one past MaxEmbeddedRows is 400 MH001 naming the limit and how to
// narrow, while the same request narrowed, or embedding only to-one resources, is answered.
func TestEmbeddedRowsCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.serve(t, Config{MaxEmbeddedRows: 2})
	// Project A: Alpha has promos x and bluesky, Beta has x; Gamma and Delta none.
	tests := []struct {
		name, path string
		refused    bool
	}{
		{"three promos embedded", "/publications?select=title,promos(channel)", true},
		{"nested: publications, then their promos", "/projects?select=slug,publications(title,promos(channel))", true},
		{"exactly at the cap", "/publications?select=title,promos(channel)&title=eq.Alpha%20launch", false},
		{"narrowed with an embedded limit", "/publications?select=title,promos(channel)&promos.limit=1&title=in.(Alpha%20launch,Beta%20notes)", false},
		{"to-one embeds do not multiply", "/promos?select=channel,publication:publications(title,project:projects(slug))", false},
		{"embedded filters count only what they keep", "/publications?select=title,promos(channel)&promos.channel=eq.x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(t, call{user: "leadA", path: tt.path})
			if !tt.refused {
				if r.status != http.StatusOK {
					t.Fatalf("%d %s", r.status, r.body)
				}
				return
			}
			e := r.object(t)
			if r.status != http.StatusBadRequest || e["code"] != pg.CodeEmbeddedRows ||
				!strings.Contains(e["details"].(string), "MASTHEAD_MAX_EMBEDDED_ROWS") || !strings.Contains(e["hint"].(string), ".limit=") {
				t.Errorf("%d %s", r.status, r.body)
			}
		})
	}
}

// TestResponseBytesCap: a response larger than MaxResponseBytes is 400 MH002, for a streamed
// read and for an RPC alike. A read is stopped in PostgreSQL as it passes the cap: a view that
// would take 20 s to produce its rows (twice the statement timeout) is refused well under it
// with MH002, not 57014 (PostgreSQL sends rows in 8 KiB packets, so the stop comes within a
// packet of the cap), and its statement no longer runs afterwards; the connection it used is
// replaced and the next requests are answered.
func TestResponseBytesCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	// Each row takes 20 ms: the sleep is in the row, so it runs once per row produced.
	mustExec(t, own, `create view public.slow_rows_each as select g, repeat('x', 100) || pg_sleep(0.02)::text as filler from generate_series(1, 1000) g`)
	mustExec(t, own, `grant select on public.slow_rows_each to authenticated`)
	mustExec(t, own, `create function public.big() returns setof text language sql stable as $$ select repeat('x', 1000) from generate_series(1, 10) $$`)
	mustExec(t, own, `grant execute on function public.big() to authenticated`)
	f.serve(t, Config{MaxResponseBytes: 1024})

	refused := func(t *testing.T, r reply) {
		t.Helper()
		e := r.object(t)
		if r.status != http.StatusBadRequest || e["code"] != pg.CodeResponseBytes || !strings.Contains(e["details"].(string), "MASTHEAD_MAX_RESPONSE_BYTES") {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	t.Run("a read", func(t *testing.T) {
		refused(t, f.do(t, call{user: "leadA", path: "/publications?select=*"}))
		if r := f.do(t, call{user: "leadA", path: "/publications?select=title&limit=1"}); r.status != http.StatusOK || len(r.rows(t)) != 1 {
			t.Errorf("narrowed: %d %s", r.status, r.body)
		}
	})
	t.Run("an rpc", func(t *testing.T) {
		refused(t, f.do(t, call{user: "leadA", path: "/rpc/big"}))
	})
	t.Run("stopped in the database", func(t *testing.T) {
		start := time.Now()
		refused(t, f.do(t, call{user: "leadA", path: "/slow_rows_each?select=*"}))
		took := time.Since(start)
		testwait.Until(t, 10*time.Second, "the refused read to end in PostgreSQL", func() (bool, string) {
			var running int
			mustScan(t, own.QueryRow(context.Background(), `select count(*) from pg_stat_activity where query like '%slow_rows_each%' and pid <> pg_backend_pid()`), &running)
			return running == 0, fmt.Sprintf("%d backends still run it", running)
		})
		t.Logf("a read of 20 ms rows refused at 1 KiB after %s", took.Round(time.Millisecond))
		for range 3 {
			if r := f.do(t, call{user: "leadA", path: "/publications?select=title"}); r.status != http.StatusOK {
				t.Fatalf("after a refusal: %d %s", r.status, r.body)
			}
		}
	})
}

// TestPoolShare: a caller holding their whole share of the pool waits, then gets 503 PGRST003
// naming MASTHEAD_POOL_SHARE; another caller is answered at once meanwhile, and the first
// caller's held request still completes.
func TestPoolShare(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	// hold blocks on an advisory lock the test holds, keeping its connection busy.
	mustExec(t, own, `create function public.hold() returns int language sql volatile as $$ select 1 from pg_advisory_xact_lock_shared(4242) $$`)
	mustExec(t, own, `grant execute on function public.hold() to authenticated`)
	f.serve(t, Config{PoolShare: 1, PoolShareWait: 200 * time.Millisecond})
	ctx := context.Background()
	lock, err := f.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if _, err := lock.Exec(ctx, `select pg_advisory_lock(4242)`); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var held reply
	wg.Go(func() { held = f.do(t, call{method: http.MethodPost, user: "leadA", path: "/rpc/hold", body: "{}"}) })
	testwait.Until(t, 10*time.Second, "the first request to reach the lock", func() (bool, string) {
		var waiting int
		mustScan(t, own.QueryRow(ctx, `select count(*) from pg_locks where locktype = 'advisory' and not granted`), &waiting)
		return waiting == 1, fmt.Sprintf("%d advisory locks wait", waiting)
	})

	r := f.do(t, call{user: "leadA", path: "/publications?select=title"})
	e := r.object(t)
	if r.status != http.StatusServiceUnavailable || e["code"] != "PGRST003" || !strings.Contains(e["details"].(string), "MASTHEAD_POOL_SHARE") ||
		r.header.Get("Retry-After") == "" {
		t.Errorf("over the share: %d %s", r.status, r.body)
	}
	if r := f.do(t, call{user: "editorB", path: "/publications?select=title"}); r.status != http.StatusOK {
		t.Errorf("another caller meanwhile: %d %s", r.status, r.body)
	}
	if _, err := lock.Exec(ctx, `select pg_advisory_unlock(4242)`); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if held.status != http.StatusOK {
		t.Errorf("the held request: %d %s", held.status, held.body)
	}
	if r := f.do(t, call{user: "leadA", path: "/publications?select=title"}); r.status != http.StatusOK {
		t.Errorf("with the share free again: %d %s", r.status, r.body)
	}
}
