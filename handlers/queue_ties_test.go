package handlers_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestQueuePagesWithTiedKeys: paging the queue when many rows share the sort key (created_at,
// the same instant for 130 publications) shows every row exactly once, in the order created_at
// then id, both newest first: the id breaks the tie, so a page never repeats a row of another
// or skips one, whether the rows come from the plain queue (status=draft) or from a search
// (q=tieword, walked field by field: search_publications stops inside the tied run, at the
// end of the page or at client.SearchExact, then REST orders the page). The page tests
// elsewhere use distinct timestamps, which would hide a sort that leaves ties to chance.
func TestQueuePagesWithTiedKeys(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	own := s.env.DB.Owner(t)
	if _, err := own.Exec(t.Context(), `
		insert into publications (project_id, title, slug, summary, body, author_id, created_at)
		select j.id, 'Tieword story ' || g, 'tie-' || g, 'summary', 'body',
		       (select id from profiles where email = 'editor@northwind.test'), '2030-01-01T00:00:00Z'
		  from projects j, generate_series(1, 130) g
		 where j.slug = 'northwind';
		analyze publications`); err != nil {
		t.Fatal(err)
	}
	// order is the ids the queue must list for a filter, as the owner sorts them.
	order := func(where string) []string {
		t.Helper()
		rows, err := own.Query(t.Context(), `select p.id::text from publications p join projects j on j.id = p.project_id
			where j.slug = 'northwind' and `+where+` order by p.created_at desc, p.id desc`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	b := s.browser(t)
	b.login("lead@northwind.test")
	for _, c := range []struct{ query, where string }{
		{"status=draft", "p.status = 'draft'"},
		{"status=all&q=tieword", "p.title ilike '%tieword%'"},
		{"status=draft&q=TIEWORD", "p.status = 'draft' and p.title ilike '%tieword%'"},
	} {
		want := order(c.where)
		if len(want) < 130 {
			t.Fatalf("%s: the fixture has %d rows, want at least 130", c.query, len(want))
		}
		var got []string
		for page := 1; page <= (len(want)+24)/25; page++ {
			path := fmt.Sprintf("/p/northwind/queue?%s&page=%d", c.query, page)
			p := b.get(path)
			if p.status != http.StatusOK {
				t.Fatalf("%s: %d", path, p.status)
			}
			p.doc.Find(`[data-testid="queue-row"] a.row-title`).Each(func(_ int, a *goquery.Selection) {
				href, _ := a.Attr("href")
				got = append(got, href[strings.LastIndex(href, "/")+1:])
			})
		}
		seen := map[string]bool{}
		for _, id := range got {
			if seen[id] {
				t.Errorf("%s: %s is on two pages", c.query, id)
			}
			seen[id] = true
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: pages list %d rows\n%q\nwant %d in created_at, id order\n%q", c.query, len(got), got, len(want), want)
		}
	}
}
