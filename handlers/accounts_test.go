package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"masthead/internal/seed"
)

// makeOwner promotes a demo person to owner of a project (the demo data has none), as the
// operator would with `masthead users role`.
func (s *stack) makeOwner(t *testing.T, email, project string) {
	t.Helper()
	_, err := s.env.DB.Owner(t).Exec(context.Background(), `
		update project_members m set role = 'owner' from profiles p, projects j
		 where p.id = m.user_id and j.id = m.project_id and p.email = $1 and j.slug = $2`, email, project)
	if err != nil {
		t.Fatal(err)
	}
}

func (s *stack) roleOf(t *testing.T, email, project string) string {
	t.Helper()
	var role string
	err := s.env.DB.Owner(t).QueryRow(context.Background(), `
		select coalesce((select m.role from project_members m join profiles p on p.id = m.user_id
		 join projects j on j.id = m.project_id where p.email = $1 and j.slug = $2), '')`, email, project).Scan(&role)
	if err != nil {
		t.Fatal(err)
	}
	return role
}

// TestSettingsInviteAndManage: an owner invites by email and gets a link; the link, opened in
// another browser, makes the account and signs the person in with the role; the owner then
// changes their role and removes them; the last owner is kept; non-owners and other tenants
// get nowhere.
func TestSettingsInviteAndManage(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.makeOwner(t, "lead@northwind.test", "northwind")
	owner := s.browser(t)
	owner.login("lead@northwind.test")

	p := owner.get("/p/northwind/settings")
	if p.status != http.StatusOK {
		t.Fatalf("settings: %d %s", p.status, p.text("main"))
	}
	if cur, _ := p.doc.Find(`a[href="/p/northwind/settings"]`).Attr("aria-current"); cur != "page" {
		t.Error("the Settings link is not marked current")
	}
	if n := p.count(`[data-testid="member"]`); n != 5 {
		t.Errorf("%d members listed, want 5 (four demo people and multi@)", n)
	}
	// Longest-standing first; the demo's members, who joined in one transaction, by name.
	var want []string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select array_agg(pr.email order by m.created_at, pr.display_name, m.user_id)
		from project_members m join projects j on j.id = m.project_id join profiles pr on pr.id = m.user_id
		where j.slug = 'northwind'`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	var listed []string
	p.doc.Find(`[data-testid="member"]`).Each(func(_ int, tr *goquery.Selection) { listed = append(listed, tr.AttrOr("data-email", "")) })
	if !slices.Equal(listed, want) {
		t.Errorf("members listed as %q, want %q", listed, want)
	}

	// A hand-made URL whose id is no id at all is not found, not PostgreSQL's words about uuids.
	for _, path := range []string{"/members/not-a-uuid/role", "/members/not-a-uuid/remove", "/invitations/x/revoke", "/collections/x%00/remove"} {
		if p := owner.post("/p/northwind/settings"+path, url.Values{"role": {"editor"}}); p.status != http.StatusNotFound {
			t.Errorf("POST %s: %d %q", path, p.status, owner.get("/p/northwind/settings").text(`[data-testid="flash"]`))
		}
	}
	// Invited first as a viewer, then again as a reviewer: the second invitation replaces the
	// first, whose link stops working (migration 036).
	owner.post("/p/northwind/settings/invitations", url.Values{"email": {"NEWCOMER@northwind.test"}, "role": {"viewer"}})
	replaced, _ := owner.get("/p/northwind/settings").doc.Find(`[data-testid="invite-link"]`).Attr("value")
	p = owner.post("/p/northwind/settings/invitations", url.Values{"email": {"newcomer@northwind.test"}, "role": {"reviewer"}})
	if p.status != http.StatusSeeOther || p.location() != "/p/northwind/settings" {
		t.Fatalf("invite: %d → %s", p.status, p.location())
	}
	p = owner.get("/p/northwind/settings")
	link, _ := p.doc.Find(`[data-testid="invite-link"]`).Attr("value")
	if !strings.HasPrefix(link, s.url+"/invite/") || !strings.HasPrefix(replaced, s.url+"/invite/") || link == replaced {
		t.Fatalf("invite links %q, then %q", replaced, link)
	}
	if p.count(`[data-testid="invitation"]`) != 1 || !strings.Contains(p.text(`[data-testid="invitation"]`), "newcomer@northwind.test as Reviewer") {
		t.Errorf("pending invitations: %q", p.text(`[data-testid="invitations"]`))
	}
	if p := s.browser(t).get(strings.TrimPrefix(replaced, s.url)); p.status != http.StatusNotFound {
		t.Errorf("the replaced link: %d %q", p.status, p.text("main"))
	}
	if again := owner.get("/p/northwind/settings"); again.count(`[data-testid="invite-link"]`) != 0 {
		t.Error("the link is shown a second time")
	}

	path := strings.TrimPrefix(link, s.url)
	guest := s.browser(t)
	p = guest.get(path)
	if p.status != http.StatusOK || !strings.Contains(p.text(`[data-testid="invite-summary"]`), "Reviewer") ||
		!strings.Contains(p.text("h1"), "Northwind Daily") {
		t.Fatalf("invite page: %d %q", p.status, p.text("main"))
	}
	if p := guest.post(path, url.Values{"password": {"short"}}); p.status != http.StatusUnprocessableEntity ||
		!strings.Contains(p.text(`[data-testid="accept-error"]`), "at least 8 characters") {
		t.Errorf("a short password: %d %q", p.status, p.text(`[data-testid="accept-error"]`))
	}
	// Accepting is one service call: its answer says what was joined, so nothing is looked up
	// again (each call takes a token of the rate limit).
	before := s.calls.Load()
	p = guest.post(path, url.Values{"password": {"newcomer secret"}, "name": {"Nia Newcomer"}})
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location(), "/p/northwind/queue") {
		t.Fatalf("accept: %d → %s", p.status, p.location())
	}
	if n := s.calls.Load() - before; n != 1 {
		t.Errorf("accepting made %d service calls, want 1", n)
	}
	p = guest.get(p.location())
	if p.status != http.StatusOK || p.text(`[data-testid="user"]`) != "Nia Newcomer" || !strings.Contains(p.text(`[data-testid="flash"]`), "You joined as Reviewer") {
		t.Fatalf("after accepting: %d user %q flash %q", p.status, p.text(`[data-testid="user"]`), p.text(`[data-testid="flash"]`))
	}
	if role := s.roleOf(t, "newcomer@northwind.test", "northwind"); role != "reviewer" {
		t.Errorf("role %q after accepting", role)
	}
	if p := s.browser(t).get(path); p.status != http.StatusNotFound || !strings.Contains(p.text("main"), "already been used") {
		t.Errorf("the link a second time: %d %q", p.status, p.text("main"))
	}

	// Change the newcomer's role, then remove them.
	p = owner.get("/p/northwind/settings")
	var uid string
	p.doc.Find(`[data-testid="member"]`).Each(func(_ int, sel *goquery.Selection) {
		if e, _ := sel.Attr("data-email"); e == "newcomer@northwind.test" {
			action, _ := sel.Find(`form[action$="/role"]`).Attr("action")
			uid = strings.TrimSuffix(strings.TrimPrefix(action, "/p/northwind/settings/members/"), "/role")
		}
	})
	if uid == "" {
		t.Fatal("the newcomer is not in the member list")
	}
	if p := owner.post("/p/northwind/settings/members/"+uid+"/role", url.Values{"role": {"editor"}}); p.status != http.StatusSeeOther {
		t.Fatalf("change role: %d", p.status)
	}
	if role := s.roleOf(t, "newcomer@northwind.test", "northwind"); role != "editor" {
		t.Errorf("role %q after the change", role)
	}
	if p := owner.post("/p/northwind/settings/members/"+uid+"/remove", nil); p.status != http.StatusSeeOther {
		t.Fatalf("remove: %d", p.status)
	}
	if role := s.roleOf(t, "newcomer@northwind.test", "northwind"); role != "" {
		t.Errorf("still a member as %q", role)
	}

	// The last owner stays: the refusal is said on the page, nothing changes.
	var leadID string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select id::text from profiles where email = 'lead@northwind.test'`).Scan(&leadID); err != nil {
		t.Fatal(err)
	}
	owner.post("/p/northwind/settings/members/"+leadID+"/role", url.Values{"role": {"lead"}})
	if p := owner.get("/p/northwind/settings"); !strings.Contains(p.doc.Find(`[data-testid="flash"].flash-error`).Text(), "at least one owner") {
		t.Errorf("demoting the last owner: flashes %q", p.doc.Find(`[data-testid="flash"]`).Text())
	}
	if role := s.roleOf(t, "lead@northwind.test", "northwind"); role != "owner" {
		t.Errorf("the last owner became %q", role)
	}

	// Non-owners: no page, and a forged form changes nothing.
	editor := s.browser(t)
	editor.login("editor@northwind.test")
	if p := editor.get("/p/northwind/settings"); p.status != http.StatusForbidden {
		t.Errorf("an editor opened settings: %d", p.status)
	}
	editor.post("/p/northwind/settings/invitations", url.Values{"email": {"sneaky@northwind.test"}, "role": {"owner"}})
	editor.post("/p/northwind/settings/members/"+leadID+"/remove", nil)
	var sneaky int
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select count(*) from invitations where email = 'sneaky@northwind.test'`).Scan(&sneaky); err != nil || sneaky != 0 {
		t.Errorf("an editor's forged invitation: %d %v", sneaky, err)
	}
	if role := s.roleOf(t, "lead@northwind.test", "northwind"); role != "owner" {
		t.Errorf("an editor removed the owner: %q", role)
	}
	// Another tenant's owner does not see this project at all.
	s.makeOwner(t, "lead@acme.test", "acme-travel")
	other := s.browser(t)
	other.login("lead@acme.test")
	if p := other.get("/p/northwind/settings"); p.status != http.StatusNotFound {
		t.Errorf("another tenant's owner: %d", p.status)
	}
}

// TestOwnerStepsDownOrLeaves: an owner's change to their own membership leaves them where they
// may still be, told what happened, not on a settings page that now answers 403 or 404 beside
// the success. Their own row offers "Leave" where the others' offer "Remove".
func TestOwnerStepsDownOrLeaves(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.makeOwner(t, "lead@northwind.test", "northwind") // the owner who remains
	s.makeOwner(t, "editor@northwind.test", "northwind")
	var me string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select id::text from profiles where email = 'editor@northwind.test'`).Scan(&me); err != nil {
		t.Fatal(err)
	}
	b := s.browser(t)
	b.login("editor@northwind.test")
	p := b.get("/p/northwind/settings")
	if p.count(`[data-testid="leave"]`) != 1 || p.count(`[data-testid="member"] button[aria-label^="Remove "]`) != 4 {
		t.Errorf("%d Leave and %d Remove buttons, want 1 (mine) and 4", p.count(`[data-testid="leave"]`), p.count(`[data-testid="member"] button[aria-label^="Remove "]`))
	}
	flash := func(p page) string { return p.text(`[data-testid="flash"]`) }

	p = b.post("/p/northwind/settings/members/"+me+"/role", url.Values{"role": {"editor"}})
	if p.status != http.StatusSeeOther || p.location() != "/p/northwind/queue" {
		t.Fatalf("stepping down: %d → %q, want the queue", p.status, p.location())
	}
	if p = b.get(p.location()); p.status != http.StatusOK ||
		flash(p) != "You are now an editor of Northwind Daily; only its owners manage its settings." {
		t.Errorf("after stepping down: %d, %q", p.status, flash(p))
	}
	if role := s.roleOf(t, "editor@northwind.test", "northwind"); role != "editor" {
		t.Errorf("stepped down to %q", role)
	}

	s.makeOwner(t, "editor@northwind.test", "northwind")
	b.get("/p/northwind/settings")
	p = b.post("/p/northwind/settings/members/"+me+"/remove", nil)
	if p.status != http.StatusSeeOther || p.location() != "/" {
		t.Fatalf("leaving: %d → %q, want the start page", p.status, p.location())
	}
	p = b.get("/")
	if p.status != http.StatusOK || flash(p) != "You left Northwind Daily." {
		t.Errorf("after leaving: %d, %q", p.status, flash(p))
	}
	// In no project now, the start page says how to be in one, and offers to start one.
	if got := p.text(`[data-testid="error-text"]`); got != "You are not a member of any project. Ask a project's owner to invite you, or start one of your own." ||
		p.count(`main a[href="/projects/new"]`) != 1 {
		t.Errorf("the start page of no project: %q, %d links to start one", got, p.count(`main a[href="/projects/new"]`))
	}
	if role := s.roleOf(t, "editor@northwind.test", "northwind"); role != "" {
		t.Errorf("still a member as %q", role)
	}
}

