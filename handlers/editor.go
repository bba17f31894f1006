package handlers

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/internal/diff"
	"masthead/views/layout"
	"masthead/views/pages"
)

// draftForm is what the editor posts.
type draftForm struct {
	Title           string `form:"title"`
	Slug            string `form:"slug"`
	Summary         string `form:"summary"`
	Body            string `form:"body"`
	CollectionID    string `form:"collection_id"`
	ExpectedVersion int    `form:"expected_version"`
}

func (f draftForm) draft() client.Draft {
	return client.Draft{Title: strings.TrimSpace(f.Title), Slug: strings.TrimSpace(f.Slug), Summary: f.Summary,
		Body: f.Body, CollectionID: f.CollectionID}
}

func (f draftForm) fields() pages.DraftFields {
	return pages.DraftFields{Title: f.Title, Slug: f.Slug, Summary: f.Summary, Body: f.Body, CollectionID: f.CollectionID}
}

// editable says whether role may edit a publication in status: editors and up, while it is a
// draft or sent back. The database decides again on save; this only decides what is offered.
func editable(role, status string) bool {
	return slices.Contains(editorPlus, role) && (status == "draft" || status == "changes_requested")
}

// newPublication is GET /p/:slug/publications/new: an empty editor for editors and up.
func (a *App) newPublication(c echo.Context) error {
	pc, err := a.loadProjects(c, c.Param("slug"))
	if err != nil {
		return a.fail(c, err)
	}
	if !slices.Contains(editorPlus, pc.role) {
		return a.fail(c, &client.Error{Status: http.StatusForbidden, Message: "only editors, leads and owners write publications"})
	}
	return a.render(c, http.StatusOK, pages.Editor(a.newEditor(c, pc, draftForm{})))
}

func (a *App) newEditor(c echo.Context, pc *projectContext, f draftForm) pages.EditorModel {
	base := "/p/" + pc.project.Slug + "/publications/new"
	m := a.editorModel(c, pc, "New publication", base, base+"/preview", queueURL(pc.project.Slug), f)
	m.StorageKey = "masthead:new:" + pc.project.ID
	return m
}

func (a *App) editorModel(c echo.Context, pc *projectContext, heading, action, preview, cancel string, f draftForm) pages.EditorModel {
	m := pages.EditorModel{
		Page: a.frameSection(c, heading, pc, "queue"), Heading: heading,
		Action: action, PreviewURL: preview, CancelURL: cancel, CSRF: str(stateOf(c).sess, keyCSRF),
		Fields: f.fields(), Errors: map[string]string{},
	}
	for _, col := range pc.project.Collections {
		m.Collections = append(m.Collections, pages.Option{Value: col.ID, Label: col.Name})
	}
	return m
}

// createPublication is POST /p/:slug/publications/new: the draft is created as the person
// (its author) and they land on it; a refusal shows the form again with their text.
func (a *App) createPublication(c echo.Context) error {
	pc, err := a.loadProjects(c, c.Param("slug"))
	if err != nil {
		return a.fail(c, err)
	}
	var f draftForm
	if err := c.Bind(&f); err != nil {
		return a.fail(c, errBadForm)
	}
	m := a.newEditor(c, pc, f)
	if strings.TrimSpace(f.Title) == "" {
		m.Errors["title"] = "Give it a title."
		m.Notice = &pages.Notice{Kind: "error", Title: "Nothing was saved.", Text: "Give it a title."}
		return a.render(c, http.StatusUnprocessableEntity, pages.Editor(m))
	}
	var p *client.Publication
	err = a.call(c, func(token string) error {
		var err error
		p, err = a.api.CreateDraft(ctx(c), token, pc.project.ID, f.draft())
		return err
	})
	if err == nil {
		a.log.InfoContext(ctx(c), "handlers: draft created", "project", pc.project.Slug)
		a.flash(c, layout.Flash{Kind: "success", Text: "Draft created."})
		return a.redirect(c, publicationURL(pc.project.Slug, p.ID))
	}
	return a.refusedDraft(c, m, err)
}

