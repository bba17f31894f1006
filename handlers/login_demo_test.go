package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"

	"masthead/handlers"
	"masthead/internal/server/servertest"
)

// TestLoginDemoAccounts: the sign-in page lists the demo accounts and their password when the
// dashboard is configured with them (only `masthead dev` does), and says nothing of them when
// it is not; with no upstream provider configured it offers none; either way it says how a
// forgotten password is replaced.
func TestLoginDemoAccounts(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, nil)
	logins := []handlers.DemoLogin{
		{Email: "lead@northwind.test", Roles: "lead of Northwind Daily"},
		{Email: "multi@masthead.test", Roles: "lead of Acme Travel, reviewer of Northwind Daily"},
	}
	cases := []struct {
		name     string
		logins   []handlers.DemoLogin
		password string
	}{
		{"dev", logins, "masthead-demo"},
		{"production", nil, ""},
	}
	for _, c := range cases {
		app, err := handlers.New(handlers.Config{APIURL: env.URL, PublishableKey: env.Key,
			SessionKeys: handlers.GenerateSessionKeys(), DemoLogins: c.logins, DemoPassword: c.password})
		if err != nil {
			t.Fatal(err)
		}
		e := echo.New()
		app.Register(e)
		ts := httptest.NewServer(e)
		res, err := http.Get(ts.URL + "/login")
		if err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(res.Body)
		res.Body.Close()
		ts.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s: GET /login: %d %v", c.name, res.StatusCode, err)
		}
		// The service configures no upstream provider here, so none is offered, not even as
		// "not available".
		if got := doc.Find(`[data-testid="login-providers"]`); got.Length() != 0 || strings.Contains(doc.Text(), "Sign in with") {
			t.Errorf("%s: the sign-in page offers providers nobody configured: %q", c.name, got.Text())
		}
		// Someone who forgot their password learns what to do: no mail is sent, the operator
		// sets a new one with the command that exists for it.
		if got := doc.Find(`[data-testid="forgot-password"]`).Text(); !strings.Contains(got, "Forgot your password?") ||
			!strings.Contains(got, "masthead users password") {
			t.Errorf("%s: the sign-in page does not say what to do about a forgotten password: %q", c.name, got)
		}
		demo := doc.Find(`[data-testid="demo-logins"]`)
		if c.logins == nil {
			if demo.Length() != 0 || strings.Contains(doc.Text(), "masthead-demo") {
				t.Errorf("%s: the sign-in page shows demo accounts: %q", c.name, demo.Text())
			}
			continue
		}
		if got := demo.Find(`[data-testid="demo-password"]`).Text(); got != c.password {
			t.Errorf("%s: demo password shown %q, want %q", c.name, got, c.password)
		}
		items := demo.Find("li")
		if items.Length() != len(c.logins) {
			t.Fatalf("%s: %d demo accounts listed, want %d", c.name, items.Length(), len(c.logins))
		}
		for i, l := range c.logins {
			if txt := items.Eq(i).Text(); !strings.Contains(txt, l.Email) || !strings.Contains(txt, l.Roles) {
				t.Errorf("%s: item %d = %q, want %s and %s", c.name, i, txt, l.Email, l.Roles)
			}
		}
	}
}
