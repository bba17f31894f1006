package pg_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// searchAs runs search_publications as user and returns the titles found, in order.
func (f *fixture) searchAs(t *testing.T, user, phrase string, project, maxRows any) []string {
	t.Helper()
	var titles []string
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller(user), pg.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), `select title from public.search_publications($1, $2, $3)`, phrase, project, maxRows)
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

// TestSearchStaysInTenant: search_publications runs as its owner so that an index can serve
// the match, and must therefore show exactly what publications_read shows the caller: the
// same phrase in both projects finds each member only their own project's rows, naming the
// other project finds nothing, and anon and an outsider find nothing at all. It matches
// title, summary and body, case-insensitively, and LIKE's wildcards in the phrase are literal.
func TestSearchStaysInTenant(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	own := f.db.Owner(t)
	for i, p := range []struct{ proj, author, title, summary, body string }{
		{f.projA, "editorA", "Harbour lights in A", "", "plain"},
		{f.projA, "editorA", "Second in A", "about the HARBOUR", "plain"},
		{f.projA, "editorA", "Third in A", "", "the harbour, in the body"},
		{f.projA, "editorA", "Percent 100% sure", "", "plain"},
		{f.projA, "editorA", "Unrelated in A", "", "plain"},
		{f.projB, "editorB", "Harbour lights in B", "", "plain"},
	} {
		if _, err := own.Exec(ctx, `insert into publications (project_id, author_id, title, slug, summary, body, created_at)
			values ($1, $2, $3, 'search-' || $4::int, $5, $6, now() + $4::int * interval '1 second')`, p.proj, f.users[p.author], p.title, i, p.summary, p.body); err != nil {
			t.Fatal(err)
		}
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	inA := []string{"Harbour lights in A", "Second in A", "Third in A"}
	cases := []struct {
		name, user, phrase string
		project            any
		want               []string
	}{
		{"member of A", "viewerA", "harbour", nil, inA},
		{"member of A, project A", "reviewerA", "Harbour", f.projA, inA},
		{"member of A names B", "viewerA", "harbour", f.projB, nil},
		{"member of B", "editorB", "harbour", nil, []string{"Harbour lights in B"}},
		{"member of B names A", "editorB", "harbour", f.projA, nil},
		{"outsider", "outsider", "harbour", nil, nil},
		{"anon", "anon", "harbour", nil, nil},
		{"wildcards are literal", "viewerA", "100%", nil, []string{"Percent 100% sure"}},
		{"underscore is literal", "viewerA", "h_rbour", nil, nil},
		{"empty phrase finds nothing", "viewerA", "  ", nil, nil},
	}
	// max_rows keeps the newest: the phrase in every row of A, capped at two.
	if got := f.searchAs(t, "viewerA", "in A", f.projA, 2); !slices.Equal(got, []string{"Unrelated in A", "Third in A"}) {
		t.Errorf("capped search found %q, want the two newest", got)
	}
	for _, c := range cases {
		got := f.searchAs(t, c.user, c.phrase, c.project, nil)
		if !slices.Equal(sorted(got), sorted(c.want)) {
			t.Errorf("%s: search %q found %q, want %q", c.name, c.phrase, got, c.want)
		}
	}
}

// TestSearchPlanUsesTrigramIndex: the body of search_publications, planned as it runs (as its
// owner, with the caller's claims, generic plan), finds a rare phrase through the trigram index,
// both of its halves (migration 038: publications_search_idx_0 and _1, a BitmapOr), not a
// sequential scan, and a search finds the phrase in a row of each half; the same ilike made
// directly under RLS, as REST would send it, cannot use the index (it shows why the function
// exists).
func TestSearchPlanUsesTrigramIndex(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.bulk(t, 20000)
	ctx := context.Background()
	own := f.db.Owner(t)
	for _, q := range []string{
		`set session_replication_role = replica`, // fixture data: no caller does this
		// One row of project A in each half of the index.
		`update publications set body = 'the lighthouse keeper' where id in (
		   (select id from publications where project_id = '` + f.projA + `' and slug like 'bulk-%' and app.search_half(id) = 0 order by slug limit 1),
		   (select id from publications where project_id = '` + f.projA + `' and slug like 'bulk-%' and app.search_half(id) = 1 order by slug limit 1))`,
		`set session_replication_role = origin`,
		`analyze publications`,
	} {
		if _, err := own.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var src string
	mustScan(t, own.QueryRow(ctx, `select prosrc from pg_proc where proname = 'search_publications'`), &src)
	i, j := strings.Index(src, "'select p.*"), strings.Index(src, "limit $3'")
	if i < 0 || j < i {
		t.Fatalf("cannot find the query in search_publications:\n%s", src)
	}
	body := src[i+1 : j+len("limit $3")]
	tx, err := own.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	claims := `{"sub":"` + f.users["reviewerA"] + `","role":"authenticated"}`
	if _, err := tx.Exec(ctx, `select set_config('request.jwt.claims', $1, true)`, claims); err != nil {
		t.Fatal(err)
	}
	var lines []string
	// $4 to $9, the queue's filters (026), are null: any.
	rows, err := tx.Query(ctx, "explain "+body, "%lighthouse%", nil, 1001, nil, nil, nil, nil, nil, nil)
	if err == nil {
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	t.Logf("search_publications('lighthouse') as reviewerA:\n%s", plan)
	if strings.Contains(plan, "Seq Scan on publications") || !strings.Contains(plan, "BitmapOr") ||
		!strings.Contains(plan, "Bitmap Index Scan on publications_search_idx_0") ||
		!strings.Contains(plan, "Bitmap Index Scan on publications_search_idx_1") {
		t.Errorf("want both halves of the search index, no sequential scan:\n%s", plan)
	}
	if got := f.searchAs(t, "reviewerA", "Lighthouse", nil, 1001); len(got) != 2 {
		t.Errorf("search found %q, want the two bulk rows, one in each half", got)
	}
	direct := f.explain(t, "reviewerA", `select * from publications where body ilike '%lighthouse%'`)
	if strings.Contains(direct, "publications_search_idx") {
		t.Logf("note: under RLS the direct ilike now uses the index too:\n%s", direct)
	}
}
