package auth

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"masthead/internal/metrics"
)

// Mount adds the /auth/v1 routes to g. The JWK set is public (third-party verifiers never have
// the publishable key); token, user, logout and the invitation routes require it, as
// Supabase's gateway does. Sign-ups are disabled: accounts come from invitations (invite/…)
// and `masthead users create`.
func (s *Service) Mount(g *echo.Group) {
	g.Use(echoAPIVersion)
	g.GET("/.well-known/jwks.json", s.jwks)
	g.POST("/token", s.token, s.RequireAPIKey)
	g.GET("/user", s.user, s.RequireAPIKey)
	g.PUT("/user", s.updateUser, s.RequireAPIKey)
	g.GET("/user/sessions", s.sessions, s.RequireAPIKey)
	g.POST("/signup", s.signup, s.RequireAPIKey)
	g.POST("/invite/lookup", s.lookupInvite, s.RequireAPIKey)
	g.POST("/invite/accept", s.acceptInvite, s.RequireAPIKey)
	g.POST("/logout", s.logout, s.RequireAPIKey)
	s.mountOAuth(g)
}

// echoAPIVersion answers in the 2024-01-01 format when asked to, and says so in the response
// header, which is how supabase-js knows to read error codes from "code".
func echoAPIVersion(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if wantsAPI2024(c.Request()) {
			c.Response().Header().Set(apiVersionHeader, apiVersion2024)
		}
		return next(c)
	}
}

// RequireAPIKey refuses requests without the publishable key in header apikey, with the
// gateway's 401 body. The key identifies the project to clients; it grants nothing by itself.
func (s *Service) RequireAPIKey(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		key := c.Request().Header.Get("apikey")
		if key == "" {
			return c.JSON(http.StatusUnauthorized, map[string]string{
				"message": "No API key found in request",
				"hint":    "No `apikey` request header or url param was found.",
			})
		}
		if !s.isPublishableKey(key) {
			return c.JSON(http.StatusUnauthorized, map[string]string{
				"message": "Invalid API key",
				"hint":    "Double check your publishable key.",
			})
		}
		return next(c)
	}
}

func (s *Service) jwks(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=600")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, s.opts.Keys.JWKS())
}

// tokenParams are the fields of both grants, from JSON or a form.
type tokenParams struct {
	Email        string `json:"email"`
	Phone        string `json:"phone"`
	Password     string `json:"password"`
	RefreshToken string `json:"refresh_token"`
	GrantType    string `json:"grant_type"`
	AuthCode     string `json:"auth_code"`
	CodeVerifier string `json:"code_verifier"`
}

func (s *Service) token(c echo.Context) error {
	p, err := readTokenParams(c.Request())
	grant := c.QueryParam("grant_type")
	if grant == "" {
		grant = p.GrantType
	}
	if err != nil {
		s.opts.Metrics.Grant(grant, grantOutcome(err))
		return writeError(c, s.log, err)
	}
	ctx, client := c.Request().Context(), Client{IP: c.RealIP(), UserAgent: c.Request().UserAgent()}
	var resp *TokenResponse
	switch grant {
	case "password":
		if p.Phone != "" {
			err = validationError("Phone logins are not supported")
			break
		}
		resp, err = s.PasswordGrant(ctx, p.Email, p.Password, client)
	case "refresh_token":
		resp, err = s.RefreshGrant(ctx, p.RefreshToken, client)
	case "pkce":
		resp, err = s.PKCEGrant(ctx, p.AuthCode, p.CodeVerifier, client)
	default:
		err = apiError(http.StatusBadRequest, CodeInvalidCredentials, "unsupported_grant_type")
	}
	s.opts.Metrics.Grant(grant, grantOutcome(err))
	if err != nil {
		return writeError(c, s.log, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, resp)
}

// grantOutcome sorts a token request's error for the grant metrics by the status it is
// answered with: none is a grant, 429 a rate limit, another 4xx the caller's refusal, and
// anything else (an outage, an unexpected failure) ours.
func grantOutcome(err error) string {
	if err == nil {
		return metrics.OutcomeOK
	}
	status := http.StatusInternalServerError
	var ae *Error
	var oe *OAuthError
	switch {
	case errors.As(err, &ae):
		status = ae.Status
	case errors.As(err, &oe):
		status = oe.Status
	}
	switch {
	case status == http.StatusTooManyRequests:
		return metrics.OutcomeRateLimited
	case status < 500:
		return metrics.OutcomeRefused
	}
	return metrics.OutcomeError
}

// readTokenParams reads a form body when one is declared, JSON otherwise, as GoTrue does.
func readTokenParams(r *http.Request) (tokenParams, error) {
	var p tokenParams
	if strings.HasPrefix(r.Header.Get("Content-Type"), echo.MIMEApplicationForm) {
		if err := r.ParseForm(); err != nil {
			return p, validationError("Could not parse the form body")
		}
		p = tokenParams{Email: r.PostForm.Get("email"), Phone: r.PostForm.Get("phone"), Password: r.PostForm.Get("password"),
			RefreshToken: r.PostForm.Get("refresh_token"), GrantType: r.PostForm.Get("grant_type"),
			AuthCode: r.PostForm.Get("auth_code"), CodeVerifier: r.PostForm.Get("code_verifier")}
		return p, nil
	}
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return p, apiError(http.StatusBadRequest, CodeBadJSON, "Could not parse request body as JSON")
	}
	return p, nil
}

// claims verifies the request's bearer token the way GoTrue's /user and /logout do.
func (s *Service) claims(c echo.Context) (*Claims, error) {
	token, ok, err := bearer(c.Request())
	if err != nil || !ok {
		return nil, errNoAuthorization
	}
	if s.isPublishableKey(token) {
		return nil, badJWT(invalid("missing sub claim"))
	}
	claims, err := s.verifier.Verify(token)
	if err != nil {
		return nil, badJWT(err)
	}
	return claims, nil
}

func (s *Service) user(c echo.Context) error {
	claims, err := s.claims(c)
	if err != nil {
		return writeError(c, s.log, err)
	}
	u, err := s.User(c.Request().Context(), claims)
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(http.StatusOK, u)
}

func (s *Service) logout(c echo.Context) error {
	claims, err := s.claims(c)
	if err != nil {
		return writeError(c, s.log, err)
	}
	if err := s.Logout(c.Request().Context(), claims, c.QueryParam("scope")); err != nil {
		return writeError(c, s.log, err)
	}
	return c.NoContent(http.StatusNoContent)
}