// refusedDraft shows the editor again, with the person's text, after the service refused it.
func (a *App) refusedDraft(c echo.Context, m pages.EditorModel, err error) error {
	e, ok := client.ErrorOf(err)
	if !ok || e.Status >= 500 || e.Status == http.StatusNotFound || e.Status == http.StatusTooManyRequests {
		return a.fail(c, err)
	}
	status := http.StatusUnprocessableEntity
	switch e.Status {
	case http.StatusForbidden:
		status = http.StatusForbidden
	case http.StatusConflict:
		status = http.StatusConflict
	}
	text := sentence(e.Message)
	if e.Hint != "" {
		text += " " + sentence(e.Hint)
	}
	for _, name := range []string{"title", "slug", "summary", "body"} {
		if strings.Contains(strings.ToLower(e.Message), name) {
			m.Errors[name] = sentence(e.Message)
			break
		}
	}
	m.Notice = &pages.Notice{Kind: "error", Title: "Nothing was saved.", Text: text}
	return a.render(c, status, pages.Editor(m))
}

// editPublication is GET /p/:slug/publications/:id/edit: the editor with the saved text, the
// reviewers' notes of the current round beside it.
func (a *App) editPublication(c echo.Context) error {
	pc, p, err := a.loadPublication(c)
	if err != nil {
		return a.fail(c, err)
	}
	if !editable(pc.role, p.Status) {
		return a.notEditable(c, pc, p)
	}
	all, err := a.channels(c)
	if err != nil {
		return a.fail(c, err)
	}
	return a.render(c, http.StatusOK, pages.Editor(a.savedEditor(c, pc, p, all, c.QueryParam("add"))))
}

// savedEditor is the editor holding what is saved, with its promo cards (add names one more
// channel to write a promo for).
func (a *App) savedEditor(c echo.Context, pc *projectContext, p *client.Publication, all []client.Channel, add string) pages.EditorModel {
	f := draftForm{Title: p.Title, Slug: p.Slug, Summary: p.Summary, Body: p.Body, ExpectedVersion: p.Version}
	if p.CollectionID != nil {
		f.CollectionID = *p.CollectionID
	}
	m := a.existingEditor(c, pc, p, f)
	m.Promos, m.AddChannels = a.promoCards(c, pc, p, all, add)
	m.Media = a.mediaSection(c, pc, p)
	// Without the checklist the editor still works, so a failure is logged, not shown.
	checks, _, err := a.readiness(c, p)
	if err != nil {
		a.log.WarnContext(ctx(c), "handlers: readiness unavailable", "route", c.Path(), "err", err)
	}
	m.Readiness = checks
	m.AddURL = publicationURL(pc.project.Slug, p.ID) + "/edit"
	return m
}

// channels lists the networks with their limits. The list is the same for everyone who may
// read it (channels_read admits every signed-in person) and changes with a migration, so it is
// kept for channelsTTL: the promo counter asks for it on every pause in typing.
func (a *App) channels(c echo.Context) ([]client.Channel, error) {
	a.chans.mu.Lock()
	if a.chans.list != nil && a.now().Sub(a.chans.at) < channelsTTL {
		all := a.chans.list
		a.chans.mu.Unlock()
		return all, nil
	}
	a.chans.mu.Unlock()
	var all []client.Channel
	err := a.call(c, func(token string) error {
		var err error
		all, err = a.api.Channels(ctx(c), token)
		return err
	})
	if err == nil {
		a.chans.mu.Lock()
		a.chans.list, a.chans.at = all, a.now()
		a.chans.mu.Unlock()
	}
	return all, err
}

// channelsTTL is how long the dashboard keeps the channel list.
const channelsTTL = time.Minute

// channelCache is the kept channel list.
type channelCache struct {
	mu   sync.Mutex
	list []client.Channel
	at   time.Time
}

