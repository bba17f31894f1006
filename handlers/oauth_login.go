package handlers

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"masthead/views/pages"
)

// Keys of the session values that carry a provider sign-in across the round trip.
const (
	keyPKCE     = "pkce"
	keyPKCENext = "pkce_next"
)

// loginProviders are the provider buttons of /login: those the service has credentials for.
// One it has none for is not offered at all, as a provider the install chose not to use; if
// the list cannot be had, the page simply offers the password form.
func (a *App) loginProviders(c echo.Context, next string) []pages.LoginProvider {
	ps, err := a.api.Providers(ctx(c))
	if err != nil {
		a.log.WarnContext(ctx(c), "handlers: sign-in providers unavailable", "err", err)
		return nil
	}
	out := make([]pages.LoginProvider, 0, len(ps))
	for _, p := range ps {
		if !p.Enabled {
			continue
		}
		u := "/login/provider/" + url.PathEscape(p.Name)
		if next != "" {
			u += "?" + url.Values{"next": {next}}.Encode()
		}
		out = append(out, pages.LoginProvider{Label: p.Label, URL: u})
	}
	return out
}

// providerLogin is GET /login/provider/:name: a PKCE verifier goes into the session, its
// challenge with the browser to the service, which sends it on to the provider.
func (a *App) providerLogin(c echo.Context) error {
	st := stateOf(c)
	verifier := randomToken()
	st.set(keyPKCE, verifier)
	st.set(keyPKCENext, safeNext(c.QueryParam("next")))
	sum := sha256.Sum256([]byte(verifier))
	back := c.Scheme() + "://" + c.Request().Host + "/login/callback"
	return a.redirect(c, a.api.ProviderURL(c.Param("name"), back, base64.RawURLEncoding.EncodeToString(sum[:])))
}

// providerCallback is GET /login/callback, where the service returns the browser with a code
// (or an error): the code and the session's verifier become the person's session.
func (a *App) providerCallback(c echo.Context) error {
	st := stateOf(c)
	verifier, next := str(st.sess, keyPKCE), str(st.sess, keyPKCENext)
	delete(st.sess.Values, keyPKCE)
	delete(st.sess.Values, keyPKCENext)
	st.dirty = true
	code := c.QueryParam("code")
	if code == "" || verifier == "" {
		msg := "Signing in with that provider did not work. Try again, or use your email and password."
		if d := c.QueryParam("error_description"); d != "" {
			msg = sentence(d)
		}
		return a.loginFailed(c, loginForm{Next: next}, http.StatusUnauthorized, msg)
	}
	s, err := a.api.ExchangeCode(ctx(c), code, verifier)
	if err != nil {
		a.log.WarnContext(ctx(c), "handlers: provider sign-in refused", "err", err)
		return a.loginFailed(c, loginForm{Next: next}, http.StatusUnauthorized,
			"That sign-in has expired or was already used. Try again.")
	}
	st.signOut() // a new session on sign-in, as for the password form
	storeTokens(st, s)
	a.log.InfoContext(ctx(c), "handlers: signed in with a provider", "user_id", s.User.ID)
	return a.redirect(c, orHome(next))
}
