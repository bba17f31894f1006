package pg_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestSearchByField: search_publications matches field by field (migration 023) exactly when
// at least 10 of the project's newest 100 rows hold the phrase in their title or summary
// (app.search_by_field, asked as the caller would have it asked), and whichever way it
// matches it finds the same rows, in the same order, as the concatenation of title, summary
// and body (017) does: capped and not, across fields only with a newline in the phrase, with
// LIKE's wildcards literal, in any case, and nothing of another project.
func TestSearchByField(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	own := f.db.Owner(t)
	// 120 rows in A, a minute apart: every title says "Story n"; every third summary (of all
	// 120) says "about the Quay"; every body says "the keeper"; one title is "Lonely 100% sure";
	// rows with an empty summary too. Project B has the same words.
	if _, err := own.Exec(ctx, `
		insert into publications (project_id, author_id, title, slug, summary, body, created_at)
		select $1, $2, case when g = 60 then 'Lonely 100% sure' else 'Story ' || g end, 'fields-' || g,
		       case when g % 3 = 0 then 'about the Quay' when g % 3 = 1 then '' else 'plain' end,
		       'the keeper of the light', '2026-01-01'::timestamptz + g * interval '1 minute'
		  from generate_series(1, 120) g`, f.projA, f.users["editorA"]); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Exec(ctx, `
		insert into publications (project_id, author_id, title, slug, summary, body)
		select $1, $2, 'Story in B ' || g, 'fields-b-' || g, 'about the Quay', 'the keeper' from generate_series(1, 20) g`,
		f.projB, f.users["editorB"]); err != nil {
		t.Fatal(err)
	}
	escape := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	pattern := func(phrase string) string { return "%" + escape.Replace(strings.TrimSpace(phrase)) + "%" }
	byField := func(user, phrase string, project any) bool {
		t.Helper()
		// As search_publications asks it: as the function's owner, with the caller's claims.
		tx, err := own.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		claims := `{"sub":"` + f.users[user] + `","role":"authenticated"}`
		var ok bool
		if _, err := tx.Exec(ctx, `select set_config('request.jwt.claims', $1, true)`, claims); err != nil {
			t.Fatal(err)
		}
		if err := tx.QueryRow(ctx, `select app.search_by_field($1, $2)`, pattern(phrase), project).Scan(&ok); err != nil {
			t.Fatalf("search_by_field(%q): %v", phrase, err)
		}
		return ok
	}
	for _, c := range []struct {
		phrase  string
		project any
		want    bool
	}{
		{"story", f.projA, true}, // every title
		{"QUAY", f.projA, true},
		{"the", f.projA, true},         // a third of the summaries; the rest only in their bodies        // a third of the summaries, in another case
		{"keeper", f.projA, false},     // bodies only: not sampled
		{"100%", f.projA, false},       // one title
		{"st_ry", f.projA, false},      // _ is literal
		{"story", nil, false},          // no project: the concatenation, as before
		{"story", f.projB, false},      // not the caller's project
		{"Story in B", f.projA, false}, // B's words, asked in A
	} {
		if got := byField("viewerA", c.phrase, c.project); got != c.want {
			t.Errorf("search_by_field(%q, %v) = %v, want %v", c.phrase, c.project, got, c.want)
		}
	}
	if byField("outsider", "story", f.projA) {
		t.Error("search_by_field is true for an outsider")
	}

	// The rows found, each way, are the concatenation's.
	want := func(phrase string, project any, maxRows any) []string {
		t.Helper()
		rows, err := own.Query(ctx, `select title from publications p
			where ($2::uuid is null or p.project_id = $2) and p.project_id = $4
			  and app.search_text(p.title, p.summary, p.body) ilike $1
			order by p.created_at desc, p.id desc limit $3`, pattern(phrase), project, maxRows, f.projA)
		if err != nil {
			t.Fatal(err)
		}
		titles, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return titles
	}
	for _, phrase := range []string{"story", "the", "Quay", "keeper", "100%", "st_ry", "lonely", "story 7", "Story 3\nabout", "quay\nthe keeper", "nothing like it"} {
		for _, maxRows := range []any{nil, 5, 1001} {
			for _, project := range []any{f.projA, nil} {
				got := f.searchAs(t, "viewerA", phrase, project, maxRows)
				if w := want(phrase, project, maxRows); !slices.Equal(got, w) {
					t.Errorf("search_publications(%q, %v, %v) found %d rows %q\nwant %d rows %q", phrase, project, maxRows, len(got), got, len(w), w)
				}
			}
		}
	}
	if got := f.searchAs(t, "viewerA", "Story 3\nabout", f.projA, nil); len(got) == 0 {
		t.Error("a phrase across title and summary (with its newline) finds nothing")
	}
}
