package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"masthead/internal/client"
	"masthead/internal/config"
	"masthead/internal/testwait"
)

// actionsOf lists the workflow actions a detail page offers, by RPC name.
// draftOf is one of the demo editor's drafts in northwind.
func draftOf(t *testing.T, s *stack) string {
	t.Helper()
	for _, p := range s.pubs(t, "northwind", "draft") {
		if p.authorEmail == "editor@northwind.test" {
			return p.id
		}
	}
	t.Fatal("no draft by the editor")
	return ""
}

func actionsOf(p page) []string {
	var out []string
	p.doc.Find(`[data-testid="actions"] form[data-testid^="action-"]`).Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("data-testid")
		out = append(out, strings.TrimPrefix(id, "action-"))
	})
	// The verdicts share the one review composer.
	p.doc.Find(`[data-testid="composer"] button[data-testid^="verdict-"]`).Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("data-testid")
		out = append(out, strings.TrimPrefix(id, "verdict-"))
	})
	slices.Sort(out)
	return out
}

// TestDashboard runs every page for every role against one seeded service, then the flows that
// change data, each on publications no other subtest touches.
func TestDashboard(t *testing.T) {
	s := newStack(t)
	reviewing := s.pubs(t, "northwind", "reviewing")
	approved := s.pubs(t, "northwind", "approved")
	scheduled := s.pubs(t, "northwind", "scheduled")
	acme := s.pubs(t, "acme-travel", "reviewing")

	t.Run("pages", func(t *testing.T) {
		// Which actions each role sees on a publication in review written by the editor.
		target := reviewing[0]
		for _, p := range reviewing {
			if p.authorEmail == "editor@northwind.test" {
				target = p
				break
			}
		}
		if target.authorEmail != "editor@northwind.test" {
			t.Fatal("no publication in review written by the editor")
		}
		roles := []struct {
			email   string
			actions []string
		}{
			{"lead@northwind.test", []string{"add_review", "approve", "request_changes", "withdraw"}},
			{"editor@northwind.test", []string{"withdraw"}},
			{"reviewer@northwind.test", []string{"add_review", "approve", "request_changes"}},
			{"viewer@northwind.test", nil},
			{"multi@masthead.test", []string{"add_review", "approve", "request_changes"}},
		}
		for _, r := range roles {
			t.Run(r.email, func(t *testing.T) {
				t.Parallel()
				b := s.browser(t)
				b.login(r.email)
				// A start page per role.
				start := map[string]string{
					"lead@northwind.test":     "/p/northwind/schedule",
					"editor@northwind.test":   "/p/northwind/queue?status=writing&author=me",
					"reviewer@northwind.test": "/p/northwind/queue?author=others",
					"viewer@northwind.test":   "/p/northwind/queue",
				}
				home := b.get("/")
				if want, ok := start[r.email]; home.status != http.StatusSeeOther || (ok && home.location() != want) || !strings.HasPrefix(home.location(), "/p/") {
					t.Fatalf("/ = %d → %q, want %q", home.status, home.location(), want)
				}
				if p := b.get(home.location()); p.status != http.StatusOK {
					t.Fatalf("the start page %s: %d", home.location(), p.status)
				}
				q := b.get("/p/northwind/queue")
				if q.status != http.StatusOK || q.count(`[data-testid="queue-row"]`) == 0 {
					t.Fatalf("queue: %d with %d rows", q.status, q.count(`[data-testid="queue-row"]`))
				}
				if got := q.text(`[data-testid="queue-row"] [data-testid="status"]`); got != "In review" {
					t.Errorf("queue status in words = %q", got)
				}
				if q.count(`main`) != 1 || q.count(`header[role="banner"]`) != 1 || q.count(`#live[aria-live]`) != 1 {
					t.Error("landmarks or live region missing")
				}
				d := b.get("/p/northwind/publications/" + target.id)
				if d.status != http.StatusOK || d.text(`[data-testid="pub-title"]`) != target.title {
					t.Fatalf("detail: %d %q", d.status, d.text(`[data-testid="pub-title"]`))
				}
				if got := actionsOf(d); !slices.Equal(got, r.actions) {
					t.Errorf("actions = %v, want %v", got, r.actions)
				}
				// The summary is read as the article's standfirst, inside its card (it once sat
				// between two cards as a stray line).
				if got := d.text(`[data-testid="article"] [data-testid="pub-summary"]`); got != target.summary || got == "" {
					t.Errorf("the article's summary = %q, want %q", got, target.summary)
				}
				if d.count(`[data-testid="event"]`) == 0 {
					t.Error("no history on a publication in review")
				}
				for _, path := range []string{"/p/northwind/schedule", "/p/northwind/schedule?view=month", "/schedule"} {
					if p := b.get(path); p.status != http.StatusOK || !strings.Contains(p.text(`[data-testid="timezone"]`), "Europe/London") && path != "/schedule" {
						t.Errorf("%s: %d %q", path, p.status, p.text(`[data-testid="timezone"]`))
					}
				}
			})
		}
		t.Run("other tenant is not found", func(t *testing.T) {
			t.Parallel()
			b := s.browser(t)
			b.login("reviewer@northwind.test")
			for _, path := range []string{"/p/acme-travel/queue", "/p/acme-travel/publications/" + acme[0].id,
				"/p/northwind/publications/" + acme[0].id, "/p/acme-travel/schedule", "/p/nope/queue"} {
				if p := b.get(path); p.status != http.StatusNotFound {
					t.Errorf("%s = %d, want 404", path, p.status)
				}
			}
		})
		t.Run("multi switches projects", func(t *testing.T) {
			t.Parallel()
			b := s.browser(t)
			b.login("multi@masthead.test")
			q := b.get("/p/acme-travel/queue")
			if q.status != http.StatusOK || q.count(`[data-testid="project-switcher"] a[href="/p/northwind/queue"]`) != 1 {
				t.Fatalf("switcher: %d", q.status)
			}
			if home := b.get("/"); !strings.HasPrefix(home.location(), "/p/acme-travel/") {
				t.Errorf("remembered project: / → %q", home.location())
			}
			d := b.get("/p/acme-travel/publications/" + acme[0].id)
			if got := actionsOf(d); !slices.Contains(got, "approve") {
				t.Errorf("lead in acme-travel sees %v", got)
			}
		})
		t.Run("signed out is sent to login and back", func(t *testing.T) {
			t.Parallel()
			b := s.browser(t)
			p := b.get("/p/northwind/queue?status=draft")
			if p.status != http.StatusSeeOther || p.location() != "/login?next=%2Fp%2Fnorthwind%2Fqueue%3Fstatus%3Ddraft" {
				t.Fatalf("signed out: %d → %q", p.status, p.location())
			}
			b.get(p.location())
			in := b.post("/login", url.Values{"email": {"viewer@northwind.test"}, "password": {"masthead-demo"}, "next": {"/p/northwind/queue?status=draft"}})
			if in.location() != "/p/northwind/queue?status=draft" {
				t.Errorf("after login → %q", in.location())
			}
		})
		t.Run("login errors do not reveal accounts", func(t *testing.T) {
			t.Parallel()
			b := s.browser(t)
			b.get("/login")
			wrong := b.post("/login", url.Values{"email": {"lead@northwind.test"}, "password": {"nope"}})
			unknown := b.post("/login", url.Values{"email": {"nobody@northwind.test"}, "password": {"nope"}})
			if wrong.status != unknown.status || wrong.text(`[data-testid="login-error"]`) != unknown.text(`[data-testid="login-error"]`) || wrong.status != http.StatusUnauthorized {
				t.Errorf("wrong password %d %q vs unknown %d %q", wrong.status, wrong.text(`[data-testid="login-error"]`), unknown.status, unknown.text(`[data-testid="login-error"]`))
			}
			if v, _ := wrong.doc.Find("#email").Attr("value"); v != "lead@northwind.test" {
				t.Errorf("email not kept: %q", v)
			}
			if wrong.count(`#password[autocomplete="current-password"]`) != 1 || wrong.count(`#email[autocomplete="username"]`) != 1 {
				t.Error("fields lack autocomplete hints for password managers")
			}
			for _, next := range []string{"//evil.test/", `/\evil.test`, "https://evil.test/"} {
				in := b.post("/login", url.Values{"email": {"viewer@northwind.test"}, "password": {"masthead-demo"}, "next": {next}})
				if in.location() != "/" {
					t.Errorf("next %q → %q", next, in.location())
				}
				b.get("/p/northwind/queue") // the sign-in changed the CSRF token: take the new one
				if out := b.post("/logout", nil); out.location() != "/login?reason=signed-out" {
					t.Fatalf("logout: %d → %q", out.status, out.location())
				}
				b.get("/login")
			}
		})
		t.Run("security headers", func(t *testing.T) {
			t.Parallel()
			b := s.browser(t)
			p := b.get("/login")
			h := p.header
			csp := h.Get("Content-Security-Policy")
			if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("CSP = %q", csp)
			}
			for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"} {
				if h.Get(k) != want {
					t.Errorf("%s = %q", k, h.Get(k))
				}
			}
			if !strings.Contains(h.Get("Vary"), "HX-Request") {
				t.Errorf("Vary = %q", h.Get("Vary"))
			}
			c := h.Get("Set-Cookie")
			if !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Lax") {
				t.Errorf("cookie = %q", c)
			}
			p.doc.Find("script").Each(func(_ int, s *goquery.Selection) {
				if _, ok := s.Attr("src"); !ok {
					t.Error("inline script on the page")
				}
			})
		})
		t.Run("queue filters, pages and fragments", func(t *testing.T) {
			t.Parallel()
			b := s.browser(t)
			b.login("viewer@northwind.test")
			all := b.get("/p/northwind/queue?status=all")
			if got := all.text(`[data-testid="queue-summary"]`); !strings.HasPrefix(got, "1–25 of ") {
				t.Errorf("summary = %q", got)
			}
			next, _ := all.doc.Find(`a[rel="next"]`).Attr("href")
			if next != "/p/northwind/queue?page=2&status=all" {
				t.Errorf("next page = %q", next)
			}
			p2 := b.get(next)
			if p2.count(`[data-testid="queue-row"]`) == 0 || p2.count(`a[rel="prev"]`) != 1 {
				t.Error("page 2 empty or without a way back")
			}
			part := b.get(next, htmx("queue-results")...)
			if strings.Contains(part.body, "<html") || part.count(`#queue-results`) != 1 {
				t.Error("htmx request got more than the results")
			}
			if push := b.get("/p/northwind/queue?status=all&collection=&author=&from=&to=&q=&page=2", htmx("queue-results")...).header.Get("HX-Push-Url"); push != "/p/northwind/queue?page=2&status=all" {
				t.Errorf("HX-Push-Url = %q", push)
			}
			word := strings.Fields(reviewing[1].title)[0]
			found := b.get("/p/northwind/queue?q=" + url.QueryEscape(word))
			if !strings.Contains(found.text(`[data-testid="queue"]`), word) {
				t.Errorf("search %q found nothing", word)
			}
			// The search reads the article too, as its label says: the demo's bodies end with
			// the piece's own URL, whose slug (words joined by dashes) no title or summary holds.
			if got := found.text(`label[for="q"]`); got != "Search titles, summaries and articles" {
				t.Errorf("the search box's label: %q", got)
			}
			var slug, body string
			if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select slug, body from publications where id = $1`, reviewing[1].id).Scan(&slug, &body); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(body, slug) || strings.Contains(reviewing[1].title, slug) {
				t.Fatalf("the demo body of %q does not hold its slug %q alone", reviewing[1].title, slug)
			}
			if inBody := b.get("/p/northwind/queue?q=" + url.QueryEscape(slug)); !strings.Contains(inBody.text(`[data-testid="queue"]`), reviewing[1].title) {
				t.Errorf("search %q (in the article only) did not find %q", slug, reviewing[1].title)
			}
			none := b.get("/p/northwind/queue?q=" + url.QueryEscape(`zz%_(,)"\`))
			if none.status != http.StatusOK || none.count(`[data-testid="queue-empty"]`) != 1 {
				t.Errorf("hostile search: %d", none.status)
			}
			sched := b.get("/p/northwind/queue?status=scheduled&from=2000-01-01&to=2100-01-01")
			if sched.count(`[data-testid="queue-row"]`) != min(25, len(scheduled)) {
				t.Errorf("scheduled range: %d rows, want %d", sched.count(`[data-testid="queue-row"]`), len(scheduled))
			}
			if bad := b.get("/p/northwind/queue?status=bogus&author=x&page=-3"); bad.status != http.StatusOK {
				t.Errorf("bad filters: %d", bad.status)
			}
		})
	})

	t.Run("service calls per page", func(t *testing.T) {
		b := s.browser(t)
		b.login("lead@northwind.test")
		for _, c := range []struct {
			path string
			max  int64
		}{
			// the projects, the page of the queue (each row with the database's readiness
			// checks, a computed column), and visit(): what is new since last time: a fixed
			// number, whatever the page holds
			{"/p/northwind/queue", 3},
			{"/p/northwind/queue?status=all&q=the&page=2", 3},
			// the projects, the publication with every embed, and readiness() (the database is
			// the one judge of it, and PostgREST cannot embed a function's rows)
			{"/p/northwind/publications/" + reviewing[0].id, 3},
			// the projects, the schedule, and when the scheduler last ran
			{"/p/northwind/schedule", 3},
			{"/schedule?view=month", 3},
			// the projects, the publication, the channel list (kept a minute, so the page's
			// first view asks), and readiness()
			{"/p/northwind/publications/" + draftOf(t, s) + "/edit", 4},
		} {
			s.calls.Store(0)
			if p := b.get(c.path); p.status != http.StatusOK {
				t.Fatalf("%s: %d", c.path, p.status)
			}
			if n := s.calls.Load(); n > c.max {
				t.Errorf("%s made %d service calls, want at most %d", c.path, n, c.max)
			} else {
				t.Logf("%s: %d service calls", c.path, n)
			}
		}
		d := b.get("/p/northwind/publications/" + reviewing[0].id)
		imgs := d.doc.Find(`[data-testid="media-item"] img`)
		if imgs.Length() == 0 {
			t.Fatal("no media on a demo publication")
		}
		imgs.Each(func(_ int, img *goquery.Selection) {
			src, _ := img.Attr("src")
			if lazy, _ := img.Attr("loading"); !strings.HasPrefix(src, "/p/northwind/media/") || lazy != "lazy" {
				t.Errorf("img src=%q loading=%q", src, lazy)
			}
		})
		src, _ := imgs.First().Attr("src")
		if st := b.fetch(src); st != http.StatusOK {
			t.Errorf("image %s: %d", src, st)
		}
	})

	t.Run("mounted by the server", func(t *testing.T) {
		b := s.browser(t)
		b.base = s.env.URL
		b.login("viewer@northwind.test")
		if p := b.get("/p/northwind/queue"); p.status != http.StatusOK || p.count(`[data-testid="queue-row"]`) == 0 {
			t.Errorf("queue on the service's address: %d", p.status)
		}
	})

	t.Run("csrf", func(t *testing.T) {
		b := s.browser(t)
		b.login("reviewer@northwind.test")
		path := "/p/northwind/publications/" + reviewing[1].id + "/actions/add_review"
		for name, tc := range map[string]struct {
			form   url.Values
			header []string
		}{
			"missing":    {url.Values{"_csrf": {""}, "note": {"x"}}, nil},
			"wrong":      {url.Values{"_csrf": {"forged"}, "note": {"x"}}, nil},
			"cross-site": {url.Values{"note": {"x"}}, []string{"Sec-Fetch-Site", "cross-site"}},
		} {
			if p := b.post(path, tc.form, tc.header...); p.status != http.StatusForbidden {
				t.Errorf("%s token: %d", name, p.status)
			}
		}
		anon := s.browser(t)
		if p := anon.post("/login", url.Values{"_csrf": {"x"}, "email": {"lead@northwind.test"}, "password": {"masthead-demo"}}); p.status != http.StatusForbidden {
			t.Errorf("login without a session's token: %d", p.status)
		}
		var comments int
		if err := s.env.DB.Owner(t).QueryRow(t.Context(), `select count(*) from reviews where publication_id = $1 and notes = 'x'`, reviewing[1].id).Scan(&comments); err != nil || comments != 0 {
			t.Errorf("a refused comment was stored (%d, %v)", comments, err)
		}
	})

	t.Run("forged actions are refused", func(t *testing.T) {
		cases := []struct {
			email, rpc string
			pub        pub
		}{
			{"viewer@northwind.test", "approve", reviewing[2]},
			{"editor@northwind.test", "approve", reviewing[2]},
			{"reviewer@northwind.test", "schedule", approved[0]},
			{"editor@northwind.test", "publish_now", approved[0]},
			{"viewer@northwind.test", "add_review", reviewing[2]},
		}
		for _, c := range cases {
			b := s.browser(t)
			b.login(c.email)
			d := b.get("/p/northwind/publications/" + c.pub.id)
			if slices.Contains(actionsOf(d), c.rpc) {
				t.Errorf("%s is offered %s", c.email, c.rpc)
			}
			before, v := s.statusOf(t, c.pub.id)
			p := b.post("/p/northwind/publications/"+c.pub.id+"/actions/"+c.rpc, url.Values{
				"note": {"forged"}, "expected_version": {itoa(v)}, "scheduled_for": {time.Now().Add(48 * time.Hour).Format("2006-01-02T15:04")},
			})
			if p.status != http.StatusForbidden || p.count(`[data-testid="notice"]`) != 1 {
				t.Errorf("%s %s: %d %q", c.email, c.rpc, p.status, p.text(`[data-testid="notice"]`))
			}
			if after, v2 := s.statusOf(t, c.pub.id); after != before || v2 != v {
				t.Errorf("%s %s changed %s v%d → %s v%d", c.email, c.rpc, before, v, after, v2)
			}
		}
	})

	t.Run("request changes needs a note, with a preview", func(t *testing.T) {
		b := s.browser(t)
		b.login("reviewer@northwind.test")
		target := pickNotBy(t, reviewing[3:], "reviewer@northwind.test")
		_, v := s.statusOf(t, target.id)
		base := "/p/northwind/publications/" + target.id
		empty := b.post(base+"/actions/request_changes", url.Values{"note": {"  "}, "expected_version": {itoa(v)}})
		if empty.status != http.StatusUnprocessableEntity || empty.count(`.field-error`) != 1 {
			t.Errorf("empty note: %d", empty.status)
		}
		if st, _ := s.statusOf(t, target.id); st != "reviewing" {
			t.Errorf("status changed to %s", st)
		}
		pv := b.post(base+"/preview/review", url.Values{"note": {"**bold** <script>alert(1)</script>"}}, htmx("preview-review")...)
		if pv.count("strong") != 1 || pv.count("script") != 0 {
			t.Errorf("preview: %s", pv.body)
		}
		plain := b.post(base+"/preview/review", url.Values{"note": {"*kept*"}})
		if plain.text(`#note-review`) != "*kept*" || plain.count(`[data-testid="preview-review"] em`) != 1 {
			t.Error("no-JS preview lost the note or did not render it")
		}
		done := b.post(base+"/actions/request_changes", url.Values{"note": {"Please cite the *source*."}, "expected_version": {itoa(v)}}, htmx("workflow")...)
		if done.status != http.StatusOK || done.text(`[data-testid="workflow"] [data-testid="status"]`) != "Changes requested" {
			t.Fatalf("request changes: %d %q", done.status, done.text(`[data-testid="status"]`))
		}
		if strings.Contains(done.body, "<html") {
			t.Error("htmx answer is a whole page")
		}
		if done.count(`[data-testid="review"] em`) == 0 || !strings.Contains(done.text(`[data-testid="event"]`), "requested changes") {
			t.Error("the verdict or the history entry is missing from the swapped panel")
		}
	})

	t.Run("conflict shows the fresh state", func(t *testing.T) {
		target := pickNotBy(t, reviewing[6:], "reviewer@northwind.test", "lead@northwind.test")
		_, v := s.statusOf(t, target.id)
		rev, lead := s.browser(t), s.browser(t)
		rev.login("reviewer@northwind.test")
		lead.login("lead@northwind.test")
		rev.get("/p/northwind/publications/" + target.id)
		if p := lead.post("/p/northwind/publications/"+target.id+"/actions/approve", url.Values{"expected_version": {itoa(v)}}); p.status != http.StatusSeeOther {
			t.Fatalf("lead approve: %d", p.status)
		}
		p := rev.post("/p/northwind/publications/"+target.id+"/actions/request_changes",
			url.Values{"note": {"too late"}, "expected_version": {itoa(v)}}, htmx("workflow")...)
		if p.status != http.StatusConflict {
			t.Fatalf("stale version: %d", p.status)
		}
		if p.text(`[data-testid="status"]`) != "Approved" || !strings.Contains(p.text(`[data-testid="notice"]`), "Someone got there first") {
			t.Errorf("409 panel: status %q notice %q", p.text(`[data-testid="status"]`), p.text(`[data-testid="notice"]`))
		}
		if slices.Contains(actionsOf(page{doc: p.doc}), "approve") {
			t.Error("approve still offered after the conflict")
		}
		full := rev.post("/p/northwind/publications/"+target.id+"/actions/request_changes",
			url.Values{"note": {"too late"}, "expected_version": {itoa(v)}})
		if full.status != http.StatusConflict || full.count("html") != 1 || full.text("#note-review") != "" && full.text(`[data-testid="status"]`) != "Approved" {
			t.Errorf("no-JS 409: %d", full.status)
		}
	})

	t.Run("plain form actions redirect with a message", func(t *testing.T) {
		b := s.browser(t)
		b.login("lead@northwind.test")
		target := approved[len(approved)-1]
		_, v := s.statusOf(t, target.id)
		when := time.Now().In(mustLoc(t, "Europe/London")).Add(72 * time.Hour).Format("2006-01-02T15:04")
		p := b.post("/p/northwind/publications/"+target.id+"/actions/schedule", url.Values{"scheduled_for": {when}, "expected_version": {itoa(v)}, "return": {"schedule"}})
		if p.status != http.StatusSeeOther || p.location() != "/p/northwind/schedule" {
			t.Fatalf("schedule: %d → %q", p.status, p.location())
		}
		sched := b.get("/p/northwind/schedule")
		if !strings.Contains(sched.text(`[data-testid="flash"]`), "Scheduled") || !strings.Contains(sched.body, target.title) {
			t.Errorf("schedule page after scheduling: flash %q", sched.text(`[data-testid="flash"]`))
		}
		if sched.count(`[data-testid="unschedule-form"]`) == 0 {
			t.Error("lead has no unschedule control")
		}
		_, v = s.statusOf(t, target.id)
		un := b.post("/p/northwind/publications/"+target.id+"/actions/unschedule", url.Values{"expected_version": {itoa(v)}})
		if un.status != http.StatusSeeOther || un.location() != "/p/northwind/publications/"+target.id {
			t.Fatalf("unschedule: %d → %q", un.status, un.location())
		}
		d := b.get(un.location())
		if d.text(`[data-testid="status"]`) != "Approved" || !strings.Contains(d.text(`[data-testid="flash"]`), "Unscheduled") {
			t.Errorf("after unschedule: %q %q", d.text(`[data-testid="status"]`), d.text(`[data-testid="flash"]`))
		}
		if viewer := s.browser(t); true {
			viewer.login("viewer@northwind.test")
			if p := viewer.get("/p/northwind/schedule"); p.count(`[data-testid="reschedule-form"]`) != 0 {
				t.Error("viewer sees schedule controls")
			}
		}
	})

	t.Run("a lead reopens a scheduled publication with a note", func(t *testing.T) {
		b := s.browser(t)
		b.login("lead@northwind.test")
		target := scheduled[len(scheduled)-1]
		base := "/p/northwind/publications/" + target.id
		if !slices.Contains(actionsOf(b.get(base)), "reopen") {
			t.Fatal("reopen is not offered to the lead")
		}
		_, v := s.statusOf(t, target.id)
		empty := b.post(base+"/actions/reopen", url.Values{"note": {" "}, "expected_version": {itoa(v)}})
		if empty.status != http.StatusUnprocessableEntity || empty.count(`.field-error`) != 1 {
			t.Errorf("reopen without a note: %d", empty.status)
		}
		done := b.post(base+"/actions/reopen", url.Values{"note": {"The venue changed."}, "expected_version": {itoa(v)}, "confirmed": {"1"}}, htmx("workflow")...)
		if done.status != http.StatusOK || done.text(`[data-testid="workflow"] [data-testid="status"]`) != "Draft" ||
			!strings.Contains(done.text(`[data-testid="event"]`), "reopened it to draft") {
			t.Fatalf("reopen: %d %q", done.status, done.text(`[data-testid="status"]`))
		}
	})
}

