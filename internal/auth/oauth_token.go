package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// oauthToken is POST /oauth/token: the authorization_code and refresh_token grants for
// registered clients, answered in RFC 6749's shape (errors too).
func (o *oauthServer) oauthToken(c echo.Context) error {
	form, err := readOAuthForm(c.Request())
	var resp *OAuthTokenResponse
	if err == nil {
		resp, err = o.grant(c, form)
	}
	o.opts.Metrics.Grant(form.Get("grant_type"), grantOutcome(err))
	if err != nil {
		return o.writeOAuthError(c, err)
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	return c.JSON(http.StatusOK, resp)
}

// grant answers one token request of a client: the client's rate limit and authentication,
// then its grant.
func (o *oauthServer) grant(c echo.Context, form url.Values) (*OAuthTokenResponse, error) {
	ctx := c.Request().Context()
	device := Client{IP: c.RealIP(), UserAgent: c.Request().UserAgent()}
	if err := o.limit(device, ""); err != nil {
		return nil, err
	}
	cl, err := o.authenticateClient(ctx, c.Request(), form)
	if err != nil {
		return nil, err
	}
	var resp *OAuthTokenResponse
	switch g := form.Get("grant_type"); g {
	case "authorization_code":
		resp, err = o.ExchangeCode(ctx, cl, form.Get("code"), form.Get("redirect_uri"), form.Get("code_verifier"),
			form.Has("redirect_uri"), device)
	case "refresh_token":
		resp, err = o.refreshFor(ctx, cl, form.Get("refresh_token"), device)
	case "":
		err = invalidRequest("grant_type is required")
	default:
		err = oauthErr(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
	}
	return resp, err
}

// readOAuthForm reads the token request: a form as RFC 6749 requires, or a JSON object of
// strings, which some clients send.
func readOAuthForm(r *http.Request) (url.Values, error) {
	if strings.HasPrefix(r.Header.Get("Content-Type"), echo.MIMEApplicationJSON) {
		var m map[string]string
		if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&m); err != nil && !errors.Is(err, io.EOF) {
			return nil, invalidRequest("the body must be a form or a JSON object of strings")
		}
		v := url.Values{}
		for k, s := range m {
			v.Set(k, s)
		}
		return v, nil
	}
	r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		return nil, invalidRequest("the body could not be read as a form")
	}
	return r.PostForm, nil
}

// ExchangeCode is the authorization_code grant. A code works once, for the client it was
// issued to, with the redirect URI of its request and the verifier of its challenge. Any
// attempt uses it up; a second attempt means the code leaked, so the session the first one
// started is ended too (RFC 6749 4.1.2, OAuth 2.1 4.1.3).
func (s *Service) ExchangeCode(ctx context.Context, cl *oauthClient, code, redirect, verifier string, redirectGiven bool, device Client) (*OAuthTokenResponse, error) {
	if code == "" {
		return nil, invalidRequest("code is required")
	}
	if !cl.allows("authorization_code") {
		return nil, oauthErr(http.StatusBadRequest, "unauthorized_client", "the client did not register the authorization_code grant")
	}
	var (
		refusal       *OAuthError
		revokedSID    string
		u             *userRow
		sid, scope    string
		nonce         string
		started       time.Time
		refresh       = randomToken(32)
		authorization string
	)
	err := s.asAuthTx(ctx, "exchange code", pg.ReadWrite, func(tx pgx.Tx) error {
		refusal, revokedSID = nil, ""
		var (
			clientID, storedRedirect, challenge, userID string
			given, expired                              bool
			usedAt                                      *time.Time
			prevSID                                     *string
		)
		err := tx.QueryRow(ctx, `
			select id::text, client_id::text, coalesce(user_id::text, ''), redirect_uri, redirect_uri_given, scope,
			  code_challenge, code_used_at, session_id::text, expires_at <= now(), coalesce(nonce, '')
			from auth.oauth_authorizations where code_hash = $1 and status = 'approved' for update`, hashToken(code)).Scan(
			&authorization, &clientID, &userID, &storedRedirect, &given, &scope, &challenge, &usedAt, &prevSID, &expired, &nonce)
		if pg.IsNoRows(err) {
			refusal = invalidGrant("the code is unknown")
			return nil
		} else if err != nil {
			return err
		}
		if usedAt != nil {
			refusal = invalidGrant("the code was already used; the tokens issued for it are revoked")
			if prevSID != nil {
				revokedSID = *prevSID
				_, err = tx.Exec(ctx, `delete from auth.sessions where id = $1`, *prevSID)
			}
			return err
		}
		if _, err := tx.Exec(ctx, `update auth.oauth_authorizations set code_used_at = now() where id = $1`, authorization); err != nil {
			return err
		}
		switch {
		case clientID != cl.ID:
			refusal = invalidGrant("the code was issued to another client")
		case expired:
			refusal = invalidGrant("the code has expired")
		case (given || redirectGiven) && redirect != storedRedirect:
			refusal = invalidGrant("redirect_uri does not match the authorization request")
		case !verifierMatches(verifier, challenge):
			refusal = invalidGrant("code_verifier does not match the code_challenge")
		}
		if refusal != nil {
			return nil // commit: the code stays used
		}
		u, sid, started, err = startSession(ctx, tx, userID, device, sessionClient{ID: cl.ID, Scope: scope}, refresh)
		if err != nil {
			return err
		}
		if u.banned(s.now()) {
			return invalidGrant("the account is blocked") // roll the session back
		}
		_, err = tx.Exec(ctx, `update auth.oauth_authorizations set session_id = $2 where id = $1`, authorization, sid)
		return err
	})
	if err != nil {
		return nil, err
	}
	if revokedSID != "" {
		s.log.WarnContext(ctx, "auth: authorization code reused; its session revoked",
			"client_id", cl.ID, "authorization_id", authorization, "session_id", revokedSID)
	}
	if refusal != nil {
		return nil, refusal
	}
	resp, err := s.issue(u, sid, "aal1", started, refresh, sessionClient{ID: cl.ID, Scope: scope})
	if err != nil {
		return nil, err
	}
	out := &OAuthTokenResponse{TokenResponse: resp}
	if slices.Contains(strings.Fields(scope), "openid") {
		out.IDToken, err = s.idToken(u, cl.ID, scope, nonce, started)
	}
	return out, err
}

