package handlers

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/layout"
	"masthead/views/pages"
)

// apps is GET /account/apps: the apps the person connected through the consent page.
func (a *App) apps(c echo.Context) error {
	var gs []client.OAuthGrant
	err := a.call(c, func(token string) error {
		var err error
		gs, err = a.api.ListOAuthGrants(ctx(c), token)
		return err
	})
	if err != nil {
		return a.fail(c, err)
	}
	m := pages.AppsModel{Page: a.frame(c, "Connected apps", nil)}
	m.Page.Section = "apps"
	for _, g := range gs {
		row := pages.AppRow{ClientID: g.Client.ID, Name: g.Client.Name, Access: accessWords(g.Scopes),
			Connected: g.GrantedAt.Local().Format("2 Jan 2006, 15:04")}
		if row.Name == "" {
			row.Name = "An app that gave no name"
		}
		if u, err := url.Parse(g.Client.URI); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
			row.Site, row.SiteURL = u.Host, u.String()
		}
		m.Apps = append(m.Apps, row)
	}
	return a.render(c, http.StatusOK, pages.Apps(m))
}

// revokeApp is POST /account/apps/revoke: the service ends every session the app holds, so
// its tokens stop working at once, everywhere.
func (a *App) revokeApp(c echo.Context) error {
	id := c.FormValue("client_id")
	err := a.call(c, func(token string) error { return a.api.RevokeOAuthGrant(ctx(c), token, id) })
	switch {
	case client.StatusOf(err) == http.StatusNotFound:
		a.flash(c, layout.Flash{Kind: "info", Text: "That app was already disconnected."})
	case err != nil:
		return a.fail(c, err)
	default:
		a.log.InfoContext(ctx(c), "handlers: oauth app disconnected", "user_id", userOf(c).ID, "client_id", id)
		a.flash(c, layout.Flash{Kind: "success", Text: "The app is disconnected. Its access has ended."})
	}
	return a.redirect(c, "/account/apps")
}
