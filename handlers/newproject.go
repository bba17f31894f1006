package handlers

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/layout"
	"masthead/views/pages"
)

// newProject is GET /projects/new: the form that starts a project.
func (a *App) newProject(c echo.Context) error {
	return a.showNewProject(c, http.StatusOK, pages.NewProjectModel{Timezone: "UTC"}, nil)
}

func (a *App) showNewProject(c echo.Context, status int, m pages.NewProjectModel, checked []string) error {
	pc, err := a.loadProjects(c, "")
	if err != nil {
		return a.fail(c, err)
	}
	channels, err := a.channels(c)
	if err != nil {
		return a.fail(c, err)
	}
	m.Page = a.frame(c, "Start a project", pc)
	for _, ch := range channels {
		m.Channels = append(m.Channels, pages.ChannelOption{Slug: ch.Slug, Name: ch.Name, Checked: slices.Contains(checked, ch.Slug)})
	}
	return a.render(c, status, pages.NewProject(m))
}

// createProject is POST /projects/new: create_project as the signed-in person, who becomes the
// owner and continues on the new project's settings to invite the others.
func (a *App) createProject(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return a.fail(c, errBadForm)
	}
	m := pages.NewProjectModel{Slug: strings.TrimSpace(form.Get("slug")), Name: strings.TrimSpace(form.Get("name")),
		Timezone: strings.TrimSpace(form.Get("timezone"))}
	var p *client.Project
	err = a.call(c, func(token string) error {
		var err error
		p, err = a.api.CreateProject(ctx(c), token, m.Slug, m.Name, m.Timezone, form["channels"])
		return err
	})
	if e, ok := client.ErrorOf(err); ok && e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests && e.Status != http.StatusUnauthorized {
		m.Error = sentence(e.Message)
		return a.showNewProject(c, http.StatusUnprocessableEntity, m, form["channels"])
	} else if err != nil {
		return a.fail(c, err)
	}
	a.log.InfoContext(ctx(c), "handlers: project created", "project", p.Slug, "user_id", userOf(c).ID)
	a.flash(c, layout.Flash{Kind: "success", Text: p.Name + " is started and you are its owner. Invite the others here."})
	return a.redirect(c, settingsURL(p.Slug))
}
