package handlers

import (
	"github.com/labstack/echo/v4"

	"masthead/assets"
)

// Register mounts the dashboard on e. Every route of the dashboard is listed here. The routes
// live at the root of the site next to the service's /auth/v1, /rest/v1 and /storage/v1 and
// carry their middleware per route (not through an Echo group, which would also claim every
// unmatched path), so nothing here changes how the service's routes behave.
func (a *App) Register(e *echo.Echo) {
	e.GET(assets.Prefix+"*", echo.WrapHandler(assets.Handler()))

	page := []echo.MiddlewareFunc{securityHeaders, a.loadSession, a.checkCSRF}
	e.GET("/login", a.showLogin, page...)
	e.POST("/login", a.login, page...)
	e.POST("/logout", a.logout, page...)
	e.GET("/login/provider/:name", a.providerLogin, page...)
	e.GET("/login/callback", a.providerCallback, page...)
	e.GET("/invite/:token", a.showInvite, page...)
	e.POST("/invite/:token", a.acceptInvite, page...)

	in := append(page, a.requireUser)
	e.GET("/", a.home, in...)
	e.GET("/schedule", a.scheduleAll, in...)
	e.GET("/inbox", a.inbox, in...)
	e.GET("/inbox/count", a.inboxCount, in...)
	e.GET("/p/:slug", a.projectHome, in...)
	e.GET("/p/:slug/queue", a.queue, in...)
	e.GET("/p/:slug/schedule", a.scheduleProject, in...)
	e.GET("/p/:slug/publications/new", a.newPublication, in...)
	e.POST("/p/:slug/publications/new", a.createPublication, in...)
	e.POST("/p/:slug/publications/new/preview", a.previewDraft, in...)
	e.GET("/p/:slug/publications/:id", a.publication, in...)
	e.GET("/p/:slug/publications/:id/edit", a.editPublication, in...)
	e.POST("/p/:slug/publications/:id/edit", a.savePublication, in...)
	e.POST("/p/:slug/publications/:id/edit/preview", a.previewDraft, in...)
	e.POST("/p/:slug/publications/:id/promos/:channel", a.savePromo, in...)
	e.POST("/p/:slug/publications/:id/promos/:channel/count", a.countPromo, in...)
	e.POST("/p/:slug/publications/:id/promos/:channel/delete", a.removePromo, in...)
	e.POST("/p/:slug/publications/:id/media", a.uploadMedia, append([]echo.MiddlewareFunc{limitUpload}, in...)...)
	e.POST("/p/:slug/publications/:id/media/order", a.orderMedia, in...)
	e.POST("/p/:slug/publications/:id/media/:mid/move", a.moveMedia, in...)
	e.POST("/p/:slug/publications/:id/media/:mid/detach", a.detachMedia, in...)
	e.GET("/p/:slug/publications/:id/delete", a.confirmDelete, in...)
	e.POST("/p/:slug/publications/:id/delete", a.deletePublication, in...)
	e.GET("/p/:slug/publications/:id/rounds/:range", a.rounds, in...)
	e.POST("/p/:slug/publications/:id/actions/:rpc", a.act, in...)
	e.POST("/p/:slug/publications/:id/preview/:rpc", a.preview, in...)
	e.GET("/oauth/consent", a.showConsent, in...)
	e.POST("/oauth/consent", a.decideConsent, in...)
	e.GET("/p/:slug/settings", a.settings, in...)
	e.POST("/p/:slug/settings/invitations", a.invite, in...)
	e.POST("/p/:slug/settings/invitations/:id/revoke", a.revokeInvitation, in...)
	e.POST("/p/:slug/settings/members/:uid/role", a.setRole, in...)
	e.POST("/p/:slug/settings/members/:uid/remove", a.removeMember, in...)
	e.POST("/p/:slug/settings/project", a.saveProject, in...)
	e.POST("/p/:slug/settings/collections", a.addCollection, in...)
	e.POST("/p/:slug/settings/collections/:id/remove", a.removeCollection, in...)
	e.GET("/projects/new", a.newProject, in...)
	e.POST("/projects/new", a.createProject, in...)
	e.GET("/account", a.account, in...)
	e.POST("/account/profile", a.saveName, in...)
	e.POST("/account/password", a.changePassword, in...)
	e.POST("/account/sessions/others", a.signOutOthers, in...)
	e.GET("/account/apps", a.apps, in...)
	e.POST("/account/apps/revoke", a.revokeApp, in...)
}
