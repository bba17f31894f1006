package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"masthead/internal/pg"
)

// Sign-in with upstream OpenID Connect providers, in GoTrue's PKCE flow so the dashboard (or
// supabase-js) needs nothing new: GET /authorize?provider=…&redirect_to=…&code_challenge=…
// sends the browser to the provider, the provider returns it to /callback, and the browser
// leaves for redirect_to with a one-time code that POST /token?grant_type=pkce exchanges, with
// the verifier, for an ordinary session.

// OIDCProvider is one upstream provider. Without a client id and secret it is listed as
// unavailable (GET /settings) and /authorize refuses it, instead of sending people to a
// provider that would turn them away.
type OIDCProvider struct {
	Name, Label  string // "google", "Google"
	Issuer       string
	ClientID     string
	ClientSecret string
}

func (p OIDCProvider) enabled() bool {
	return p.Issuer != "" && p.ClientID != "" && p.ClientSecret != ""
}

// flowTTL is how long a person may spend at the provider before the flow is forgotten.
const flowTTL = 10 * time.Minute

// oidcServer holds the providers and their discovered configuration.
type oidcServer struct {
	*Service
	providers []OIDCProvider
	hc        *http.Client

	mu        sync.Mutex
	upstreams map[string]*upstream // by provider name, discovered on first use
}

// upstream is a provider after discovery: how to send people there and check what comes back.
type upstream struct {
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier
}

func (s *Service) mountOIDC(g *echo.Group) {
	o := &oidcServer{Service: s, providers: s.opts.OIDC, hc: &http.Client{Timeout: 10 * time.Second},
		upstreams: map[string]*upstream{}}
	g.GET("/settings", o.settings, s.RequireAPIKey)
	g.GET("/authorize", o.authorize)
	g.GET("/callback", o.callback)
}

// settings is GoTrue's GET /settings: which external providers are enabled. external_labels
// (not in GoTrue) gives the names to show on a sign-in page.
func (o *oidcServer) settings(c echo.Context) error {
	ext := map[string]bool{"email": true}
	labels := map[string]string{}
	for _, p := range o.providers {
		ext[p.Name] = p.enabled()
		labels[p.Name] = p.Label
	}
	return c.JSON(http.StatusOK, map[string]any{"external": ext, "external_labels": labels,
		"disable_signup": true, "mailer_autoconfirm": false, "phone_autoconfirm": false})
}

func (o *oidcServer) provider(name string) (OIDCProvider, bool) {
	for _, p := range o.providers {
		if p.Name == name {
			return p, true
		}
	}
	return OIDCProvider{}, false
}

// upstreamOf discovers p once (its /.well-known/openid-configuration and keys); a failure is
// not remembered, so a provider that was down is tried again on the next sign-in.
func (o *oidcServer) upstreamOf(ctx context.Context, p OIDCProvider) (*upstream, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if u, ok := o.upstreams[p.Name]; ok {
		return u, nil
	}
	pr, err := oidc.NewProvider(oidc.ClientContext(ctx, o.hc), p.Issuer)
	if err != nil {
		return nil, fmt.Errorf("auth: discover %s: %w", p.Name, err)
	}
	u := &upstream{
		oauth: oauth2.Config{ClientID: p.ClientID, ClientSecret: p.ClientSecret, Endpoint: pr.Endpoint(),
			RedirectURL: o.opts.Issuer + "/callback", Scopes: []string{oidc.ScopeOpenID, "email", "profile"}},
		verifier: pr.VerifierContext(oidc.ClientContext(context.Background(), o.hc), &oidc.Config{ClientID: p.ClientID}),
	}
	o.upstreams[p.Name] = u
	return u, nil
}

var errProviderDisabled = apiError(http.StatusBadRequest, "provider_disabled", "Unsupported provider: provider is not enabled")

