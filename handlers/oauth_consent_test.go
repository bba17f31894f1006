package handlers_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// startAuthorization registers a public client and starts an authorization for it, as an AI
// connector would; it returns the authorization id the consent page is opened with.
func (s *stack) startAuthorization(t *testing.T) string {
	t.Helper()
	body := `{"client_name":"Inspector <b>","client_uri":"https://inspector.test","redirect_uris":["http://127.0.0.1:5555/callback"],"token_endpoint_auth_method":"none"}`
	res, err := http.Post(s.env.URL+"/auth/v1/oauth/clients/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	err = json.NewDecoder(res.Body).Decode(&reg)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d %v", res.StatusCode, err)
	}
	sum := sha256.Sum256([]byte(strings.Repeat("v", 50)))
	q := url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {"http://127.0.0.1:5555/callback"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "state": {"s1"}}
	nf := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = nf.Get(s.env.URL + "/auth/v1/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	return loc.Query().Get("authorization_id")
}

// TestConsentPage opens the consent page signed out and in, checks what it tells the person,
// that both forms need the CSRF token, and that approving sends the browser to the app; then
// the app shows on /account/apps and is disconnected there.
func TestConsentPage(t *testing.T) {
	s := newStack(t)
	id := s.startAuthorization(t)
	b := s.browser(t)
	consent := "/oauth/consent?authorization_id=" + id

	p := b.get(consent)
	if want := "/login?" + (url.Values{"next": {consent}}).Encode(); p.status != http.StatusSeeOther || p.location() != want {
		t.Fatalf("signed out: %d → %s", p.status, p.location())
	}
	b.login("reviewer@northwind.test")
	p = b.get(consent)
	if p.status != http.StatusOK {
		t.Fatalf("consent: %d", p.status)
	}
	for sel, want := range map[string]string{
		`[data-testid="consent-client"]`:   "Inspector <b>", // shown as text, never markup
		`[data-testid="consent-account"]`:  "reviewer@northwind.test",
		`[data-testid="consent-redirect"]`: "127.0.0.1:5555",
		`[data-testid="consent-site"]`:     "inspector.test",
	} {
		if got := p.text(sel); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	if got := p.text(`[data-testid="consent-scopes"]`); !strings.Contains(got, "See your email address") || !strings.Contains(got, "as your roles allow") {
		t.Errorf("scopes in words: %q", got)
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' http://127.0.0.1:5555;") {
		t.Errorf("CSP does not let the form reach the app: %s", csp)
	}

	form := url.Values{"authorization_id": {id}, "action": {"approve"}}
	if p := b.post("/oauth/consent", url.Values{"authorization_id": {id}, "action": {"approve"}, "_csrf": {"forged"}}); p.status != http.StatusForbidden {
		t.Fatalf("approve without the CSRF token: %d", p.status)
	}
	p = b.post("/oauth/consent", form)
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location(), "http://127.0.0.1:5555/callback?code=") {
		t.Fatalf("approve: %d → %s", p.status, p.location())
	}
	if p := b.post("/oauth/consent", form); p.status != http.StatusNotFound || !strings.Contains(p.text("h1"), "no longer valid") {
		t.Fatalf("approve twice: %d %q", p.status, p.text("h1"))
	}

	p = b.get("/account/apps")
	if cur, _ := p.doc.Find(`a[href="/account/apps"]`).Attr("aria-current"); cur != "page" {
		t.Fatalf("the banner's Connected apps link is not marked current on its page")
	}
	if p.count(`[data-testid="app"]`) != 1 || p.text(`[data-testid="app"] h2`) != "Inspector <b>" {
		t.Fatalf("connected apps: %s", p.text(`[data-testid="apps"]`))
	}
	clientID, _ := p.doc.Find(`[data-testid="app"] input[name="client_id"]`).Attr("value")
	if p := b.post("/account/apps/revoke", url.Values{"client_id": {clientID}, "_csrf": {"forged"}}); p.status != http.StatusForbidden {
		t.Fatalf("revoke without the CSRF token: %d", p.status)
	}
	if p := b.post("/account/apps/revoke", url.Values{"client_id": {clientID}}); p.status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", p.status)
	}
	p = b.get("/account/apps")
	if p.count(`[data-testid="app"]`) != 0 || p.count(`[data-testid="apps-empty"]`) != 1 || !strings.Contains(p.text(`[data-testid="flash"]`), "disconnected") {
		t.Fatalf("after revoke: %s", p.text("main"))
	}
}
