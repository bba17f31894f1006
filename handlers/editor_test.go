package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestWriteADraft: an editor opens "New publication" from the queue, previews the body without
// JS, creates the draft and lands on it as its author; edits it at the version read; a save
// against an older version keeps their text, shows what is saved now beside it and changes
// nothing; the live preview renders through the sanitiser; the draft, never submitted, can be
// deleted after a confirmation.
func TestWriteADraft(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	b.login("editor@northwind.test")
	q := b.get("/p/northwind/queue")
	if href, _ := q.doc.Find(`[data-testid="new-publication"]`).Attr("href"); href != "/p/northwind/publications/new" {
		t.Fatalf("the queue offers no new publication: %q", href)
	}
	if p := b.get("/p/northwind/publications/new"); p.status != http.StatusOK || p.text(`[data-testid="editor-heading"]`) != "New publication" {
		t.Fatalf("new: %d %q", p.status, p.text(`[data-testid="editor-heading"]`))
	}
	form := url.Values{"title": {"Harbour fireworks"}, "summary": {"Saturday at nine."}, "body": {"# Fireworks\n\nBring a *blanket*.<script>alert(1)</script>"}}

	// Preview without JS: the whole page back, text kept, body rendered and sanitised.
	withPreview := url.Values{"preview": {"1"}}
	for k, v := range form {
		withPreview[k] = v
	}
	p := b.post("/p/northwind/publications/new/preview", withPreview)
	if p.status != http.StatusOK || p.doc.Find(`[data-testid="editor-preview"] em`).Text() != "blanket" ||
		strings.Contains(p.body, "<script>alert") || p.doc.Find(`#title`).AttrOr("value", "") != "Harbour fireworks" {
		t.Fatalf("preview: %d %s", p.status, p.text(`[data-testid="editor-preview"]`))
	}
	// The live preview (htmx) answers the box alone.
	p = b.post("/p/northwind/publications/new/preview", form, htmx("body-preview")...)
	if p.status != http.StatusOK || p.count(`#body-preview h1`) != 1 || p.count(`form`) != 0 {
		t.Fatalf("live preview: %d %s", p.status, p.body)
	}

	p = b.post("/p/northwind/publications/new", form)
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location(), "/p/northwind/publications/") {
		t.Fatalf("create: %d %q %s", p.status, p.location(), p.text(`[data-testid="editor-notice"]`))
	}
	detail := p.location()
	id := strings.TrimPrefix(detail, "/p/northwind/publications/")
	var author, slug string
	var version int
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select pr.email, p.slug, p.version from publications p
		join profiles pr on pr.id = p.author_id where p.id = $1`, id).Scan(&author, &slug, &version); err != nil {
		t.Fatal(err)
	}
	if author != "editor@northwind.test" || slug != "harbour-fireworks" || version != 1 {
		t.Fatalf("created by %s as %s at version %d", author, slug, version)
	}
	d := b.get(detail)
	if d.text(`[data-testid="pub-title"]`) != "Harbour fireworks" || d.count(`[data-testid="edit-link"]`) != 1 || d.count(`[data-testid="delete-link"]`) != 1 {
		t.Fatalf("the draft's page: %q, edit %d, delete %d", d.text(`[data-testid="pub-title"]`), d.count(`[data-testid="edit-link"]`), d.count(`[data-testid="delete-link"]`))
	}

	// Edit at version 1, then a colleague's stale save at version 1.
	e := b.get(detail + "/edit")
	if e.doc.Find(`input[name="expected_version"]`).AttrOr("value", "") != "1" || e.doc.Find(`#body`).Text() != form.Get("body") {
		t.Fatalf("the editor does not hold the saved text at version 1")
	}
	// The go-live checklist, as the database judges it, beside the text: the text is there, the
	// promos are not yet.
	if e.count(`[data-testid="readiness"] li.ok`) == 0 || e.count(`[data-testid="readiness"] li.not-ok`) == 0 {
		t.Errorf("the editor's checklist: %d done, %d missing", e.count(`[data-testid="readiness"] li.ok`), e.count(`[data-testid="readiness"] li.not-ok`))
	}
	edit := url.Values{"title": {"Harbour fireworks"}, "summary": {"Saturday at nine."}, "body": {"# Fireworks\n\nBring a blanket and a torch."}, "expected_version": {"1"}}
	if p := b.post(detail+"/edit", edit); p.status != http.StatusSeeOther || p.location() != detail {
		t.Fatalf("save: %d %q %s", p.status, p.location(), p.text(`[data-testid="editor-notice"]`))
	}
	colleague := s.browser(t)
	colleague.login("lead@northwind.test")
	stale := url.Values{"title": {"Fireworks at the harbour"}, "summary": {"Saturday at nine."}, "body": {"# Fireworks\n\nMy own words."}, "expected_version": {"1"}}
	c := colleague.post(detail+"/edit", stale)
	if c.status != http.StatusConflict || c.count(`[data-testid="editor-conflict"]`) != 1 ||
		c.doc.Find(`#body`).Text() != "# Fireworks\n\nMy own words." || c.doc.Find(`#title`).AttrOr("value", "") != "Fireworks at the harbour" ||
		!strings.Contains(c.text(`[data-testid="conflict-saved-Article"]`), "a torch") ||
		c.doc.Find(`input[name="expected_version"]`).AttrOr("value", "") != "2" {
		t.Fatalf("a stale save: %d %s", c.status, c.text(`[data-testid="editor-notice"]`))
	}
	if st, v := s.statusOf(t, id); st != "draft" || v != 2 {
		t.Errorf("the stale save changed it: %s %d", st, v)
	}
	// Having looked, the colleague saves over version 2 on purpose.
	stale.Set("expected_version", "2")
	if p := colleague.post(detail+"/edit", stale); p.status != http.StatusSeeOther {
		t.Fatalf("saving after the conflict: %d %s", p.status, p.text(`[data-testid="editor-notice"]`))
	}

	// Delete, confirmed.
	if p := b.get(detail + "/delete"); p.text(`[data-testid="confirm-heading"]`) != "Delete “Fireworks at the harbour”?" {
		t.Fatalf("confirm: %q", p.text(`[data-testid="confirm-heading"]`))
	}
	if p := b.post(detail+"/delete", nil); p.status != http.StatusSeeOther || p.location() != "/p/northwind/queue" {
		t.Fatalf("delete: %d %q", p.status, p.location())
	}
	var left int
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select count(*) from publications where id = $1`, id).Scan(&left); err != nil || left != 0 {
		t.Errorf("the draft is still there (%d, %v)", left, err)
	}
}

// TestEditorRefusals: the editor is offered only to editors and up and only while a
// publication is a draft or sent back; a forged save or create is refused with nothing
// changed; a draft with a history cannot be deleted; every form needs its CSRF token.
func TestEditorRefusals(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	reviewing := s.pubs(t, "northwind", "reviewing")[0]
	draft := s.pubs(t, "northwind", "draft")[0]
	_, v0 := s.statusOf(t, reviewing.id)

	viewer := s.browser(t)
	viewer.login("viewer@northwind.test")
	if p := viewer.get("/p/northwind/publications/new"); p.status != http.StatusForbidden {
		t.Errorf("a viewer's new page: %d", p.status)
	}
	if p := viewer.get("/p/northwind/queue"); p.count(`[data-testid="new-publication"]`) != 0 {
		t.Error("the queue offers a viewer a new publication")
	}
	if p := viewer.post("/p/northwind/publications/new", url.Values{"title": {"Forged"}}); p.status != http.StatusForbidden {
		t.Errorf("a viewer's forged create: %d", p.status)
	}
	if p := viewer.get("/p/northwind/publications/" + draft.id); p.count(`[data-testid="edit-link"]`) != 0 {
		t.Error("a viewer is offered Edit")
	}
	if p := viewer.post("/p/northwind/publications/"+draft.id+"/edit", url.Values{"title": {"Forged"}, "body": {"x"}, "expected_version": {"1"}}); p.status != http.StatusForbidden {
		t.Errorf("a viewer's forged save: %d %s", p.status, p.text(`[data-testid="editor-notice"]`))
	}

	editor := s.browser(t)
	editor.login("editor@northwind.test")
	if p := editor.get("/p/northwind/publications/" + reviewing.id); p.count(`[data-testid="edit-link"]`) != 0 {
		t.Error("Edit is offered on a publication in review")
	}
	if p := editor.get("/p/northwind/publications/" + reviewing.id + "/edit"); p.status != http.StatusSeeOther {
		t.Errorf("the editor of a publication in review: %d", p.status)
	}
	p := editor.post("/p/northwind/publications/"+reviewing.id+"/edit", url.Values{"title": {"Changed in review"}, "body": {"x"}, "expected_version": {"1"}})
	if p.status == http.StatusSeeOther || p.doc.Find(`#title`).AttrOr("value", "") != "Changed in review" {
		t.Errorf("a forged save in review: %d %s", p.status, p.text(`[data-testid="editor-notice"]`))
	}
	if _, v := s.statusOf(t, reviewing.id); v != v0 {
		t.Error("a refused save changed the version")
	}
	if p := editor.post("/p/northwind/publications/new", url.Values{"title": {"No token"}, "_csrf": {"forged"}}); p.status != http.StatusForbidden {
		t.Errorf("a create without the CSRF token: %d", p.status)
	}
	if p := editor.post("/p/northwind/publications/new", url.Values{"title": {"  "}}); p.status != http.StatusUnprocessableEntity || p.text(`#title-err`) == "" {
		t.Errorf("a create without a title: %d", p.status)
	}
	// A NUL (which no text can hold) is refused in words, the person's text kept.
	p = editor.post("/p/northwind/publications/new", url.Values{"title": {"Nul\x00title"}, "body": {"b"}})
	if want := "A text cannot hold the NUL character (U+0000): remove it and try again."; p.status != http.StatusUnprocessableEntity || !strings.Contains(p.text(`[data-testid="editor-notice"]`), want) {
		t.Errorf("a create with a NUL: %d %q, want %q", p.status, p.text(`[data-testid="editor-notice"]`), want)
	}
	// A draft with a history (submitted, then withdrawn): no delete offered, and a forged
	// delete is refused in words.
	p = editor.post("/p/northwind/publications/new", url.Values{"title": {"Submitted once"}, "summary": {"s"}, "body": {"b"}})
	withHistory := strings.TrimPrefix(p.location(), "/p/northwind/publications/")
	for _, rpc := range []string{"submit_for_review", "withdraw"} {
		if p := editor.post("/p/northwind/publications/"+withHistory+"/actions/"+rpc, nil); p.status != http.StatusSeeOther {
			t.Fatalf("%s: %d", rpc, p.status)
		}
	}
	if p := editor.get("/p/northwind/publications/" + withHistory); p.count(`[data-testid="delete-link"]`) != 0 {
		t.Error("Delete is offered on a draft with a history")
	}
	if p := editor.post("/p/northwind/publications/"+withHistory+"/delete", nil); p.status != http.StatusSeeOther {
		t.Errorf("a forged delete of a draft with history: %d", p.status)
	}
	if st, _ := s.statusOf(t, withHistory); st != "draft" {
		t.Error("the draft with a history was changed")
	}
}

