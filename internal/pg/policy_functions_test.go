package pg_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg/pgtest"
)

// TestPolicyFunctionsKeepTheirPlans: no function a row-level security policy calls, and none of
// those the workflow's triggers call once per row (hotPerRow), is a SQL function PostgreSQL
// cannot inline (one with SECURITY DEFINER or a SET clause). PostgreSQL 15 parses and plans such
// a function's body again in every statement that calls it, and on every call from a trigger:
// as SQL, app.project_ids() cost more than the whole read it guarded (migration 018). PL/pgSQL
// keeps the plan for the connection.
func TestPolicyFunctionsKeepTheirPlans(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	rows, err := db.Owner(t).Query(context.Background(), `
		with called as (
		  select m[1] as name
		    from pg_policies,
		         regexp_matches(coalesce(qual, '') || ' ' || coalesce(with_check, ''), 'app\.(\w+)\(', 'g') m
		  union
		  select unnest($1::text[]))
		select c.name, l.lanname, p.prosecdef or p.proconfig is not null
		  from called c
		  join pg_proc p on p.proname = c.name and p.pronamespace = 'app'::regnamespace
		  join pg_language l on l.oid = p.prolang
		 order by 1`, hotPerRow)
	if err != nil {
		t.Fatal(err)
	}
	type fn struct {
		Name, Language string
		NotInlinable   bool
	}
	fns, err := pgx.CollectRows(rows, pgx.RowToStructByPos[fn])
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range fns {
		seen[f.Name] = true
		if f.Language == "sql" && f.NotInlinable {
			t.Errorf("app.%s runs in nearly every statement or once per row but is a SQL function that cannot be inlined (SECURITY DEFINER or SET): PostgreSQL plans its body again in every statement; write it in PL/pgSQL", f.Name)
		}
	}
	if !seen["project_ids"] {
		t.Errorf("policies call %v; the check found no call to app.project_ids, so it no longer reads them", fns)
	}
	for _, name := range hotPerRow {
		if !seen[name] {
			t.Errorf("app.%s is gone: hotPerRow names functions that no longer exist", name)
		}
	}
}

// hotPerRow are the functions the workflow's triggers and RPCs call once per row changed
// (migration 018 made them PL/pgSQL; write_event and write_verdict, which 021's statement
// trigger replaced, were dropped by 024).
var hotPerRow = []string{"current_round", "snapshot", "member_role"}
