package handlers_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestQueuePromosAgreeWithReadiness: the queue's "N of M promos ready" is the database's
// verdict (readiness(), one check per default channel), row by row. A promo whose body is
// blank is a case the database calls "no promo written": the queue must not count it ready.
// The seed adds promos over their channel's limit and channels with none.
func TestQueuePromosAgreeWithReadiness(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	own := s.env.DB.Owner(t)
	draft := s.pubs(t, "northwind", "draft")[0]
	// Every default channel gets a promo within its limits, then one of them a blank body:
	// the database allows it (promos.body has no such check) and an editor may save one.
	if _, err := own.Exec(context.Background(), `
		insert into promos (publication_id, channel, body)
		select p.id, ch, 'Read it' from publications p join projects j on j.id = p.project_id, unnest(j.default_channels) ch
		 where p.id = $1
		on conflict (publication_id, channel) do update set body = 'Read it', link = null`, draft.id); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Exec(context.Background(), `
		update promos set body = '   ' where publication_id = $1
		   and channel = (select j.default_channels[1] from publications p join projects j on j.id = p.project_id where p.id = $1)`, draft.id); err != nil {
		t.Fatal(err)
	}
	var ready, of int
	if err := own.QueryRow(context.Background(), `
		select count(*) filter (where r.ok), count(*) from publications p, app.readiness_of(p) r
		 where p.id = $1 and r."check" like 'promo:%'`, draft.id).Scan(&ready, &of); err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(of-1) + " of " + strconv.Itoa(of) + " promos ready"; ready != of-1 {
		t.Fatalf("the database counts %d of %d ready, want %s", ready, of, want)
	}
	b := s.browser(t)
	b.login("lead@northwind.test")
	for _, path := range []string{
		"/p/northwind/queue?status=all",
		"/p/northwind/queue?status=draft",
		"/p/northwind/queue?status=draft&q=" + url.QueryEscape(strings.Fields(draft.title)[0]), // through search_publications
	} {
		q := b.get(path)
		rows, sawDraft := 0, false
		q.doc.Find(`[data-testid="queue-row"]`).Each(func(_ int, row *goquery.Selection) {
			rows++
			id := strings.TrimPrefix(row.Find("a.row-title").AttrOr("href", ""), "/p/northwind/publications/")
			var ready, of int
			if err := own.QueryRow(context.Background(), `
				select count(*) filter (where r.ok), count(*) from publications p, app.readiness_of(p) r
				 where p.id = $1 and r."check" like 'promo:%'`, id).Scan(&ready, &of); err != nil {
				t.Fatal(err)
			}
			cell := row.Find(`[data-testid="readiness"]`)
			label := strings.TrimPrefix(strings.TrimSpace(cell.Text()), "Promos: ")
			want := strconv.Itoa(ready) + " of " + strconv.Itoa(of) + " promos ready"
			if !strings.HasPrefix(label, want) {
				t.Errorf("%s: row %s says %q, the database %q", path, id, label, want)
			}
			if ok := cell.HasClass("readiness-ok"); ok != (ready == of) {
				t.Errorf("%s: row %s marked ok=%v, the database has %d of %d ready", path, id, ok, ready, of)
			}
			if id == draft.id {
				sawDraft = true
			}
		})
		if rows == 0 || !sawDraft {
			t.Errorf("%s: %d rows, the draft with a blank promo among them: %v", path, rows, sawDraft)
		}
	}
}
