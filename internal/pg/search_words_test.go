package pg_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"masthead/internal/pg"
)

// TestSearchWords: a phrase with a word common in the project's newest rows ("Bulk" in every
// title of the bulk fixture) is looked up in the trigram index by its rare words (migration
// 028): app.search_words names them, search_publications runs the words query (seen in its
// nested plan through auto_explain: the index is asked for '%271%', not for the phrase), the
// words query's own plan is a bitmap scan of publications_search_idx on the rare word with the
// phrase as a filter, and whichever query runs the rows are exactly those of the phrase matched
// against title, summary and body (017's concatenation) in the caller's project, newest first,
// for every phrase below; a member of B finds none of A's rows naming A, and B's own when
// naming B, though B has the same titles.
func TestSearchWords(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.bulk(t, 20000) // "Bulk 1" … "Bulk 20000" in A and in B, body "body"
	ctx := context.Background()
	own := f.db.Owner(t)
	// Five of A's newest 100 rows say "quay" in their summary: neither common nor rare.
	for _, q := range []string{
		`set session_replication_role = replica`, // fixture data: no caller does this
		`update publications set summary = 'by the quay' where slug in ('bulk-3', 'bulk-13', 'bulk-23', 'bulk-33', 'bulk-43')`,
		`set session_replication_role = origin`,
		`vacuum analyze publications`,
	} {
		if _, err := own.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	// asOwner runs fn as search_publications runs its helpers: as the owner, with the claims.
	asOwner := func(conn *pgx.Conn, user string, fn func(tx pgx.Tx)) {
		t.Helper()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		claims := `{"sub":"` + f.users[user] + `","role":"authenticated"}`
		if _, err := tx.Exec(ctx, `select set_config('request.jwt.claims', $1, true)`, claims); err != nil {
			t.Fatal(err)
		}
		fn(tx)
	}
	for _, c := range []struct {
		user, phrase string
		project      any
		want         *string
	}{
		{"viewerA", "Bulk 271", f.projA, ptr("%271%")},
		{"viewerA", "bulk 271 bulk 2710", f.projA, ptr("%271%2710%")},
		{"viewerA", "Bulk-271", f.projA, ptr("%271%")},
		{"viewerA", "Bulk 27", f.projA, nil},                // "27" has no trigram of its own: the phrase
		{"viewerA", "regatta", f.projA, nil},                // one word: no choice
		{"viewerA", "Bulk body", f.projA, nil},              // both common: "body" is in every body
		{"viewerA", "Bulk 271 body", f.projA, ptr("%271%")}, // two common words, one rare
		{"viewerA", "Bulk 27 body 1", f.projA, nil},         // no word rare enough to look up alone
		{"viewerA", "Bulk quay", f.projA, nil},              // "quay" in 5 of the 100: not rare enough
		{"viewerA", "Bulk 13 by the quay", f.projA, nil},    // nor with "the"
		{"viewerA", "Bulk 271", nil, nil},                   // no project: the phrase
		{"outsider", "Bulk 271", f.projA, nil},              // not a member: no sample, the phrase
		{"editorB", "Bulk 271", f.projA, nil},               // the same for a member of another project
	} {
		asOwner(own, c.user, func(tx pgx.Tx) {
			var got *string
			if err := tx.QueryRow(ctx, `select app.search_words($1, $2)`, c.phrase, c.project).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
				t.Errorf("search_words(%q, %v) as %s = %v, want %v", c.phrase, c.project, c.user, deref(got), deref(c.want))
			}
		})
	}

	// The same rows, in the same order, as the phrase matched against the concatenation.
	search := func(user, phrase string, project any) []string {
		t.Helper()
		var ids []string
		err := pg.WithCaller(ctx, f.db.Pool, f.caller(user), pg.ReadOnly, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `select id::text from public.search_publications($1, $2, 1001)`, phrase, project)
			if err != nil {
				return err
			}
			ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	escape := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	direct := func(phrase, project string) []string {
		t.Helper()
		rows, err := own.Query(ctx, `select id::text from publications p
			where p.project_id = $2 and app.search_text(p.title, p.summary, p.body) ilike $1
			order by p.created_at desc, p.id desc limit 1001`, "%"+escape.Replace(strings.TrimSpace(phrase))+"%", project)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	for _, phrase := range []string{"Bulk 271", "BULK 2710", " bulk 271 ", "Bulk 2719", "bulk 271 bulk 2710",
		"Bulk-271", "Bulk_271", "Bulk%271", "Bulk 271 body", "Bulk 2 71", "Bulk 9999", "Bulk 27", "ulk 1", "Bulk quay", "Bulk 13 by the quay", "bulk 13 by"} {
		want := direct(phrase, f.projA)
		if got := search("viewerA", phrase, f.projA); !slices.Equal(got, want) {
			t.Errorf("search %q in A as viewerA: %d rows %v, want %d %v", phrase, len(got), got, len(want), want)
		}
		if got := search("editorB", phrase, f.projA); len(got) != 0 {
			t.Errorf("search %q naming A as editorB found %d rows", phrase, len(got))
		}
		wantB := direct(phrase, f.projB)
		if got := search("ownerB", phrase, f.projB); !slices.Equal(got, wantB) {
			t.Errorf("search %q in B as ownerB: %v, want %v", phrase, got, wantB)
		}
	}
	if n := len(direct("Bulk 271", f.projA)); n != 11 {
		t.Fatalf("the fixture has %d rows with Bulk 271 in A, want 11 (271, 2710-2719)", n)
	}

	// search_publications runs the words query: its nested statements' plans, through
	// auto_explain (as the owner, with the caller's claims, as the function runs them).
	cfg, err := pgx.ParseConfig(f.db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notices []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		notices = append(notices, n.Message)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{`load 'auto_explain'`, `set auto_explain.log_min_duration = 0`,
		`set auto_explain.log_nested_statements = on`, `set auto_explain.log_level = notice`, `set auto_explain.log_analyze = on`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	asOwner(conn, "viewerA", func(tx pgx.Tx) {
		var n int
		if err := tx.QueryRow(ctx, `select count(*) from public.search_publications('Bulk 271', $1, 1001)`, f.projA).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 11 {
			t.Errorf("search_publications('Bulk 271') as viewerA found %d rows, want 11", n)
		}
	})
	mu.Lock()
	var words string
	for _, m := range notices {
		if strings.Contains(m, "select r.* from public.publications r") {
			words = m
		}
	}
	mu.Unlock()
	t.Logf("the words query as search_publications ran it:\n%s", words)
	if words == "" {
		t.Fatalf("search_publications('Bulk 271') did not run the words query; its statements:\n%s", strings.Join(notices, "\n"))
	}
	if !strings.Contains(words, "Bitmap Index Scan on publications_search_idx") ||
		!strings.Contains(words, "~~* '%271%'::text") || strings.Contains(words, "~~* '%Bulk 271%'") ||
		!strings.Contains(words, "~~ '%bulk 271%'::text") || strings.Contains(words, "Seq Scan") {
		t.Errorf("want a bitmap scan of publications_search_idx for '%%271%%' and the phrase as a filter:\n%s", words)
	}
}

func ptr(s string) *string { return &s }

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
