package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/layout"
	"masthead/views/pages"
)

// showInvite is GET /invite/<token>, open to anyone holding the link: what it joins, and the
// form that accepts it. An unknown, used or expired link is a page that says so.
func (a *App) showInvite(c echo.Context) error {
	inv, err := a.api.LookupInvitation(ctx(c), c.Param("token"))
	if err != nil {
		return a.inviteFailed(c, err)
	}
	return a.render(c, http.StatusOK, pages.Invite(a.inviteModel(c, inv, "")))
}

func (a *App) inviteModel(c echo.Context, inv *client.Invitation, msg string) pages.InviteModel {
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return pages.InviteModel{Page: a.frame(c, "Join "+inv.ProjectName, nil), Token: c.Param("token"),
		ProjectName: inv.ProjectName, RoleLabel: roleLabel(inv.Role), Email: inv.Email,
		Until: newClock("UTC", a.now()).time(inv.ExpiresAt).Absolute, AccountExists: inv.AccountExists, Error: msg}
}

// inviteFailed answers a link the service refuses with the reason in words.
func (a *App) inviteFailed(c echo.Context, err error) error {
	if e, ok := client.ErrorOf(err); ok && (e.Status == http.StatusNotFound || e.Status == http.StatusForbidden) {
		return a.render(c, e.Status, pages.Error(pages.ErrorModel{Page: a.frame(c, "Invitation not valid", nil),
			Heading: "This invitation cannot be used", Text: sentence(e.Message) + " Ask the project's owner for a new link.",
			BackURL: "/login", BackLabel: "Go to sign in"}))
	}
	return a.fail(c, err)
}

// acceptInvite is POST /invite/<token>: the service makes the account (or checks the existing
// one's password), joins the project and starts a session, which becomes this browser's. The
// acceptance answers with the invitation, so only a refused one is looked up again, to show the
// form with the refusal: each call takes a token of the service's rate limit.
func (a *App) acceptInvite(c echo.Context) error {
	token := c.Param("token")
	s, inv, err := a.api.AcceptInvitation(ctx(c), token, c.FormValue("password"), strings.TrimSpace(c.FormValue("name")))
	if e, ok := client.ErrorOf(err); ok && (e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity) {
		inv, err := a.api.LookupInvitation(ctx(c), token)
		if err != nil {
			return a.inviteFailed(c, err)
		}
		return a.render(c, http.StatusUnprocessableEntity, pages.Invite(a.inviteModel(c, inv, sentence(e.Message))))
	} else if err != nil {
		return a.inviteFailed(c, err)
	}
	st := stateOf(c)
	st.signOut() // a new session: whoever was signed in in this browser is not any more
	storeTokens(st, s)
	a.log.InfoContext(ctx(c), "handlers: invitation accepted", "user_id", s.User.ID, "project", inv.ProjectSlug)
	a.flash(c, layout.Flash{Kind: "success", Text: "Welcome to " + inv.ProjectName + ". You joined as " + roleLabel(inv.Role) + "."})
	return a.redirect(c, startPage(inv.ProjectSlug, inv.Role))
}
