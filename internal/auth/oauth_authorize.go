package auth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// appRefused heads the page shown for an authorization request that cannot go back to the app.
const appRefused = "This app cannot be connected"

// authorize is GET /oauth/authorize (RFC 6749 4.1.1 with PKCE, RFC 7636, required as OAuth 2.1
// requires it). The request is checked in two stages: while the client or redirect URI is in
// doubt, the person sees an error page; once both are known, every other problem goes back to
// the client as an error redirect carrying its state.
func (o *oauthServer) authorize(c echo.Context) error {
	// Anyone may ask, without signing in, and each valid request stores an authorization: a
	// limit per client address keeps a script from filling the table.
	if ok, wait := o.authorizeLimit.allow(c.RealIP(), o.now()); !ok {
		c.Response().Header().Set("Retry-After", strconv.Itoa(max(1, int(wait.Seconds()+0.5))))
		return errorPage(c, appRefused, oauthErr(http.StatusTooManyRequests, "temporarily_unavailable",
			"Too many authorization requests from this address; try again shortly."))
	}
	q := c.Request().URL.Query()
	ctx := c.Request().Context()
	var cl *oauthClient
	err := o.asAuthTx(ctx, "load client", pg.ReadOnly, func(tx pgx.Tx) error {
		var err error
		cl, err = loadClient(ctx, tx, q.Get("client_id"))
		return err
	})
	if pg.IsNoRows(err) {
		return errorPage(c, appRefused, oauthErr(http.StatusBadRequest, "invalid_client", "The app's client_id is missing or not registered here."))
	} else if err != nil {
		return o.writeOAuthError(c, err)
	}
	redirect, given := q.Get("redirect_uri"), q.Has("redirect_uri")
	switch {
	case given && !matchRedirect(cl.RedirectURIs, redirect):
		return errorPage(c, appRefused, invalidRequest("The redirect_uri is not one the app registered."))
	case !given && len(cl.RedirectURIs) != 1:
		return errorPage(c, appRefused, invalidRequest("The app registered several redirect URIs, so the request must name one."))
	case !given:
		redirect = cl.RedirectURIs[0]
	}
	fail := func(code, desc string) error {
		return c.Redirect(http.StatusFound, o.withParams(redirect, url.Values{
			"error": {code}, "error_description": {desc}, "state": {q.Get("state")},
		}))
	}
	if q.Get("response_type") != "code" {
		return fail("unsupported_response_type", "response_type must be code")
	}
	if !cl.allows("authorization_code") {
		return fail("unauthorized_client", "the app did not register the authorization_code grant")
	}
	challenge := q.Get("code_challenge")
	if challenge == "" {
		return fail("invalid_request", "code_challenge is required (PKCE)")
	}
	if q.Get("code_challenge_method") != "S256" {
		return fail("invalid_request", "code_challenge_method must be S256")
	}
	if !isChallenge(challenge) {
		return fail("invalid_request", "code_challenge must be the base64url SHA-256 of the code verifier (43 characters)")
	}
	scope, ok := normaliseScope(q.Get("scope"))
	if !ok {
		return fail("invalid_scope", "scope may hold openid, email and profile")
	}
	resource := q.Get("resource")
	if resource != "" && !o.ownResource(resource) {
		return fail("invalid_target", "resource must be this service (its base URL or a path below it, such as /mcp)")
	}
	state, nonce := q.Get("state"), q.Get("nonce")
	if len(state) > 2000 || len(nonce) > 500 {
		return fail("invalid_request", "state or nonce is too long")
	}
	if !plainText(state) || !plainText(nonce) {
		return fail("invalid_request", "state and nonce must be UTF-8 text without control characters")
	}
	var id string
	err = o.asAuthTx(ctx, "start authorization", pg.ReadWrite, func(tx pgx.Tx) error {
		// Authorizations a day past their expiry are swept here. Used ones are kept that long so
		// that a code replayed late still revokes what it issued.
		return tx.QueryRow(ctx, `
			with gc as (delete from auth.oauth_authorizations where expires_at < now() - interval '1 day')
			insert into auth.oauth_authorizations (client_id, redirect_uri, redirect_uri_given, scope, state, resource,
			  code_challenge, expires_at, nonce)
			values ($1, $2, $3, $4, nullif($5, ''), nullif($6, ''), $7, now() + $8::interval, nullif($9, ''))
			returning id::text`,
			cl.ID, redirect, given, scope, state, resource, challenge, authorizationTTL.String(), nonce).Scan(&id)
	})
	if err != nil {
		return o.writeOAuthError(c, err)
	}
	return c.Redirect(http.StatusFound, o.consentURL+"?authorization_id="+url.QueryEscape(id))
}

