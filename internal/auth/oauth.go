package auth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"masthead/internal/metrics"
	"masthead/internal/pg"
)

// The OAuth 2.1 authorization server, with Supabase Auth's paths and shapes: AI connectors and
// MCP clients register themselves (RFC 7591), send the person to /oauth/authorize with PKCE,
// the dashboard's consent page asks the person (through the consent API below, with the
// person's own token), and the client trades the code for the same access and refresh tokens
// a sign-in gets, marked with client_id and scope. Those tokens work on every surface because
// they are ordinary session tokens: revoking the app deletes its sessions, and every surface
// refuses tokens of a deleted session.

const (
	// authorizationTTL is how long a person has to decide on the consent page.
	authorizationTTL = 10 * time.Minute
	// codeTTL is how long an authorization code may be exchanged: the client holds it for one
	// redirect and one request, so anything longer only widens the window for a stolen one.
	codeTTL = 2 * time.Minute
	// defaultScope is granted when a client asks for none.
	defaultScope = "email"
)

// defaultRegisterLimit is Options.RegisterLimit when none is given.
var defaultRegisterLimit = Limit{Count: 20, Per: time.Hour, Burst: 20}

// grantableScopes are the scopes this server grants (the dashboard's consent page words them). Every
// token acts as the person under row-level security whatever the scope; the scopes say which
// facts about the person the client may read from the token, and openid adds an ID token.
var grantableScopes = map[string]bool{"openid": true, "email": true, "profile": true}

// oauthServer holds what only the OAuth endpoints need next to the Service.
type oauthServer struct {
	*Service
	registerLimit  *limiter
	authorizeLimit *limiter
	consentURL     string
}

// mountOAuth adds the OAuth routes to g (/auth/v1). None asks for the publishable key: third
// party clients never have it. The grant list and revocation are the person's own, with their
// token, like /user.
func (s *Service) mountOAuth(g *echo.Group) {
	reg := s.opts.RegisterLimit
	if reg.Count <= 0 {
		reg = defaultRegisterLimit
	}
	o := &oauthServer{Service: s,
		registerLimit:  newLimiter(reg).counted(s.opts.Metrics, metrics.LimitOAuthRegister),
		authorizeLimit: newLimiter(s.opts.AuthorizeLimit).counted(s.opts.Metrics, metrics.LimitOAuthAuthorize),
		consentURL:     strings.TrimSuffix(s.opts.Issuer, "/auth/v1") + "/oauth/consent"}
	g.POST("/oauth/clients/register", o.register)
	g.GET("/oauth/authorize", o.authorize)
	g.GET("/oauth/authorizations/:id", o.authorizationDetails)
	g.POST("/oauth/authorizations/:id/consent", o.consent)
	g.POST("/oauth/token", o.oauthToken)
	g.GET("/.well-known/oauth-authorization-server", o.discovery(false))
	g.GET("/.well-known/openid-configuration", o.discovery(true))
	g.GET("/user/oauth/grants", o.listGrants, s.RequireAPIKey)
	g.DELETE("/user/oauth/grants", o.revokeGrant, s.RequireAPIKey)
	s.mountOIDC(g)
}

// MountDiscovery adds the metadata documents at the root, where RFC 8414 puts them for an
// issuer with a path (/.well-known/oauth-authorization-server/auth/v1), since MCP clients look
// there first.
func (s *Service) MountDiscovery(e *echo.Echo) {
	o := &oauthServer{Service: s}
	path := strings.TrimPrefix(s.issuerPath(), "/")
	e.GET("/.well-known/oauth-authorization-server/"+path, o.discovery(false))
	e.GET("/.well-known/openid-configuration/"+path, o.discovery(true))
}

// issuerPath is the path of the issuer URL, "/auth/v1".
func (s *Service) issuerPath() string {
	u, err := url.Parse(s.opts.Issuer)
	if err != nil || u.Path == "" {
		return "/auth/v1"
	}
	return u.Path
}

// serverMetadata is RFC 8414's document; the OpenID configuration adds the fields OpenID
// Connect Discovery requires.
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	AuthorizationResponseISSSupported bool     `json:"authorization_response_iss_parameter_supported"`
	UserinfoEndpoint                  string   `json:"userinfo_endpoint,omitempty"`
	SubjectTypesSupported             []string `json:"subject_types_supported,omitempty"`
	IDTokenSigningAlgValuesSupported  []string `json:"id_token_signing_alg_values_supported,omitempty"`
}

