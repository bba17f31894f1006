package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"masthead/internal/client"
	"masthead/internal/seed"
)

// as signs a demo user in to the service directly, for moves a test makes outside the page.
func (s *stack) as(t testing.TB, email string) (*client.Client, string) {
	t.Helper()
	api, err := client.New(s.env.URL, s.env.Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := api.SignInWithPassword(context.Background(), email, seed.DefaultPassword)
	if err != nil {
		t.Fatalf("sign in %s: %v", email, err)
	}
	return api, sess.AccessToken
}

// edit PATCHes a publication over REST as the holder of token.
func (s *stack) edit(t testing.TB, token, id, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPatch, s.env.URL+"/rest/v1/publications?id=eq."+id, strings.NewReader(body))
	req.Header.Set("apikey", s.env.Key)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("edit %s: %d", body, res.StatusCode)
	}
}

// TestRounds: three review rounds; the reviewer's page names the round, shows exactly the
// edits made since the previous round (marked for screen readers too) beside the notes of that
// round, and any two rounds can be compared; nobody outside the project sees them.
func TestRounds(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	var target string
	for _, p := range s.pubs(t, "northwind", "draft") {
		if p.authorEmail == "editor@northwind.test" {
			target = p.id
			break
		}
	}
	if target == "" {
		t.Fatal("no draft by the editor")
	}
	api, editor := s.as(t, "editor@northwind.test")
	_, reviewer := s.as(t, "reviewer@northwind.test")
	move := func(token, rpc, note string) {
		t.Helper()
		if _, err := api.Transition(context.Background(), token, rpc, client.TransitionArgs{PublicationID: target, Note: note}); err != nil {
			t.Fatalf("%s: %v", rpc, err)
		}
	}
	s.edit(t, editor, target, `{"body":"The harbour reopened on Monday.\n\nFerries run hourly.\n"}`)
	move(editor, client.RPCSubmit, "round one")
	move(reviewer, client.RPCRequestChanges, "Which Monday? Say the date.")
	s.edit(t, editor, target, `{"body":"The harbour reopened on Monday 3 March.\n\nFerries run hourly.\n"}`)
	move(editor, client.RPCSubmit, "added the date")
	move(reviewer, client.RPCRequestChanges, "Ferries: every hour, or half-hourly at peak?")
	s.edit(t, editor, target, `{"title":"Harbour reopens to ferries","body":"The harbour reopened on Monday 3 March.\n\nFerries run every half hour at peak.\n"}`)
	move(editor, client.RPCSubmit, "ferry times")

	b := s.browser(t)
	b.login("reviewer@northwind.test")
	d := b.get("/p/northwind/publications/" + target)
	if d.status != http.StatusOK {
		t.Fatalf("detail: %d", d.status)
	}
	if got := d.text(`[data-testid="round"]`); !strings.HasPrefix(got, "Round 3, submitted by") {
		t.Errorf("round header %q", got)
	}
	if got := d.text(`#changes-title`); got != "Changes since round 2" {
		t.Errorf("changes title %q", got)
	}
	body := d.doc.Find(`[data-testid="diff-body"]`)
	if got := strings.TrimSpace(body.Find("del").Text()); got != "[deleted: hourly]" {
		t.Errorf("deleted %q", got)
	}
	if got := strings.TrimSpace(body.Find("ins").Text()); got != "[inserted: every half hour at peak]" {
		t.Errorf("inserted %q", got)
	}
	if strings.Contains(body.Text(), "3 March") == false || body.Find("ins:contains('3 March')").Length() != 0 {
		t.Error("the date added in round 2 must show as unchanged text in round 3's changes")
	}
	if got := d.text(`[data-testid="diff-Title"] ins`); got != "[inserted: Harbour reopens to ferries]" {
		t.Errorf("title insertion %q", got)
	}
	if got := d.text(`[data-testid="round-notes"] .prose`); got != "Ferries: every hour, or half-hourly at peak?" {
		t.Errorf("round 2's notes %q", got)
	}
	if n := d.count(`.round-links a`); n != 2 {
		t.Errorf("%d links to compare rounds, want 2", n)
	}

	c := b.get("/p/northwind/publications/" + target + "/rounds/1..2")
	if c.status != http.StatusOK || !strings.HasSuffix(c.text(`h1`), "round 1 to round 2") {
		t.Fatalf("compare 1..2: %d %q", c.status, c.text("h1"))
	}
	if got := c.text(`[data-testid="diff-body"] ins`); got != "[inserted:  3 March]" {
		t.Errorf("1..2 inserted %q", got)
	}
	if got := c.text(`[data-testid="round-notes"] .prose`); got != "Which Monday? Say the date." {
		t.Errorf("round 1's notes %q", got)
	}
	for _, bad := range []string{"1..9", "2..2", "0..1", "x..y", "12"} {
		if p := b.get("/p/northwind/publications/" + target + "/rounds/" + bad); p.status != http.StatusNotFound {
			t.Errorf("rounds/%s: %d", bad, p.status)
		}
	}
	other := s.browser(t)
	other.login("lead@acme.test")
	if p := other.get("/p/northwind/publications/" + target + "/rounds/1..2"); p.status != http.StatusNotFound {
		t.Errorf("another tenant compares rounds: %d", p.status)
	}
}

// TestReadinessShown: the checklist on the page is the database's verdict, and the workflow
// panel says what blocks going live.
func TestReadinessShown(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	approved := s.pubs(t, "northwind", "approved")[0]
	own := s.env.DB.Owner(t)
	// An approved item loses its alt text (media rows are not frozen with the publication).
	if _, err := own.Exec(context.Background(), `update media set alt_text = '' where id = (
		select media_id from publication_media where publication_id = $1 order by position limit 1)`, approved.id); err != nil {
		t.Fatal(err)
	}
	b := s.browser(t)
	b.login("lead@northwind.test")
	d := b.get("/p/northwind/publications/" + approved.id)
	if got, _ := d.doc.Find(`[data-testid="check-alt_text"]`).Attr("data-state"); got != "missing" {
		t.Errorf("alt text check %q", got)
	}
	if got, _ := d.doc.Find(`[data-testid="check-title"]`).Attr("data-state"); got != "ok" {
		t.Errorf("title check %q", got)
	}
	// The notice gives the database's words for it: "The media item has no alt text", or "1 of
	// 3 media items has no alt text" when the seed attached more than one.
	var altText string
	if err := own.QueryRow(context.Background(), `select r.detail from publications p, app.readiness_of(p) r
		where p.id = $1 and r."check" = 'alt_text'`, approved.id).Scan(&altText); err != nil {
		t.Fatal(err)
	}
	if got := d.text(`[data-testid="not-ready"] ul`); !strings.HasSuffix(altText, " no alt text") || !strings.Contains(got, altText) {
		t.Errorf("not-ready notice %q, the database says %q", got, altText)
	}
	pub := s.pubs(t, "northwind", "published")[0]
	if p := b.get("/p/northwind/publications/" + pub.id); p.count(`[data-testid="readiness"]`) != 0 {
		t.Error("a published item shows the go-live checklist")
	}
}
