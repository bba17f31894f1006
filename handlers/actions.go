package handlers

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/layout"
	"masthead/views/pages"
)

// actionForm is what an action form posts.
type actionForm struct {
	Note            string `form:"note"`
	ExpectedVersion int    `form:"expected_version"`
	ScheduledFor    string `form:"scheduled_for"` // datetime-local in the project's timezone
	Return          string `form:"return"`        // "schedule" or "schedule-all": back to that page
	Confirmed       string `form:"confirmed"`     // "1" once the person confirmed a step that asks first
	Was             string `form:"was"`           // unschedule: the time it was scheduled for, to undo to
}

// act is POST /p/:slug/publications/:id/actions/:rpc. It calls the workflow RPC with the
// version the person saw, then shows the service's answer: the fresh panel (htmx) or the page
// (plain form, after a redirect). A conflict shows what changed and the current state.
func (a *App) act(c echo.Context) error {
	rpc := c.Param("rpc")
	if _, ok := stepFor(rpc, ""); !ok || !uuidRE.MatchString(c.Param("id")) {
		return a.fail(c, errNotFound)
	}
	var f actionForm
	if err := c.Bind(&f); err != nil {
		return a.fail(c, errBadForm)
	}
	f.Note = strings.TrimSpace(f.Note)
	pc, err := a.loadProjects(c, c.Param("slug"))
	if err != nil {
		return a.fail(c, err)
	}
	id := c.Param("id")
	echoed := formEcho{rpc: rpc, note: f.Note, when: f.ScheduledFor}

	// Checks a person can fix before anything is sent; the service checks them again.
	var when time.Time
	if rpc == client.RPCSchedule {
		when, err = time.ParseInLocation(dateTimeInput, f.ScheduledFor, pc.clock.loc)
		if err != nil { // a datetime-local with seconds (step below a minute) is as valid
			when, err = time.ParseInLocation(dateTimeInput+":05", f.ScheduledFor, pc.clock.loc)
		}
		switch {
		case err != nil:
			echoed.whenErr = "Enter a date and time."
		case !when.After(a.now()):
			echoed.whenErr = "Choose a time in the future."
		}
	}
	if (rpc == client.RPCRequestChanges || rpc == client.RPCAddReview || rpc == client.RPCReopen) && f.Note == "" {
		echoed.noteErr = "Write a note: say what needs to change."
		switch rpc {
		case client.RPCAddReview:
			echoed.noteErr = "Write the comment first."
		case client.RPCReopen:
			echoed.noteErr = "Write a note: say why it goes back to draft."
		}
	}
	if echoed.whenErr != "" || echoed.noteErr != "" {
		echoed.notice = &pages.Notice{Kind: "error", Title: "Nothing was changed", Text: firstNonEmpty(echoed.noteErr, echoed.whenErr)}
		return a.actionAnswer(c, pc, id, f, http.StatusUnprocessableEntity, echoed)
	}
	if confirmText(rpc, "") != "" && f.Confirmed != "1" {
		if asked, err := a.confirmAction(c, pc, id, rpc, f); asked || err != nil {
			return err
		}
	}

	var moved *client.Publication
	err = a.call(c, func(token string) error {
		if rpc == client.RPCAddReview {
			_, err := a.api.AddReview(ctx(c), token, id, f.Note)
			return err
		}
		var err error
		moved, err = a.api.Transition(ctx(c), token, rpc, client.TransitionArgs{
			PublicationID: id, Note: f.Note, ScheduledFor: when, ExpectedVersion: f.ExpectedVersion,
		})
		return err
	})
	if err == nil {
		s, _ := stepFor(rpc, "")
		done := s.done
		a.log.InfoContext(ctx(c), "handlers: workflow action", "rpc", rpc, "project", pc.project.Slug)
		if rpc == client.RPCUnschedule && f.Was != "" && f.Return == "" {
			return a.undoable(c, pc, id, moved.Version, f.Was, done)
		}
		return a.actionAnswer(c, pc, id, f, http.StatusOK, formEcho{
			notice: &pages.Notice{Kind: "success", Title: done, Text: "The history below shows the change."}, announce: done,
		})
	}
	e, ok := client.ErrorOf(err)
	if !ok {
		return a.fail(c, err)
	}
	switch e.Status {
	case http.StatusConflict:
		echoed.notice = &pages.Notice{Kind: "error", Title: "Someone got there first",
			Text: sentence(e.Message) + " Nothing was changed. Below is its current state: decide again."}
		echoed.note, echoed.when = f.Note, f.ScheduledFor
		echoed.announce = "Conflict: " + e.Message
		return a.actionAnswer(c, pc, id, f, http.StatusConflict, echoed)
	case http.StatusForbidden:
		echoed.notice = &pages.Notice{Kind: "error", Title: "Not allowed", Text: sentence(e.Message) + " Nothing was changed."}
		return a.actionAnswer(c, pc, id, f, http.StatusForbidden, echoed)
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		text := strings.TrimSpace(sentence(e.Message) + " " + e.Hint)
		if rest, ok := strings.CutPrefix(e.Message, "scheduled_for must be "); ok && rpc == client.RPCSchedule {
			// The service bounds the time in words for API callers, naming its argument and the
			// setting behind the bound ("… within 5 years from now (masthead.schedule_horizon)").
			rest, _, _ = strings.Cut(rest, " (")
			echoed.whenErr = "Choose a time " + strings.TrimPrefix(rest, "a time ") + "."
			echoed.when = f.ScheduledFor
			text = echoed.whenErr
		} else if e.Code == "PT422" {
			// Not ready: the service's hint points API callers at readiness(); the list is on the
			// publication's page.
			text = sentence(e.Message) + " Fix these on the publication, then try again."
		}
		echoed.notice = &pages.Notice{Kind: "error", Title: "Nothing was changed", Text: text}
		return a.actionAnswer(c, pc, id, f, http.StatusUnprocessableEntity, echoed)
	default:
		return a.fail(c, err)
	}
}

