package handlers

import (
	"github.com/labstack/echo/v4"

	"masthead/internal/client"
)

// projectContext is the person's projects and, on project pages, the current one with their
// role in it. One service call fills it.
type projectContext struct {
	userID  string
	all     []client.Project
	project *client.Project
	role    string
	clock   clock
}

// loadProjects fetches the person's projects. When slug is set it must be one of them (else
// errNotFound), becomes the current project and is remembered in the session for "/".
func (a *App) loadProjects(c echo.Context, slug string) (*projectContext, error) {
	u := userOf(c)
	var all []client.Project
	err := a.call(c, func(token string) error {
		var err error
		all, err = a.api.Projects(ctx(c), token)
		return err
	})
	if err != nil {
		return nil, err
	}
	pc := &projectContext{userID: u.ID, all: all, clock: newClock("UTC", a.now())}
	if slug == "" {
		return pc, nil
	}
	for i := range all {
		if all[i].Slug == slug {
			pc.project = &all[i]
			pc.role = all[i].RoleOf(u.ID)
			pc.clock = newClock(all[i].Timezone, a.now())
			stateOf(c).set(keyProject, slug)
			return pc, nil
		}
	}
	return nil, errNotFound
}

// URLs of the dashboard, built in one place.
func queueURL(slug string) string    { return "/p/" + slug + "/queue" }
func scheduleURL(slug string) string { return "/p/" + slug + "/schedule" }
func publicationURL(slug, id string) string {
	return "/p/" + slug + "/publications/" + id
}
func mediaURL(slug, id string) string { return "/p/" + slug + "/media/" + id }
