package handlers_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestQueueSearchCountsToTheCap: a text search in the queue counts its matches exactly up to
// client.SearchCap and says "more than 1,000" past it, paging only that far; below the cap it
// shows the exact number. Matching is case-insensitive (search_publications).
func TestQueueSearchCountsToTheCap(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	own := s.env.DB.Owner(t)
	// 1,050 drafts that say "Capword" and 7 that say "Rareword" (the demo data says neither).
	if _, err := own.Exec(t.Context(), `
		insert into publications (project_id, title, slug, summary, body, author_id)
		select j.id, case when g <= 1050 then 'Capword story ' else 'A RAREWORD story ' end || g, 'cap-' || g, 'summary', 'body',
		       (select id from profiles where email = 'editor@northwind.test')
		  from projects j, generate_series(1, 1057) g
		 where j.slug = 'northwind'`); err != nil {
		t.Fatal(err)
	}
	b := s.browser(t)
	b.login("lead@northwind.test")
	for _, c := range []struct {
		path, summary, pages string
		rows                 int
	}{
		{"/p/northwind/queue?status=all&q=capword", "1–25 of more than 1,000", "Page 1 of 40", 25},
		{"/p/northwind/queue?status=all&q=capword&page=40", "976–1,000 of more than 1,000", "Page 40 of 40", 25},
		{"/p/northwind/queue?status=all&q=rareword", "1–7 of 7", "", 7},
		{"/p/northwind/queue?status=draft&q=RAREWORD", "1–7 of 7", "", 7},
		{"/p/northwind/queue?status=reviewing&q=rareword", "No publications match.", "", 0},
	} {
		p := b.get(c.path)
		if p.status != http.StatusOK {
			t.Fatalf("%s: %d", c.path, p.status)
		}
		if got := p.text(`[data-testid="queue-summary"]`); got != c.summary {
			t.Errorf("%s: summary %q, want %q", c.path, got, c.summary)
		}
		if got := p.count(`[data-testid="queue-row"]`); got != c.rows {
			t.Errorf("%s: %d rows, want %d", c.path, got, c.rows)
		}
		if c.pages != "" && !strings.Contains(p.doc.Find("body").Text(), c.pages) {
			t.Errorf("%s: no %q on the page", c.path, c.pages)
		}
	}
}
