package pg_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// TestReadinessChecksIsReadiness: the computed column readiness_checks is readiness(), check
// for check in its order, as a member reads it with the row; a promo with a blank body (the
// column's default) is "no promo written" there too.
func TestReadinessChecksIsReadiness(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.draft(t, "Blank promo")
	if _, err := f.exec("editorA", `insert into promos (publication_id, channel, body) values ($1, 'x', 'Read it'), ($1, 'bluesky', '  ')`, id); err != nil {
		t.Fatal(err)
	}
	type check struct {
		Check  string `json:"check"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	}
	var column, rpc []check
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller("viewerA"), pg.ReadOnly, func(tx pgx.Tx) error {
		var raw []byte
		if err := tx.QueryRow(context.Background(), `select readiness_checks(p) from publications p where p.id = $1`, id).Scan(&raw); err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &column); err != nil {
			return err
		}
		rows, err := tx.Query(context.Background(), `select "check", ok, detail from readiness($1)`, id)
		if err != nil {
			return err
		}
		rpc, err = pgx.CollectRows(rows, pgx.RowToStructByPos[check])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(column) != len(rpc) || len(rpc) == 0 {
		t.Fatalf("readiness_checks = %+v, readiness() = %+v", column, rpc)
	}
	for i := range rpc {
		if column[i] != rpc[i] {
			t.Errorf("check %d: column %+v, readiness() %+v", i, column[i], rpc[i])
		}
	}
	want := check{"promo:bluesky", false, "Bluesky: no promo written"}
	found := false
	for _, c := range column {
		found = found || c == want
	}
	if !found {
		t.Errorf("readiness_checks = %+v, want %+v among them", column, want)
	}
}

// TestQueueReadinessRPCsGone: the queue's old way of judging its rows (readiness_summary,
// visit_with_readiness) is no longer offered; readiness() and readiness_checks are.
func TestQueueReadinessRPCsGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for sig, want := range map[string]bool{
		"public.readiness_summary(uuid[])":             false,
		"public.visit_with_readiness(text, uuid[])":    false,
		"public.readiness(uuid)":                       true,
		"public.readiness_checks(public.publications)": true,
		"public.visit(text)":                           true,
	} {
		var exists bool
		if err := f.db.Owner(t).QueryRow(context.Background(), `select to_regprocedure($1) is not null`, sig).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if exists != want {
			t.Errorf("%s exists: %v, want %v", sig, exists, want)
		}
	}
}
