package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
)

// user is the signed-in person of a request, with a token fresh enough to use.
type user struct {
	ID, Email, Name string
	token           string
}

const userKey = "masthead.user"

func userOf(c echo.Context) *user {
	u, _ := c.Get(userKey).(*user)
	return u
}

// Reasons the sign-in page explains, by code, so the query string cannot inject text.
const (
	reasonExpired   = "expired"
	reasonSignedOut = "signed-out"
	reasonRequired  = "required"
)

// requireUser lets signed-in requests through with a usable access token, refreshing it first
// when it is about to expire. Anyone else is sent to /login, which brings them back.
func (a *App) requireUser(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		st := stateOf(c)
		access, refresh := str(st.sess, keyAccess), str(st.sess, keyRefresh)
		if access == "" || refresh == "" {
			return a.toLogin(c, reasonRequired)
		}
		if a.now().Add(refreshMargin).After(expires(st.sess)) {
			if err := a.renew(c); errors.Is(err, errSessionEnded) {
				return nil // the redirect to /login is written
			} else if err != nil {
				// Busy or unreachable: the session stays, the page says when to try again.
				return a.fail(c, err)
			}
		}
		c.Set(userKey, &user{
			ID: str(st.sess, keyUserID), Email: str(st.sess, keyEmail), Name: str(st.sess, keyName),
			token: str(st.sess, keyAccess),
		})
		return next(c)
	}
}

// renew refreshes the session's tokens. A refusal means the session was revoked or expired:
// the person is signed out, the redirect to /login is written and errSessionEnded returned. A
// failure to reach the service is an outage, not a sign-out. A refresh that failed that way is
// asked once more at once: if the service did rotate the token and only its answer was lost
// (a proxy's 502, a dropped connection), the same refresh token, presented again within the
// service's reuse interval (MASTHEAD_REFRESH_REUSE_INTERVAL), gets the current session. Left
// for the person's next request, it might come after the interval, when the token it holds
// has been replaced and the session would end.
func (a *App) renew(c echo.Context) error {
	st := stateOf(c)
	s, err := a.refresh.Refresh(ctx(c), str(st.sess, keyRefresh))
	if status := client.StatusOf(err); err != nil && (status == 0 || status >= 500) && ctx(c).Err() == nil {
		s, err = a.refresh.Refresh(ctx(c), str(st.sess, keyRefresh))
	}
	if err != nil {
		// Only a definitive refusal (the refresh token or session is gone, revoked or refused)
		// ends the session. A 429 or an outage keeps it: the person is asked to try again.
		if status := client.StatusOf(err); status >= 400 && status < 500 && status != http.StatusTooManyRequests {
			a.log.InfoContext(ctx(c), "handlers: session ended", "status", status)
			st.signOut()
			if err := a.toLogin(c, reasonExpired); err != nil {
				return err
			}
			return errSessionEnded
		}
		return err
	}
	storeTokens(st, s)
	return nil
}

// storeTokens puts a service session into the cookie session.
func storeTokens(st *state, s *client.Session) {
	st.set(keyAccess, s.AccessToken)
	st.set(keyRefresh, s.RefreshToken)
	st.set(keyExpires, s.Expiry().Unix())
	if s.User.ID != "" {
		st.set(keyUserID, s.User.ID)
		st.set(keyEmail, s.User.Email)
		st.set(keyName, s.User.Name())
	}
}

// call runs fn with the user's token; when the service refuses the token (401), it refreshes
// once and tries again, so a token revoked or expired between check and call costs a retry,
// not a sign-out. A second refusal ends the session.
func (a *App) call(c echo.Context, fn func(token string) error) error {
	u := userOf(c)
	err := fn(u.token)
	if client.StatusOf(err) != http.StatusUnauthorized {
		return err
	}
	if err := a.renew(c); err != nil {
		return err
	}
	u.token = str(stateOf(c).sess, keyAccess)
	err = fn(u.token)
	if client.StatusOf(err) == http.StatusUnauthorized {
		stateOf(c).signOut()
		if err := a.toLogin(c, reasonExpired); err != nil {
			return err
		}
		return errSessionEnded
	}
	return err
}

// errSessionEnded says the session is over and the redirect to /login has been written; the
// handler has nothing more to answer.
var errSessionEnded = errors.New("handlers: session ended")

// toLogin sends the person to the sign-in page, remembering the page they wanted (for a GET;
// after a form post, the page the form was on).
func (a *App) toLogin(c echo.Context, reason string) error {
	next := c.Request().URL.RequestURI()
	if c.Request().Method != http.MethodGet {
		next = sameOriginPath(c.Request().Header.Get("HX-Current-URL"), c.Request().Referer())
	}
	q := url.Values{}
	if next != "" && next != "/" {
		q.Set("next", next)
	}
	if reason != reasonRequired {
		q.Set("reason", reason)
	}
	to := "/login"
	if len(q) > 0 {
		to += "?" + q.Encode()
	}
	return a.redirect(c, to)
}

// sameOriginPath returns the path and query of the first URL given, for use as a redirect
// target on this site; "" when none is usable.
func sameOriginPath(urls ...string) string {
	for _, s := range urls {
		u, err := url.Parse(s)
		if err != nil || s == "" {
			continue
		}
		if p := safeNext(u.RequestURI()); p != "" {
			return p
		}
	}
	return ""
}

// safeNext accepts only a local path ("/p/x/queue?status=draft"), never another origin
// ("//evil.test", "/\\evil.test", "https://…"), so /login cannot be an open redirect.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, `/\`) ||
		strings.ContainsAny(next, "\r\n\t") {
		return ""
	}
	return next
}