func (o *oauthServer) discovery(openid bool) echo.HandlerFunc {
	iss := o.opts.Issuer
	m := serverMetadata{
		Issuer:                            iss,
		AuthorizationEndpoint:             iss + "/oauth/authorize",
		TokenEndpoint:                     iss + "/oauth/token",
		RegistrationEndpoint:              iss + "/oauth/clients/register",
		JWKSURI:                           iss + "/.well-known/jwks.json",
		ScopesSupported:                   []string{"openid", "email", "profile"},
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported: []string{authNone, authBasic, authPost},
		CodeChallengeMethodsSupported:     []string{"S256"},
		AuthorizationResponseISSSupported: true,
	}
	if openid {
		m.UserinfoEndpoint = iss + "/user"
		m.SubjectTypesSupported = []string{"public"}
		m.IDTokenSigningAlgValuesSupported = []string{"ES256"}
	}
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "public, max-age=600")
		return c.JSON(http.StatusOK, m)
	}
}

// OAuthError is a refusal in RFC 6749's shape ({"error","error_description"}), used by the
// token and registration endpoints and in error redirects. Cause is logged, never shown.
type OAuthError struct {
	Status      int
	Code        string
	Description string
	Cause       error
}

func (e *OAuthError) Error() string { return e.Code + ": " + e.Description }
func (e *OAuthError) Unwrap() error { return e.Cause }

func oauthErr(status int, code, desc string) *OAuthError {
	return &OAuthError{Status: status, Code: code, Description: desc}
}

func invalidGrant(desc string) *OAuthError {
	return oauthErr(http.StatusBadRequest, "invalid_grant", desc)
}

func invalidRequest(desc string) *OAuthError {
	return oauthErr(http.StatusBadRequest, "invalid_request", desc)
}

// writeOAuthError answers err as RFC 6749 5.2 says; anything that is not an *OAuthError is an
// outage, logged and answered server_error.
func (o *oauthServer) writeOAuthError(c echo.Context, err error) error {
	var e *OAuthError
	if !errors.As(err, &e) {
		var ae *Error
		if errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests {
			e = &OAuthError{Status: http.StatusTooManyRequests, Code: "slow_down", Description: "Too many requests; try again later"}
			c.Response().Header().Set("Retry-After", fmt.Sprint(int((ae.RetryAfter+time.Second-1)/time.Second)))
		} else {
			o.log.ErrorContext(c.Request().Context(), "auth: oauth request failed",
				"request_id", c.Response().Header().Get(echo.HeaderXRequestID), "err", err)
			e = oauthErr(http.StatusInternalServerError, "server_error", "The request could not be completed; try again later")
			if pg.Unavailable(err) {
				// RFC 6749 4.1.2.1's code for a temporary overload or maintenance.
				e = oauthErr(http.StatusServiceUnavailable, "temporarily_unavailable", "The database is unavailable right now; try again shortly")
				c.Response().Header().Set("Retry-After", pg.RetryAfter)
			}
		}
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	if e.Code == "invalid_client" && e.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Basic realm="masthead"`)
	}
	return c.JSON(e.Status, map[string]string{"error": e.Code, "error_description": e.Description})
}

// errorPage answers a browser request that must not be redirected, such as an /oauth/authorize
// with an unknown client or unregistered redirect_uri: RFC 6749 4.1.2.1 says to tell the person
// instead, since sending them to an unverified address would make this an open redirector.
func errorPage(c echo.Context, heading string, e *OAuthError) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	if !strings.Contains(c.Request().Header.Get("Accept"), "text/html") {
		return c.JSON(e.Status, map[string]string{"error": e.Code, "error_description": e.Description})
	}
	c.Response().Header().Set("Content-Security-Policy", "default-src 'none'")
	h := html.EscapeString(heading)
	return c.HTML(e.Status, `<!doctype html><html lang="en"><meta charset="utf-8"><title>`+h+`</title>`+
		`<h1>`+h+`</h1><p>`+html.EscapeString(e.Description)+`</p>`+
		`<p>Error code: <code>`+html.EscapeString(e.Code)+`</code>. Nothing was shared.</p></html>`)
}

// userOf verifies the person's bearer token for the consent and grant endpoints, with the
// session check: a signed-out dashboard session must not approve anything.
func (o *oauthServer) userOf(c echo.Context) (*Claims, error) {
	claims, err := o.claims(c)
	if err != nil {
		return nil, err
	}
	alive, err := o.sessionAlive(c.Request().Context(), claims)
	if err != nil {
		return nil, err
	}
	if !alive {
		return nil, errSessionNotFound
	}
	return claims, nil
}

// asAuthTx runs fn as the identity role; an *Error or *OAuthError returned by fn passes
// through unwrapped, anything else is wrapped with what.
func (s *Service) asAuthTx(ctx context.Context, what string, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	err := s.asAuth(ctx, opts, fn)
	var oe *OAuthError
	if err == nil || isAPIError(err) || errors.As(err, &oe) {
		return err
	}
	return fmt.Errorf("auth: %s: %w", what, err)
}
