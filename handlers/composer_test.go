package handlers_test

import (
	"github.com/PuerkitoBio/goquery"

	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestReviewComposer: a reviewer gets one note field with the verdicts beside it (Comment,
// Request changes, Approve); a note typed once goes with whichever verdict is pressed, and a
// verdict that needs a note keeps the page, and what was typed, when it is missing.
func TestReviewComposer(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	target := pickNotBy(t, s.pubs(t, "northwind", "reviewing"), "reviewer@northwind.test")
	base := "/p/northwind/publications/" + target.id
	b := s.browser(t)
	b.login("reviewer@northwind.test")
	d := b.get(base)
	var verdicts []string
	d.doc.Find(`[data-testid="composer"] [data-testid^="verdict-"]`).Each(func(_ int, sel *goquery.Selection) {
		verdicts = append(verdicts, strings.TrimSpace(sel.Text()))
	})
	if strings.Join(verdicts, ",") != "Comment,Request changes,Approve" || d.count(`[data-testid="composer"] textarea`) != 1 ||
		d.count(`[data-testid="action-approve"], [data-testid="action-request_changes"], [data-testid="action-add_review"]`) != 0 {
		t.Fatalf("composer verdicts %v, %d note fields", verdicts, d.count(`[data-testid="composer"] textarea`))
	}
	if d.count(`[data-testid="no-actions"]`) != 0 {
		t.Error("the composer is offered, yet the page says there is nothing to do")
	}
	viewer := s.browser(t)
	viewer.login("viewer@northwind.test")
	if v := viewer.get(base); v.count(`[data-testid="no-actions"]`) != 1 || v.count(`[data-testid="composer"]`) != 0 {
		t.Error("a viewer is not told there is nothing for them to do")
	}
	_, v := s.statusOf(t, target.id)
	p := b.post(base+"/actions/request_changes", url.Values{"note": {" "}, "expected_version": {itoa(v)}})
	if p.status != http.StatusUnprocessableEntity || p.text(`#note-err-review`) == "" {
		t.Errorf("request changes without a note: %d %q", p.status, p.text(`#note-err-review`))
	}
	// A note past its bound is refused in words that say the bound, and what was typed stays.
	long := strings.Repeat("n", 20_001)
	p = b.post(base+"/actions/request_changes", url.Values{"note": {long}, "expected_version": {itoa(v)}})
	if got := p.text(`[role="alert"]`); p.status != http.StatusUnprocessableEntity || !strings.HasSuffix(got, "A note is at most 20,000 characters.") ||
		p.text(`[data-testid="composer"] textarea`) != long {
		t.Errorf("a note of 20,001 characters: %d %q", p.status, got)
	}
	// The same note field, then Approve.
	if p := b.post(base+"/actions/approve", url.Values{"note": {"Clear and *sourced*."}, "expected_version": {itoa(v)}}); p.status != http.StatusSeeOther {
		t.Fatalf("approve with the composer's note: %d", p.status)
	}
	var notes, verdict string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select notes, verdict from reviews where publication_id = $1 order by created_at desc limit 1`, target.id).Scan(&notes, &verdict); err != nil ||
		notes != "Clear and *sourced*." || verdict != "approved" {
		t.Errorf("the review written: %q %q %v", notes, verdict, err)
	}
}

// TestConfirmations: Publish now, Archive and Reopen ask first: with JS as a dialog (hx-confirm,
// which sends confirmed=1), without as a page of its own that keeps what was filled in; nothing
// happens until confirmed. Unschedule offers to undo, scheduling again for the old time.
func TestConfirmations(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	b.login("lead@northwind.test")
	approved := s.pubs(t, "northwind", "approved")[0]
	base := "/p/northwind/publications/" + approved.id
	d := b.get(base)
	for _, rpc := range []string{"publish_now", "archive", "reopen"} {
		form := d.doc.Find(`[data-testid="action-` + rpc + `"]`)
		if c, _ := form.Attr("hx-confirm"); c == "" || form.AttrOr("hx-vals", "") != `{"confirmed":"1"}` {
			t.Errorf("%s asks nothing with JS: %q", rpc, c)
		}
	}
	_, v := s.statusOf(t, approved.id)
	c := b.post(base+"/actions/archive", url.Values{"note": {"Out of date."}, "expected_version": {itoa(v)}})
	if c.status != http.StatusOK || !strings.HasPrefix(c.text(`[data-testid="confirm-heading"]`), "Archive “") ||
		c.doc.Find(`input[name="note"]`).AttrOr("value", "") != "Out of date." {
		t.Fatalf("archive without JS: %d %q", c.status, c.text(`[data-testid="confirm-heading"]`))
	}
	if st, v2 := s.statusOf(t, approved.id); st != "approved" || v2 != v {
		t.Fatal("archive ran before it was confirmed")
	}
	form := url.Values{}
	c.doc.Find(`form input[type="hidden"]`).Each(func(_ int, sel *goquery.Selection) {
		form.Set(sel.AttrOr("name", ""), sel.AttrOr("value", ""))
	})
	if p := b.post(base+"/actions/archive", form); p.status != http.StatusSeeOther {
		t.Fatalf("confirmed archive: %d", p.status)
	}
	if st, _ := s.statusOf(t, approved.id); st != "archived" {
		t.Errorf("after confirming: %s", st)
	}

	// Unschedule, then undo.
	// One due well in the future, so scheduling it again for the same time is allowed.
	var scheduled pub
	var at time.Time
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select p.id, p.scheduled_for from publications p join projects j on j.id = p.project_id
		where j.slug = 'northwind' and p.status = 'scheduled' and p.scheduled_for > now() + interval '1 hour' order by p.scheduled_for limit 1`).Scan(&scheduled.id, &at); err != nil {
		t.Fatal(err)
	}
	sbase := "/p/northwind/publications/" + scheduled.id
	d = b.get(sbase)
	was := d.doc.Find(`[data-testid="action-unschedule"] input[name="was"]`).AttrOr("value", "")
	_, v = s.statusOf(t, scheduled.id)
	u := b.post(sbase+"/actions/unschedule", url.Values{"expected_version": {itoa(v)}, "was": {was}})
	undo := u.doc.Find(`[data-testid="notice"] [data-testid="action-undo"]`)
	if u.status != http.StatusOK || undo.Length() != 1 {
		t.Fatalf("unschedule offers no undo: %d %q", u.status, u.text(`[data-testid="notice"]`))
	}
	form = url.Values{}
	undo.Find(`input[type="hidden"]`).Each(func(_ int, sel *goquery.Selection) {
		form.Set(sel.AttrOr("name", ""), sel.AttrOr("value", ""))
	})
	if p := b.post(undo.AttrOr("action", ""), form); p.status != http.StatusSeeOther {
		t.Fatalf("undo: %d %s", p.status, p.text(`[data-testid="notice"]`))
	}
	var again time.Time
	var st string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select status, scheduled_for from publications where id = $1`, scheduled.id).Scan(&st, &again); err != nil ||
		st != "scheduled" || !again.Truncate(time.Minute).Equal(at.Truncate(time.Minute)) {
		t.Errorf("after undo: %s at %s, want scheduled at %s (%v)", st, again, at, err)
	}
}

// TestStartPages: the queue filters a start page uses select what the role needs: an editor's
// own drafts and changes requested; a reviewer's publications written by others.
func TestStartPages(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ed := s.browser(t)
	ed.login("editor@northwind.test")
	q := ed.get("/p/northwind/queue?status=writing&author=me")
	if q.status != http.StatusOK || q.count(`[data-testid="queue-row"]`) == 0 {
		t.Fatalf("the editor's start: %d, %d rows", q.status, q.count(`[data-testid="queue-row"]`))
	}
	q.doc.Find(`[data-testid="queue-row"] [data-testid="status"]`).Each(func(_ int, sel *goquery.Selection) {
		if st := strings.TrimSpace(sel.Text()); st != "Draft" && st != "Changes requested" {
			t.Errorf("the editor's start lists a row %q", st)
		}
	})
	mine := 0
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select count(*) from publications p join projects j on j.id = p.project_id
		join profiles a on a.id = p.author_id where j.slug = 'northwind' and a.email = 'editor@northwind.test' and p.status in ('draft', 'changes_requested')`).Scan(&mine); err != nil {
		t.Fatal(err)
	}
	if got := q.count(`[data-testid="queue-row"]`); got != min(mine, 25) {
		t.Errorf("the editor's start lists %d rows, they have %d drafts and changes requested", got, mine)
	}
	rev := s.browser(t)
	rev.login("reviewer@northwind.test")
	q = rev.get("/p/northwind/queue?author=others")
	own := 0
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select count(*) from publications p join projects j on j.id = p.project_id
		join profiles a on a.id = p.author_id where j.slug = 'northwind' and a.email <> 'reviewer@northwind.test' and p.status = 'reviewing'`).Scan(&own); err != nil {
		t.Fatal(err)
	}
	if got := q.count(`[data-testid="queue-row"]`); q.status != http.StatusOK || got != min(own, 25) {
		t.Errorf("the reviewer's start lists %d rows, %d in review were written by others", got, own)
	}
}

// TestQueueGoLiveBadge: each queue row not yet live carries the database's verdict on whether
// it may go live, the same as readiness() gives, with what still fails in words.
func TestQueueGoLiveBadge(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	b.login("lead@northwind.test")
	q := b.get("/p/northwind/queue?status=all")
	own := s.env.DB.Owner(t)
	checked := 0
	q.doc.Find(`[data-testid="queue-row"]`).Each(func(_ int, row *goquery.Selection) {
		id := strings.TrimPrefix(row.Find("a.row-title").AttrOr("href", ""), "/p/northwind/publications/")
		var status string
		var ready *bool
		if err := own.QueryRow(context.Background(), `select p.status, app.is_ready(p.id) from publications p where p.id = $1`, id).Scan(&status, &ready); err != nil {
			t.Fatal(err)
		}
		badge := row.Find(`[data-testid="golive"]`)
		if status == "published" || status == "archived" {
			if badge.Length() != 0 {
				t.Errorf("%s row has a go-live badge", status)
			}
			return
		}
		checked++
		label := strings.TrimSpace(badge.Text())
		if (ready != nil && *ready) != strings.HasPrefix(label, "Ready to go live") {
			t.Errorf("%s: badge %q, readiness says ready=%v", id, label, *ready)
		}
		if !*ready && badge.AttrOr("title", "") == "" {
			t.Errorf("%s: not ready, but the badge does not say what fails", id)
		}
	})
	if checked == 0 {
		t.Fatal("no row to check")
	}
}

// TestScheduleTimeRefusals: a time the dashboard cannot read, one in the past, one past the
// schedule's horizon and a publication not ready each say what to do in the dashboard's words
// (not the service's "scheduled_for must be …" or its pointer to readiness()), keeping the time
// typed; nothing is scheduled.
func TestScheduleTimeRefusals(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	target := s.pubs(t, "northwind", "approved")[0]
	base := "/p/northwind/publications/" + target.id
	b := s.browser(t)
	b.login("lead@northwind.test")
	b.get(base)
	london := mustLoc(t, "Europe/London")
	schedule := func(when string) page {
		_, v := s.statusOf(t, target.id)
		return b.post(base+"/actions/schedule", url.Values{"scheduled_for": {when}, "expected_version": {itoa(v)}})
	}
	for _, tc := range []struct{ when, want string }{
		{"", "Enter a date and time."},
		{"garbage", "Enter a date and time."},
		{"2001-01-01T10:00", "Choose a time in the future."},
		{time.Now().In(london).AddDate(6, 0, 0).Format("2006-01-02T15:04"), "Choose a time within 5 years from now."},
	} {
		p := schedule(tc.when)
		// An empty field is offered a suggestion again; anything typed stays as typed.
		if got := p.text(`[role="alert"]`); p.status != http.StatusUnprocessableEntity || !strings.HasSuffix(got, tc.want) ||
			(tc.when != "" && p.doc.Find(`input[name="scheduled_for"]`).AttrOr("value", "") != tc.when) {
			t.Errorf("scheduling for %q: %d %q (typed %q)", tc.when, p.status, got, p.doc.Find(`input[name="scheduled_for"]`).AttrOr("value", ""))
		}
	}
	if _, err := s.env.DB.Owner(t).Exec(context.Background(), `delete from promos where publication_id = $1`, target.id); err != nil {
		t.Fatal(err)
	}
	p := schedule(time.Now().In(london).Add(72 * time.Hour).Format("2006-01-02T15:04"))
	if got := p.text(`[role="alert"]`); p.status != http.StatusUnprocessableEntity || !strings.Contains(got, "This publication is not ready to schedule: ") ||
		!strings.Contains(got, "X: no promo written") || !strings.HasSuffix(got, ". Fix these on the publication, then try again.") ||
		strings.Contains(got, "readiness()") {
		t.Errorf("scheduling what is not ready: %d %q", p.status, got)
	}
	if st, _ := s.statusOf(t, target.id); st != "approved" {
		t.Errorf("the publication is %s", st)
	}
}
