package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/layout"
	"masthead/views/pages"
)

// errNotFound is a page that does not exist or that the person may not see: the two are
// answered alike, so the dashboard never confirms that something exists.
var errNotFound = errors.New("handlers: not found")

// errBadForm answers a form that could not be decoded (a hand-made request, a wrong type).
var errBadForm = &client.Error{Status: http.StatusBadRequest, Message: "the form could not be read"}

// fail answers err as a page: the service's refusals in words, anything else as a failure
// whose cause is logged and never shown.
func (a *App) fail(c echo.Context, err error) error {
	if errors.Is(err, errSessionEnded) {
		return nil
	}
	m := pages.ErrorModel{Page: a.frame(c, "", nil), BackURL: "/", BackLabel: "Go to your queue"}
	status := http.StatusInternalServerError
	e, isService := client.ErrorOf(err)
	switch {
	case errors.Is(err, errNotFound) || (isService && (e.Status == http.StatusNotFound || e.Status == http.StatusNotAcceptable)):
		status = http.StatusNotFound
		m.Heading = "Not found"
		m.Text = "This page does not exist, or you do not have access to it."
	case isService && (e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable):
		// Busy or briefly unavailable: say when to try again; the session stays as it is.
		status = e.Status
		wait := max(e.RetryAfter, time.Second)
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())))
		m.Heading = "Masthead is busy"
		if e.Status == http.StatusServiceUnavailable {
			m.Heading = "Masthead is briefly unavailable"
		}
		m.Text = fmt.Sprintf("Nothing was lost and you are still signed in. Try again in %d s.", int(wait.Seconds()))
		m.BackURL, m.BackLabel = c.Request().URL.RequestURI(), "Try again"
		if c.Request().Method != http.MethodGet {
			m.BackURL = "/"
		}
	case isService && e.Status == http.StatusForbidden:
		status = http.StatusForbidden
		m.Heading = "Not allowed"
		m.Text = "You do not have permission to do that: " + e.Message + "."
	case isService && e.Status < 500:
		status = e.Status
		m.Heading = "That did not work"
		m.Text = e.Message
	case isService:
		status = http.StatusBadGateway
		m.Heading = "The service had a problem"
		m.Text = "Masthead's service could not answer just now. Try again in a moment."
		a.log.ErrorContext(ctx(c), "handlers: service error", "route", c.Path(), "status", e.Status, "code", e.Code)
	case errors.Is(err, ctx(c).Err()):
		return nil // the browser went away
	default:
		if !isService && client.StatusOf(err) == 0 && isNetwork(err) {
			status = http.StatusBadGateway
			m.Heading = "The service is not reachable"
			m.Text = "Masthead's service could not be reached. Try again in a moment."
		} else {
			m.Heading = "Something went wrong"
			m.Text = "The page could not be shown. The problem has been logged."
		}
		a.log.ErrorContext(ctx(c), "handlers: request failed", "route", c.Path(), "err", err)
	}
	m.Page.Title = m.Heading
	if isHTMX(c) {
		// The error replaces the page's content, not the small part the request aimed at.
		c.Response().Header().Set("HX-Retarget", "#main")
		c.Response().Header().Set("HX-Reswap", "outerHTML")
		c.Response().Header().Set("HX-Reselect", "#main")
	}
	return a.render(c, status, pages.Error(m))
}

func isNetwork(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne)
}

// frameSection is frame with the active navigation entry set.
func (a *App) frameSection(c echo.Context, title string, pc *projectContext, section string) layout.Page {
	p := a.frame(c, title, pc)
	p.Section = section
	return p
}

// frame is the page frame for a request: the signed-in name, the switcher and the CSRF token.
func (a *App) frame(c echo.Context, title string, pc *projectContext) layout.Page {
	st := stateOf(c)
	p := layout.Page{Title: title}
	if st != nil {
		p.CSRF = str(st.sess, keyCSRF)
		a.takeFlashes(c, &p)
	}
	if u := userOf(c); u != nil {
		p.User = u.Name
		if p.User == "" {
			p.User = u.Email
		}
	}
	if pc != nil {
		for _, pr := range pc.all {
			l := layout.ProjectLink{
				Slug: pr.Slug, Name: pr.Name, Role: pr.RoleOf(pc.userID),
				QueueURL: queueURL(pr.Slug), ScheduleURL: scheduleURL(pr.Slug),
				Current: pc.project != nil && pr.ID == pc.project.ID,
			}
			if l.Role == roleOwner {
				l.SettingsURL = settingsURL(pr.Slug)
			}
			p.Projects = append(p.Projects, l)
			if l.Current {
				cur := l
				p.Project = &cur
			}
		}
	}
	return p
}