// OAuthTokenResponse is a token response to an OAuth client: the session's tokens and, when
// the openid scope was granted, an ID token.
type OAuthTokenResponse struct {
	*TokenResponse
	IDToken string `json:"id_token,omitempty"`
}

// idToken is the OpenID Connect ID token for u, signed with the access tokens' key. Its
// audience is the client, so no surface takes it for an access token.
func (s *Service) idToken(u *userRow, clientID, scope, nonce string, authTime time.Time) (string, error) {
	now := s.now()
	c := map[string]any{"iss": s.opts.Issuer, "sub": u.ID, "aud": clientID, "iat": now.Unix(),
		"exp": now.Add(s.opts.AccessTTL).Unix(), "auth_time": authTime.Unix()}
	if nonce != "" {
		c["nonce"] = nonce
	}
	granted := strings.Fields(scope)
	if slices.Contains(granted, "email") {
		c["email"], c["email_verified"] = u.Email, u.EmailConfirmedAt != nil
	}
	if slices.Contains(granted, "profile") {
		var meta struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(u.UserMeta, &meta)
		c["name"] = meta.Name
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("auth: encode id token: %w", err)
	}
	return s.opts.Keys.sign(payload)
}

// verifierMatches checks a PKCE verifier (RFC 7636 4.1: 43 to 128 unreserved characters)
// against its S256 challenge.
func verifierMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	for _, r := range verifier {
		if !('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// refreshFor is the refresh_token grant for a client: the token must belong to a session this
// client started (RFC 6749 6), then the ordinary rotation runs, reuse detection included.
func (s *Service) refreshFor(ctx context.Context, cl *oauthClient, token string, device Client) (*OAuthTokenResponse, error) {
	if token == "" {
		return nil, invalidRequest("refresh_token is required")
	}
	if !cl.allows("refresh_token") {
		return nil, oauthErr(http.StatusBadRequest, "unauthorized_client", "the client did not register the refresh_token grant")
	}
	var owner *string
	err := s.asAuthTx(ctx, "find refresh token", pg.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `
			select s.oauth_client_id::text from auth.refresh_tokens r join auth.sessions s on s.id = r.session_id
			where r.token_hash = $1`, hashToken(token)).Scan(&owner)
	})
	if pg.IsNoRows(err) || err == nil && (owner == nil || *owner != cl.ID) {
		return nil, invalidGrant("the refresh token is unknown, revoked or issued to another client")
	} else if err != nil {
		return nil, err
	}
	resp, err := s.RefreshGrant(ctx, token, device)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusBadRequest {
		return nil, invalidGrant(strings.TrimPrefix(e.Msg, "Invalid Refresh Token: "))
	} else if err != nil {
		return nil, err
	}
	return &OAuthTokenResponse{TokenResponse: resp}, nil
}