// withParams appends params (and iss, RFC 9207, so a client talking to several servers can
// tell which one answered) to the query of redirect; empty values are left out.
func (o *oauthServer) withParams(redirect string, params url.Values) string {
	u, _ := url.Parse(redirect) // registered URIs were parsed at registration
	q := u.Query()
	for k, vs := range params {
		if len(vs) > 0 && vs[0] != "" {
			q.Set(k, vs[0])
		}
	}
	q.Set("iss", o.opts.Issuer)
	u.RawQuery = q.Encode()
	return u.String()
}

// plainText reports UTF-8 text without control characters: what a value the server keeps and
// sends back must be (PostgreSQL's text refuses other bytes, and a NUL).
func plainText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, isControl)
}

// isChallenge reports a base64url (unpadded) SHA-256: 43 characters of its alphabet.
func isChallenge(s string) bool {
	if len(s) != 43 {
		return false
	}
	for _, r := range s {
		if !('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// normaliseScope sorts and de-duplicates a space-separated scope; ok is false when it asks for
// a scope this server does not grant.
func normaliseScope(raw string) (string, bool) {
	fields := strings.Fields(raw)
	if len(fields) == 0 {
		return defaultScope, true
	}
	for _, f := range fields {
		if !grantableScopes[f] {
			return "", false
		}
	}
	return strings.Join(slices.Compact(slices.Sorted(slices.Values(fields))), " "), true
}

// ownResource reports whether resource (RFC 8707) names this service: the tokens are only
// good here, so a client asking for another audience must be told so now, not at that server.
func (o *oauthServer) ownResource(resource string) bool {
	u, err := url.Parse(resource)
	if err != nil || u.Fragment != "" || !plainText(resource) {
		return false
	}
	base := strings.TrimSuffix(o.opts.Issuer, "/auth/v1")
	r := strings.TrimRight(resource, "/")
	return r == base || strings.HasPrefix(r, base+"/")
}

// AuthorizationDetails is what the consent page shows (Supabase's getAuthorizationDetails).
type AuthorizationDetails struct {
	AuthorizationID string         `json:"authorization_id"`
	RedirectURI     string         `json:"redirect_uri"`
	Client          ClientSummary  `json:"client"`
	User            DetailsUser    `json:"user"`
	Scope           string         `json:"scope"`
	Resource        string         `json:"resource,omitempty"`
	ExpiresAt       time.Time      `json:"expires_at"`
	Redirect        *ConsentResult `json:"-"`
}

// ClientSummary is a client as people see it.
type ClientSummary struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	URI     string `json:"uri,omitempty"`
	LogoURI string `json:"logo_uri,omitempty"`
}

// DetailsUser is the signed-in person deciding.
type DetailsUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// ConsentResult is where the person's browser goes next, with the code or the refusal.
type ConsentResult struct {
	RedirectURL string `json:"redirect_url"`
}

var (
	errAuthorizationNotFound = apiError(http.StatusNotFound, "oauth_authorization_not_found",
		"This authorization request does not exist or has expired; start again from the app")
	errAuthorizationDecided = apiError(http.StatusConflict, "oauth_authorization_decided",
		"This authorization request has already been answered; start again from the app")
)

// pendingAuthorization is an authorization row locked for a decision.
type pendingAuthorization struct {
	id, redirect, scope, state, resource string
	status                               string
	expires                              time.Time
	client                               *oauthClient
}

// lockAuthorization loads authorization id for the person sub, binding it to them if nobody
// has opened it yet. Someone else's, an expired or an unknown one all read as not found.
func lockAuthorization(ctx context.Context, tx pgx.Tx, id, sub string) (*pendingAuthorization, error) {
	if !isUUID(id) {
		return nil, errAuthorizationNotFound
	}
	a := &pendingAuthorization{id: id}
	var owner *string
	var clientID string
	var expired bool
	err := tx.QueryRow(ctx, `
		select client_id::text, user_id::text, redirect_uri, scope, coalesce(state, ''), coalesce(resource, ''),
		  status, expires_at, expires_at <= now()
		from auth.oauth_authorizations where id = $1 for update`, id).Scan(
		&clientID, &owner, &a.redirect, &a.scope, &a.state, &a.resource, &a.status, &a.expires, &expired)
	if pg.IsNoRows(err) || err == nil && (expired || owner != nil && *owner != sub) {
		return nil, errAuthorizationNotFound
	} else if err != nil {
		return nil, err
	}
	if a.status != "pending" {
		return nil, errAuthorizationDecided
	}
	if owner == nil {
		if _, err := tx.Exec(ctx, `update auth.oauth_authorizations set user_id = $2 where id = $1`, id, sub); err != nil {
			return nil, err
		}
	}
	if a.client, err = loadClient(ctx, tx, clientID); err != nil {
		return nil, err
	}
	return a, nil
}

// Authorization returns what the consent page shows for authorization id to the signed-in
// person. When they already granted this client every scope it asks for, it is approved at
// once and only Redirect is set, as Supabase does: reconnecting an app asks nothing again.
func (s *Service) Authorization(ctx context.Context, claims *Claims, id string) (*AuthorizationDetails, error) {
	var d *AuthorizationDetails
	err := s.asAuthTx(ctx, "load authorization", pg.ReadWrite, func(tx pgx.Tx) error {
		a, err := lockAuthorization(ctx, tx, id, claims.Subject)
		if err != nil {
			return err
		}
		var granted []string
		err = tx.QueryRow(ctx, `select scopes from auth.oauth_consents where user_id = $1 and client_id = $2`,
			claims.Subject, a.client.ID).Scan(&granted)
		if err != nil && !pg.IsNoRows(err) {
			return err
		}
		if err == nil && containsAll(granted, strings.Fields(a.scope)) {
			r, err := s.decide(ctx, tx, a, claims.Subject, true)
			d = &AuthorizationDetails{Redirect: r}
			return err
		}
		d = &AuthorizationDetails{
			AuthorizationID: a.id, RedirectURI: a.redirect, Scope: a.scope, Resource: a.resource, ExpiresAt: a.expires,
			Client: a.client.summary(), User: DetailsUser{ID: claims.Subject, Email: claims.Email},
		}
		return nil
	})
	return d, err
}

func (c *oauthClient) summary() ClientSummary {
	return ClientSummary{ID: c.ID, Name: c.Name, URI: c.URI, LogoURI: c.LogoURI}
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// Consent records the person's decision on authorization id: approve issues a single-use code
// and remembers the grant; deny sends access_denied back (RFC 6749 4.1.2.1).
func (s *Service) Consent(ctx context.Context, claims *Claims, id string, approve bool) (*ConsentResult, error) {
	var r *ConsentResult
	err := s.asAuthTx(ctx, "decide authorization", pg.ReadWrite, func(tx pgx.Tx) error {
		a, err := lockAuthorization(ctx, tx, id, claims.Subject)
		if err != nil {
			return err
		}
		r, err = s.decide(ctx, tx, a, claims.Subject, approve)
		return err
	})
	return r, err
}

func (s *Service) decide(ctx context.Context, tx pgx.Tx, a *pendingAuthorization, sub string, approve bool) (*ConsentResult, error) {
	o := &oauthServer{Service: s}
	if !approve {
		_, err := tx.Exec(ctx, `update auth.oauth_authorizations set status = 'denied', decided_at = now() where id = $1`, a.id)
		return &ConsentResult{RedirectURL: o.withParams(a.redirect, url.Values{
			"error": {"access_denied"}, "error_description": {"The person declined to connect the app"}, "state": {a.state},
		})}, err
	}
	code := randomToken(32)
	_, err := tx.Exec(ctx, `
		with a as (
		  update auth.oauth_authorizations
		  set status = 'approved', decided_at = now(), code_hash = $2, expires_at = now() + $5::interval
		  where id = $1
		)
		insert into auth.oauth_consents (user_id, client_id, scopes) values ($3, $4, $6)
		on conflict (user_id, client_id) do update
		  set scopes = (select array_agg(distinct s order by s) from unnest(oauth_consents.scopes || excluded.scopes) s),
		      granted_at = now()`,
		a.id, hashToken(code), sub, a.client.ID, codeTTL.String(), strings.Fields(a.scope))
	if err != nil {
		return nil, err
	}
	return &ConsentResult{RedirectURL: o.withParams(a.redirect, url.Values{"code": {code}, "state": {a.state}})}, nil
}

// authorizationDetails is GET /oauth/authorizations/{id}: the details, or {redirect_url} when
// the person had already consented.
func (o *oauthServer) authorizationDetails(c echo.Context) error {
	claims, err := o.userOf(c)
	if err != nil {
		return writeError(c, o.log, err)
	}
	d, err := o.Authorization(c.Request().Context(), claims, c.Param("id"))
	if err != nil {
		return writeError(c, o.log, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	if d.Redirect != nil {
		return c.JSON(http.StatusOK, d.Redirect)
	}
	return c.JSON(http.StatusOK, d)
}

// consent is POST /oauth/authorizations/{id}/consent with {"action":"approve"|"deny"}.
func (o *oauthServer) consent(c echo.Context) error {
	claims, err := o.userOf(c)
	if err != nil {
		return writeError(c, o.log, err)
	}
	var body struct {
		Action string `json:"action"`
	}
	if err := json.NewDecoder(io.LimitReader(c.Request().Body, 4096)).Decode(&body); err != nil && !errors.Is(err, io.EOF) {
		return writeError(c, o.log, apiError(http.StatusBadRequest, CodeBadJSON, "Could not parse request body as JSON"))
	}
	if body.Action != "approve" && body.Action != "deny" {
		return writeError(c, o.log, validationError(`action must be "approve" or "deny"`))
	}
	r, err := o.Consent(c.Request().Context(), claims, c.Param("id"), body.Action == "approve")
	if err != nil {
		return writeError(c, o.log, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, r)
}
