package handlers_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestQueueSearchCounts: a text search in the queue shows an exact count where it is cheap and
// an estimate labelled "about" where it is not (issue 14). A phrase with few matches is counted
// exactly; a common one (1,050 titles) is estimated, within a tenth of the truth, on the first
// page and deep in the list, and the pager offers the next page while more match. The queue's
// other filters apply before the search stops walking: the 12 oldest matches are the only
// ones in review, behind 1,050 newer drafts, and are found and counted exactly (before 026
// the status filter applied to the newest 1,001 matches only, and found none). Matching is
// case-insensitive (search_publications).
func TestQueueSearchCounts(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	own := s.env.DB.Owner(t)
	// 1,050 drafts that say "Capword", 7 that say "Rareword" (the demo data says neither) and
	// 12 older ones in review that say "Capword" too.
	if _, err := own.Exec(t.Context(), `
		insert into publications (project_id, title, slug, summary, body, author_id)
		select j.id, case when g <= 1050 then 'Capword story ' else 'A RAREWORD story ' end || g, 'cap-' || g, 'summary', 'body',
		       (select id from profiles where email = 'editor@northwind.test')
		  from projects j, generate_series(1, 1057) g
		 where j.slug = 'northwind';
		insert into publications (project_id, title, slug, summary, body, author_id, created_at)
		select j.id, 'Old capword in review ' || g, 'old-cap-' || g, 'summary', 'body',
		       (select id from profiles where email = 'editor@northwind.test'), '2001-01-01'::timestamptz + g * interval '1 day'
		  from projects j, generate_series(1, 12) g
		 where j.slug = 'northwind';
		select set_config('request.jwt.claims', json_build_object('role', 'authenticated',
		       'sub', (select id from profiles where email = 'editor@northwind.test'))::text, true);
		update publications set status = 'reviewing' where slug like 'old-cap-%';
		analyze publications`); err != nil {
		t.Fatal(err)
	}
	b := s.browser(t)
	b.login("lead@northwind.test")
	about := regexp.MustCompile(`^(\d+)–(\d+) of about ([\d,]+)$`)
	for _, c := range []struct {
		path, summary, pages string
		rows                 int
		next                 bool
	}{
		{"/p/northwind/queue?status=all&q=capword", "1–25 of about", "Page 1 of about", 25, true},
		{"/p/northwind/queue?status=all&q=capword&page=40", "976–1,000 of about", "Page 40 of about", 25, true},
		{"/p/northwind/queue?status=all&q=rareword", "1–7 of 7", "", 7, false},
		{"/p/northwind/queue?status=draft&q=RAREWORD", "1–7 of 7", "", 7, false},
		{"/p/northwind/queue?status=reviewing&q=rareword", "No publications match.", "", 0, false},
		{"/p/northwind/queue?status=reviewing&q=capword", "1–12 of 12", "", 12, false},
	} {
		p := b.get(c.path)
		if p.status != http.StatusOK {
			t.Fatalf("%s: %d", c.path, p.status)
		}
		got := p.text(`[data-testid="queue-summary"]`)
		if strings.HasSuffix(c.summary, "of about") {
			m := about.FindStringSubmatch(strings.ReplaceAll(got, "1,000", "1000"))
			if m == nil || !strings.HasPrefix(got, c.summary) {
				t.Errorf("%s: summary %q, want %q and a number", c.path, got, c.summary)
			} else if n, _ := strconv.Atoi(strings.ReplaceAll(m[3], ",", "")); n < 1062*9/10 || n > 1062*11/10 {
				t.Errorf("%s: about %d, want within a tenth of 1,062", c.path, n)
			}
		} else if got != c.summary {
			t.Errorf("%s: summary %q, want %q", c.path, got, c.summary)
		}
		if got := p.count(`[data-testid="queue-row"]`); got != c.rows {
			t.Errorf("%s: %d rows, want %d", c.path, got, c.rows)
		}
		if c.pages != "" && !strings.Contains(p.doc.Find("body").Text(), c.pages) {
			t.Errorf("%s: no %q on the page", c.path, c.pages)
		}
		if got := p.count(`a[rel="next"]`) > 0; got != c.next {
			t.Errorf("%s: next page link %v, want %v", c.path, got, c.next)
		}
	}

	// The estimate is asked for once per person and search (client.EstimateTTL): the next page
	// of the same search makes one service call fewer than the first page of another, and
	// another person asks for their own.
	calls := func(b *browser, path string) int64 {
		t.Helper()
		before := s.calls.Load()
		if st := b.fetch(path); st != http.StatusOK {
			t.Fatalf("%s: %d", path, st)
		}
		return s.calls.Load() - before
	}
	first := calls(b, "/p/northwind/queue?status=draft&q=capword")
	if next := calls(b, "/p/northwind/queue?status=draft&q=capword&page=2"); next != first-1 {
		t.Errorf("the next page of a search made %d service calls, want %d (one fewer than the first's %d)", next, first-1, first)
	}
	other := s.browser(t)
	other.login("reviewer@northwind.test")
	if got := calls(other, "/p/northwind/queue?status=draft&q=capword&page=2"); got != first {
		t.Errorf("another person's page made %d service calls, want %d (their own estimate)", got, first)
	}
}
