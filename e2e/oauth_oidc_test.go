package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"masthead/internal/config"
	"masthead/internal/server/servertest"
)

// standInProvider is an in-process OpenID Connect provider standing in for Google: a real one
// cannot be reached from tests. It speaks the parts the service uses (discovery, authorize
// with PKCE and nonce, token with client authentication, JWKS, ES256 ID tokens) and treats
// the person as already signed in there, as whoever `person` currently names.
type standInProvider struct {
	t              *testing.T
	srv            *httptest.Server
	key            *ecdsa.PrivateKey
	clientID       string
	clientSecret   string
	mu             sync.Mutex
	person         idPerson
	codes          map[string]pendingCode
	authorizations int
}

type idPerson struct {
	sub, email, name string
	verified         bool
}

type pendingCode struct {
	challenge, nonce, redirect string
	who                        idPerson
}

func newStandInProvider(t *testing.T) *standInProvider {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &standInProvider{t: t, key: key, clientID: "masthead-e2e", clientSecret: rand.Text(), codes: map[string]pendingCode{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("GET /jwks", p.jwks)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *standInProvider) discovery(w http.ResponseWriter, _ *http.Request) {
	u := p.srv.URL
	_ = json.NewEncoder(w).Encode(map[string]any{"issuer": u, "authorization_endpoint": u + "/authorize",
		"token_endpoint": u + "/token", "jwks_uri": u + "/jwks", "response_types_supported": []string{"code"},
		"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"ES256"},
		"code_challenge_methods_supported": []string{"S256"}})
}

func (p *standInProvider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != p.clientID || q.Get("code_challenge_method") != "S256" || q.Get("nonce") == "" ||
		!strings.Contains(q.Get("scope"), "openid") {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	p.mu.Lock()
	p.codes[code] = pendingCode{challenge: q.Get("code_challenge"), nonce: q.Get("nonce"), redirect: q.Get("redirect_uri"), who: p.person}
	p.authorizations++
	p.mu.Unlock()
	to, _ := url.Parse(q.Get("redirect_uri"))
	to.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (p *standInProvider) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	p.mu.Lock()
	pc, found := p.codes[r.PostFormValue("code")]
	delete(p.codes, r.PostFormValue("code"))
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
	if id != p.clientID || secret != p.clientSecret || !found || pc.redirect != r.PostFormValue("redirect_uri") ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != pc.challenge {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
		return
	}
	now := time.Now()
	claims, _ := json.Marshal(map[string]any{"iss": p.srv.URL, "sub": pc.who.sub, "aud": p.clientID,
		"exp": now.Add(5 * time.Minute).Unix(), "iat": now.Unix(), "nonce": pc.nonce,
		"email": pc.who.email, "email_verified": pc.who.verified, "name": pc.who.name})
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.KeyIDKey, "stand-in")
	idToken, err := jws.Sign(claims, jws.WithKey(jwa.ES256(), p.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		p.t.Error(err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": rand.Text(), "token_type": "Bearer",
		"expires_in": 300, "id_token": string(idToken)})
}

func (p *standInProvider) jwks(w http.ResponseWriter, _ *http.Request) {
	k, err := jwk.Import(&p.key.PublicKey)
	if err != nil {
		p.t.Error(err)
		return
	}
	_ = k.Set(jwk.KeyIDKey, "stand-in")
	_ = k.Set(jwk.AlgorithmKey, jwa.ES256())
	set := jwk.NewSet()
	_ = set.AddKey(k)
	_ = json.NewEncoder(w).Encode(set)
}

func (p *standInProvider) signedInAs(who idPerson) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.person = who
}

// TestOIDCSignIn signs people in on /login through the stand-in provider configured as
// Google: a new person gets an account, a known verified email reaches the existing account,
// an unverified one may not take it over, and GitLab, without credentials, is listed as
// unavailable.
func TestOIDCSignIn(t *testing.T) {
	idp := newStandInProvider(t)
	env := servertest.New(t, func(c *config.Config) {
		c.OIDC[0].Issuer, c.OIDC[0].ClientID, c.OIDC[0].ClientSecret = idp.srv.URL, idp.clientID, idp.clientSecret
	})
	ada := env.CreateUser(t, "ada@northwind.test", "correct horse battery")
	browser := newBrowser(t)

	signIn := func(who idPerson, next string) (context.Context, string) {
		t.Helper()
		idp.signedInAs(who)
		ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		ctx, cancelTimeout := context.WithTimeout(ctx, time.Minute)
		t.Cleanup(cancelTimeout)
		err := chromedp.Do(ctx,
			chromedp.Navigate(env.URL+"/login"+next),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-providers"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="login-providers"] a`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="user"], [data-testid="login-error"]`)),
		)
		if err != nil {
			t.Fatalf("sign in as %s: %v", who.email, err)
		}
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		return ctx, loc
	}
	text := func(ctx context.Context, sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}

	// The sign-in page offers both; GitLab has no credentials here.
	ctx, _ := signIn(idPerson{sub: "g-100", email: "grace@navy.test", name: "Grace Hopper", verified: true}, "?next=/account/apps")
	if got := text(ctx, `[data-testid="user"]`); got != "Grace Hopper" {
		t.Fatalf("signed in as %q", got)
	}
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); loc != env.URL+"/account/apps" {
		t.Fatalf("after sign-in at %s, want the page asked for", loc)
	}
	var uid string
	if err := env.DB.Owner(t).QueryRow(t.Context(), `select user_id::text from auth.identities where provider = 'google' and provider_id = 'g-100'`).Scan(&uid); err != nil {
		t.Fatalf("no identity recorded: %v", err)
	}
	// signing in again reaches the same account
	signIn(idPerson{sub: "g-100", email: "grace@navy.test", name: "Grace Hopper", verified: true}, "")
	var n int
	if err := env.DB.Owner(t).QueryRow(t.Context(), `select count(*) from auth.users where lower(email) = 'grace@navy.test'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("users for grace: %d (%v)", n, err)
	}

	// An unverified email of an existing account is refused; a verified one is linked.
	ctx, _ = signIn(idPerson{sub: "g-200", email: ada.Email, name: "Not Ada", verified: false}, "")
	if got := text(ctx, `[data-testid="login-error"]`); !strings.Contains(got, "verified") {
		t.Fatalf("unverified takeover: %q", got)
	}
	signIn(idPerson{sub: "g-201", email: ada.Email, name: "Ada", verified: true}, "")
	if err := env.DB.Owner(t).QueryRow(t.Context(), `select user_id::text from auth.identities where provider_id = 'g-201'`).Scan(&uid); err != nil || uid != ada.ID {
		t.Fatalf("verified email linked to %s (%v), want %s", uid, err, ada.ID)
	}

	// GitLab, configured nowhere: not on the page at all; the service refuses it without sending
	// anyone away.
	res, err := http.Get(env.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.Contains(string(page), "GitLab") || !strings.Contains(string(page), `href="/login/provider/google"`) {
		t.Fatalf("sign-in page providers:\n%s", page)
	}
	res, err = http.Get(env.URL + "/auth/v1/authorize?provider=gitlab&redirect_to=" + url.QueryEscape(env.URL+"/login/callback"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || res.Header.Get("x-sb-error-code") != "provider_disabled" {
		t.Fatalf("gitlab authorize: %d %s", res.StatusCode, res.Header.Get("x-sb-error-code"))
	}
	if idp.authorizations != 4 {
		t.Fatalf("the stand-in saw %d authorizations, want 4", idp.authorizations)
	}
}