// TestSettingsRefusalsInWords: what the schema's constraints refuse in the settings and on the
// new-project form is said as what to change, not as PostgreSQL's "violates check constraint";
// a refusal that starts with an address keeps it as typed.
func TestSettingsRefusalsInWords(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.makeOwner(t, "lead@northwind.test", "northwind")
	b := s.browser(t)
	b.login("lead@northwind.test")
	b.get("/p/northwind/settings")
	for _, tc := range []struct {
		path string
		form url.Values
		want string
	}{
		{"/invitations", url.Values{"email": {"not an email"}, "role": {"editor"}},
			"That is not an email address: write it as name@example.com (at most 320 characters)."},
		{"/invitations", url.Values{"email": {"EDITOR@northwind.test"}, "role": {"editor"}},
			"EDITOR@northwind.test is already a member of this project."},
		{"/collections", url.Values{"name": {"City again"}, "slug": {"city"}, "kind": {"section"}},
			"The project already has a collection with that slug: choose another slug."},
		{"/collections", url.Values{"name": {"Weird"}, "slug": {"Bad Slug"}, "kind": {"section"}},
			"A collection's slug is 1 to 63 lower-case letters, digits and hyphens, starting with a letter or digit."},
		{"/collections", url.Values{"name": {""}, "slug": {"empty"}, "kind": {"section"}},
			"A collection's name is 1 to 200 characters."},
		{"/project", url.Values{"name": {""}, "timezone": {"UTC"}, "channels": {"x"}},
			"A project's name is 1 to 200 characters."},
	} {
		p := b.post("/p/northwind/settings"+tc.path, tc.form)
		if p.status != http.StatusSeeOther {
			t.Errorf("%s %v: %d", tc.path, tc.form, p.status)
			continue
		}
		if got := b.get(p.location()).doc.Find(`[data-testid="flash"].flash-error`).Text(); got != tc.want {
			t.Errorf("%s %v: says %q, want %q", tc.path, tc.form, got, tc.want)
		}
	}
	b.get("/projects/new")
	p := b.post("/projects/new", url.Values{"name": {"Elsewhere"}, "slug": {"Bad Slug"}, "timezone": {"UTC"}})
	if got := p.text(`[data-testid="new-project-error"]`); got != "A project's slug is 2 to 63 lower-case letters, digits and hyphens, starting with a letter or digit." {
		t.Errorf("a new project's bad slug: %d %q", p.status, got)
	}
}