// confirmAction asks before a step that is hard to take back, as a page of its own; the form on
// it sends the same step again with what the person filled in, confirmed. (With JS, htmx asks
// in a dialog and sends confirmed=1 itself.) A step not offered to the person is not asked
// about (asked is false): the service refuses it in words.
func (a *App) confirmAction(c echo.Context, pc *projectContext, id, rpc string, f actionForm) (asked bool, err error) {
	p, err := a.fetchPublication(c, pc, id)
	if err != nil {
		return true, a.fail(c, err)
	}
	if !slices.ContainsFunc(offered(pc.role, p.Status, p.AuthorID == pc.userID), func(s step) bool { return s.rpc == rpc }) {
		return false, nil
	}
	s, _ := stepFor(rpc, p.Status)
	base := publicationURL(pc.project.Slug, id)
	return true, a.render(c, http.StatusOK, pages.Confirm(pages.ConfirmModel{
		Page: a.frameSection(c, s.label, pc, "queue"), Heading: confirmText(rpc, p.Title),
		Text:   "Nothing happens until you confirm.",
		Action: base + "/actions/" + rpc, CSRF: str(stateOf(c).sess, keyCSRF), Confirm: s.label, CancelURL: base,
		Hidden: map[string]string{"note": f.Note, "expected_version": strconv.Itoa(f.ExpectedVersion), "confirmed": "1", "return": f.Return},
	}))
}

