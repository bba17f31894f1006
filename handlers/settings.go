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

func settingsURL(slug string) string { return "/p/" + slug + "/settings" }

// keyInvite carries the link of an invitation just made to the settings page it redirects to,
// which shows it once: the service never gives the token out again.
const keyInvite = "invite"

// settings is GET /p/<slug>/settings, for the project's owners. Someone else is told they may
// not (the service would refuse their changes anyway, and shows them no invitations).
func (a *App) settings(c echo.Context) error {
	pc, err := a.loadProjects(c, c.Param("slug"))
	if err != nil {
		return a.fail(c, err)
	}
	if pc.role != roleOwner {
		return a.fail(c, &client.Error{Status: http.StatusForbidden, Message: "only the project's owners manage its settings"})
	}
	var (
		members  []client.MemberRow
		invites  []client.PendingInvitation
		channels []client.Channel
	)
	err = a.call(c, func(token string) error {
		var err error
		if members, err = a.api.Members(ctx(c), token, pc.project.ID); err != nil {
			return err
		}
		invites, err = a.api.Invitations(ctx(c), token, pc.project.ID)
		return err
	})
	if err == nil {
		channels, err = a.channels(c)
	}
	if err != nil {
		return a.fail(c, err)
	}
	p := pc.project
	m := pages.SettingsModel{Page: a.frameSection(c, "Settings · "+p.Name, pc, "settings"), Slug: p.Slug,
		Roles: roles, Name: p.Name, Timezone: p.Timezone}
	st := stateOf(c)
	if v, ok := st.sess.Values[keyInvite].([]string); ok && len(v) == 3 {
		m.InviteLink, m.InviteEmail, m.InviteExpires = v[0], v[1], v[2]
		delete(st.sess.Values, keyInvite)
		st.dirty = true
	}
	for _, mb := range members {
		name := mb.Profile.DisplayName
		if name == "" {
			name = mb.Profile.Email
		}
		m.Members = append(m.Members, pages.SettingsMember{UserID: mb.UserID, Name: name, Email: mb.Profile.Email,
			Role: mb.Role, RoleLabel: roleLabel(mb.Role), Since: mb.CreatedAt.In(pc.clock.loc).Format("2 Jan 2006"), You: mb.UserID == pc.userID})
	}
	for _, i := range invites {
		m.Invitations = append(m.Invitations, pages.SettingsInvitation{ID: i.ID, Email: i.Email,
			RoleLabel: roleLabel(i.Role), Expires: pc.clock.time(i.ExpiresAt).Absolute})
	}
	for _, ch := range channels {
		m.Channels = append(m.Channels, pages.ChannelOption{Slug: ch.Slug, Name: ch.Name, Checked: slices.Contains(p.DefaultChannels, ch.Slug)})
	}
	for _, col := range p.Collections {
		m.Collections = append(m.Collections, pages.SettingsCollection{ID: col.ID, Name: col.Name, Slug: col.Slug, Kind: col.Kind})
	}
	return a.render(c, http.StatusOK, pages.Settings(m))
}

// settingsChange runs one change of a project's settings as the signed-in person and returns
// to the settings page with what happened. The service's refusals (not an owner, the last
// owner, a bad value) are shown there in its words; anything else is a failure page.
func (a *App) settingsChange(c echo.Context, done string, change func(token string, p *client.Project) error) error {
	return a.settingsChangeThen(c, change, func(pc *projectContext) (string, string) {
		return done, settingsURL(pc.project.Slug)
	})
}

// settingsChangeThen is settingsChange whose success says then what happened and where to go
// next: a change to the person's own membership can leave them without the settings page.
func (a *App) settingsChangeThen(c echo.Context, change func(token string, p *client.Project) error,
	then func(pc *projectContext) (done, next string)) error {
	for _, name := range []string{"uid", "id"} {
		// A member, invitation or collection is named by its id: anything else is no such thing.
		if v := c.Param(name); v != "" && !uuidRE.MatchString(v) {
			return a.fail(c, errNotFound)
		}
	}
	pc, err := a.loadProjects(c, c.Param("slug"))
	if err != nil {
		return a.fail(c, err)
	}
	err = a.call(c, func(token string) error { return change(token, pc.project) })
	if e, ok := client.ErrorOf(err); ok && e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests {
		a.flash(c, layout.Flash{Kind: "error", Text: sentence(e.Message)})
		return a.redirect(c, settingsURL(pc.project.Slug))
	} else if err != nil {
		return a.fail(c, err)
	}
	done, next := then(pc)
	a.flash(c, layout.Flash{Kind: "success", Text: done})
	return a.redirect(c, next)
}