// TestSessionRefresh expires the access token by moving the dashboard's clock: the next
// requests, many at once, refresh it once and nobody is signed out; a revoked session sends the
// person to /login with a message and the page they wanted.
func TestSessionRefresh(t *testing.T) {
	s := newStack(t)
	b := s.browser(t)
	b.login("reviewer@northwind.test")
	if p := b.get("/p/northwind/queue"); p.status != http.StatusOK {
		t.Fatalf("queue: %d", p.status)
	}
	s.clock.Advance(2 * time.Hour)
	var wg sync.WaitGroup
	statuses := make(chan int, 12)
	for range 12 {
		wg.Go(func() {
			statuses <- b.get("/p/northwind/queue", htmx("queue-results")...).status
		})
	}
	wg.Wait()
	close(statuses)
	for st := range statuses {
		if st != http.StatusOK {
			t.Errorf("concurrent request during refresh: %d", st)
		}
	}
	// The new token's expiry is in real time: back to it, so the next request needs no refresh.
	s.clock.Advance(-2 * time.Hour)
	if p := b.get("/p/northwind/schedule"); p.status != http.StatusOK {
		t.Errorf("after refresh: %d", p.status)
	}
	var rotations int
	if err := s.env.DB.Owner(t).QueryRow(t.Context(), `select count(*) from auth.refresh_tokens where parent_id is not null`).Scan(&rotations); err != nil {
		t.Fatal(err)
	}
	if rotations != 1 {
		t.Errorf("refresh tokens rotated %d times, want once", rotations)
	}

	// Another device signs the user out everywhere; once the token needs refreshing, this
	// browser is sent to sign in again, and comes back to where it was.
	other, err := client.New(s.env.URL, s.env.Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := other.SignInWithPassword(t.Context(), "reviewer@northwind.test", "masthead-demo")
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Logout(t.Context(), sess.AccessToken, client.LogoutGlobal); err != nil {
		t.Fatal(err)
	}
	// The access token is still unexpired, but the service refuses it: the dashboard tries a
	// refresh, which is refused too.
	p := b.get("/p/northwind/schedule")
	if p.status != http.StatusSeeOther || p.location() != "/login?next=%2Fp%2Fnorthwind%2Fschedule&reason=expired" {
		t.Fatalf("revoked: %d → %q", p.status, p.location())
	}
	login := b.get(p.location())
	if !strings.Contains(login.text(`[data-testid="flash"]`), "session has ended") {
		t.Errorf("no message: %q", login.text(`[data-testid="flash"]`))
	}
	if hx := b.get("/p/northwind/queue", htmx("queue-results")...); hx.header.Get("HX-Redirect") == "" {
		t.Errorf("htmx request while signed out: %d without HX-Redirect", hx.status)
	}
}

func pickNotBy(t *testing.T, ps []pub, emails ...string) pub {
	t.Helper()
	for _, p := range ps {
		if !slices.Contains(emails, p.authorEmail) {
			return p
		}
	}
	t.Fatalf("no publication written by someone other than %v", emails)
	return pub{}
}

func mustLoc(t *testing.T, name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestRefreshMeets429: a token refresh the service answers with 429 keeps the person signed in
// and says when to try again; once the service takes requests again, the same session goes on.
func TestRefreshMeets429(t *testing.T) {
	t.Parallel()
	// One token request per 10 s, bursts of two: the sign-in and one refresh, then 429s. The
	// limiter runs on the service's real clock, so the period must outlast the sign-in and two
	// page loads on a loaded machine (3 s did not, once: the bucket refilled before the 429).
	s := newStackConfig(t, 0, func(c *config.Config) {
		c.TokenRateIP = config.Rate{Count: 1, Per: 10 * time.Second, Burst: 2}
	})
	b := s.browser(t)
	b.login("reviewer@northwind.test")
	s.clock.Advance(2 * time.Hour) // every request now finds the access token expired
	if p := b.get("/p/northwind/queue"); p.status != http.StatusOK {
		t.Fatalf("first refresh: %d", p.status)
	}
	p := b.get("/p/northwind/queue")
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" {
		t.Fatalf("a refresh meeting 429: %d (Retry-After %q), want 429 with Retry-After", p.status, p.header.Get("Retry-After"))
	}
	if !strings.Contains(p.text("main"), "you are still signed in") {
		t.Errorf("the busy page says %q", p.text("main"))
	}
	// The session survived: once the bucket refills, the same browser carries on. The limiter's
	// clock is the service's own, which the test cannot move, so it waits for the refill; it asks
	// only once the Retry-After the page gave has passed (the service rounds it up), so it loads
	// the page about once instead of every 10 ms for seconds.
	secs, err := strconv.Atoi(p.header.Get("Retry-After"))
	if err != nil || secs < 1 {
		t.Fatalf("Retry-After %q, want whole seconds", p.header.Get("Retry-After"))
	}
	retry := time.Now().Add(time.Duration(secs) * time.Second)
	testwait.Until(t, 30*time.Second, "the queue once the service takes a refresh again", func() (bool, string) {
		if left := time.Until(retry); left > 0 {
			return false, fmt.Sprintf("%s before the Retry-After", left.Round(time.Millisecond))
		}
		p := b.get("/p/northwind/queue")
		if p.status != http.StatusOK && p.status != http.StatusTooManyRequests {
			t.Fatalf("after the limit: %d (%s)", p.status, p.location())
		}
		return p.status == http.StatusOK, fmt.Sprintf("status %d", p.status)
	})
}
