package auth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// oauthClient is a registered client as a test drives it.
type oauthClient struct {
	id, secret, redirect string
}

// pkce is a verifier and its S256 challenge.
func pkce(seed string) (verifier, challenge string) {
	verifier = strings.Repeat(seed, 43/len(seed)+1)[:43] + "-._~padding"
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// noFollow is a client that reports redirects instead of following them.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (e *env) register(t testing.TB, meta map[string]any) oauthClient {
	t.Helper()
	res := e.do(t, request{path: "/auth/v1/oauth/clients/register", json: meta, noKey: true})
	if res.status != http.StatusCreated {
		t.Fatalf("register: %d %s", res.status, res.raw)
	}
	c := oauthClient{id: res.body["client_id"].(string), redirect: meta["redirect_uris"].([]string)[0]}
	c.secret, _ = res.body["client_secret"].(string)
	return c
}

func (e *env) publicClient(t testing.TB) oauthClient {
	t.Helper()
	return e.register(t, map[string]any{"client_name": "Test Assistant", "client_uri": "https://assistant.test",
		"redirect_uris": []string{"http://127.0.0.1:5555/callback"}, "token_endpoint_auth_method": "none"})
}

// authorize calls /oauth/authorize and returns the redirect's target.
func (e *env) authorize(t testing.TB, q url.Values) *url.URL {
	t.Helper()
	res, err := noFollow.Get(e.URL + "/auth/v1/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound {
		t.Fatalf("authorize: status %d, want 302", res.StatusCode)
	}
	u, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func authorizeQuery(c oauthClient, challenge string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {c.id}, "redirect_uri": {c.redirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"st-123"}, "scope": {"email profile"}}
}

// approve runs authorize and the consent API as the env's user; it returns the code.
func (e *env) approve(t testing.TB, c oauthClient, challenge, access string) string {
	t.Helper()
	loc := e.authorize(t, authorizeQuery(c, challenge))
	id := loc.Query().Get("authorization_id")
	if loc.Path != "/oauth/consent" || id == "" {
		t.Fatalf("authorize redirected to %s, want the consent page", loc)
	}
	res := e.do(t, request{method: http.MethodPost, path: "/auth/v1/oauth/authorizations/" + id + "/consent",
		json: map[string]string{"action": "approve"}, bearer: access, noKey: true})
	if res.status != http.StatusOK {
		t.Fatalf("consent: %d %s", res.status, res.raw)
	}
	back, err := url.Parse(res.body["redirect_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if back.Query().Get("state") != "st-123" || back.Query().Get("iss") != e.URL+"/auth/v1" {
		t.Fatalf("redirect_url %s lacks state or iss", back)
	}
	return back.Query().Get("code")
}

func (e *env) exchange(t testing.TB, c oauthClient, code, verifier string) response {
	t.Helper()
	return e.do(t, request{path: "/auth/v1/oauth/token", noKey: true, form: url.Values{
		"grant_type": {"authorization_code"}, "client_id": {c.id}, "code": {code},
		"redirect_uri": {c.redirect}, "code_verifier": {verifier}}})
}

func wantOAuthError(t testing.TB, res response, status int, code string) {
	t.Helper()
	if res.status != status || res.body["error"] != code {
		t.Fatalf("got %d %s, want %d error %s", res.status, res.raw, status, code)
	}
	if d, _ := res.body["error_description"].(string); d == "" {
		t.Fatalf("no error_description in %s", res.raw)
	}
}

func TestOAuthDiscovery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, path := range []string{"/.well-known/oauth-authorization-server/auth/v1", "/auth/v1/.well-known/oauth-authorization-server",
		"/auth/v1/.well-known/openid-configuration", "/.well-known/openid-configuration/auth/v1"} {
		res := e.do(t, request{method: http.MethodGet, path: path, noKey: true})
		if res.status != http.StatusOK {
			t.Fatalf("%s: %d", path, res.status)
		}
		iss := e.URL + "/auth/v1"
		if res.body["issuer"] != iss || res.body["token_endpoint"] != iss+"/oauth/token" ||
			res.body["registration_endpoint"] != iss+"/oauth/clients/register" {
			t.Fatalf("%s: %s", path, res.raw)
		}
		if m := res.body["code_challenge_methods_supported"].([]any); len(m) != 1 || m[0] != "S256" {
			t.Fatalf("%s: challenge methods %v", path, m)
		}
	}
}

