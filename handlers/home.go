package handlers

import (
	"net/http"
	"regexp"

	"github.com/labstack/echo/v4"

	"masthead/views/pages"
)

// slugRE is the shape of project slugs (projects.slug's check in the schema).
var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,62}$`)

// home is GET /: the remembered project's queue, else the first project's.
func (a *App) home(c echo.Context) error {
	pc, err := a.loadProjects(c, "")
	if err != nil {
		return a.fail(c, err)
	}
	if len(pc.all) == 0 {
		return a.render(c, http.StatusOK, pages.Error(pages.ErrorModel{
			Page:    a.frame(c, "No projects", pc),
			Heading: "No projects yet",
			Text:    "You are not a member of any project. Ask a project owner to add you.",
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
	return a.redirect(c, queueURL(slug))
}

// projectHome is GET /p/:slug: the project's queue.
func (a *App) projectHome(c echo.Context) error {
	if !slugRE.MatchString(c.Param("slug")) {
		return a.fail(c, errNotFound)
	}
	return a.redirect(c, queueURL(c.Param("slug")))
}
