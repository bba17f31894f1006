package auth

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// Client authentication methods at the token endpoint (RFC 7591 2).
const (
	authNone  = "none"
	authBasic = "client_secret_basic"
	authPost  = "client_secret_post"
)

// ClientMetadata is what a client registers (RFC 7591 2) and gets back.
type ClientMetadata struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	LogoURI                 string   `json:"logo_uri,omitempty"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// Registration is the answer to a registration (RFC 7591 3.2.1). A confidential client's
// secret is shown this once; only its hash is kept.
type Registration struct {
	ClientID              string `json:"client_id"`
	ClientSecret          string `json:"client_secret,omitempty"`
	ClientIDIssuedAt      int64  `json:"client_id_issued_at"`
	ClientSecretExpiresAt *int64 `json:"client_secret_expires_at,omitempty"`
	ClientMetadata
}

// oauthClient is a registered client as the server reads it.
type oauthClient struct {
	ID           string
	secretHash   []byte
	AuthMethod   string
	Name, URI    string
	LogoURI      string
	RedirectURIs []string
	GrantTypes   []string
}

const clientColumns = `id::text, client_secret_hash, token_endpoint_auth_method, coalesce(client_name, ''),
	coalesce(client_uri, ''), coalesce(logo_uri, ''), redirect_uris, grant_types`

func scanClient(row pgx.Row) (*oauthClient, error) {
	c := &oauthClient{}
	err := row.Scan(&c.ID, &c.secretHash, &c.AuthMethod, &c.Name, &c.URI, &c.LogoURI, &c.RedirectURIs, &c.GrantTypes)
	return c, err
}

func (c *oauthClient) allows(grant string) bool { return slices.Contains(c.GrantTypes, grant) }

// register is POST /oauth/clients/register.
func (o *oauthServer) register(c echo.Context) error {
	if ok, wait := o.registerLimit.allow(c.RealIP(), o.now()); !ok {
		return o.writeOAuthError(c, rateLimited(wait))
	}
	var m ClientMetadata
	dec := json.NewDecoder(io.LimitReader(c.Request().Body, 64<<10))
	if err := dec.Decode(&m); err != nil && !errors.Is(err, io.EOF) {
		return o.writeOAuthError(c, oauthErr(http.StatusBadRequest, "invalid_client_metadata", "The body must be a JSON object of client metadata"))
	}
	reg, err := o.RegisterClient(c.Request().Context(), m)
	if err != nil {
		return o.writeOAuthError(c, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, reg)
}

// RegisterClient validates m, fills RFC 7591's defaults and stores the client. The default
// authentication method is client_secret_basic, as the RFC says; clients that cannot keep a
// secret (every native and browser MCP client) register "none" and rely on PKCE.
func (s *Service) RegisterClient(ctx context.Context, m ClientMetadata) (*Registration, error) {
	if err := normaliseMetadata(&m); err != nil {
		return nil, err
	}
	var secret string
	var hash []byte
	if m.TokenEndpointAuthMethod != authNone {
		secret = randomToken(32)
		hash = hashToken(secret)
	}
	reg := &Registration{ClientMetadata: m, ClientSecret: secret}
	var issued time.Time
	err := s.asAuthTx(ctx, "register client", pg.ReadWrite, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `
			insert into auth.oauth_clients (client_secret_hash, token_endpoint_auth_method, client_name, client_uri,
			  logo_uri, redirect_uris, grant_types)
			values ($1, $2, nullif($3, ''), nullif($4, ''), nullif($5, ''), $6, $7)
			returning id::text, created_at`,
			hash, m.TokenEndpointAuthMethod, m.ClientName, m.ClientURI, m.LogoURI, m.RedirectURIs, m.GrantTypes,
		).Scan(&reg.ClientID, &issued)
	})
	if err != nil {
		return nil, err
	}
	reg.ClientIDIssuedAt = issued.Unix()
	if secret != "" {
		never := int64(0)
		reg.ClientSecretExpiresAt = &never
	}
	return reg, nil
}

// normaliseMetadata checks m and fills the defaults of RFC 7591 2.
func normaliseMetadata(m *ClientMetadata) error {
	bad := func(desc string) error {
		return oauthErr(http.StatusBadRequest, "invalid_client_metadata", desc)
	}
	if len(m.RedirectURIs) == 0 {
		return oauthErr(http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris must name at least one redirect URI")
	}
	if len(m.RedirectURIs) > 10 {
		return oauthErr(http.StatusBadRequest, "invalid_redirect_uri", "at most 10 redirect URIs may be registered")
	}
	for _, u := range m.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return oauthErr(http.StatusBadRequest, "invalid_redirect_uri", err.Error())
		}
	}
	m.ClientName = strings.TrimSpace(m.ClientName)
	if len([]rune(m.ClientName)) > 200 || strings.ContainsFunc(m.ClientName, isControl) {
		return bad("client_name must be at most 200 characters of text")
	}
	for _, u := range []struct{ name, v string }{{"client_uri", m.ClientURI}, {"logo_uri", m.LogoURI}} {
		if u.v != "" && !isWebURL(u.v) {
			return bad(u.name + " must be an https URL (http only for loopback addresses)")
		}
	}
	if len(m.GrantTypes) == 0 {
		m.GrantTypes = []string{"authorization_code", "refresh_token"}
	}
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return bad("grant_types may hold authorization_code and refresh_token only")
		}
	}
	if !slices.Contains(m.GrantTypes, "authorization_code") {
		return bad("grant_types must include authorization_code")
	}
	m.GrantTypes = slices.Compact(slices.Sorted(slices.Values(m.GrantTypes)))
	if len(m.ResponseTypes) == 0 {
		m.ResponseTypes = []string{"code"}
	}
	for _, r := range m.ResponseTypes {
		if r != "code" {
			return bad("response_types may hold code only")
		}
	}
	m.ResponseTypes = []string{"code"}
	switch m.TokenEndpointAuthMethod {
	case "":
		m.TokenEndpointAuthMethod = authBasic
	case authNone, authBasic, authPost:
	default:
		return bad("token_endpoint_auth_method must be none, client_secret_basic or client_secret_post")
	}
	return nil
}

// isControl reports characters that have no place in a name or URI a person reads: control
// characters (C0 and C1) and the bidi controls that make one text display as another.
func isControl(r rune) bool {
	return unicode.IsControl(r) || r == 0x200e || r == 0x200f || r == 0x061c ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// dangerousSchemes can run code or read local data where a browser follows them.
var dangerousSchemes = []string{"javascript", "data", "file", "vbscript", "blob", "about", "filesystem"}

// checkRedirectURI accepts what RFC 8252 and OAuth 2.1 allow: https URLs, http only on a
// loopback host (any port, since native apps listen on an ephemeral one), and private-use
// reverse-domain schemes of native apps (com.example.app:/cb); never a fragment, which the code
// could not be appended to.
func checkRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || strings.ContainsFunc(raw, isControl) || len(raw) > 2000 {
		return errors.New("redirect URI " + quote(raw) + " is not an absolute URI")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return errors.New("redirect URI " + quote(raw) + " must not have a fragment")
	}
	if u.User != nil {
		// https://app.test@evil.test/cb goes to evil.test: a consent page showing the URI would
		// mislead the person reading it (RFC 3986 7.6).
		return errors.New("redirect URI " + quote(raw) + " must not carry a user name or password (user@host)")
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "https":
		if u.Host == "" {
			return errors.New("redirect URI " + quote(raw) + " has no host")
		}
	case scheme == "http":
		if !isLoopback(u.Hostname()) {
			return errors.New("redirect URI " + quote(raw) + " uses http on a host that is not loopback; use https")
		}
	case !strings.Contains(scheme, ".") || slices.Contains(dangerousSchemes, scheme):
		// RFC 8252 7.1: a native app's private-use scheme is a reverse domain name it owns.
		return errors.New("redirect URI scheme " + quote(scheme) + " is not allowed: use https, http on a loopback " +
			"address, or a reverse-domain scheme of your app (com.example.app:/callback)")
	}
	return nil
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + s + `"`
}

