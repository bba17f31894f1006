package handlers_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestInbox: each person's "Waiting on me" lists exactly what the database says waits on them,
// grouped by reason and linked to where they act; the banner's count agrees.
func TestInbox(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	own := s.env.DB.Owner(t)
	count := func(sql, email string) int {
		t.Helper()
		var n int
		if err := own.QueryRow(context.Background(), sql, email).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Written independently of my_inbox(), from the rules in DESIGN's words.
	toReview := `select count(*) from publications p join project_members m on m.project_id = p.project_id
		join auth.users u on u.id = m.user_id
		where u.email = $1 and m.role in ('reviewer', 'lead', 'owner') and p.status = 'reviewing' and p.author_id <> u.id
		  and not exists (select 1 from reviews r where r.publication_id = p.id and r.reviewer_id = u.id
		                  and r.round = (select max(round) from publication_revisions v where v.publication_id = p.id))`
	sentBack := `select count(*) from publications p join auth.users u on u.id = p.author_id
		where u.email = $1 and p.status = 'changes_requested'`
	cases := []struct {
		email  string
		groups map[string]int
	}{
		{"reviewer@northwind.test", map[string]int{"review": count(toReview, "reviewer@northwind.test")}},
		{"editor@northwind.test", map[string]int{"changes_requested": count(sentBack, "editor@northwind.test")}},
		{"viewer@northwind.test", nil},
	}
	for _, c := range cases {
		t.Run(c.email, func(t *testing.T) {
			b := s.browser(t)
			b.login(c.email)
			p := b.get("/inbox")
			if p.status != http.StatusOK {
				t.Fatalf("inbox: %d", p.status)
			}
			total := 0
			for key, n := range c.groups {
				if n == 0 {
					t.Fatalf("the demo data has nothing %s for %s", key, c.email)
				}
				total += n
				if got := p.count(`[data-testid="inbox-` + key + `"] [data-testid="inbox-entry"]`); got != n {
					t.Errorf("%s: %d entries, want %d", key, got, n)
				}
			}
			if got := p.count(`[data-testid="inbox-entry"]`); got != total {
				t.Errorf("%d entries in all, want %d", got, total)
			}
			// Each entry says since when, as a time a browser can read, and no template
			// source leaks into the text (it once read "since @partials.Ago(e.Since)").
			if got := p.count(`[data-testid="inbox-entry"] time[datetime]`); got != total {
				t.Errorf("%d entries say since when, want %d", got, total)
			}
			p.doc.Find(`[data-testid="inbox-entry"]`).Each(func(_ int, e *goquery.Selection) {
				txt := strings.Join(strings.Fields(e.Text()), " ")
				status := e.Find(`[data-testid="status"]`).Text()
				if strings.Contains(txt, "@") || !strings.Contains(txt, status+" Northwind Daily · since ") {
					t.Errorf("entry reads %q", txt)
				}
			})
			if total == 0 && p.count(`[data-testid="inbox-empty"]`) != 1 {
				t.Error("an empty inbox does not say so")
			}
			p.doc.Find(`[data-testid="inbox-review"] [data-testid="inbox-entry"] a`).Each(func(_ int, a *goquery.Selection) {
				if href, _ := a.Attr("href"); !strings.HasPrefix(href, "/p/northwind/publications/") || !strings.HasSuffix(href, "#changes") {
					t.Errorf("entry links to %q", href)
				}
			})
			n := b.get("/inbox/count", htmx("inbox-count")...)
			want := strconv.Itoa(total) + " waiting"
			if total == 0 {
				want = "" // no "0" pill: nothing waits, nothing shows
			}
			if got := n.text(`[data-testid="inbox-count"]`); got != want {
				t.Errorf("banner count %q, want %q", got, want)
			}
			if total == 0 && n.count(`[data-testid="inbox-count"]:empty`) != 1 {
				t.Error("the banner's count of nothing is not an empty span (the stylesheet draws a pill round any content)")
			}
			if q := b.get("/p/northwind/queue"); q.count(`[data-testid="inbox-link"] #inbox-count[hx-get="/inbox/count"]`) != 1 {
				t.Error("the banner has no inbox link that loads its count")
			}
		})
	}
}

// TestNewSinceLastVisit: the queue marks what changed since the person's last sitting with it,
// remembered by the service per person (not in a cookie: a new browser sees the same marks).
func TestNewSinceLastVisit(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	own := s.env.DB.Owner(t)
	b := s.browser(t)
	b.login("lead@northwind.test")
	if p := b.get("/p/northwind/queue?status=draft"); p.count(`[data-testid="new"]`) != 0 {
		t.Fatalf("a first visit marks %d rows new", p.count(`[data-testid="new"]`))
	}
	// Everything was last touched two hours ago and the lead looked 40 minutes ago; then the
	// editor edits one draft.
	for _, q := range []string{
		`alter table publications disable trigger publications_guard`,
		`update publications set updated_at = now() - interval '2 hours'`,
		`alter table publications enable trigger publications_guard`,
		`update list_visits set seen_at = now() - interval '40 minutes'`,
	} {
		if _, err := own.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	var draft string
	for _, p := range s.pubs(t, "northwind", "draft") {
		if p.authorEmail == "editor@northwind.test" {
			draft = p.id
			break
		}
	}
	_, editor := s.as(t, "editor@northwind.test")
	s.edit(t, editor, draft, `{"summary":"A fresh summary."}`)

	other := s.browser(t) // another browser: the marks live in the service, not a cookie
	other.login("lead@northwind.test")
	p := other.get("/p/northwind/queue?status=draft")
	if n := p.count(`[data-testid="new"]`); n != 1 {
		t.Fatalf("%d rows marked new, want 1", n)
	}
	href, _ := p.doc.Find(`[data-testid="queue-row"]:has([data-testid="new"]) a.row-title`).Attr("href")
	if !strings.HasSuffix(href, draft) {
		t.Errorf("the new row links to %q, want the edited draft", href)
	}
	// Paging and filtering within the sitting keep the mark.
	if p := other.get("/p/northwind/queue?status=draft"); p.count(`[data-testid="new"]`) != 1 {
		t.Error("a second look in the same sitting lost the mark")
	}
}