// notEditable sends the person back to the publication, saying why they cannot edit it.
func (a *App) notEditable(c echo.Context, pc *projectContext, p *client.Publication) error {
	text := "Only editors, leads and owners edit publications."
	if slices.Contains(editorPlus, pc.role) {
		text = "Only drafts and publications sent back with changes requested can be edited; this one is " +
			strings.ToLower(status(p.Status).Label) + "."
	}
	a.flash(c, layout.Flash{Kind: "error", Text: text})
	return a.redirect(c, publicationURL(pc.project.Slug, p.ID))
}

func (a *App) existingEditor(c echo.Context, pc *projectContext, p *client.Publication, f draftForm) pages.EditorModel {
	base := publicationURL(pc.project.Slug, p.ID)
	m := a.editorModel(c, pc, "Edit: "+p.Title, base+"/edit", base+"/edit/preview", base, f)
	m.ExpectedVersion = strconv.Itoa(f.ExpectedVersion)
	m.StorageKey = "masthead:edit:" + p.ID
	m.Preview, m.ShowPreview = f.Body, f.Body != "" // the text as it reads now, from the start
	round := 0
	if len(p.Revisions) > 0 {
		round = p.Revisions[0].Round
	}
	for _, r := range p.Reviews {
		if round > 0 && r.Round == round && strings.TrimSpace(r.Notes) != "" {
			who := "A reviewer"
			if r.Reviewer != nil {
				who = r.Reviewer.DisplayName
			}
			m.Notes = append(m.Notes, pages.ReviewItem{Verdict: verdict(r.Verdict), Who: who, Notes: r.Notes, When: pc.clock.time(r.CreatedAt)})
		}
	}
	return m
}

// savePublication is POST /p/:slug/publications/:id/edit: a version-checked save. Against a
// newer version nothing is overwritten: the editor comes back with the person's text still in
// it, what is saved now beside it, and the new version to save over once they have looked.
func (a *App) savePublication(c echo.Context) error {
	id := c.Param("id")
	if !uuidRE.MatchString(id) {
		return a.fail(c, errNotFound)
	}
	pc, err := a.loadProjects(c, c.Param("slug"))
	if err != nil {
		return a.fail(c, err)
	}
	var f draftForm
	if err := c.Bind(&f); err != nil {
		return a.fail(c, errBadForm)
	}
	var saved *client.Publication
	if strings.TrimSpace(f.Title) != "" {
		// The save goes first: the publication is read only when the answer is not a success.
		err = a.call(c, func(token string) error {
			var err error
			saved, err = a.api.UpdateDraft(ctx(c), token, id, f.ExpectedVersion, f.draft())
			return err
		})
		if err == nil {
			a.log.InfoContext(ctx(c), "handlers: draft saved", "project", pc.project.Slug)
			a.flash(c, layout.Flash{Kind: "success", Text: "Saved: version " + strconv.Itoa(saved.Version) + "."})
			return a.redirect(c, publicationURL(pc.project.Slug, id))
		}
		if e, ok := client.ErrorOf(err); !ok || e.Status >= 500 {
			return a.fail(c, err)
		}
	}
	p, perr := a.fetchPublication(c, pc, id)
	if perr != nil {
		return a.fail(c, perr)
	}
	m := a.existingEditor(c, pc, p, f)
	if err == nil { // no title: nothing was sent
		m.Errors["title"] = "Give it a title."
		m.Notice = &pages.Notice{Kind: "error", Title: "Nothing was saved.", Text: "Give it a title."}
		return a.render(c, http.StatusUnprocessableEntity, pages.Editor(m))
	}
	if client.StatusOf(err) == http.StatusConflict && p.Version != f.ExpectedVersion && editable(pc.role, p.Status) {
		// p was read just now: it is what is saved. Their text stays; the version moves on, so
		// saving again (after looking) is a deliberate choice.
		m.ExpectedVersion = strconv.Itoa(p.Version)
		m.Conflict = conflict(p, f)
		m.Notice = &pages.Notice{Kind: "error", Title: "Not saved: someone saved a newer version meanwhile.",
			Text: "Your text is kept below. Compare it with what is saved now, then save again."}
		return a.render(c, http.StatusConflict, pages.Editor(m))
	}
	return a.refusedDraft(c, m, err)
}

