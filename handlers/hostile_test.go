package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// hostile is markup that tries to run script from every field a page shows.
const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>[x](javascript:alert(3))` +
	`<iframe src="https://evil.test"></iframe><a href="javascript:alert(4)" onclick="alert(5)">y</a>` +
	"\n\n<svg onload=alert(6)></svg>\n\n```\n</code><script>alert(7)</script>\n```\n"

// checkNoScript fails when the page could run anything but the dashboard's own scripts.
func checkNoScript(t *testing.T, p page) {
	t.Helper()
	p.doc.Find("script").Each(func(_ int, s *goquery.Selection) {
		if src, _ := s.Attr("src"); !strings.HasPrefix(src, "/assets/") {
			t.Errorf("script element from content: %s", goquery.NewDocumentFromNode(s.Nodes[0]).Text())
		}
	})
	if n := p.count("iframe, svg, object, embed, img[onerror]"); n > 0 {
		t.Errorf("%d active elements survived", n)
	}
	p.doc.Find("*").Each(func(_ int, s *goquery.Selection) {
		for _, a := range s.Nodes[0].Attr {
			v := strings.ToLower(strings.TrimSpace(a.Val))
			if strings.HasPrefix(strings.ToLower(a.Key), "on") || strings.HasPrefix(v, "javascript:") {
				t.Errorf("<%s %s=%q> survived", s.Nodes[0].Data, a.Key, a.Val)
			}
		}
	})
}

// oneLine is s as a title may hold it: control characters (line breaks included) become spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// TestHostileContent stores hostile text in every field of a publication (title, summary, body,
// review notes, status note, promo, media alt text) and checks that the pages show it as text.
func TestHostileContent(t *testing.T) {
	s := newStack(t)
	own := s.env.DB.Owner(t)
	// The promo's javascript: link can only be one stored before links had to be web addresses
	// (037 checks the rows written since, NOT VALID): it is written as then, and the check put
	// back as the schema has it.
	var linkCheck string
	if err := own.QueryRow(t.Context(), `select pg_get_constraintdef(oid) from pg_constraint
		where conrelid = 'promos'::regclass and conname = 'link_is_an_http_url'`).Scan(&linkCheck); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Exec(t.Context(), `alter table promos drop constraint link_is_an_http_url`); err != nil {
		t.Fatal(err)
	}
	var id string
	err := own.QueryRow(t.Context(), `
		with p as (
			insert into publications (project_id, title, slug, summary, body, author_id)
			select j.id, $2, 'hostile', $1, $1, (select id from profiles where email = 'editor@northwind.test')
			from projects j where j.slug = 'northwind'
			returning id, project_id),
		r as (insert into reviews (project_id, publication_id, reviewer_id, verdict, notes)
			select p.project_id, p.id, (select id from profiles where email = 'reviewer@northwind.test'), 'comment', $1 from p),
		m as (insert into media (project_id, storage_path, mime_type, alt_text)
			select p.project_id, 'northwind/hostile.png', 'image/png', $1 from p returning id, project_id),
		pm as (insert into publication_media (project_id, publication_id, media_id, position)
			select p.project_id, p.id, m.id, 1 from p, m),
		pr as (insert into promos (project_id, publication_id, channel, body, link)
			select p.project_id, p.id, 'x', $1, 'javascript:alert(8)' from p)
		select id::text from p`, hostile, oneLine(hostile)).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := own.Exec(t.Context(), `alter table promos add constraint link_is_an_http_url `+linkCheck); err != nil {
		t.Fatal(err)
	}
	b := s.browser(t)
	b.login("editor@northwind.test")
	// The editor submits it with a hostile note, so the history carries one too.
	d := b.get("/p/northwind/publications/" + id)
	if d.status != http.StatusOK {
		t.Fatalf("detail: %d", d.status)
	}
	checkNoScript(t, d)
	sub := b.post("/p/northwind/publications/"+id+"/actions/submit_for_review", map[string][]string{"note": {hostile}, "expected_version": {"1"}})
	if sub.status != http.StatusSeeOther {
		t.Fatalf("submit: %d", sub.status)
	}
	for _, path := range []string{"/p/northwind/publications/" + id, "/p/northwind/queue?q=script"} {
		p := b.get(path)
		if p.status != http.StatusOK {
			t.Fatalf("%s: %d", path, p.status)
		}
		checkNoScript(t, p)
	}
	d = b.get("/p/northwind/publications/" + id)
	if !strings.Contains(d.text(`[data-testid="pub-title"]`), "<script>alert(1)</script>") {
		t.Errorf("title not shown as text: %q", d.text(`[data-testid="pub-title"]`))
	}
	if d.count(`[data-testid="event"] .note`) == 0 || d.count(`[data-testid="media-item"] [data-testid="media-open"] img[alt]`) != 1 {
		t.Error("history note or media missing")
	}
	pv := b.post("/p/northwind/publications/"+id+"/preview/withdraw", map[string][]string{"note": {hostile}}, htmx("preview-withdraw")...)
	checkNoScript(t, pv)
}

// TestHostileForms: hostile values in the dashboard's forms get a clear 4xx page and change
// nothing: a NUL or a bidi override in the sign-in form, a forged workflow action, an action
// on a publication of another tenant, a round range that is no range.
func TestHostileForms(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	var sessions int
	count := func() int {
		var n int
		if err := s.env.DB.Owner(t).QueryRow(t.Context(), `select count(*) from auth.sessions`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	sessions = count()
	for _, tc := range []struct{ name, email, password string }{
		{"NUL in the email", "lead@northwind.test\x00", "masthead-demo"},
		{"NUL in the password", "lead@northwind.test", "masthead\x00demo"},
		{"bidi override in the email", "lead\u202e@northwind.test", "masthead-demo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := s.browser(t)
			b.get("/login")
			p := b.post("/login", url.Values{"email": {tc.email}, "password": {tc.password}})
			if p.status != http.StatusBadRequest || p.text(`[data-testid="login-error"]`) == "" {
				t.Errorf("status %d, error %q", p.status, p.text(`[data-testid="login-error"]`))
			}
		})
	}
	if n := count(); n != sessions {
		t.Errorf("hostile sign-ins started %d sessions", n-sessions)
	}
	b := s.browser(t)
	b.login("lead@acme.test")
	target := s.pubs(t, "northwind", "reviewing")[0]
	_, v0 := s.statusOf(t, target.id)
	for _, path := range []string{
		"/p/northwind/publications/" + target.id + "/actions/approve",    // another tenant's project
		"/p/acme-travel/publications/" + target.id + "/actions/approve",  // another tenant's publication in our project's URL
		"/p/acme-travel/publications/" + target.id + "/actions/drop_all", // no such action
	} {
		if p := b.post(path, url.Values{"note": {"forged"}}); p.status != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, p.status)
		}
	}
	if st, v := s.statusOf(t, target.id); st != "reviewing" || v != v0 {
		t.Errorf("a forged action changed the publication: %s v%d", st, v)
	}
}

// TestHandEditedURLs: a queue or schedule URL with a value the person typed or kept from long
// ago shows the page, never an error about what the service was then asked: a queue page past
// the end of the list (as a stale link to page 2 is once the queue shrinks, or a page number
// too large to count rows by), a search with a NUL in it, a month of year 0 or 1 (the week before January of year 1 lies in
// year 0, which PostgreSQL does not have), and junk in the other filters.
func TestHandEditedURLs(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	b.login("lead@northwind.test")
	thisMonth := s.clock.Now().In(mustLoc(t, "Europe/London")).Format("January 2006")
	for _, tc := range []struct {
		path, sel, want string
	}{
		{"/p/northwind/queue?page=2", `[data-testid="queue-empty"]`, "This page is past the end of the list."},
		{"/p/northwind/queue?page=9223372036854775807", `[data-testid="queue-empty"]`, "This page is past the end of the list."},
		{"/p/northwind/queue?page=368934881474191034", `[data-testid="queue-empty"]`, "This page is past the end of the list."}, // 25 rows a page from here wraps below 0
		{"/p/northwind/queue?status=all&q=council&page=400", `[data-testid="queue-empty"]`, "This page is past the end of the list."},
		{"/p/northwind/queue?page=-5&from=%ff&to=9999-99-99&collection=zz&status=%00", `[data-testid="queue-summary"]`, "1–"},
		{"/p/northwind/queue?status=all&q=coun%00cil", `[data-testid="queue-summary"]`, "1–"}, // no text holds a NUL: "council" is searched
		{"/p/northwind/queue?status=all&q=%00", `[data-testid="queue-summary"]`, "1–"},        // nothing left: no search
		{"/p/northwind/schedule?view=month&month=0000-01", "#month-title", thisMonth},
		{"/p/northwind/schedule?view=month&month=0001-01", "#month-title", thisMonth},
		{"/p/northwind/schedule?view=month&month=%00", "#month-title", thisMonth},
		{"/p/northwind/schedule?view=month&month=9999-12", "#month-title", "December 9999"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			p := b.get(tc.path)
			if p.status != http.StatusOK || !strings.Contains(p.text(tc.sel), tc.want) {
				t.Errorf("%d, %s = %q, want %q (page says %q)", p.status, tc.sel, p.text(tc.sel), tc.want, p.text("main"))
			}
		})
	}
	// A search longer than the queue keeps is cut on a character's edge, not inside one.
	a199 := strings.Repeat("a", 199)
	if got := b.get("/p/northwind/queue?status=all&q="+a199+"%C3%A9").doc.Find("#q").AttrOr("value", ""); got != a199 {
		t.Errorf("a 201-byte search kept as %q (%d bytes), want the 199 bytes before the cut character", got, len(got))
	}
}
