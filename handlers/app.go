// Package handlers is the editorial dashboard: Echo handlers (one file per page or flow), the
// route list (routes.go), sessions, CSRF and security headers. Handlers stay thin: read the
// request, call the service through internal/client as the signed-in user, build a view model
// of display-ready strings, render it. They never touch the database and never decide access:
// the service's row-level security does, and a refusal from it is shown as such.
//
// It imports internal/client, internal/channels, views and assets; it must not import the
// service packages (auth, rest, pg, server). Only the wiring (internal/server, cmd/masthead)
// imports it.
package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/a-h/templ"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/pages"
)

// Config is what the dashboard needs to run against a service.
type Config struct {
	// APIURL is the service's base URL (…/auth/v1 and …/rest/v1 live below it).
	APIURL string
	// PublishableKey is sent as apikey with every service call.
	PublishableKey string
	// SessionKeys are pairs of (authentication key, encryption key) for the session cookie: the
	// first pair seals new cookies, every pair opens old ones, so keys can be rotated. Use 32 or
	// 64 random bytes for authentication and 32 for encryption (AES-256); see SessionKeysFrom.
	SessionKeys [][]byte
	// Secure marks cookies Secure; set it whenever the dashboard is served over TLS.
	Secure bool
	Logger *slog.Logger
	// HTTPClient calls the service; nil means a client with a 15 s timeout.
	HTTPClient *http.Client
	// Now is the clock; nil means time.Now. Tests move it to expire sessions.
	Now func() time.Time
	// ReadYourWrites is how long after a form post the person's reads ask the service for the
	// primary database (client.WithReadPrimary), so a change they just made shows even when the
	// service reads from replicas that are a moment behind; 0 means 5 seconds.
	ReadYourWrites time.Duration
	// DemoLogins and DemoPassword are shown on the sign-in page, so someone trying Masthead
	// with `masthead dev` knows whom to sign in as. Only `masthead dev` sets them: anywhere
	// else they would hand out working credentials.
	DemoLogins   []DemoLogin
	DemoPassword string
}

// DemoLogin is one demo account and its roles, as the sign-in page lists it.
type DemoLogin = pages.DemoLogin

// App is the dashboard. Create it with New and mount it with Register.
type App struct {
	api     *client.Client
	store   *sessions.CookieStore
	log     *slog.Logger
	secure  bool
	now     func() time.Time
	refresh *refresher
	demo    pages.DemoLogins
	chans   channelCache
	// readYourWrites: see Config.ReadYourWrites.
	readYourWrites time.Duration
}

// New checks cfg and builds the dashboard.
func New(cfg Config) (*App, error) {
	if len(cfg.SessionKeys) < 2 || len(cfg.SessionKeys)%2 != 0 {
		return nil, errors.New("handlers: SessionKeys must hold pairs of authentication and encryption keys")
	}
	for i, k := range cfg.SessionKeys {
		if i%2 == 0 && len(k) < 32 {
			return nil, errors.New("handlers: session authentication keys must be at least 32 bytes")
		}
		if i%2 == 1 && len(k) != 32 {
			return nil, errors.New("handlers: session encryption keys must be 32 bytes (AES-256)")
		}
	}
	api, err := client.New(cfg.APIURL, cfg.PublishableKey, cfg.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("handlers: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	a := &App{api: api, log: log, secure: cfg.Secure, now: now, refresh: newRefresher(api, now),
		demo: pages.DemoLogins{Logins: cfg.DemoLogins, Password: cfg.DemoPassword}}
	a.readYourWrites = cfg.ReadYourWrites
	if a.readYourWrites <= 0 {
		a.readYourWrites = 5 * time.Second
	}
	a.store = newStore(cfg.SessionKeys, cfg.Secure)
	return a, nil
}

// render writes component with status after rendering it completely into a buffer, so a
// template failure becomes a clean error page instead of half a page. The session is saved
// first, because its cookie must go out with the headers.
func (a *App) render(c echo.Context, status int, component templ.Component) error {
	var buf bytes.Buffer
	if err := component.Render(c.Request().Context(), &buf); err != nil {
		return fmt.Errorf("handlers: render %s: %w", c.Path(), err)
	}
	if err := a.saveSession(c); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// redirect answers a plain request with 303 See Other, and an htmx request with HX-Redirect so
// htmx navigates the whole page instead of swapping the target page into a fragment.
func (a *App) redirect(c echo.Context, to string) error {
	if err := a.saveSession(c); err != nil {
		return err
	}
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", to)
		return c.NoContent(http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// isHTMX reports a request made by htmx (not a boosted navigation, which wants whole pages).
func isHTMX(c echo.Context) bool {
	h := c.Request().Header
	return h.Get("HX-Request") == "true" && h.Get("HX-Boosted") != "true"
}

// wantsPart reports an htmx request aimed at the element with id target, which may be answered
// with that part alone.
func wantsPart(c echo.Context, target string) bool {
	return isHTMX(c) && c.Request().Header.Get("HX-Target") == target
}

// ctx is the request's context for the service calls made on the person's behalf: it carries
// their address, their browser's User-Agent and the page request's id (see client.ForRequest)
// and, shortly after they changed something, the wish to read from the primary (see
// Config.ReadYourWrites).
func ctx(c echo.Context) context.Context {
	cx := client.ForRequest(c.Request().Context(), c.RealIP(), c.Request().UserAgent(), c.Response().Header().Get(echo.HeaderXRequestID))
	if st := stateOf(c); st != nil && st.readPrimary {
		cx = client.WithReadPrimary(cx)
	}
	return cx
}