// conflict lists the fields where what is saved (p) differs from what the person wrote (f).
func conflict(p *client.Publication, f draftForm) *pages.ConflictModel {
	c := &pages.ConflictModel{Version: "version " + strconv.Itoa(p.Version)}
	for _, fd := range []struct{ name, saved, yours string }{
		{"Title", p.Title, f.Title}, {"Slug", p.Slug, f.Slug}, {"Summary", p.Summary, f.Summary}, {"Article", p.Body, f.Body},
	} {
		if fd.name == "Slug" && strings.TrimSpace(fd.yours) == "" {
			continue
		}
		if fd.saved != fd.yours {
			c.Fields = append(c.Fields, pages.ConflictField{Name: fd.name, Saved: fd.saved, Yours: fd.yours, Spans: spans(diff.Words(fd.saved, fd.yours))})
		}
	}
	return c
}

// previewDraft is POST …/new/preview and …/:id/edit/preview: the body rendered as the
// publication's page renders it. htmx (typing) gets the preview box; the Preview button
// without JS gets the whole editor back with the text kept and the preview shown.
func (a *App) previewDraft(c echo.Context) error {
	var f draftForm
	if err := c.Bind(&f); err != nil {
		return a.fail(c, errBadForm)
	}
	if wantsPart(c, "body-preview") {
		return a.render(c, http.StatusOK, pages.EditorPreviewPart(f.Body, true))
	}
	var m pages.EditorModel
	if c.Param("id") == "" {
		pc, err := a.loadProjects(c, c.Param("slug"))
		if err != nil {
			return a.fail(c, err)
		}
		m = a.newEditor(c, pc, f)
	} else {
		pc, p, err := a.loadPublication(c)
		if err != nil {
			return a.fail(c, err)
		}
		m = a.existingEditor(c, pc, p, f)
	}
	m.Preview, m.ShowPreview = f.Body, true
	return a.render(c, http.StatusOK, pages.Editor(m))
}

// confirmDelete is GET /p/:slug/publications/:id/delete: a confirmation page (it works
// without JS).
func (a *App) confirmDelete(c echo.Context) error {
	pc, p, err := a.loadPublication(c)
	if err != nil {
		return a.fail(c, err)
	}
	base := publicationURL(pc.project.Slug, p.ID)
	return a.render(c, http.StatusOK, pages.Confirm(pages.ConfirmModel{
		Page: a.frameSection(c, "Delete draft", pc, "queue"), Heading: "Delete “" + p.Title + "”?",
		Text:   "The draft and its promos are deleted for good. Only drafts that were never submitted can be deleted; one with a history is archived instead.",
		Action: base + "/delete", CSRF: str(stateOf(c).sess, keyCSRF), Confirm: "Delete draft", CancelURL: base,
	}))
}

// deletePublication is POST /p/:slug/publications/:id/delete.
func (a *App) deletePublication(c echo.Context) error {
	pc, err := a.loadProjects(c, c.Param("slug"))
	if err != nil {
		return a.fail(c, err)
	}
	id := c.Param("id")
	if !uuidRE.MatchString(id) {
		return a.fail(c, errNotFound)
	}
	err = a.call(c, func(token string) error { return a.api.DeleteDraft(ctx(c), token, id) })
	if e, ok := client.ErrorOf(err); ok && e.Status == http.StatusConflict {
		a.flash(c, layout.Flash{Kind: "error", Text: sentence(e.Message) + " " + sentence(e.Hint)})
		return a.redirect(c, publicationURL(pc.project.Slug, id))
	}
	if err != nil {
		return a.fail(c, err)
	}
	a.flash(c, layout.Flash{Kind: "success", Text: "Draft deleted."})
	return a.redirect(c, queueURL(pc.project.Slug))
}
