package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Session is what /auth/v1/token answers: a short-lived access token and the refresh token
// that buys the next one.
type Session struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type"`
	ExpiresIn    int       `json:"expires_in"`
	ExpiresAt    int64     `json:"expires_at"`
	RefreshToken string    `json:"refresh_token"`
	User         User      `json:"user"`
	Received     time.Time `json:"-"`
}

// Expiry is when the access token stops working, from expires_at or, when a service omits it,
// from expires_in counted from when the answer arrived.
func (s *Session) Expiry() time.Time {
	if s.ExpiresAt > 0 {
		return time.Unix(s.ExpiresAt, 0)
	}
	return s.Received.Add(time.Duration(s.ExpiresIn) * time.Second)
}

// User is the signed-in person as /auth/v1/user describes them.
type User struct {
	ID           string         `json:"id"`
	Email        string         `json:"email"`
	Role         string         `json:"role"`
	UserMetadata map[string]any `json:"user_metadata"`
}

// Name is the display name from user_metadata.name, else the email.
func (u User) Name() string {
	if n, ok := u.UserMetadata["name"].(string); ok && n != "" {
		return n
	}
	return u.Email
}

// SignInWithPassword is POST /auth/v1/token?grant_type=password. A wrong email or password is
// an *Error with status 400 and code invalid_credentials, whichever of the two was wrong.
func (c *Client) SignInWithPassword(ctx context.Context, email, password string) (*Session, error) {
	return c.token(ctx, "password", map[string]string{"email": email, "password": password})
}

// Refresh is POST /auth/v1/token?grant_type=refresh_token. The service rotates the token; a
// revoked or unknown one is an *Error with status 400 (or 401/403 from some deployments).
func (c *Client) Refresh(ctx context.Context, refreshToken string) (*Session, error) {
	return c.token(ctx, "refresh_token", map[string]string{"refresh_token": refreshToken})
}

func (c *Client) token(ctx context.Context, grant string, body map[string]string) (*Session, error) {
	res, err := c.do(ctx, request{
		method: http.MethodPost, path: "/auth/v1/token",
		query: url.Values{"grant_type": {grant}}, body: body,
	})
	if err != nil {
		return nil, err
	}
	var s Session
	if err := json.Unmarshal(res.body, &s); err != nil {
		return nil, fmt.Errorf("client: decode token answer: %w", err)
	}
	if s.AccessToken == "" || s.RefreshToken == "" {
		return nil, fmt.Errorf("client: token answer without tokens")
	}
	s.Received = time.Now()
	return &s, nil
}

// GetUser is GET /auth/v1/user: who the access token belongs to, checked by the service.
func (c *Client) GetUser(ctx context.Context, accessToken string) (*User, error) {
	res, err := c.do(ctx, request{method: http.MethodGet, path: "/auth/v1/user", token: accessToken})
	if err != nil {
		return nil, err
	}
	var u User
	if err := json.Unmarshal(res.body, &u); err != nil {
		return nil, fmt.Errorf("client: decode user: %w", err)
	}
	return &u, nil
}

// LogoutScope says which sessions a logout ends: this one, all of the user's, or the others.
type LogoutScope string

// The scopes of POST /auth/v1/logout.
const (
	LogoutLocal  LogoutScope = "local"
	LogoutGlobal LogoutScope = "global"
	LogoutOthers LogoutScope = "others"
)

// Logout is POST /auth/v1/logout?scope=…: the service revokes the session's refresh tokens, and
// access tokens bound to it stop working.
func (c *Client) Logout(ctx context.Context, accessToken string, scope LogoutScope) error {
	_, err := c.do(ctx, request{
		method: http.MethodPost, path: "/auth/v1/logout",
		query: url.Values{"scope": {string(scope)}}, token: accessToken,
	})
	return err
}
