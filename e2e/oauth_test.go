package e2e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/server/servertest"
)

// connector plays an AI connector (Claude, ChatGPT, MCP Inspector): it knows only the MCP URL,
// discovers everything else, registers itself, sends a person's browser to consent, receives
// the code on a loopback callback (RFC 8252) and then uses /mcp with the tokens.
type connector struct {
	t        *testing.T
	mcpURL   string
	meta     struct{ Authorization, Token, Registration, Issuer string }
	clientID string
	redirect string
	codes    chan url.Values // what arrived at the callback
}

// discover follows the MCP authorization spec: 401 → protected-resource metadata (RFC 9728)
// → authorization server metadata (RFC 8414, path-suffixed well-known URL).
func (c *connector) discover() {
	c.t.Helper()
	res, err := http.Post(c.mcpURL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		c.t.Fatal(err)
	}
	res.Body.Close()
	www := res.Header.Get("WWW-Authenticate")
	_, prm, ok := strings.Cut(www, `resource_metadata="`)
	if res.StatusCode != http.StatusUnauthorized || !ok {
		c.t.Fatalf("/mcp without a token: %d %q", res.StatusCode, www)
	}
	prm = strings.TrimSuffix(prm, `"`)
	var rs struct {
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getJSON(c.t, prm, &rs)
	if len(rs.AuthorizationServers) != 1 {
		c.t.Fatalf("protected resource names %v", rs.AuthorizationServers)
	}
	iss, err := url.Parse(rs.AuthorizationServers[0])
	if err != nil {
		c.t.Fatal(err)
	}
	var as struct {
		Issuer        string   `json:"issuer"`
		Authorization string   `json:"authorization_endpoint"`
		Token         string   `json:"token_endpoint"`
		Registration  string   `json:"registration_endpoint"`
		Methods       []string `json:"code_challenge_methods_supported"`
	}
	getJSON(c.t, iss.Scheme+"://"+iss.Host+"/.well-known/oauth-authorization-server"+iss.Path, &as)
	if as.Issuer != rs.AuthorizationServers[0] || len(as.Methods) != 1 || as.Methods[0] != "S256" {
		c.t.Fatalf("authorization server metadata: %+v", as)
	}
	c.meta.Authorization, c.meta.Token, c.meta.Registration, c.meta.Issuer = as.Authorization, as.Token, as.Registration, as.Issuer
}

// listen starts the loopback callback, as a desktop app does on an ephemeral port.
func (c *connector) listen() {
	c.codes = make(chan url.Values, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r) // the browser's favicon request
			return
		}
		c.codes <- r.URL.Query()
		fmt.Fprint(w, "<!doctype html><title>Connected</title><h1 data-testid=\"callback\">You can close this window</h1>")
	}))
	c.t.Cleanup(srv.Close)
	c.redirect = srv.URL + "/callback"
}

func (c *connector) register() {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"client_name": "Claude (e2e stand-in)", "client_uri": "https://claude.test",
		"redirect_uris": []string{c.redirect}, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}})
	res, err := http.Post(c.meta.Registration, "application/json", strings.NewReader(string(body)))
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(res.Body).Decode(&reg); err != nil || res.StatusCode != http.StatusCreated {
		c.t.Fatalf("register: %d %v", res.StatusCode, err)
	}
	c.clientID = reg.ClientID
}

// authorizeURL is where the person's browser is sent, with a fresh PKCE pair and state.
func (c *connector) authorizeURL(redirect string) (u, verifier, state string) {
	verifier, state = rand.Text()+rand.Text(), rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {c.clientID}, "redirect_uri": {redirect},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"state": {state}, "scope": {"email profile"}, "resource": {c.mcpURL}}
	return c.meta.Authorization + "?" + q.Encode(), verifier, state
}

// callback waits for the browser to arrive at the redirect URI.
func (c *connector) callback() url.Values {
	c.t.Helper()
	select {
	case q := <-c.codes:
		return q
	case <-time.After(30 * time.Second):
		c.t.Fatal("the browser never reached the callback")
		return nil
	}
}

// token posts a grant to the token endpoint and returns the status and decoded body.
func (c *connector) token(form url.Values) (int, map[string]any) {
	c.t.Helper()
	form.Set("client_id", c.clientID)
	res, err := http.PostForm(c.meta.Token, form)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		c.t.Fatal(err)
	}
	return res.StatusCode, body
}

func (c *connector) exchange(code, verifier, redirect string) (int, map[string]any) {
	return c.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}, "redirect_uri": {redirect}})
}

