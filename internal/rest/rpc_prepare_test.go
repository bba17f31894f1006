package rest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
)

// TestRPCPreparedFollowsRedefinition: calls are prepared on their connection by shape, like
// reads, so the same call made again after its function was redefined (CREATE OR REPLACE with
// another body) or dropped and created anew answers from the new definition, never a plan kept
// from the old one; the calls run on every connection of the pool, several times each. That
// they are prepared at all is read from a handler on a pool of one connection: after each
// definition, that connection holds exactly one prepared statement per shape of call, each
// executed once per call made so far (pg_prepared_statements), which fails if calls were sent
// unnamed or prepared anew.
func TestRPCPreparedFollowsRedefinition(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	mustExec(t, own, `
		create function public.greeting(who text) returns setof text language sql stable as $$ select 'hello ' || who $$;
		grant execute on function public.greeting(text) to authenticated`)
	if err := f.h.schema.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := func(want string) {
		t.Helper()
		for range 3 * int(f.db.Pool.Config().MaxConns) {
			for _, c := range []call{
				{method: "POST", user: "editorA", path: "/rpc/greeting", body: `{"who":"you"}`, header: prefer("count=exact")},
				{user: "editorA", path: "/rpc/greeting?who=you"},
			} {
				if r := f.do(t, c); r.status != 200 || r.body != want {
					t.Fatalf("%s %s: %d %s, want %s", c.method, c.path, r.status, r.body, want)
				}
			}
		}
	}
	pinned := f.pinned(t)
	const perDefinition = 4
	definitions := 0
	pinnedCalls := func(want string) {
		t.Helper()
		definitions++
		for range perDefinition {
			for _, c := range []call{
				{method: "POST", user: "editorA", path: "/rpc/greeting", body: `{"who":"you"}`, header: prefer("count=exact")},
				{user: "editorA", path: "/rpc/greeting?who=you"},
			} {
				if r := pinned.do(t, c); r.status != 200 || r.body != want {
					t.Fatalf("pinned: %s %s: %d %s, want %s", c.method, c.path, r.status, r.body, want)
				}
			}
		}
		rows, err := pinned.h.pool.Query(context.Background(), `select statement, generic_plans + custom_plans
			from pg_prepared_statements where name like 'masthead\_%' and statement like '%greeting%' order by statement`)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var stmt string
			var runs int64
			if err := rows.Scan(&stmt, &runs); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d runs: %s", runs, stmt))
			if runs != int64(definitions*perDefinition) {
				t.Errorf("after %d definitions, a call prepared on the connection ran %d times, want %d: %s", definitions, runs, definitions*perDefinition, stmt)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Errorf("after %d definitions, the connection holds %d prepared calls of greeting, want 2 (one per shape):\n%s", definitions, len(got), strings.Join(got, "\n"))
		}
	}
	calls(`["hello you"]`)
	pinnedCalls(`["hello you"]`)
	mustExec(t, own, `create or replace function public.greeting(who text) returns setof text language sql stable as $$ select 'hi ' || who $$`)
	calls(`["hi you"]`)
	pinnedCalls(`["hi you"]`)
	mustExec(t, own, `
		drop function public.greeting(text);
		create function public.greeting(who text) returns setof text language sql stable as $$ select 'welcome ' || who union all select 'again' $$;
		grant execute on function public.greeting(text) to authenticated`)
	calls(`["welcome you", "again"]`)
	pinnedCalls(`["welcome you", "again"]`)
}

// pinned is f served by a second handler, on the same schema cache, whose pool is one
// connection: successive requests through it run on the very same connection, whose session
// state (prepared statements) a test can then read through that pool.
func (f *fixture) pinned(t *testing.T) *fixture {
	t.Helper()
	pcfg, err := pgxpool.ParseConfig(f.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns, pcfg.MinConns = 1, 1
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	g := *f
	g.h = NewHandler(pool, f.h.schema, userAuth{}, Config{}, slog.New(slog.NewTextHandler(testLog{t}, nil)))
	e := echo.New()
	g.h.Mount(e.Group("/rest/v1"))
	g.srv = httptest.NewServer(e)
	t.Cleanup(g.srv.Close)
	return &g
}
