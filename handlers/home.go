package handlers

import (
	"net/http"
	"regexp"

	"github.com/labstack/echo/v4"

	"masthead/views/pages"
)

// slugRE is the shape of project slugs (projects.slug's check in the schema).
var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,62}$`)

// home is GET /: a start page for the person's role in the remembered project (else the
// first): editors land on what they are writing (their drafts and what came back with changes
// requested), reviewers on what is in review that someone else wrote, leads and owners on the
// schedule (approved items waiting for a date, and overdue ones), viewers on the queue.
func (a *App) home(c echo.Context) error {
	pc, err := a.loadProjects(c, "")
	if err != nil {
		return a.fail(c, err)
	}
	if len(pc.all) == 0 {
		return a.render(c, http.StatusOK, pages.Error(pages.ErrorModel{
			Page:    a.frame(c, "No projects", pc),
			Heading: "No projects yet",
			Text:    "You are not a member of any project. Ask a project's owner to invite you, or start one of your own.",
			BackURL: "/projects/new", BackLabel: "Start a project",
		}))
	}
	slug := pc.all[0].Slug
	if remembered := str(stateOf(c).sess, keyProject); remembered != "" {
		for _, p := range pc.all {
			if p.Slug == remembered {
				slug = remembered
			}
		}
	}
	role := ""
	for _, p := range pc.all {
		if p.Slug == slug {
			role = p.RoleOf(pc.userID)
		}
	}
	return a.redirect(c, startPage(slug, role))
}

// startPage is where role starts in the project slug.
func startPage(slug, role string) string {
	switch role {
	case "editor":
		return queueURL(slug) + "?status=writing&author=" + authorMe
	case "reviewer":
		return queueURL(slug) + "?author=" + authorOthers
	case "lead", "owner":
		return scheduleURL(slug)
	}
	return queueURL(slug)
}

// projectHome is GET /p/:slug: the project's queue.
func (a *App) projectHome(c echo.Context) error {
	if !slugRE.MatchString(c.Param("slug")) {
		return a.fail(c, errNotFound)
	}
	return a.redirect(c, queueURL(c.Param("slug")))
}