func TestOAuthRegister(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	pub := e.publicClient(t)
	if pub.secret != "" {
		t.Fatal("a public client got a secret")
	}
	conf := e.register(t, map[string]any{"client_name": "Server app", "redirect_uris": []string{"https://server.test/cb"}})
	if conf.secret == "" {
		t.Fatal("the default method (client_secret_basic) should issue a secret")
	}
	var stored []byte
	if err := e.DB.Owner(t).QueryRow(context.Background(), `select client_secret_hash from auth.oauth_clients where id = $1`,
		conf.id).Scan(&stored); err != nil || strings.Contains(string(stored), conf.secret) {
		t.Fatalf("secret not stored as a hash (err %v)", err)
	}
	for name, meta := range map[string]map[string]any{
		"no redirect":       {"client_name": "x"},
		"http non-loopback": {"redirect_uris": []string{"http://app.test/cb"}},
		"fragment":          {"redirect_uris": []string{"https://app.test/cb#x"}},
		"javascript":        {"redirect_uris": []string{"javascript:alert(1)"}},
		"userinfo":          {"redirect_uris": []string{"https://app.test@evil.test/cb"}},
		"user and password": {"redirect_uris": []string{"http://me:pw@127.0.0.1/cb"}},
	} {
		res := e.do(t, request{path: "/auth/v1/oauth/clients/register", json: meta, noKey: true})
		if res.status != http.StatusBadRequest || res.body["error"] != "invalid_redirect_uri" {
			t.Errorf("%s: %d %s", name, res.status, res.raw)
		}
	}
	res := e.do(t, request{path: "/auth/v1/oauth/clients/register", noKey: true,
		json: map[string]any{"redirect_uris": []string{"https://a.test/cb"}, "grant_types": []string{"password"}}})
	wantOAuthError(t, res, http.StatusBadRequest, "invalid_client_metadata")
}

func TestOAuthRegisterRateLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	meta := map[string]any{"redirect_uris": []string{"https://a.test/cb"}, "token_endpoint_auth_method": "none"}
	var last response
	for range 21 {
		last = e.do(t, request{path: "/auth/v1/oauth/clients/register", json: meta, noKey: true})
	}
	if last.status != http.StatusTooManyRequests || last.header.Get("Retry-After") == "" {
		t.Fatalf("21st registration: %d %s", last.status, last.raw)
	}
}