// undoable answers an unschedule with the page (or panel) at once, its notice offering to
// schedule again at the old time: a redirect could not carry the form.
func (a *App) undoable(c echo.Context, pc *projectContext, id string, version int, was, done string) error {
	p, err := a.fetchPublication(c, pc, id)
	if err != nil {
		return a.fail(c, err)
	}
	undo := &pages.Action{Key: "undo", Label: "Undo: schedule it again for " + was, URL: publicationURL(pc.project.Slug, id) + "/actions/" + client.RPCSchedule,
		CSRF: str(stateOf(c).sess, keyCSRF), ExpectedVersion: strconv.Itoa(version), Hidden: map[string]string{"scheduled_for": was}}
	echoed := formEcho{notice: &pages.Notice{Kind: "success", Title: done, Text: "The history below shows the change.", Undo: undo}, announce: done}
	if wantsPart(c, "workflow") {
		return a.render(c, http.StatusOK, pages.WorkflowPart(a.workflow(c, pc, p, echoed)))
	}
	return a.render(c, http.StatusOK, pages.Detail(a.detail(c, pc, p, echoed)))
}

// actionAnswer shows the outcome of an action with the publication as it is now: the panel
// for htmx, the page for a plain form (a redirect after success, so reload does not resend).
func (a *App) actionAnswer(c echo.Context, pc *projectContext, id string, f actionForm, status int, echoed formEcho) error {
	if f.Return == "schedule" || f.Return == "schedule-all" {
		kind, text := "success", ""
		if echoed.notice != nil {
			text = echoed.notice.Title + " " + echoed.notice.Text
			kind = echoed.notice.Kind
		}
		if status == http.StatusOK {
			text = echoed.announce
		}
		a.flash(c, layout.Flash{Kind: kind, Text: strings.TrimSpace(text)})
		if f.Return == "schedule-all" {
			return a.redirect(c, "/schedule")
		}
		return a.redirect(c, scheduleURL(pc.project.Slug))
	}
	if status == http.StatusOK && !isHTMX(c) {
		a.flash(c, layout.Flash{Kind: "success", Text: echoed.announce})
		return a.redirect(c, publicationURL(pc.project.Slug, id))
	}
	p, err := a.fetchPublication(c, pc, id)
	if err != nil {
		return a.fail(c, err)
	}
	if wantsPart(c, "workflow") {
		return a.render(c, status, pages.WorkflowPart(a.workflow(c, pc, p, echoed)))
	}
	return a.render(c, status, pages.Detail(a.detail(c, pc, p, echoed)))
}

// preview is POST /p/:slug/publications/:id/preview/:rpc: the note rendered as markdown, as
// the panel's preview box (htmx) or the page with the note kept in its field (plain form).
func (a *App) preview(c echo.Context) error {
	rpc := c.Param("rpc")
	if _, ok := stepFor(rpc, ""); !ok && rpc != reviewKey {
		return a.fail(c, errNotFound)
	}
	note := strings.TrimSpace(c.FormValue("note"))
	if wantsPart(c, "preview-"+rpc) {
		return a.render(c, http.StatusOK, pages.NotePreviewPart(rpc, note))
	}
	pc, p, err := a.loadPublication(c)
	if err != nil {
		return a.fail(c, err)
	}
	return a.render(c, http.StatusOK, pages.Detail(a.detail(c, pc, p, formEcho{rpc: rpc, note: note, preview: true})))
}

// flash stores a message for the next page.
func (a *App) flash(c echo.Context, f layout.Flash) {
	if f.Text == "" {
		return
	}
	st := stateOf(c)
	st.sess.AddFlash(f.Kind + "\x00" + f.Text)
	st.dirty = true
}

// takeFlashes moves stored messages into the page.
func (a *App) takeFlashes(c echo.Context, p *layout.Page) {
	st := stateOf(c)
	for _, v := range st.sess.Flashes() {
		st.dirty = true
		s, _ := v.(string)
		kind, text, ok := strings.Cut(s, "\x00")
		if ok {
			p.Flashes = append(p.Flashes, layout.Flash{Kind: kind, Text: text})
		}
	}
}

// sentence capitalises a service message and ends it with a full stop. A message that starts
// with something other than a word (an address, a slug: "editor@northwind.test is already a
// member") keeps it as written.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	first, _, _ := strings.Cut(s, " ")
	first = strings.TrimRight(first, ",:;.!?")
	if strings.IndexFunc(first, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) < 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = string(unicode.ToUpper(r)) + s[size:]
	}
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
