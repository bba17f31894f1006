package handlers

import (
	"crypto/subtle"
	"net/http"

	"github.com/labstack/echo/v4"

	"masthead/views/layout"
	"masthead/views/pages"
)

// contentSecurityPolicy allows only this origin's script and styles (no inline script, no
// eval), images from here, requests to here, and no framing. Markdown output can therefore not
// run script even if the sanitiser had a gap.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// securityHeaders sets the headers every dashboard answer carries. Pages hold private data, so
// they are never stored by caches; answers differ for htmx requests, hence Vary.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
		h.Set("Cache-Control", "no-store")
		h.Add("Vary", "HX-Request, HX-Target, Cookie")
		return next(c)
	}
}

// csrfField and csrfHeader carry the token: forms post it as a hidden field; htmx sends the
// form's fields too, so the same field covers both.
const (
	csrfField  = "_csrf"
	csrfHeader = "X-CSRF-Token"
)

// checkCSRF refuses every state-changing request that does not carry the session's CSRF token,
// and any that a browser marks as cross-site. The token lives inside the encrypted session
// cookie, so another site can neither read nor set it.
func (a *App) checkCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		want := str(stateOf(c).sess, keyCSRF)
		got := c.Request().Header.Get(csrfHeader)
		if got == "" {
			got = c.FormValue(csrfField)
		}
		site := c.Request().Header.Get("Sec-Fetch-Site")
		crossSite := site == "cross-site" || site == "same-site"
		if crossSite || want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			a.log.WarnContext(ctx(c), "handlers: csrf refused", "route", c.Path(), "sec_fetch_site", site)
			return a.render(c, http.StatusForbidden, pages.Error(pages.ErrorModel{
				Page:    layout.Page{Title: "Form expired", CSRF: want},
				Heading: "This form has expired",
				Text: "For your safety the form was not sent: it came from an old page or another site. " +
					"Go back, reload the page and try again.",
				BackURL: "/", BackLabel: "Go to the dashboard",
			}))
		}
		return next(c)
	}
}
