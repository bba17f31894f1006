package pg_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestSearchWalkPlan: at the size the dashboard is measured at (10,000 publications in a
// project), the field by field query of search_publications (023, with 026's filters) gets the
// plan it was written for: a walk of publications_recent_idx, newest first, that stops at the
// cap (the rows it reads are the rows it returns when every row matches), with no sort, no
// sequential scan and no bitmap scan of the table; and app.search_by_field sends a phrase found
// in the titles to it. With a status filter it still walks an index in order and stops early,
// reading far fewer rows than the project has. A plan that sorts the project's matches (what
// the planner chose from three ilikes' estimates before 023) reads all 10,000 rows and fails.
func TestSearchWalkPlan(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	own := f.db.Owner(t)
	for _, q := range []string{
		`set session_replication_role = replica`, // fixture data: no caller does this
		fmt.Sprintf(`insert into publications (project_id, author_id, title, slug, summary, body, status, created_at)
		select '%s', '%s', 'Story ' || g || ' of the harbour', 'walk-' || g, 'summary ' || g, repeat('the body of a long read ', 40),
		       case when g %% 4 = 0 then 'reviewing' else 'draft' end, '2026-01-01'::timestamptz + g * interval '1 minute'
		  from generate_series(1, 10000) g`, f.projA, f.users["editorA"]),
		fmt.Sprintf(`insert into publications (project_id, author_id, title, slug, summary, body, created_at)
		select '%s', '%s', 'Story in B ' || g, 'walk-b-' || g, 'summary', 'plain', '2026-01-01'::timestamptz + g * interval '1 minute'
		  from generate_series(1, 2000) g`, f.projB, f.users["editorB"]),
		`set session_replication_role = origin`,
		`analyze publications`,
	} {
		if _, err := own.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var src string
	mustScan(t, own.QueryRow(ctx, `select prosrc from pg_proc where proname = 'search_publications'`), &src)
	i := strings.Index(src, "'select w.*")
	j := strings.Index(src[max(i, 0):], "limit $3'")
	if i < 0 || j < 0 {
		t.Fatalf("cannot find the field by field query in search_publications:\n%s", src)
	}
	walk := src[i+1 : i+j+len("limit $3")]

	// As search_publications runs it: as its owner, with the caller's claims.
	tx, err := own.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	claims := `{"sub":"` + f.users["viewerA"] + `","role":"authenticated"}`
	if _, err := tx.Exec(ctx, `select set_config('request.jwt.claims', $1, true)`, claims); err != nil {
		t.Fatal(err)
	}
	var byField bool
	if err := tx.QueryRow(ctx, `select app.search_by_field('%story%', $1)`, f.projA).Scan(&byField); err != nil {
		t.Fatal(err)
	}
	if !byField {
		t.Fatal(`app.search_by_field("story") is false: a phrase in every title should take the walk`)
	}
	explain := func(statuses any, maxRows int) string {
		t.Helper()
		rows, err := tx.Query(ctx, "explain (analyze, costs off, timing off, summary off) "+walk,
			"%story%", f.projA, maxRows, statuses, nil, nil, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	// read is the rows the plan's scan of publications produced.
	scanRows := regexp.MustCompile(`Scan (?:Backward )?using (\w+) on publications p \(actual rows=(\d+) loops=1\)`)
	read := func(plan string) (string, int) {
		m := scanRows.FindStringSubmatch(plan)
		if m == nil {
			return "", -1
		}
		n, _ := strconv.Atoi(m[2])
		return m[1], n
	}

	plan := explain(nil, 1001)
	t.Logf("field by field, story, cap 1001, as viewerA:\n%s", plan)
	for _, bad := range []string{"Sort", "Seq Scan", "Bitmap"} {
		if strings.Contains(plan, bad) {
			t.Errorf("the walk's plan has a %s:\n%s", bad, plan)
		}
	}
	if idx, n := read(plan); idx != "publications_recent_idx" || n != 1001 {
		t.Errorf("the walk reads %d rows through %q, want 1001 through publications_recent_idx:\n%s", n, idx, plan)
	}
	if !strings.Contains(plan, "Limit (actual rows=1001 loops=1)") {
		t.Errorf("the walk does not stop at the cap:\n%s", plan)
	}

	plan = explain([]string{"reviewing"}, 26)
	t.Logf("field by field, story in review, cap 26, as viewerA:\n%s", plan)
	if strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Bitmap") {
		t.Errorf("the filtered walk scans the table:\n%s", plan)
	}
	if idx, n := read(plan); n < 26 || n > 1000 {
		t.Errorf("the filtered walk reads %d rows through %q, want from 26 to 1,000 of the 10,000:\n%s", n, idx, plan)
	}
}
