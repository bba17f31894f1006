package pg_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// queueFilters are search_publications' and search_estimate's filter arguments (026), nil for
// "any".
type queueFilters struct {
	statuses                   []string
	collection, author, notBy  any
	scheduledFrom, scheduledTo any
}

func (q queueFilters) args() []any {
	var statuses any
	if q.statuses != nil {
		statuses = q.statuses
	}
	return []any{statuses, q.collection, q.author, q.notBy, q.scheduledFrom, q.scheduledTo}
}

// searchQueueFixture fills project A with 600 publications a minute apart, the newest last: every
// title says "Story n" (a phrase the walk takes), every tenth body says "lonely keeper" (one the
// trigram index takes); a quarter are in review, a third in A's collection, half by editor2A,
// a fifth scheduled in the first days of June 2030. Project B has the same words.
func searchQueueFixture(t *testing.T, f *fixture) {
	t.Helper()
	ctx := context.Background()
	own := f.db.Owner(t)
	for _, q := range []string{
		`set session_replication_role = replica`, // fixture data: no caller does this
		fmt.Sprintf(`insert into publications (project_id, author_id, collection_id, title, slug, summary, body, status, scheduled_for, created_at)
		select '%s', case when g %% 2 = 0 then '%s'::uuid else '%s'::uuid end, case when g %% 3 = 0 then '%s'::uuid end,
		       'Story ' || g, 'queue-' || g, case when g %% 2 = 0 then 'about the Quay' else '' end,
		       case when g %% 10 = 0 then 'the lonely keeper' else 'plain' end,
		       case when g %% 4 = 0 then 'reviewing' when g %% 5 = 0 then 'scheduled' else 'draft' end,
		       case when g %% 5 = 0 and g %% 4 <> 0 then '2030-06-01'::timestamptz + (g %% 5 + g %% 7) * interval '12 hours' end,
		       '2026-01-01'::timestamptz + g * interval '1 minute'
		  from generate_series(1, 600) g`, f.projA, f.users["editorA"], f.users["editor2A"], f.collA),
		fmt.Sprintf(`insert into publications (project_id, author_id, title, slug, summary, body, status, created_at)
		select '%s', '%s', 'Story in B ' || g, 'queue-b-' || g, 'about the Quay', 'the lonely keeper', 'reviewing', now()
		  from generate_series(1, 50) g`, f.projB, f.users["editorB"]),
		`set session_replication_role = origin`,
		`analyze publications`,
	} {
		if _, err := own.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSearchFiltersBeforeCap: search_publications applies the queue's filters (status,
// collection, author, not author, schedule range) before it stops at max_rows, whichever way it
// matches (field by field for "story", the trigram index for "lonely"): it returns exactly the
// rows of the reference query (the concatenation, the filters, newest first, the cap), never a
// row of project B, and nothing to an outsider. Before 026 the dashboard filtered what the cap
// had left, and the 12 oldest matches in review behind 1,001 newer drafts were never found.
func TestSearchFiltersBeforeCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	searchQueueFixture(t, f)
	ctx := context.Background()
	own := f.db.Owner(t)
	search := func(user, phrase string, maxRows any, q queueFilters) []string {
		t.Helper()
		var titles []string
		err := pg.WithCaller(ctx, f.db.Pool, f.caller(user), pg.ReadOnly, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `select title from public.search_publications($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
				append([]any{phrase, f.projA, maxRows}, q.args()...)...)
			if err != nil {
				return err
			}
			titles, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return titles
	}
	want := func(phrase string, maxRows any, q queueFilters) []string {
		t.Helper()
		rows, err := own.Query(ctx, `select title from publications p
			where p.project_id = $2 and app.search_text(p.title, p.summary, p.body) ilike '%' || $1 || '%'
			  and ($4::text[] is null or p.status = any ($4)) and ($5::uuid is null or p.collection_id = $5)
			  and ($6::uuid is null or p.author_id = $6) and ($7::uuid is null or p.author_id <> $7)
			  and ($8::timestamptz is null or p.scheduled_for >= $8) and ($9::timestamptz is null or p.scheduled_for < $9)
			order by p.created_at desc, p.id desc limit $3`, append([]any{phrase, f.projA, maxRows}, q.args()...)...)
		if err != nil {
			t.Fatal(err)
		}
		titles, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return titles
	}
	for _, q := range []queueFilters{
		{},
		{statuses: []string{"reviewing"}},
		{statuses: []string{"draft", "scheduled"}},
		{collection: f.collA},
		{collection: f.collB}, // B's collection: nothing of A is in it
		{author: f.users["editor2A"]},
		{notBy: f.users["editor2A"]},
		{statuses: []string{"scheduled"}, scheduledFrom: "2030-06-02T00:00:00Z", scheduledTo: "2030-06-04T00:00:00Z"},
		{statuses: []string{"reviewing"}, collection: f.collA, author: f.users["editorA"]},
	} {
		for _, phrase := range []string{"story", "lonely"} {
			for _, maxRows := range []any{nil, 5, 26, 1001} {
				got, w := search("viewerA", phrase, maxRows, q), want(phrase, maxRows, q)
				if !slices.Equal(got, w) {
					t.Errorf("search(%q, cap %v, %+v) = %d rows %q\nwant %d rows %q", phrase, maxRows, q, len(got), got, len(w), w)
				}
				for _, title := range got {
					if strings.Contains(title, " in B ") {
						t.Errorf("search(%q, %+v) shows B's %q to a member of A", phrase, q, title)
					}
				}
			}
		}
		if got := search("outsider", "story", nil, q); len(got) != 0 {
			t.Errorf("an outsider finds %d rows with %+v", len(got), q)
		}
	}
	// The case the dashboard got wrong: few matches in review, far behind the cap of newer ones.
	if got := search("viewerA", "story", 26, queueFilters{statuses: []string{"reviewing"}}); len(got) != 26 {
		t.Errorf("story in review, capped at 26: %d rows, want 26", len(got))
	}
}

// TestSearchEstimate: search_estimate counts a phrase's matches under the queue's filters
// exactly where that is cheap (a rare phrase through the trigram index; fewer than 200 rows
// pass the filters) and estimates them otherwise, within a fifth of the truth on this data
// (exact=false, which the dashboard shows as "about"). It counts only in a project of the
// caller's: an outsider, a member of B asking about A, and anything asked without a project get
// 0, so it tells nobody how many rows another tenant has; anon may not call it at all.
func TestSearchEstimate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	searchQueueFixture(t, f)
	ctx := context.Background()
	own := f.db.Owner(t)
	estimate := func(user, phrase string, project any, q queueFilters) (int64, bool) {
		t.Helper()
		var n int64
		var exact bool
		err := pg.WithCaller(ctx, f.db.Pool, f.caller(user), pg.ReadOnly, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `select total, exact from public.search_estimate($1, $2, $3, $4, $5, $6, $7, $8)`,
				append([]any{phrase, project}, q.args()...)...).Scan(&n, &exact)
		})
		if err != nil {
			t.Fatal(err)
		}
		return n, exact
	}
	truth := func(phrase string, q queueFilters) int64 {
		t.Helper()
		var n int64
		mustScan(t, own.QueryRow(ctx, `select count(*) from publications p
			where p.project_id = $2 and app.search_text(p.title, p.summary, p.body) ilike '%' || $1 || '%'
			  and ($3::text[] is null or p.status = any ($3)) and ($4::uuid is null or p.collection_id = $4)
			  and ($5::uuid is null or p.author_id = $5) and ($6::uuid is null or p.author_id <> $6)
			  and ($7::timestamptz is null or p.scheduled_for >= $7) and ($8::timestamptz is null or p.scheduled_for < $8)`,
			append([]any{phrase, f.projA}, q.args()...)...), &n)
		return n
	}
	for _, c := range []struct {
		phrase string
		q      queueFilters
		exact  bool
	}{
		{"story", queueFilters{}, false},                               // 600 rows walked: estimated
		{"story", queueFilters{statuses: []string{"reviewing"}}, true}, // 150 rows pass: all sampled
		{"story", queueFilters{author: f.users["editor2A"]}, false},
		{"quay", queueFilters{}, false},  // half of the summaries
		{"lonely", queueFilters{}, true}, // bodies only: the trigram index, counted
		{"lonely", queueFilters{statuses: []string{"draft"}}, true},
		{"nothing like it", queueFilters{}, true},
	} {
		n, exact := estimate("viewerA", c.phrase, f.projA, c.q)
		w := truth(c.phrase, c.q)
		switch {
		case exact != c.exact:
			t.Errorf("estimate(%q, %+v): exact %v, want %v (total %d, truth %d)", c.phrase, c.q, exact, c.exact, n, w)
		case exact && n != w:
			t.Errorf("estimate(%q, %+v) = %d exactly, want %d", c.phrase, c.q, n, w)
		case !exact && (n*5 < w*4 || n*5 > w*6):
			t.Errorf("estimate(%q, %+v) = about %d, want within a fifth of %d", c.phrase, c.q, n, w)
		}
	}
	for _, c := range []struct {
		user    string
		project any
	}{{"outsider", f.projA}, {"editorB", f.projA}, {"viewerA", nil}, {"viewerA", f.projB}} {
		if n, exact := estimate(c.user, "story", c.project, queueFilters{}); n != 0 || !exact {
			t.Errorf("estimate as %s in %v = %d (exact %v), want 0", c.user, c.project, n, exact)
		}
	}
	err := pg.WithCaller(ctx, f.db.Pool, f.caller("anon"), pg.ReadOnly, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `select public.search_estimate('story', $1)`, f.projA)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("anon calls search_estimate: %v, want permission denied", err)
	}
}