// authorize is GET /authorize?provider=…: it starts a flow and sends the browser to the provider.
func (o *oidcServer) authorize(c echo.Context) error {
	q := c.Request().URL.Query()
	p, ok := o.provider(q.Get("provider"))
	if !ok || !p.enabled() {
		return writeError(c, o.log, errProviderDisabled)
	}
	redirect := q.Get("redirect_to")
	if !o.ownURL(redirect) {
		return writeError(c, o.log, validationError("redirect_to must be a page of this site"))
	}
	challenge := q.Get("code_challenge")
	if !strings.EqualFold(q.Get("code_challenge_method"), "s256") || !isChallenge(challenge) {
		return writeError(c, o.log, validationError("code_challenge (S256) is required: only the PKCE flow is supported"))
	}
	ctx := c.Request().Context()
	up, err := o.upstreamOf(ctx, p)
	if err != nil {
		o.log.ErrorContext(ctx, "auth: oidc provider unreachable", "provider", p.Name, "err", err)
		return writeError(c, o.log, apiError(http.StatusBadGateway, CodeUnexpectedFailure, "The sign-in provider could not be reached; try again later"))
	}
	state, nonce, verifier := randomToken(32), randomToken(16), oauth2.GenerateVerifier()
	err = o.asAuthTx(ctx, "start flow", pg.ReadWrite, func(tx pgx.Tx) error {
		// Flows nobody finished are swept here, by the index on expires_at, so none outlive their use.
		_, err := tx.Exec(ctx, `
			with gc as (delete from auth.flow_state where expires_at < now())
			insert into auth.flow_state (state_hash, provider, nonce, upstream_verifier, code_challenge, redirect_to, expires_at)
			values ($1, $2, $3, $4, $5, $6, now() + $7::interval)`,
			hashToken(state), p.Name, nonce, verifier, challenge, redirect, flowTTL.String())
		return err
	})
	if err != nil {
		return writeError(c, o.log, err)
	}
	return c.Redirect(http.StatusFound, up.oauth.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)))
}

// ownURL reports a URL of this site: redirect_to may not send a sign-in code elsewhere.
func (s *Service) ownURL(raw string) bool {
	base := strings.TrimSuffix(s.opts.Issuer, "/auth/v1")
	u, err := url.Parse(raw)
	return err == nil && u.Fragment == "" && strings.HasPrefix(raw, base+"/")
}

// flowRow is a flow read back at the callback.
type flowRow struct {
	id, provider, nonce, verifier, redirect string
}