// TestOAuthCodeFlow is the whole grant as a client sees it, then each way it must fail.
func TestOAuthCodeFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	c := e.publicClient(t)
	verifier, challenge := pkce("abc")

	// details as the consent page sees them
	loc := e.authorize(t, authorizeQuery(c, challenge))
	id := loc.Query().Get("authorization_id")
	res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/oauth/authorizations/" + id, bearer: s.access, noKey: true})
	if res.status != http.StatusOK || res.body["scope"] != "email profile" ||
		res.body["client"].(map[string]any)["name"] != "Test Assistant" ||
		res.body["user"].(map[string]any)["email"] != e.user.Email {
		t.Fatalf("details: %d %s", res.status, res.raw)
	}
	// nobody else may look at or answer it
	other := e.CreateUser(t, "bob@northwind.test", "correct horse battery")
	so := e.signIn(t, other.Email, other.Password)
	res = e.do(t, request{method: http.MethodGet, path: "/auth/v1/oauth/authorizations/" + id, bearer: so.access, noKey: true})
	wantError(t, res, http.StatusNotFound, "oauth_authorization_not_found")

	code := e.approve(t, c, challenge, s.access)
	tok := e.exchange(t, c, code, verifier)
	if tok.status != http.StatusOK || tok.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("token: %d %s", tok.status, tok.raw)
	}
	access, refresh := tok.body["access_token"].(string), tok.body["refresh_token"].(string)
	_, claims := jwtParts(t, access)
	if claims["client_id"] != c.id || claims["scope"] != "email profile" || claims["sub"] != e.user.ID {
		t.Fatalf("claims: %v", claims)
	}
	if res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: access}); res.status != http.StatusOK {
		t.Fatalf("user with the OAuth token: %d %s", res.status, res.raw)
	}

	// refresh keeps client and scope; another client cannot use the token
	c2 := e.publicClient(t)
	res = e.do(t, request{path: "/auth/v1/oauth/token", noKey: true, form: url.Values{
		"grant_type": {"refresh_token"}, "client_id": {c2.id}, "refresh_token": {refresh}}})
	wantOAuthError(t, res, http.StatusBadRequest, "invalid_grant")
	res = e.do(t, request{path: "/auth/v1/oauth/token", noKey: true, form: url.Values{
		"grant_type": {"refresh_token"}, "client_id": {c.id}, "refresh_token": {refresh}}})
	if res.status != http.StatusOK {
		t.Fatalf("refresh: %d %s", res.status, res.raw)
	}
	_, claims = jwtParts(t, res.body["access_token"].(string))
	if claims["client_id"] != c.id || claims["scope"] != "email profile" {
		t.Fatalf("refreshed claims: %v", claims)
	}
	access = res.body["access_token"].(string)

	// the code again: refused, and what it issued is revoked
	wantOAuthError(t, e.exchange(t, c, code, verifier), http.StatusBadRequest, "invalid_grant")
	if res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: access}); res.status != http.StatusForbidden {
		t.Fatalf("token of a reused code still works: %d %s", res.status, res.raw)
	}
	if len(e.Logs.Lines("authorization code reused")) != 1 {
		t.Fatal("reuse not logged")
	}

	t.Run("wrong verifier", func(t *testing.T) {
		code := e.approve(t, c, challenge, s.access)
		wrong, _ := pkce("xyz")
		wantOAuthError(t, e.exchange(t, c, code, wrong), http.StatusBadRequest, "invalid_grant")
		// the attempt used the code up
		wantOAuthError(t, e.exchange(t, c, code, verifier), http.StatusBadRequest, "invalid_grant")
	})
	t.Run("wrong redirect_uri", func(t *testing.T) {
		code := e.approve(t, c, challenge, s.access)
		bad := c
		bad.redirect = "http://127.0.0.1:5555/elsewhere"
		wantOAuthError(t, e.exchange(t, bad, code, verifier), http.StatusBadRequest, "invalid_grant")
	})
	t.Run("another client", func(t *testing.T) {
		code := e.approve(t, c, challenge, s.access)
		wantOAuthError(t, e.exchange(t, c2, code, verifier), http.StatusBadRequest, "invalid_grant")
	})
	t.Run("expired code", func(t *testing.T) {
		code := e.approve(t, c, challenge, s.access)
		if _, err := e.DB.Owner(t).Exec(context.Background(),
			`update auth.oauth_authorizations set expires_at = now() - interval '1 second' where status = 'approved' and code_used_at is null`); err != nil {
			t.Fatal(err)
		}
		wantOAuthError(t, e.exchange(t, c, code, verifier), http.StatusBadRequest, "invalid_grant")
	})
	t.Run("public client named in Basic", func(t *testing.T) {
		code := e.approve(t, c, challenge, s.access)
		res := e.do(t, request{path: "/auth/v1/oauth/token", noKey: true, form: url.Values{
			"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.redirect}, "code_verifier": {verifier}},
			headers: map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(c.id+":"))}})
		if res.status != http.StatusOK {
			t.Fatalf("%d %s", res.status, res.raw)
		}
	})
	t.Run("unknown client at the token endpoint", func(t *testing.T) {
		bad := c
		bad.id = "00000000-0000-0000-0000-000000000000"
		wantOAuthError(t, e.exchange(t, bad, "x", verifier), http.StatusUnauthorized, "invalid_client")
	})
}

func TestOAuthAuthorizeErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	c := e.publicClient(t)
	_, challenge := pkce("abc")

	// not redirected: the client or the redirect URI cannot be trusted
	for name, change := range map[string]func(url.Values){
		"unregistered client":   func(q url.Values) { q.Set("client_id", "00000000-0000-0000-0000-000000000000") },
		"malformed client":      func(q url.Values) { q.Set("client_id", "nope") },
		"unregistered redirect": func(q url.Values) { q.Set("redirect_uri", "https://evil.test/cb") },
	} {
		q := authorizeQuery(c, challenge)
		change(q)
		req, _ := http.NewRequest(http.MethodGet, e.URL+"/auth/v1/oauth/authorize?"+q.Encode(), nil)
		req.Header.Set("Accept", "text/html")
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" {
			t.Errorf("%s: %d, location %q; want 400 without redirect", name, res.StatusCode, res.Header.Get("Location"))
		}
	}
	// redirected with error and state
	for name, tc := range map[string]struct {
		change func(url.Values)
		code   string
	}{
		"no PKCE":        {func(q url.Values) { q.Del("code_challenge") }, "invalid_request"},
		"plain PKCE":     {func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
		"token response": {func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		"unknown scope":  {func(q url.Values) { q.Set("scope", "admin") }, "invalid_scope"},
		"other resource": {func(q url.Values) { q.Set("resource", "https://other.test/mcp") }, "invalid_target"},
	} {
		q := authorizeQuery(c, challenge)
		tc.change(q)
		loc := e.authorize(t, q)
		if loc.Host != "127.0.0.1:5555" || loc.Query().Get("error") != tc.code || loc.Query().Get("state") != "st-123" {
			t.Errorf("%s: redirected to %s, want error %s", name, loc, tc.code)
		}
	}

	// deny
	loc := e.authorize(t, authorizeQuery(c, challenge))
	id := loc.Query().Get("authorization_id")
	res := e.do(t, request{method: http.MethodPost, path: "/auth/v1/oauth/authorizations/" + id + "/consent",
		json: map[string]string{"action": "deny"}, bearer: s.access, noKey: true})
	back, _ := url.Parse(res.body["redirect_url"].(string))
	if back.Query().Get("error") != "access_denied" || back.Query().Get("state") != "st-123" || back.Query().Has("code") {
		t.Fatalf("deny: %s", back)
	}
	res = e.do(t, request{method: http.MethodPost, path: "/auth/v1/oauth/authorizations/" + id + "/consent",
		json: map[string]string{"action": "approve"}, bearer: s.access, noKey: true})
	wantError(t, res, http.StatusConflict, "oauth_authorization_decided")

	// an authorization left too long expires
	loc = e.authorize(t, authorizeQuery(c, challenge))
	id = loc.Query().Get("authorization_id")
	if _, err := e.DB.Owner(t).Exec(context.Background(),
		`update auth.oauth_authorizations set expires_at = now() - interval '1 second' where id = $1`, id); err != nil {
		t.Fatal(err)
	}
	res = e.do(t, request{method: http.MethodGet, path: "/auth/v1/oauth/authorizations/" + id, bearer: s.access, noKey: true})
	wantError(t, res, http.StatusNotFound, "oauth_authorization_not_found")
	// signed out: no decisions
	res = e.do(t, request{method: http.MethodGet, path: "/auth/v1/oauth/authorizations/" + id, noKey: true})
	wantError(t, res, http.StatusUnauthorized, "no_authorization")
}

func TestOAuthConfidentialClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	verifier, challenge := pkce("conf")
	for _, method := range []string{"client_secret_basic", "client_secret_post"} {
		c := e.register(t, map[string]any{"client_name": method, "redirect_uris": []string{"https://server.test/cb"},
			"token_endpoint_auth_method": method})
		code := e.approve(t, c, challenge, s.access)
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.redirect}, "code_verifier": {verifier}}
		// without the secret: invalid_client
		res := e.do(t, request{path: "/auth/v1/oauth/token", noKey: true, form: url.Values{
			"grant_type": {"authorization_code"}, "client_id": {c.id}, "code": {code}, "redirect_uri": {c.redirect}, "code_verifier": {verifier}}})
		wantOAuthError(t, res, http.StatusUnauthorized, "invalid_client")
		r := request{path: "/auth/v1/oauth/token", noKey: true, form: form}
		if method == "client_secret_basic" {
			r.headers = map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(c.id+":"+c.secret))}
		} else {
			form.Set("client_id", c.id)
			form.Set("client_secret", c.secret)
		}
		if res := e.do(t, r); res.status != http.StatusOK {
			t.Fatalf("%s: %d %s", method, res.status, res.raw)
		}
	}
}