// TestWritingFormsRefuseForgery: every writing form refuses a forged CSRF token, and a
// viewer's hand-made write to any of them changes nothing of the draft.
func TestWritingFormsRefuseForgery(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	draft := s.pubs(t, "northwind", "draft")[0]
	base := "/p/northwind/publications/" + draft.id
	state := func() string {
		var v string
		if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select concat_ws('|', p.version, p.title,
			(select count(*) from promos where publication_id = p.id), (select string_agg(media_id::text, ',' order by position) from publication_media where publication_id = p.id))
			from publications p where p.id = $1`, draft.id).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := state()
	forms := []struct {
		path string
		form url.Values
	}{
		{"/p/northwind/publications/new", url.Values{"title": {"Forged"}}},
		{base + "/edit", url.Values{"title": {"Forged"}, "body": {"x"}, "expected_version": {strconv.Itoa(draft.version)}}},
		{base + "/promos/x", url.Values{"body": {"Forged promo"}}},
		{base + "/promos/x/delete", nil},
		{base + "/media/order", url.Values{"order": {"00000000-0000-0000-0000-000000000000"}}},
		{base + "/delete", nil},
	}
	editor := s.browser(t)
	editor.login("editor@northwind.test")
	for _, f := range forms {
		v := url.Values{"_csrf": {"forged"}}
		for k, vs := range f.form {
			v[k] = vs
		}
		if p := editor.post(f.path, v); p.status != http.StatusForbidden {
			t.Errorf("%s with a forged token: %d", f.path, p.status)
		}
	}
	viewer := s.browser(t)
	viewer.login("viewer@northwind.test")
	viewer.get(base)
	for _, f := range forms {
		viewer.post(f.path, f.form)
	}
	if after := state(); after != before {
		t.Errorf("forged writes changed the draft: %s → %s", before, after)
	}
}

// TestPromoCards: the editor of a draft shows a card per default channel of the project; the
// counter (asked for as the person types) counts as internal/channels does and says by how much
// a promo is over; a promo is saved, then removed, as the person; another channel can be added;
// a publication in review offers no editor, and a forged promo save on it is refused in words.
func TestPromoCards(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	b.login("editor@northwind.test")
	p := b.post("/p/northwind/publications/new", url.Values{"title": {"Promo practice"}, "summary": {"s"}, "body": {"b"}})
	base := p.location()
	var defaults []string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select default_channels from projects where slug = 'northwind'`).Scan(&defaults); err != nil || len(defaults) == 0 {
		t.Fatalf("northwind's default channels: %v %v", defaults, err)
	}
	// The new piece's page names each default channel still without a promo as the network
	// calls itself ("X", not its slug x), in the project's order.
	var names []string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select array_agg(c.name order by u.n)
		from unnest($1::text[]) with ordinality u(slug, n) join channels c on c.slug = u.slug`, defaults).Scan(&names); err != nil {
		t.Fatal(err)
	}
	var shown []string
	fresh := b.get(base)
	fresh.doc.Find(`[data-testid="promo-missing"] h3`).Each(func(_ int, h *goquery.Selection) { shown = append(shown, h.Text()) })
	// A draft that never moved says so where its history will be.
	if fresh.count(`[data-testid="event"]`) != 0 || fresh.text(`[data-testid="history-empty"]`) == "" {
		t.Errorf("a new draft's history: %d events, %q", fresh.count(`[data-testid="event"]`), fresh.text(`[data-testid="history"]`))
	}
	if !slices.Equal(shown, names) {
		t.Errorf("channels without a promo shown as %q, want %q", shown, names)
	}
	// Written promos come first, in that order too, whatever order they were written in; then
	// the channels still without one.
	ordered := b.post("/p/northwind/publications/new", url.Values{"title": {"Promo order"}, "summary": {"s"}, "body": {"b"}}).location()
	for _, ch := range []string{"threads", "x", "linkedin"} {
		if p := b.post(ordered+"/promos/"+ch, url.Values{"body": {"Out of order " + ch}}); p.status != http.StatusSeeOther {
			t.Fatalf("save %s: %d", ch, p.status)
		}
	}
	var cards []string
	b.get(ordered).doc.Find(`[data-testid="promos"] li h3`).Each(func(_ int, h *goquery.Selection) { cards = append(cards, h.Text()) })
	if want := []string{"X", "LinkedIn", "Threads", "Bluesky", "Mastodon"}; !slices.Equal(cards, want) || !slices.Equal(names, []string{"X", "Bluesky", "Mastodon", "LinkedIn", "Threads"}) {
		t.Errorf("promo cards in the order %q, want %q (default channels %q)", cards, want, names)
	}
	e := b.get(base + "/edit")
	for _, ch := range defaults {
		if e.count(`[data-testid="promo-card-`+ch+`"]`) != 1 {
			t.Errorf("no card for default channel %s", ch)
		}
	}
	if e.count(`[data-testid="promo-card-x"]`) != 1 {
		t.Fatalf("the test needs x among northwind's default channels: %v", defaults)
	}
	if got := e.text(`[data-testid="rules-x"]`); got != "A link counts as 23 characters; at most 2 hashtags." {
		t.Errorf("X's rules: %q", got)
	}
	// A new promo links to the publication's canonical URL: the project's site and its slug.
	if got := e.doc.Find(`#promo-link-x`).AttrOr("value", ""); got != "https://northwind.test/promo-practice" {
		t.Errorf("the link a new promo gets: %q", got)
	}

	// The counter: X counts a link as 23 and allows 280.
	p = b.post(base+"/promos/x/count", url.Values{"body": {strings.Repeat("a", 250)}, "link": {"https://northwind.example/a/very/long/path/indeed"}}, htmx("count-x")...)
	if got := p.text(`[data-testid="count-x"]`); !strings.HasPrefix(got, "274 / 280") || strings.Contains(got, "over") {
		t.Errorf("counter under the limit: %q", got)
	}
	p = b.post(base+"/promos/x/count", url.Values{"body": {strings.Repeat("a", 300)}}, htmx("count-x")...)
	if got := p.text(`[data-testid="count-x"]`); !strings.Contains(got, "300 / 280") || !strings.Contains(got, "20 over the limit") {
		t.Errorf("counter over the limit: %q", got)
	}

	// A link that is not a web address is refused in words, and what was typed stays (037).
	p = b.post(base+"/promos/x", url.Values{"body": {"Practice makes promos #news"}, "link": {"javascript:alert(1)"}})
	if got := p.text(`[data-testid="promo-card-x"] .notice`); p.status != http.StatusUnprocessableEntity ||
		!strings.Contains(got, "A promo's link is a web address: http:// or https:// and no spaces.") ||
		p.doc.Find(`#promo-link-x`).AttrOr("value", "") != "javascript:alert(1)" {
		t.Errorf("a javascript: link: %d %q", p.status, got)
	}
	if p := b.post(base+"/promos/x", url.Values{"body": {"Practice makes promos #news"}, "link": {"https://northwind.example/p"}}); p.status != http.StatusSeeOther {
		t.Fatalf("save: %d", p.status)
	}
	e = b.get(base + "/edit")
	if e.doc.Find(`[data-testid="promo-body-x"]`).Text() != "Practice makes promos #news" || e.count(`[data-testid="promo-remove-x"]`) != 1 {
		t.Fatalf("the saved promo is not in its card")
	}
	var promos int
	count := func() int {
		if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select count(*) from promos where publication_id = $1`, strings.TrimPrefix(base, "/p/northwind/publications/")).Scan(&promos); err != nil {
			t.Fatal(err)
		}
		return promos
	}
	if count() != 1 {
		t.Fatalf("%d promos after saving one", promos)
	}
	if p := b.post(base+"/promos/x/delete", nil); p.status != http.StatusSeeOther || count() != 0 {
		t.Fatalf("remove: %d, %d left", p.status, promos)
	}
	if got := b.get(base + "/edit").text(`[data-testid="flash"]`); got != "Promo removed." {
		t.Errorf("after removing: flash %q", got)
	}
	// Removing it again (a second tab, Back) says there was none rather than claiming a removal;
	// a channel that does not exist is not found.
	if p := b.post(base+"/promos/x/delete", nil); p.status != http.StatusSeeOther {
		t.Fatalf("remove again: %d", p.status)
	}
	if got := b.get(base + "/edit").text(`[data-testid="flash"]`); got != "There was no X promo to remove." {
		t.Errorf("after removing again: flash %q", got)
	}
	for _, ch := range []string{"nochannel", "x%00"} {
		if p := b.post(base+"/promos/"+ch+"/delete", nil); p.status != http.StatusNotFound {
			t.Errorf("remove a promo of channel %q: %d %q", ch, p.status, p.text("main"))
		}
	}
	// Another channel, on request.
	var other string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select slug from channels where not (slug = any ($1)) order by slug limit 1`, defaults).Scan(&other); err != nil {
		t.Fatal(err)
	}
	if p := b.get(base + "/edit?add=" + other); p.count(`[data-testid="promo-card-`+other+`"]`) != 1 {
		t.Errorf("no card for %s on request", other)
	}

	// In review: no editor; a forged promo save is refused and stores nothing.
	inReview := s.pubs(t, "northwind", "reviewing")[0]
	p = b.post("/p/northwind/publications/"+inReview.id+"/promos/linkedin", url.Values{"body": {"Forged while in review"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.text(`[data-testid="promo-card-linkedin"] .notice`), "only change while the publication is a draft") {
		t.Errorf("a promo on a publication in review: %d %q", p.status, p.text(`[data-testid="promo-card-linkedin"] .notice`))
	}
	var forged int
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select count(*) from promos where body = 'Forged while in review'`).Scan(&forged); err != nil || forged != 0 {
		t.Errorf("the forged promo was stored (%d, %v)", forged, err)
	}
}

// TestEditorShowsRoundNotes: an editor revising a piece sent back sees, beside the editor, each
// note reviewers wrote in the current round: who, their verdict as a badge, when (a time a
// browser can read) and the note, rendered; and nothing of the template's source.
func TestEditorShowsRoundNotes(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	var id string
	var notes int
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `
		select p.id, count(*) from publications p
		  join profiles a on a.id = p.author_id
		  join reviews r on r.publication_id = p.id
		 where a.email = 'editor@northwind.test' and p.status = 'changes_requested' and btrim(r.notes) <> ''
		   and r.round = (select max(v.round) from publication_revisions v where v.publication_id = p.id)
		 group by p.id order by count(*) desc, p.id limit 1`).Scan(&id, &notes); err != nil {
		t.Fatalf("the demo data has no piece sent back to the editor with notes: %v", err)
	}
	b := s.browser(t)
	b.login("editor@northwind.test")
	p := b.get("/p/northwind/publications/" + id + "/edit")
	if p.status != http.StatusOK {
		t.Fatalf("edit: %d", p.status)
	}
	items := p.doc.Find(`[data-testid="editor-notes"] li`)
	if items.Length() != notes {
		t.Fatalf("%d notes shown, want %d", items.Length(), notes)
	}
	for i := range notes {
		li := items.Eq(i)
		head := strings.Join(strings.Fields(li.Find("p").First().Text()), " ")
		if li.Find("strong").Length() != 1 || li.Find(`[data-testid="status"].badge`).Length() != 1 ||
			li.Find("time[datetime]").Length() != 1 || li.Find(".prose").Length() != 1 || strings.Contains(li.Text(), "@") {
			t.Errorf("note %d reads %q", i, head)
		}
	}
}
