package rest

import (
	"context"
	"testing"
)

// TestRPCPreparedFollowsRedefinition: calls are prepared on their connection by shape, like
// reads, so the same call made again after its function was redefined (CREATE OR REPLACE with
// another body) or dropped and created anew answers from the new definition, never a plan kept
// from the old one; the calls run on every connection of the pool, several times each.
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
	calls(`["hello you"]`)
	mustExec(t, own, `create or replace function public.greeting(who text) returns setof text language sql stable as $$ select 'hi ' || who $$`)
	calls(`["hi you"]`)
	mustExec(t, own, `
		drop function public.greeting(text);
		create function public.greeting(who text) returns setof text language sql stable as $$ select 'welcome ' || who union all select 'again' $$;
		grant execute on function public.greeting(text) to authenticated`)
	calls(`["welcome you", "again"]`)
}