// northwindOwner is a stack whose demo lead owns northwind, signed in on its settings page.
func northwindOwner(t *testing.T) (*stack, *browser) {
	s := newStack(t)
	s.makeOwner(t, "lead@northwind.test", "northwind")
	owner := s.browser(t)
	owner.login("lead@northwind.test")
	owner.get("/p/northwind/settings")
	return s, owner
}

// TestSettingsProjectAndCollections: the owner edits the project's name, time zone, default
// channels and collections on the same page; a bad value is refused in the service's words.
func TestSettingsProjectAndCollections(t *testing.T) {
	t.Parallel()
	s, owner := northwindOwner(t)
	p := owner.post("/p/northwind/settings/project", url.Values{"name": {"Northwind Weekly"}, "timezone": {"Europe/Berlin"},
		"channels": {"x", "linkedin"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("save project: %d", p.status)
	}
	var name, tz string
	var chans []string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select name, timezone, default_channels from projects where slug = 'northwind'`).Scan(&name, &tz, &chans); err != nil {
		t.Fatal(err)
	}
	if name != "Northwind Weekly" || tz != "Europe/Berlin" || !slices.Equal(chans, []string{"x", "linkedin"}) {
		t.Errorf("saved %q %q %v", name, tz, chans)
	}
	owner.post("/p/northwind/settings/project", url.Values{"name": {"Northwind Monthly"}, "timezone": {"Mars/Olympus"}})
	if p := owner.get("/p/northwind/settings"); p.count(`[data-testid="flash"].flash-error`) != 1 ||
		p.text(`[data-testid="flash"].flash-error`) != `Unknown time zone "Mars/Olympus": use an IANA name such as Europe/Berlin or UTC.` {
		t.Errorf("a bad time zone was not refused in words on the page: %q", p.text(`[data-testid="flash"].flash-error`))
	}
	// The refused save changed nothing, not even the name sent beside the bad time zone.
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select name, timezone from projects where slug = 'northwind'`).Scan(&name, &tz); err != nil {
		t.Fatal(err)
	}
	if name != "Northwind Weekly" || tz != "Europe/Berlin" {
		t.Errorf("after the refused save: %q %q", name, tz)
	}
	if p := owner.post("/p/northwind/settings/collections", url.Values{"name": {"Opinion"}, "slug": {"opinion"}, "kind": {"section"}}); p.status != http.StatusSeeOther {
		t.Fatalf("add collection: %d", p.status)
	}
	p = owner.get("/p/northwind/settings")
	found := false
	p.doc.Find(`[data-testid="collection"]`).Each(func(_ int, sel *goquery.Selection) {
		if strings.Contains(sel.Text(), "Opinion") {
			found = true
		}
	})
	if !found {
		t.Error("the new collection is not listed")
	}

	// An empty collection can be removed; one that holds publications is refused in words and stays.
	removeURL := func(name string) string {
		var action string
		owner.get("/p/northwind/settings").doc.Find(`[data-testid="collection"]`).Each(func(_ int, sel *goquery.Selection) {
			if strings.HasPrefix(strings.TrimSpace(sel.Text()), name+" ") {
				action, _ = sel.Find(`form[action$="/remove"]`).Attr("action")
			}
		})
		if action == "" {
			t.Fatalf("no remove form for the collection %q", name)
		}
		return action
	}
	collections := func() int {
		var n int
		if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select count(*) from collections c join projects p on p.id = c.project_id where p.slug = 'northwind'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var held string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `
		select c.name from collections c join projects p on p.id = c.project_id
		 where p.slug = 'northwind' and exists (select 1 from publications x where x.collection_id = c.id)
		 order by c.name limit 1`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	before := collections()
	if p := owner.post(removeURL(held), nil); p.status != http.StatusSeeOther {
		t.Fatalf("remove a collection in use: %d", p.status)
	}
	if p := owner.get("/p/northwind/settings"); !strings.Contains(p.text(`[data-testid="flash"].flash-error`), "still holds publications") {
		t.Errorf("removing %q: flash %q", held, p.text(`[data-testid="flash"]`))
	}
	if n := collections(); n != before {
		t.Errorf("a collection holding publications was removed: %d → %d", before, n)
	}
	if p := owner.post(removeURL("Opinion"), nil); p.status != http.StatusSeeOther {
		t.Fatalf("remove the empty collection: %d", p.status)
	}
	if p := owner.get("/p/northwind/settings"); !strings.Contains(p.text(`[data-testid="flash"]`), "Collection removed") ||
		strings.Contains(p.text(`[data-testid="collections"]`), "Opinion") {
		t.Errorf("after removing Opinion: flash %q, collections %q", p.text(`[data-testid="flash"]`), p.text(`[data-testid="collections"]`))
	}
	if n := collections(); n != before-1 {
		t.Errorf("collections %d after removing one of %d", n, before)
	}
}

// TestRevokeInvitation: a revoked invitation leaves the list and its link stops working.
func TestRevokeInvitation(t *testing.T) {
	t.Parallel()
	s, owner := northwindOwner(t)
	if p := owner.post("/p/northwind/settings/invitations", url.Values{"email": {"late@northwind.test"}, "role": {"editor"}}); p.status != http.StatusSeeOther {
		t.Fatalf("invite: %d", p.status)
	}
	p := owner.get("/p/northwind/settings")
	link, _ := p.doc.Find(`[data-testid="invite-link"]`).Attr("value")
	revoke, _ := p.doc.Find(`[data-testid="invitation"] form[action$="/revoke"]`).Attr("action")
	if link == "" || revoke == "" {
		t.Fatalf("link %q, revoke form %q", link, revoke)
	}
	// The guest opens the link before it is revoked and sends the form after.
	guest := s.browser(t)
	path := strings.TrimPrefix(link, s.url)
	if p := guest.get(path); p.status != http.StatusOK {
		t.Fatalf("the invite page before revoking: %d", p.status)
	}
	if p := owner.post(revoke, nil); p.status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", p.status)
	}
	p = owner.get("/p/northwind/settings")
	if !strings.Contains(p.text(`[data-testid="flash"]`), "Invitation revoked") || p.count(`[data-testid="invitation"]`) != 0 {
		t.Errorf("after revoking: flash %q, %d invitations listed", p.text(`[data-testid="flash"]`), p.count(`[data-testid="invitation"]`))
	}
	if p := guest.post(path, url.Values{"password": {"late comer secret"}}); p.status != http.StatusNotFound {
		t.Errorf("accepting through the revoked link: %d → %s %q", p.status, p.location(), p.text("main"))
	}
	if p := s.browser(t).get(path); p.status != http.StatusNotFound {
		t.Errorf("the revoked link: %d %q", p.status, p.text("main"))
	}
	if role := s.roleOf(t, "late@northwind.test", "northwind"); role != "" {
		t.Errorf("joined through a revoked link as %q", role)
	}
}

// TestAccountPage: /account changes the display name (banner and profile follow), refuses a
// wrong current password in words, changes the password, lists sessions by the browser each
// was opened in and signs the others out.
func TestAccountPage(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	me := s.browser(t)
	me.ua = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15"
	me.login("editor@northwind.test")
	elsewhere := s.browser(t)
	elsewhere.ua = "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0"
	elsewhere.login("editor@northwind.test")

	p := me.get("/account")
	if p.status != http.StatusOK || p.count(`[data-testid="session"]`) != 2 || p.count(`[data-testid="sign-out-others"]`) != 1 {
		t.Fatalf("account: %d, %d sessions", p.status, p.count(`[data-testid="session"]`))
	}
	// Each session is named by the browser that signed in, not by the dashboard's own client
	// (every dashboard sign-in once read "A browser").
	var devices []string
	p.doc.Find(`[data-testid="session"]`).Each(func(_ int, row *goquery.Selection) {
		devices = append(devices, strings.Join(strings.Fields(row.Text()), " "))
	})
	slices.Sort(devices)
	if len(devices) != 2 || !strings.HasPrefix(devices[0], "Firefox on Linux 127.0.0.1") ||
		!strings.HasPrefix(devices[1], "Safari on macOS (this browser)") {
		t.Errorf("sessions listed as %q", devices)
	}
	if cur, _ := p.doc.Find(`a.account-link`).Attr("aria-current"); cur != "page" {
		t.Error("the banner's Account link is not marked current")
	}

	if p := me.post("/account/profile", url.Values{"name": {"Tom R."}}); p.status != http.StatusSeeOther {
		t.Fatalf("save name: %d", p.status)
	}
	if p := me.get("/account"); p.text(`[data-testid="user"]`) != "Tom R." {
		t.Errorf("banner name %q", p.text(`[data-testid="user"]`))
	}
	var display string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select display_name from profiles where email = 'editor@northwind.test'`).Scan(&display); err != nil || display != "Tom R." {
		t.Errorf("profile display_name %q %v", display, err)
	}
	if p := me.post("/account/profile", url.Values{"name": {strings.Repeat("n", 101)}}); p.status != http.StatusBadRequest {
		t.Errorf("a 101-character name: %d", p.status)
	}

	p = me.post("/account/password", url.Values{"current_password": {"wrong one"}, "password": {"a new password"}})
	if p.status != http.StatusUnprocessableEntity || p.text(`[data-testid="password-error"]`) != "The current password is not correct." {
		t.Fatalf("wrong current password: %d %q", p.status, p.text(`[data-testid="password-error"]`))
	}
	p = me.post("/account/password", url.Values{"current_password": {seed.DefaultPassword}, "password": {"a new password"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("change password: %d %q", p.status, p.text("main"))
	}
	// The other browser's session ended with the change.
	if p := elsewhere.get("/schedule"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location(), "/login") {
		t.Errorf("the other session after a password change: %d → %s", p.status, p.location())
	}
	again := s.browser(t)
	again.get("/login")
	if p := again.post("/login", url.Values{"email": {"editor@northwind.test"}, "password": {"a new password"}}); p.status != http.StatusSeeOther {
		t.Errorf("sign in with the new password: %d", p.status)
	}
	if p := me.get("/account"); p.count(`[data-testid="session"]`) != 2 {
		t.Errorf("%d sessions listed, want this one and the new sign-in", p.count(`[data-testid="session"]`))
	}
	if p := me.post("/account/sessions/others", nil); p.status != http.StatusSeeOther {
		t.Fatalf("sign out others: %d", p.status)
	}
	if p := again.get("/schedule"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location(), "/login") {
		t.Errorf("the other session after sign out others: %d → %s", p.status, p.location())
	}
	if p := me.get("/account"); p.count(`[data-testid="no-other-sessions"]`) != 1 {
		t.Error("this browser is not the only session left")
	}
	// A refresh records the browser that made it, as the sign-in did: the dashboard refreshes
	// for the person, not as itself. The same session, refreshed from another browser than it
	// was opened in, so that a refresh that recorded nothing (or the dashboard) would show.
	me.ua = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	s.clock.Advance(2 * time.Hour) // the access token has expired: this page load refreshes it
	if got := strings.Join(strings.Fields(me.get("/account").text(`[data-testid="session"]`)), " "); !strings.HasPrefix(got, "Chrome on Windows (this browser)") {
		t.Errorf("after a refresh from Chrome on Windows the session reads %q", got)
	}
}

// TestRolesAreTheSchemas: the dashboard's role list names exactly the roles of DESIGN.md and
// the database's check constraint (seed.Roles mirrors it for input validation).
func TestRolesAreTheSchemas(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	var def string
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `
		select pg_get_constraintdef(c.oid) from pg_constraint c
		 where c.conrelid = 'public.project_members'::regclass and c.contype = 'c'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	s.makeOwner(t, "lead@northwind.test", "northwind")
	b := s.browser(t)
	b.login("lead@northwind.test")
	var offered []string
	b.get("/p/northwind/settings").doc.Find(`#invite-role option`).Each(func(_ int, sel *goquery.Selection) {
		v, _ := sel.Attr("value")
		offered = append(offered, v)
		if !strings.Contains(def, "'"+v+"'") {
			t.Errorf("role %q is offered but not in the schema's %s", v, def)
		}
	})
	if !slices.Equal(offered, seed.Roles) {
		t.Errorf("offered roles %v, want %v", offered, seed.Roles)
	}
}

// TestStartProject: anyone signed in starts a project (create_project) and is its owner, landing
// on its settings; a taken slug is refused on the form in the service's words.
func TestStartProject(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	b.login("viewer@northwind.test")
	if p := b.get("/projects/new"); p.status != http.StatusOK || p.count(`[data-testid="new-project-form"] input[name="channels"]`) == 0 {
		t.Fatalf("form: %d", p.status)
	}
	p := b.post("/projects/new", url.Values{"name": {"Harbour Notes"}, "slug": {"harbour"}, "timezone": {"Europe/Lisbon"}, "channels": {"bluesky"}})
	if p.status != http.StatusSeeOther || p.location() != "/p/harbour/settings" {
		t.Fatalf("create: %d → %s %q", p.status, p.location(), p.text(`[data-testid="new-project-error"]`))
	}
	if role := s.roleOf(t, "viewer@northwind.test", "harbour"); role != "owner" {
		t.Errorf("the creator's role %q", role)
	}
	if p := b.get("/p/harbour/settings"); p.status != http.StatusOK || p.count(`[data-testid="member"]`) != 1 {
		t.Errorf("the new project's settings: %d, %d members", p.status, p.count(`[data-testid="member"]`))
	}
	p = b.post("/projects/new", url.Values{"name": {"Elsewhere"}, "slug": {"elsewhere"}, "timezone": {"Mars/Olympus"}})
	if got := p.text(`[data-testid="new-project-error"]`); p.status != http.StatusUnprocessableEntity || got != `Unknown time zone "Mars/Olympus": use an IANA name such as Europe/Berlin or UTC.` {
		t.Errorf("an unknown time zone: %d %q", p.status, got)
	}
	p = b.post("/projects/new", url.Values{"name": {"Again"}, "slug": {"northwind"}, "timezone": {"UTC"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.text(`[data-testid="new-project-error"]`), `A project with slug "northwind" already exists`) {
		t.Errorf("a taken slug: %d %q", p.status, p.text(`[data-testid="new-project-error"]`))
	}
}
