package handlers

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/layout"
	"masthead/views/pages"
)

// loginReasons are the messages /login shows for ?reason=…; unknown codes show nothing.
var loginReasons = map[string]layout.Flash{
	reasonExpired:   {Kind: "info", Text: "Your session has ended. Sign in again to continue where you were."},
	reasonSignedOut: {Kind: "success", Text: "You are signed out."},
}

// loginForm is what the sign-in form posts.
type loginForm struct {
	Email    string `form:"email"`
	Password string `form:"password"`
	Next     string `form:"next"`
}

// showLogin is GET /login. Someone already signed in goes straight on.
func (a *App) showLogin(c echo.Context) error {
	next := safeNext(c.QueryParam("next"))
	st := stateOf(c)
	if str(st.sess, keyRefresh) != "" && c.QueryParam("reason") == "" {
		return a.redirect(c, orHome(next))
	}
	m := pages.LoginModel{Page: a.frame(c, "Sign in", nil), Next: next, Providers: a.loginProviders(c, next), Demo: a.demo}
	if f, ok := loginReasons[c.QueryParam("reason")]; ok {
		m.Page.Flashes = append(m.Page.Flashes, f)
	}
	return a.render(c, http.StatusOK, pages.Login(m))
}

// login is POST /login: the password grant, then the tokens go into a new session.
func (a *App) login(c echo.Context) error {
	var f loginForm
	if err := c.Bind(&f); err != nil {
		return a.loginFailed(c, f, http.StatusBadRequest, "The form could not be read. Reload the page and try again.")
	}
	f.Email = strings.TrimSpace(f.Email)
	f.Next = safeNext(f.Next)
	if f.Email == "" || f.Password == "" {
		return a.loginFailed(c, f, http.StatusUnprocessableEntity, "Enter your email address and your password.")
	}
	if strings.ContainsFunc(f.Email, untypeable) || strings.ContainsRune(f.Password, 0) {
		f.Email = strings.Map(func(r rune) rune {
			if untypeable(r) {
				return -1
			}
			return r
		}, f.Email)
		return a.loginFailed(c, f, http.StatusBadRequest, "The email address or password contains characters that cannot be typed. Check both and try again.")
	}
	s, err := a.api.SignInWithPassword(ctx(c), f.Email, f.Password)
	if err != nil {
		e, ok := client.ErrorOf(err)
		switch {
		case ok && e.Status == http.StatusTooManyRequests:
			wait := max(e.RetryAfter, time.Second)
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())))
			return a.loginFailed(c, f, http.StatusTooManyRequests,
				fmt.Sprintf("Too many sign-in attempts from this device. Try again in %s.", wait.Round(time.Second)))
		case ok && e.Status >= 400 && e.Status < 500:
			// One message for a wrong password, an unknown email or a blocked account, so the
			// form does not reveal which accounts exist.
			return a.loginFailed(c, f, http.StatusUnauthorized, "That email and password do not match an account. Check both and try again.")
		default:
			a.log.ErrorContext(ctx(c), "handlers: sign-in failed", "err", err)
			return a.loginFailed(c, f, http.StatusBadGateway, "Masthead's sign-in service is not reachable right now. Try again in a moment.")
		}
	}
	st := stateOf(c)
	// A new session on sign-in: nothing an attacker planted before (such as a CSRF token) survives.
	st.signOut()
	storeTokens(st, s)
	a.log.InfoContext(ctx(c), "handlers: signed in", "user_id", s.User.ID)
	return a.redirect(c, orHome(f.Next))
}

func (a *App) loginFailed(c echo.Context, f loginForm, status int, msg string) error {
	return a.render(c, status, pages.Login(pages.LoginModel{
		Page: a.frame(c, "Sign in", nil), Email: f.Email, Next: f.Next, Error: msg, Providers: a.loginProviders(c, f.Next), Demo: a.demo,
	}))
}

// logout is POST /logout: the service revokes the session, the cookie is emptied.
func (a *App) logout(c echo.Context) error {
	st := stateOf(c)
	if token := str(st.sess, keyAccess); token != "" {
		if err := a.api.Logout(ctx(c), token, client.LogoutLocal); err != nil && client.StatusOf(err) == 0 {
			a.log.WarnContext(ctx(c), "handlers: logout not confirmed by the service", "err", err)
		}
	}
	st.signOut()
	return a.redirect(c, "/login?reason="+reasonSignedOut)
}

func orHome(next string) string {
	if next == "" {
		return "/"
	}
	return next
}

// untypeable reports characters no email address holds: control characters and the bidi
// controls that make one text display as another.
func untypeable(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }
