package handlers

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/pages"
)

// actAsYou is what every connected app may do, whatever its scopes: its tokens are the
// person's own, so row-level security gives it exactly the person's access.
const actAsYou = "Read and change publications, reviews, promos and schedules in your projects, exactly as your roles allow"

// scopeWords says each scope the service grants in plain words.
var scopeWords = map[string]string{
	"openid":  "Confirm which Masthead account you are",
	"email":   "See your email address",
	"profile": "See your name",
}

// accessWords is what an app with scope may do, in plain words, the general power first.
func accessWords(scopes []string) []string {
	out := []string{actAsYou}
	for _, s := range scopes {
		if w, ok := scopeWords[s]; ok {
			out = append(out, w)
		} else {
			out = append(out, "Use the permission “"+s+"”")
		}
	}
	return out
}

// showConsent is GET /oauth/consent?authorization_id=…, where /auth/v1/oauth/authorize sends
// the person (through /login first when signed out, which brings them back here).
func (a *App) showConsent(c echo.Context) error {
	id := c.QueryParam("authorization_id")
	if id == "" {
		return a.consentGone(c)
	}
	var az *client.Authorization
	err := a.call(c, func(token string) error {
		var err error
		az, err = a.api.GetAuthorization(ctx(c), token, id)
		return err
	})
	if err != nil {
		return a.consentFailed(c, err)
	}
	if az.RedirectURL != "" {
		// The person already allowed this app: nothing to ask.
		return a.toApp(c, az.RedirectURL)
	}
	name := strings.TrimSpace(az.Client.Name)
	if name == "" {
		name = "An app that gave no name"
	}
	m := pages.ConsentModel{
		Page: a.frame(c, "Connect "+name, nil), AuthorizationID: az.ID, ClientName: name,
		RedirectHost: redirectHost(az.RedirectURI), Access: accessWords(strings.Fields(az.Scope)),
		Account: az.User.Email, Expires: until(az.ExpiresAt, a.now()),
	}
	if u, err := url.Parse(az.Client.URI); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		m.Site, m.SiteURL = u.Host, u.String()
	}
	// The answer to these forms is a redirect to the app, so the page's form-action must allow
	// the app's origin: browsers apply form-action to the redirects that follow a submission.
	if src := cspSource(az.RedirectURI); src != "" {
		c.Response().Header().Set("Content-Security-Policy",
			strings.Replace(contentSecurityPolicy, "form-action 'self'", "form-action 'self' "+src, 1))
	}
	return a.render(c, http.StatusOK, pages.Consent(m))
}

// consentForm is what the approve and deny forms post.
type consentForm struct {
	AuthorizationID string `form:"authorization_id"`
	Action          string `form:"action"`
}

// decideConsent is POST /oauth/consent: the decision goes to the service as the signed-in
// person, and the browser goes on to the app with the code or the refusal.
func (a *App) decideConsent(c echo.Context) error {
	var f consentForm
	if err := c.Bind(&f); err != nil || f.AuthorizationID == "" || (f.Action != "approve" && f.Action != "deny") {
		return a.consentGone(c)
	}
	var to string
	err := a.call(c, func(token string) error {
		var err error
		to, err = a.api.DecideAuthorization(ctx(c), token, f.AuthorizationID, f.Action == "approve")
		return err
	})
	if err != nil {
		return a.consentFailed(c, err)
	}
	a.log.InfoContext(ctx(c), "handlers: oauth consent", "action", f.Action, "user_id", userOf(c).ID)
	return a.toApp(c, to)
}

// toApp sends the browser to the app's redirect URI, which the service built from a URI the
// app registered (never from this request).
func (a *App) toApp(c echo.Context, to string) error {
	if err := a.saveSession(c); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// consentFailed explains a request that cannot be answered: expired, answered already, or not
// this person's. Anything else is the ordinary failure page.
func (a *App) consentFailed(c echo.Context, err error) error {
	switch client.StatusOf(err) {
	case http.StatusNotFound, http.StatusConflict:
		return a.consentGone(c)
	}
	return a.fail(c, err)
}

func (a *App) consentGone(c echo.Context) error {
	return a.render(c, http.StatusNotFound, pages.Error(pages.ErrorModel{
		Page:    a.frame(c, "Request expired", nil),
		Heading: "This connection request is no longer valid",
		Text: "It has expired, was already answered, or belongs to another account. " +
			"Go back to the app and connect again.",
		BackURL: "/account/apps", BackLabel: "See your connected apps",
	}))
}

// redirectHost is what the consent page shows as the receiver: the host for web addresses,
// the scheme for an app's own (cursor://…).
func redirectHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.Host != "" {
		return u.Host
	}
	return u.Scheme + ":"
}

// cspOrigin is what may appear in a CSP source expression: a scheme with a host and port.
var cspOrigin = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:(//[A-Za-z0-9.\-\[\]:]+)?$`)

// cspSource is the CSP source expression that admits raw: its origin for web addresses, its
// scheme for an app's own; "" when it cannot be written safely.
func cspSource(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return ""
	}
	src := strings.ToLower(u.Scheme) + ":"
	if u.Host != "" {
		src += "//" + u.Host
	}
	if !cspOrigin.MatchString(src) {
		return ""
	}
	return src
}

// until says how long from now t is, in minutes.
func until(t, now time.Time) string {
	m := int(t.Sub(now).Round(time.Minute) / time.Minute)
	if m <= 1 {
		return "a minute"
	}
	return strconv.Itoa(m) + " minutes"
}