// isLoopback reports localhost, 127.0.0.0/8 and ::1.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isWebURL reports an https URL, or http on a loopback host.
func isWebURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	return u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname())
}

// matchRedirect reports whether requested is one of registered: the same string, or, for a
// loopback http URI, the same but for the port (RFC 8252 7.3: the app picks a free port when
// it starts).
func matchRedirect(registered []string, requested string) bool {
	if slices.Contains(registered, requested) {
		return true
	}
	q, err := url.Parse(requested)
	if err != nil || q.Scheme != "http" || !isLoopback(q.Hostname()) {
		return false
	}
	for _, r := range registered {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "http" || !isLoopback(u.Hostname()) {
			continue
		}
		if u.Hostname() == q.Hostname() && u.Path == q.Path && u.RawQuery == q.RawQuery && u.User.String() == q.User.String() {
			return true
		}
	}
	return false
}

// loadClient reads a client by id; an id that is not a UUID is simply unknown.
func loadClient(ctx context.Context, tx pgx.Tx, id string) (*oauthClient, error) {
	if !isUUID(id) {
		return nil, pgx.ErrNoRows
	}
	return scanClient(tx.QueryRow(ctx, `select `+clientColumns+` from auth.oauth_clients where id = $1`, id))
}

// errInvalidClient is every client authentication failure: one answer, so it does not tell
// which part was wrong.
var errInvalidClient = oauthErr(http.StatusUnauthorized, "invalid_client", "Client authentication failed")

// authenticateClient applies the client's registered method (RFC 6749 2.3.1, RFC 7591 2):
// HTTP Basic, the secret in the body, or none for a public client, which names itself with
// client_id and proves nothing but PKCE.
func (s *Service) authenticateClient(ctx context.Context, r *http.Request, form url.Values) (*oauthClient, error) {
	id, secret, method := form.Get("client_id"), form.Get("client_secret"), authNone
	if user, pass, ok := r.BasicAuth(); ok {
		var err1, err2 error
		if id, err1 = url.QueryUnescape(user); err1 == nil {
			secret, err2 = url.QueryUnescape(pass)
		}
		if err1 != nil || err2 != nil || (form.Get("client_id") != "" && form.Get("client_id") != id) {
			return nil, errInvalidClient
		}
		method = authBasic
	} else if secret != "" {
		method = authPost
	}
	if id == "" {
		return nil, errInvalidClient
	}
	var cl *oauthClient
	err := s.asAuthTx(ctx, "load client", pg.ReadOnly, func(tx pgx.Tx) error {
		var err error
		cl, err = loadClient(ctx, tx, id)
		return err
	})
	if pg.IsNoRows(err) {
		return nil, errInvalidClient
	} else if err != nil {
		return nil, err
	}
	if method == authBasic && secret == "" && cl.AuthMethod == authNone {
		method = authNone // a public client naming itself in Basic with an empty password
	}
	if cl.AuthMethod != method {
		return nil, errInvalidClient
	}
	if method != authNone && subtle.ConstantTimeCompare(hashToken(secret), cl.secretHash) != 1 {
		return nil, errInvalidClient
	}
	return cl, nil
}

// isUUID reports the canonical 8-4-4-4-12 hex form, the only one ids are handed out in.
// (uuid.Validate alone also accepts the urn:, braced and undashed forms.)
func isUUID(s string) bool { return len(s) == 36 && uuid.Validate(s) == nil }