// mcp opens an MCP session with the go-sdk client, the token on every request.
func (c *connector) mcp(token string) *sdk.ClientSession {
	c.t.Helper()
	hc := &http.Client{Transport: bearerTransport{token: token}}
	cl := sdk.NewClient(&sdk.Implementation{Name: "e2e-connector", Version: "1"}, nil)
	sess, err := cl.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: c.mcpURL, HTTPClient: hc}, nil)
	if err != nil {
		c.t.Fatalf("MCP initialize: %v", err)
	}
	c.t.Cleanup(func() { sess.Close() })
	return sess
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func getJSON(t *testing.T, u string, out any) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, out) != nil {
		t.Fatalf("GET %s: %d %s", u, res.StatusCode, b)
	}
}

// listProjects calls the list_projects tool and returns its text, failing on an error.
func listProjects(t *testing.T, sess *sdk.ClientSession) (string, bool) {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "list_projects", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("list_projects: %v", err)
	}
	b, _ := json.Marshal(res)
	return string(b), res.IsError
}

// TestOAuthConnector is the whole connector journey: discovery, registration, authorize, the
// person signing in and consenting in chromium, the token, MCP initialize / tools/list / a tool
// call, refresh; then every way it must fail, and disconnecting the app.
func TestOAuthConnector(t *testing.T) {
	env := servertest.New(t, nil)
	user := env.CreateUser(t, "ada@northwind.test", "correct horse battery")
	own := env.DB.Owner(t)
	if _, err := own.Exec(t.Context(), `
		with p as (insert into projects (slug, name) values ('northwind', 'Northwind Daily') returning id)
		insert into project_members (project_id, user_id, role) select id, $1, 'lead' from p`, user.ID); err != nil {
		t.Fatal(err)
	}
	c := &connector{t: t, mcpURL: env.URL + "/mcp"}
	c.discover()
	c.listen()
	c.register()

	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, 3*time.Minute)
	defer cancel()
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}

	// Signed out: authorize → consent → /login → back to consent.
	authURL, verifier, state := c.authorizeURL(c.redirect)
	start := time.Now()
	do("authorize while signed out",
		chromedp.Navigate(authURL),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), user.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), user.Password),
		chromedp.Click(chromedp.CSS(`[data-testid="login-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="consent"]`)),
	)
	if got := text(`[data-testid="consent-client"]`); got != "Claude (e2e stand-in)" {
		t.Fatalf("consent names %q", got)
	}
	if got := text(`[data-testid="consent-account"]`); got != user.Email {
		t.Fatalf("consent account %q", got)
	}
	host := strings.TrimPrefix(strings.TrimSuffix(c.redirect, "/callback"), "http://")
	if got := text(`[data-testid="consent-redirect"]`); got != host {
		t.Fatalf("consent redirect host %q, want %q", got, host)
	}
	if got := text(`[data-testid="consent-scopes"]`); !strings.Contains(got, "See your email address") || !strings.Contains(got, "See your name") {
		t.Fatalf("consent scopes %q", got)
	}
	shot(t, ctx, "oauth-consent")
	(&person{t: t, ctx: ctx, base: env.URL, js: true, name: "ada"}).axe("consent")
	do("allow", chromedp.Click(chromedp.CSS(`[data-testid="consent-approve"] button`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="callback"]`)))
	q := c.callback()
	if q.Get("state") != state || q.Get("code") == "" || q.Get("iss") != c.meta.Issuer {
		t.Fatalf("callback %v", q)
	}
	status, tok := c.exchange(q.Get("code"), verifier, c.redirect)
	if status != http.StatusOK {
		t.Fatalf("token: %d %v", status, tok)
	}
	t.Logf("authorize → sign-in → consent → callback → token in the browser: %v", time.Since(start).Round(time.Millisecond))
	access, refresh := tok["access_token"].(string), tok["refresh_token"].(string)

	// The token is an ordinary access token: REST takes it as the person (with the apikey).
	req, _ := http.NewRequest(http.MethodGet, env.URL+"/rest/v1/projects?select=name", nil)
	req.Header.Set("apikey", env.Key)
	req.Header.Set("Authorization", "Bearer "+access)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(rows) != `[{"name":"Northwind Daily"}]` {
		t.Fatalf("REST with the OAuth token: %d %s", res.StatusCode, rows)
	}

	// MCP as the person: initialize, tools/list, a tool call.
	sess := c.mcp(access)
	tools, err := sess.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) < 5 {
		t.Fatalf("tools/list: %v (%d tools)", err, len(tools.Tools))
	}
	if out, isErr := listProjects(t, sess); isErr || !strings.Contains(out, "Northwind Daily") {
		t.Fatalf("list_projects: %s", out)
	}

	// Refresh, and the new token works at /mcp too.
	status, ref := c.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}})
	if status != http.StatusOK || ref["scope"] != "email profile" {
		t.Fatalf("refresh: %d %v", status, ref)
	}
	if out, isErr := listProjects(t, c.mcp(ref["access_token"].(string))); isErr {
		t.Fatalf("list_projects after refresh: %s", out)
	}

	// Reusing the code fails and revokes what it issued: the tool call now fails.
	if status, body := c.exchange(q.Get("code"), verifier, c.redirect); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Fatalf("reused code: %d %v", status, body)
	}
	if out, isErr := listProjects(t, c.mcp(ref["access_token"].(string))); !isErr {
		t.Fatalf("token of a reused code still works: %s", out)
	}

	// Signed in now, so a second authorization asks nothing: the person already consented.
	authURL, verifier, _ = c.authorizeURL(c.redirect)
	do("reconnect", chromedp.Navigate(authURL), chromedp.WaitVisible(chromedp.CSS(`[data-testid="callback"]`)))
	q = c.callback()
	// ...but the wrong verifier and the wrong redirect_uri both fail.
	wrongVerifier := verifier[:len(verifier)-1] + "x"
	if status, body := c.exchange(q.Get("code"), wrongVerifier, c.redirect); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Fatalf("wrong verifier: %d %v", status, body)
	}
	do("reconnect", chromedp.Navigate(must(c.authorizeURL(c.redirect))), chromedp.WaitVisible(chromedp.CSS(`[data-testid="callback"]`)))
	q = c.callback()
	if status, body := c.exchange(q.Get("code"), verifier, c.redirect+"/other"); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Fatalf("wrong redirect_uri: %d %v", status, body)
	}

	// Disconnect on /account/apps: the tokens die at once.
	status, tok = c.exchange(func() string {
		u, v, _ := c.authorizeURL(c.redirect)
		do("reconnect", chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(`[data-testid="callback"]`)))
		verifier = v
		return c.callback().Get("code")
	}(), verifier, c.redirect)
	if status != http.StatusOK {
		t.Fatalf("token: %d %v", status, tok)
	}
	live := c.mcp(tok["access_token"].(string))
	do("apps", chromedp.Navigate(env.URL+"/account/apps"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="app"]`)))
	shot(t, ctx, "oauth-apps")
	(&person{t: t, ctx: ctx, base: env.URL, js: true, name: "ada"}).axe("connected apps")
	do("disconnect",
		chromedp.Click(chromedp.CSS(`[data-testid="app"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="apps-empty"]`)),
	)
	if out, isErr := listProjects(t, live); !isErr {
		t.Fatalf("token of a disconnected app still works: %s", out)
	}
	if status, body := c.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}}); status != http.StatusBadRequest {
		t.Fatalf("refresh of a disconnected app: %d %v", status, body)
	}

	// Deny: the app hears access_denied with its state.
	authURL, _, state = c.authorizeURL(c.redirect)
	do("deny",
		chromedp.Navigate(authURL),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="consent"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="consent-deny"] button`)),
		// The app's page has loaded before the next navigation starts, so neither aborts the other.
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="callback"]`)),
	)
	if q := c.callback(); q.Get("error") != "access_denied" || q.Get("state") != state || q.Has("code") {
		t.Fatalf("deny: %v", q)
	}

	// An authorization left open too long: the page says so.
	authURL, _, _ = c.authorizeURL(c.redirect)
	do("open consent", chromedp.Navigate(authURL), chromedp.WaitVisible(chromedp.CSS(`[data-testid="consent"]`)))
	if _, err := own.Exec(t.Context(), `update auth.oauth_authorizations set expires_at = now() - interval '1 second' where status = 'pending'`); err != nil {
		t.Fatal(err)
	}
	do("allow after expiry", chromedp.Click(chromedp.CSS(`[data-testid="consent-approve"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-text"]`)))
	if got := text(`h1`); !strings.Contains(got, "no longer valid") {
		t.Fatalf("expired authorization shows %q", got)
	}

	// An unregistered client and an unregistered redirect URI: an error page, no redirect.
	for _, bad := range []string{
		strings.Replace(must(c.authorizeURL(c.redirect)), "client_id="+c.clientID, "client_id=00000000-0000-0000-0000-000000000000", 1),
		must(c.authorizeURL("https://evil.test/callback")),
	} {
		do("bad request", chromedp.Navigate(bad), chromedp.WaitVisible(chromedp.CSS(`h1`)))
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		if got := text(`h1`); !strings.HasPrefix(loc, c.meta.Authorization) || got != "This app cannot be connected" {
			t.Fatalf("bad authorize request ended at %s with %q", loc, got)
		}
	}
	select {
	case q := <-c.codes:
		t.Fatalf("unexpected callback %v", q)
	default:
	}
}

func must(u, _, _ string) string { return u }

// shot saves a full-page screenshot as artifacts/<name>.png, for people reviewing the pages.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(artifacts, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
