package handlers

import (
	"net/http"
	"strings"
	"time"

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
		return a.fail(c, &client.Error{Status: http.StatusBadRequest, Message: "the form could not be read"})
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

	err = a.call(c, func(token string) error {
		if rpc == client.RPCAddReview {
			_, err := a.api.AddReview(ctx(c), token, id, f.Note)
			return err
		}
		_, err := a.api.Transition(ctx(c), token, rpc, client.TransitionArgs{
			PublicationID: id, Note: f.Note, ScheduledFor: when, ExpectedVersion: f.ExpectedVersion,
		})
		return err
	})
	if err == nil {
		s, _ := stepFor(rpc, "")
		done := s.done
		a.log.InfoContext(ctx(c), "handlers: workflow action", "rpc", rpc, "project", pc.project.Slug)
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
		echoed.notice = &pages.Notice{Kind: "error", Title: "Nothing was changed", Text: sentence(e.Message) + " " + e.Hint}
		return a.actionAnswer(c, pc, id, f, http.StatusUnprocessableEntity, echoed)
	default:
		return a.fail(c, err)
	}
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
	if _, ok := stepFor(rpc, ""); !ok {
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

// sentence capitalises a service message and ends it with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
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