func TestOAuthGrants(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	c := e.publicClient(t)
	verifier, challenge := pkce("grant")
	tok := e.exchange(t, c, e.approve(t, c, challenge, s.access), verifier)

	req, _ := http.NewRequest(http.MethodGet, e.URL+"/auth/v1/user/oauth/grants", nil)
	req.Header.Set("apikey", e.Key)
	req.Header.Set("Authorization", "Bearer "+s.access)
	list, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(list.Body)
	list.Body.Close()
	if list.StatusCode != http.StatusOK || !strings.Contains(string(raw), `"name":"Test Assistant"`) ||
		!strings.Contains(string(raw), `"scopes":["email","profile"]`) {
		t.Fatalf("grants: %d %s", list.StatusCode, raw)
	}
	// a second authorization is approved at once: the person already consented
	loc := e.authorize(t, authorizeQuery(c, challenge))
	res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/oauth/authorizations/" + loc.Query().Get("authorization_id"),
		bearer: s.access, noKey: true})
	if u, _ := res.body["redirect_url"].(string); !strings.Contains(u, "code=") {
		t.Fatalf("already consented: %s", res.raw)
	}

	res = e.do(t, request{method: http.MethodDelete, path: "/auth/v1/user/oauth/grants?client_id=" + c.id, bearer: s.access})
	if res.status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", res.status, res.raw)
	}
	if res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: tok.body["access_token"].(string)}); res.status != http.StatusForbidden {
		t.Fatalf("access token of a revoked app: %d", res.status)
	}
	res = e.do(t, request{path: "/auth/v1/oauth/token", noKey: true, form: url.Values{
		"grant_type": {"refresh_token"}, "client_id": {c.id}, "refresh_token": {tok.body["refresh_token"].(string)}}})
	wantOAuthError(t, res, http.StatusBadRequest, "invalid_grant")
	// the person's own session is untouched
	if res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: s.access}); res.status != http.StatusOK {
		t.Fatalf("own session after revoking an app: %d", res.status)
	}
	res = e.do(t, request{method: http.MethodDelete, path: "/auth/v1/user/oauth/grants?client_id=" + c.id, bearer: s.access})
	wantError(t, res, http.StatusNotFound, "oauth_grant_not_found")
}

// TestOAuthIDToken asks for openid: the token response carries an ID token for the client,
// with the request's nonce, that no surface accepts as an access token.
func TestOAuthIDToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.signIn(t, e.user.Email, e.user.Password)
	c := e.publicClient(t)
	verifier, challenge := pkce("oidc")
	q := authorizeQuery(c, challenge)
	q.Set("scope", "openid email")
	q.Set("nonce", "n-0S6_WzA2Mj")
	id := e.authorize(t, q).Query().Get("authorization_id")
	res := e.do(t, request{method: http.MethodPost, path: "/auth/v1/oauth/authorizations/" + id + "/consent",
		json: map[string]string{"action": "approve"}, bearer: s.access, noKey: true})
	back, _ := url.Parse(res.body["redirect_url"].(string))
	tok := e.exchange(t, c, back.Query().Get("code"), verifier)
	idt, _ := tok.body["id_token"].(string)
	if tok.status != http.StatusOK || idt == "" {
		t.Fatalf("token: %d %s", tok.status, tok.raw)
	}
	_, claims := jwtParts(t, idt)
	if claims["aud"] != c.id || claims["nonce"] != "n-0S6_WzA2Mj" || claims["email"] != e.user.Email ||
		claims["sub"] != e.user.ID || claims["iss"] != e.URL+"/auth/v1" {
		t.Fatalf("id_token claims: %v", claims)
	}
	if res := e.do(t, request{method: http.MethodGet, path: "/auth/v1/user", bearer: idt}); res.status != http.StatusForbidden {
		t.Fatalf("the ID token was taken as an access token: %d", res.status)
	}
}
