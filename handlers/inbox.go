package handlers

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/pages"
)

// inboxReasons are my_inbox()'s reasons in the order the page lists them, each with its heading
// and the place on the publication's page where the person acts on it.
var inboxReasons = []struct{ key, heading, anchor string }{
	{"review", "Waiting for your review", "#changes"},
	{"changes_requested", "Changes requested on your work", "#workflow"},
	{"overdue", "Overdue: past their time, not published", "#readiness"},
	{"due_not_ready", "Due within a day, not ready", "#readiness"},
	{"needs_date", "Approved, waiting for a date", "#workflow"},
	{"stale_draft", "Your drafts untouched for a week", ""},
}

// inbox is GET /inbox: what waits on the person across their projects, in one service call
// (plus the projects, for the frame).
func (a *App) inbox(c echo.Context) error {
	pc, err := a.loadProjects(c, "")
	if err != nil {
		return a.fail(c, err)
	}
	entries, err := a.inboxEntries(c, inboxPerReason)
	if err != nil {
		return a.fail(c, err)
	}
	var seen *time.Time
	err = a.call(c, func(token string) error {
		var err error
		seen, err = a.api.Visit(ctx(c), token, "inbox")
		return err
	})
	if err != nil {
		return a.fail(c, err)
	}
	names := map[string]string{}
	for _, p := range pc.all {
		names[p.ID] = p.Name
	}
	m := pages.InboxModel{Page: a.frameSection(c, "Waiting on me", pc, "inbox"), Empty: len(entries) == 0}
	for _, r := range inboxReasons {
		g := inboxGroup{InboxGroup: pages.InboxGroup{Key: r.key, Heading: r.heading}}
		for _, e := range entries {
			if e.Reason != r.key {
				continue
			}
			g.total = e.ReasonTotal
			g.Entries = append(g.Entries, pages.InboxEntry{
				Title: e.Title, URL: publicationURL(e.ProjectSlug, e.PublicationID) + r.anchor,
				Project: names[e.ProjectID], Status: status(e.Status), Detail: e.Detail, Since: pc.clock.time(e.Since),
				New: seen != nil && e.Since.After(*seen),
			})
		}
		if len(g.Entries) > 0 {
			g.Count = strconv.Itoa(g.total)
			if more := g.total - len(g.Entries); more > 0 {
				g.More = strconv.Itoa(more) + " more not shown: the longest waiting come first."
			}
			m.Groups = append(m.Groups, g.InboxGroup)
		}
	}
	return a.render(c, http.StatusOK, pages.Inbox(m))
}

// inboxCount is GET /inbox/count, the banner's count, which htmx loads after each page.
func (a *App) inboxCount(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "private, no-store")
	// Every total comes with each reason's first entry, so one is all the count asks for: the
	// rest would be written, sent and decoded for nothing, after every page.
	entries, err := a.inboxEntries(c, 1)
	if err != nil {
		// The count is a courtesy: a failure leaves the banner without it, the page intact.
		a.log.WarnContext(ctx(c), "handlers: inbox count unavailable", "err", err)
		return a.render(c, http.StatusOK, pages.InboxCount(""))
	}
	return a.render(c, http.StatusOK, pages.InboxCount(countLabel(client.InboxTotal(entries))))
}

// countLabel is the banner's count of n: nothing at all when nothing waits, as a "0" pill beside
// every page's link would only be noise.
func countLabel(n int) string {
	if n == 0 {
		return ""
	}
	return thousands(n)
}

// inboxGroup is a group being filled, with how many wait for its reason in all.
type inboxGroup struct {
	pages.InboxGroup
	total int
}

// inboxPerReason is how many entries of each reason the inbox shows; the count covers all.
const inboxPerReason = 50

// inboxEntries is what waits on the person, at most perReason entries of each reason, each
// with its reason's total.
func (a *App) inboxEntries(c echo.Context, perReason int) ([]client.InboxEntry, error) {
	var out []client.InboxEntry
	err := a.call(c, func(token string) error {
		var err error
		out, err = a.api.Inbox(ctx(c), token, perReason)
		return err
	})
	return out, err
}