// invite is POST /p/<slug>/settings/invitations: a link for email to join with role.
func (a *App) invite(c echo.Context) error {
	email, role := strings.TrimSpace(c.FormValue("email")), c.FormValue("role")
	return a.settingsChange(c, "Invitation created for "+email+" as "+roleLabel(role)+".", func(token string, p *client.Project) error {
		inv, err := a.api.InviteMember(ctx(c), token, p.ID, email, role)
		if err != nil {
			return err
		}
		link := c.Scheme() + "://" + c.Request().Host + "/invite/" + inv.Token
		stateOf(c).set(keyInvite, []string{link, email, newClock(p.Timezone, a.now()).time(inv.ExpiresAt).Absolute})
		a.log.InfoContext(ctx(c), "handlers: invitation created", "project", p.Slug, "role", role)
		return nil
	})
}

// setRole is POST /p/<slug>/settings/members/<uid>/role. An owner who steps down (another owner
// remains: the database keeps the last) may no longer see the settings, so they go on to the
// project's queue, told why.
func (a *App) setRole(c echo.Context) error {
	role := c.FormValue("role")
	return a.settingsChangeThen(c, func(token string, p *client.Project) error {
		return a.api.SetMemberRole(ctx(c), token, p.ID, c.Param("uid"), role)
	}, func(pc *projectContext) (string, string) {
		if c.Param("uid") == pc.userID && role != "owner" {
			return "You are now " + withArticle(strings.ToLower(roleLabel(role))) + " of " + pc.project.Name +
				"; only its owners manage its settings.", queueURL(pc.project.Slug)
		}
		return "Role changed to " + roleLabel(role) + ".", settingsURL(pc.project.Slug)
	})
}

// removeMember is POST /p/<slug>/settings/members/<uid>/remove. An owner who removes themselves
// has left the project: they go to their start page, which no longer lists it.
func (a *App) removeMember(c echo.Context) error {
	return a.settingsChangeThen(c, func(token string, p *client.Project) error {
		return a.api.RemoveMember(ctx(c), token, p.ID, c.Param("uid"))
	}, func(pc *projectContext) (string, string) {
		if c.Param("uid") == pc.userID {
			return "You left " + pc.project.Name + ".", "/"
		}
		return "Member removed.", settingsURL(pc.project.Slug)
	})
}

// revokeInvitation is POST /p/<slug>/settings/invitations/<id>/revoke.
func (a *App) revokeInvitation(c echo.Context) error {
	return a.settingsChange(c, "Invitation revoked; its link no longer works.", func(token string, p *client.Project) error {
		return a.api.RevokeInvitation(ctx(c), token, p.ID, c.Param("id"))
	})
}

// saveProject is POST /p/<slug>/settings/project: name, time zone and default channels.
func (a *App) saveProject(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return a.fail(c, errBadForm)
	}
	u := client.ProjectUpdate{Name: strings.TrimSpace(form.Get("name")), Timezone: strings.TrimSpace(form.Get("timezone")),
		DefaultChannels: form["channels"]}
	return a.settingsChange(c, "Project saved.", func(token string, p *client.Project) error {
		return a.api.UpdateProject(ctx(c), token, p.ID, u)
	})
}

// addCollection is POST /p/<slug>/settings/collections.
func (a *App) addCollection(c echo.Context) error {
	name, slug, kind := strings.TrimSpace(c.FormValue("name")), strings.TrimSpace(c.FormValue("slug")), c.FormValue("kind")
	return a.settingsChange(c, "Collection "+name+" added.", func(token string, p *client.Project) error {
		return a.api.AddCollection(ctx(c), token, p.ID, slug, name, kind)
	})
}

// removeCollection is POST /p/<slug>/settings/collections/<id>/remove; one that holds
// publications is refused by the database (they would lose it).
func (a *App) removeCollection(c echo.Context) error {
	return a.settingsChange(c, "Collection removed.", func(token string, p *client.Project) error {
		err := a.api.RemoveCollection(ctx(c), token, p.ID, c.Param("id"))
		if e, ok := client.ErrorOf(err); ok && e.Status == http.StatusConflict {
			e.Message = "that collection still holds publications: move them to another collection first"
		}
		return err
	})
}

// withArticle puts "a" or "an" before a role's name: "an editor", "a reviewer".
func withArticle(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}
