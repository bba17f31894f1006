package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/layout"
	"masthead/views/pages"
)

// account is GET /account: name, password, sessions and connected apps.
func (a *App) account(c echo.Context) error {
	return a.showAccount(c, http.StatusOK, "", "")
}

// showAccount renders /account with a refusal next to the form it concerns.
func (a *App) showAccount(c echo.Context, status int, nameErr, passwordErr string) error {
	var (
		sessions []client.AuthSession
		grants   []client.OAuthGrant
	)
	err := a.call(c, func(token string) error {
		var err error
		if sessions, err = a.api.Sessions(ctx(c), token); err != nil {
			return err
		}
		grants, err = a.api.ListOAuthGrants(ctx(c), token)
		return err
	})
	if err != nil {
		return a.fail(c, err)
	}
	u := userOf(c)
	m := pages.AccountModel{Page: a.frameSection(c, "Your account", nil, "account"), Name: u.Name, Email: u.Email,
		NameError: nameErr, PasswordError: passwordErr}
	k := newClock("UTC", a.now())
	for _, s := range sessions {
		row := pages.SessionRow{Device: deviceOf(s), Where: s.IP, Started: k.time(s.CreatedAt).Relative,
			LastUsed: k.time(s.CreatedAt).Relative, Current: s.Current}
		if s.RefreshedAt != nil {
			row.LastUsed = k.time(*s.RefreshedAt).Relative
		}
		if row.Where == "" {
			row.Where = "address unknown"
		}
		if !s.Current {
			m.Others++
		}
		m.Sessions = append(m.Sessions, row)
	}
	for _, g := range grants {
		name := g.Client.Name
		if name == "" {
			name = "An app that gave no name"
		}
		m.Apps = append(m.Apps, pages.AppRow{ClientID: g.Client.ID, Name: name, Connected: g.GrantedAt.Local().Format("2 Jan 2006, 15:04")})
	}
	return a.render(c, status, pages.Account(m))
}

// deviceOf names a session's device from its app or its browser's User-Agent, in words.
func deviceOf(s client.AuthSession) string {
	if s.ClientName != "" {
		return s.ClientName + " (connected app)"
	}
	ua := s.UserAgent
	browser := "A browser"
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"Firefox/", "Firefox"}, {"Chrome/", "Chrome"}, {"Safari/", "Safari"}, {"curl/", "curl"}, {"node", "A script (Node.js)"},
	} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	for _, o := range []struct{ token, name string }{
		{"Android", "Android"}, {"iPhone", "iPhone"}, {"Mac OS X", "macOS"}, {"Windows", "Windows"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.token) {
			return browser + " on " + o.name
		}
	}
	return browser
}

// saveName is POST /account/profile: the display name, through updateUser (user_metadata.name,
// which the database copies to the profile co-members see).
func (a *App) saveName(c echo.Context) error {
	name := strings.TrimSpace(c.FormValue("name"))
	if name == "" {
		return a.showAccount(c, http.StatusUnprocessableEntity, "Enter the name others should see.", "")
	}
	var u *client.User
	err := a.call(c, func(token string) error {
		var err error
		u, err = a.api.UpdateUser(ctx(c), token, client.UserUpdate{Name: &name})
		return err
	})
	if e, ok := client.ErrorOf(err); ok && e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests {
		return a.showAccount(c, e.Status, sentence(e.Message), "")
	} else if err != nil {
		return a.fail(c, err)
	}
	stateOf(c).set(keyName, u.Name())
	a.flash(c, layout.Flash{Kind: "success", Text: "Your name is now " + u.Name() + "."})
	return a.redirect(c, "/account")
}

// passwordWords are the refusals of a password change as the account page says them.
var passwordWords = map[string]string{
	"invalid_credentials":     "The current password is not correct.",
	"same_password":           "The new password is the one you have now: choose another.",
	"reauthentication_needed": "Enter your current password to change it.",
}

// changePassword is POST /account/password. It always sends the current password, so the
// service never has to rely on how recently the person signed in.
func (a *App) changePassword(c echo.Context) error {
	current, next := c.FormValue("current_password"), c.FormValue("password")
	if current == "" || next == "" {
		return a.showAccount(c, http.StatusUnprocessableEntity, "", "Enter your current password and the new one.")
	}
	err := a.call(c, func(token string) error {
		_, err := a.api.UpdateUser(ctx(c), token, client.UserUpdate{Password: next, CurrentPassword: current})
		return err
	})
	if e, ok := client.ErrorOf(err); ok && e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests && e.Status != http.StatusUnauthorized {
		msg, known := passwordWords[e.Code]
		if !known {
			msg = sentence(e.Message)
		}
		return a.showAccount(c, http.StatusUnprocessableEntity, "", msg)
	} else if err != nil {
		return a.fail(c, err)
	}
	a.log.InfoContext(ctx(c), "handlers: password changed", "user_id", userOf(c).ID)
	a.flash(c, layout.Flash{Kind: "success", Text: "Your password is changed. Every other session is signed out."})
	return a.redirect(c, "/account")
}

// signOutOthers is POST /account/sessions/others: every session but this browser's ends.
func (a *App) signOutOthers(c echo.Context) error {
	err := a.call(c, func(token string) error { return a.api.Logout(ctx(c), token, client.LogoutOthers) })
	if err != nil {
		return a.fail(c, err)
	}
	a.flash(c, layout.Flash{Kind: "success", Text: "Signed out everywhere else."})
	return a.redirect(c, "/account")
}