// callback is GET /callback, where the provider returns the browser.
func (o *oidcServer) callback(c echo.Context) error {
	q := c.Request().URL.Query()
	ctx := c.Request().Context()
	var f flowRow
	err := o.asAuthTx(ctx, "load flow", pg.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `
			select id::text, provider, nonce, upstream_verifier, redirect_to from auth.flow_state
			where state_hash = $1 and auth_code_hash is null and expires_at > now()`, hashToken(q.Get("state"))).Scan(
			&f.id, &f.provider, &f.nonce, &f.verifier, &f.redirect)
	})
	if pg.IsNoRows(err) {
		return errorPage(c, "This sign-in link has expired",
			invalidRequest("The sign-in took too long or was already finished. Go back and sign in again."))
	} else if err != nil {
		return writeError(c, o.log, err)
	}
	back := func(code, desc string) error {
		u, _ := url.Parse(f.redirect)
		v := u.Query()
		v.Set("error", code)
		v.Set("error_description", desc)
		u.RawQuery = v.Encode()
		return c.Redirect(http.StatusFound, u.String())
	}
	if e := q.Get("error"); e != "" {
		return back("access_denied", "The sign-in provider did not sign you in")
	}
	p, ok := o.provider(f.provider)
	if !ok || !p.enabled() {
		return back("server_error", "The sign-in provider is no longer enabled")
	}
	up, err := o.upstreamOf(ctx, p)
	if err != nil {
		o.log.ErrorContext(ctx, "auth: oidc provider unreachable", "provider", p.Name, "err", err)
		return back("server_error", "The sign-in provider could not be reached")
	}
	id, err := o.identify(ctx, up, f, q.Get("code"))
	if err != nil {
		o.log.WarnContext(ctx, "auth: oidc sign-in refused", "provider", p.Name, "err", err)
		return back("access_denied", "The sign-in provider's answer could not be accepted")
	}
	code := randomToken(32)
	err = o.asAuthTx(ctx, "finish flow", pg.ReadWrite, func(tx pgx.Tx) error {
		uid, err := linkIdentity(ctx, tx, p.Name, id)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			update auth.flow_state set user_id = $2, auth_code_hash = $3, expires_at = now() + $4::interval
			where id = $1 and auth_code_hash is null`, f.id, uid, hashToken(code), codeTTL.String())
		if err == nil && tag.RowsAffected() != 1 {
			err = errFlowNotFound
		}
		return err
	})
	switch {
	case errors.Is(err, errUnverifiedEmail):
		return back("access_denied", "An account with this email exists; the provider has not verified that the email is yours")
	case errors.Is(err, errFlowNotFound):
		return back("access_denied", "This sign-in was already finished")
	case err != nil:
		o.log.ErrorContext(ctx, "auth: oidc sign-in failed", "provider", p.Name, "err", err)
		return back("server_error", "The sign-in could not be completed")
	}
	u, _ := url.Parse(f.redirect)
	v := u.Query()
	v.Set("code", code)
	u.RawQuery = v.Encode()
	return c.Redirect(http.StatusFound, u.String())
}

// idClaims are what an ID token says about the person.
type idClaims struct {
	Subject       string `json:"sub"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
	Name          string `json:"name"`
	Picture       string `json:"picture"`
	Nonce         string `json:"nonce"`
}

// identify redeems the provider's code (with the flow's PKCE verifier) and checks the ID
// token: signature, issuer, audience and expiry by go-oidc, the nonce here.
func (o *oidcServer) identify(ctx context.Context, up *upstream, f flowRow, code string) (*idClaims, error) {
	ctx = oidc.ClientContext(ctx, o.hc)
	tok, err := up.oauth.Exchange(ctx, code, oauth2.VerifierOption(f.verifier))
	if err != nil {
		return nil, fmt.Errorf("exchange code: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, errors.New("no id_token in the token response")
	}
	idt, err := up.verifier.Verify(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("verify id_token: %w", err)
	}
	var cl idClaims
	if err := idt.Claims(&cl); err != nil {
		return nil, fmt.Errorf("id_token claims: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(cl.Nonce), []byte(f.nonce)) != 1 {
		return nil, errors.New("id_token nonce does not match the flow")
	}
	if cl.Email == "" {
		return nil, errors.New("id_token has no email")
	}
	return &cl, nil
}

var (
	errUnverifiedEmail = errors.New("auth: unverified email matches an existing account")
	errFlowNotFound    = apiError(http.StatusNotFound, "flow_state_not_found", "Code not found or already used; sign in again")
	errFlowVerifier    = apiError(http.StatusBadRequest, "bad_code_verifier", "code challenge does not match previously saved code verifier")
)

// linkIdentity returns the user for the provider's subject: the one already linked; else the
// user with the same email, but only when the provider verified it (otherwise anyone could
// claim an account by typing its email at a provider); else a new user.
func linkIdentity(ctx context.Context, tx pgx.Tx, provider string, id *idClaims) (string, error) {
	data, err := json.Marshal(id)
	if err != nil {
		return "", err
	}
	var uid string
	err = tx.QueryRow(ctx, `
		update auth.identities set last_sign_in_at = now(), identity_data = $3, email = $4
		where provider = $1 and provider_id = $2 returning user_id::text`, provider, id.Subject, data, id.Email).Scan(&uid)
	if err == nil || !pg.IsNoRows(err) {
		return uid, err
	}
	err = tx.QueryRow(ctx, `select id::text from auth.users where lower(email) = lower($1)`, id.Email).Scan(&uid)
	switch {
	case err == nil && !id.EmailVerified:
		return "", errUnverifiedEmail
	case pg.IsNoRows(err):
		meta, _ := json.Marshal(map[string]string{"name": id.Name, "avatar_url": id.Picture, "email": id.Email})
		var confirmed *time.Time
		if id.EmailVerified {
			now := time.Now()
			confirmed = &now
		}
		err = tx.QueryRow(ctx, `
			insert into auth.users (email, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
			values ($1, $2, jsonb_build_object('provider', $3::text, 'providers', jsonb_build_array($3::text)), $4)
			returning id::text`, id.Email, confirmed, provider, meta).Scan(&uid)
	}
	if err != nil {
		return "", err
	}
	_, err = tx.Exec(ctx, `
		insert into auth.identities (provider, provider_id, user_id, email, identity_data, last_sign_in_at)
		values ($1, $2, $3, $4, $5, now())`, provider, id.Subject, uid, id.Email, data)
	return uid, err
}

// PKCEGrant is POST /token?grant_type=pkce: the one-time code from /callback and the verifier
// of the challenge /authorize was given become a session. The code is gone after one try.
func (s *Service) PKCEGrant(ctx context.Context, code, verifier string, c Client) (*TokenResponse, error) {
	if err := s.limit(c, ""); err != nil {
		return nil, err
	}
	if code == "" || verifier == "" {
		return nil, validationError("auth_code and code_verifier are required")
	}
	var (
		u       *userRow
		sid     string
		started time.Time
		refresh = randomToken(32)
		refusal error
	)
	err := s.asAuthTx(ctx, "pkce grant", pg.ReadWrite, func(tx pgx.Tx) error {
		refusal = nil
		var uid, challenge string
		var expired bool
		err := tx.QueryRow(ctx, `
			delete from auth.flow_state where auth_code_hash = $1
			returning user_id::text, code_challenge, expires_at <= now()`, hashToken(code)).Scan(&uid, &challenge, &expired)
		if pg.IsNoRows(err) {
			refusal = errFlowNotFound
			return nil
		} else if err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(verifier))
		if expired || subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) != 1 {
			refusal = errFlowVerifier
			if expired {
				refusal = errFlowNotFound
			}
			return nil // commit: the code is used up either way
		}
		u, sid, started, err = startSession(ctx, tx, uid, c, sessionClient{}, refresh)
		if err == nil && u.banned(s.now()) {
			return errUserBanned // roll the session back
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if refusal != nil {
		return nil, refusal
	}
	return s.issue(u, sid, "aal1", started, refresh, sessionClient{})
}

// startSession opens a session for user uid with its first refresh token, on behalf of cl
// when an OAuth client asked for it, and returns the user as the token shows them.
func startSession(ctx context.Context, tx pgx.Tx, uid string, d Client, cl sessionClient, refresh string) (*userRow, string, time.Time, error) {
	var sid string
	var started time.Time
	u, err := scanUser(tx.QueryRow(ctx, `
		with s as (
		  insert into auth.sessions (user_id, user_agent, ip, oauth_client_id, scope)
		  values ($1, $2, $3, nullif($4, '')::uuid, nullif($5, '')) returning id, created_at
		), r as (
		  insert into auth.refresh_tokens (session_id, token_hash) select id, $6 from s
		), l as (
		  update auth.users set last_sign_in_at = now() where id = $1
		)
		select `+userColumns+`, s.id::text, s.created_at from auth.users u, s where u.id = $1`,
		uid, d.userAgent(), d.ip(), cl.ID, cl.Scope, hashToken(refresh)), &sid, &started)
	return u, sid, started, err
}
