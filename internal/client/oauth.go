package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// OAuthClient is an app that asks for access, as the consent page and the app list show it.
type OAuthClient struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	URI     string `json:"uri"`
	LogoURI string `json:"logo_uri"`
}

// Authorization is GET /auth/v1/oauth/authorizations/{id}: either what the consent page asks
// the person about, or, when they had already consented, only RedirectURL (go there at once).
type Authorization struct {
	ID          string      `json:"authorization_id"`
	RedirectURI string      `json:"redirect_uri"`
	Client      OAuthClient `json:"client"`
	User        struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	} `json:"user"`
	Scope       string    `json:"scope"`
	Resource    string    `json:"resource"`
	ExpiresAt   time.Time `json:"expires_at"`
	RedirectURL string    `json:"redirect_url"`
}

// GetAuthorization loads authorization id as the signed-in person. An expired, unknown or
// someone else's authorization is an *Error with status 404; one already answered, 409.
func (c *Client) GetAuthorization(ctx context.Context, accessToken, id string) (*Authorization, error) {
	res, err := c.do(ctx, request{method: http.MethodGet, path: "/auth/v1/oauth/authorizations/" + url.PathEscape(id), token: accessToken})
	if err != nil {
		return nil, err
	}
	var a Authorization
	if err := json.Unmarshal(res.body, &a); err != nil {
		return nil, fmt.Errorf("client: decode authorization: %w", err)
	}
	return &a, nil
}

// DecideAuthorization approves or denies authorization id and returns where the browser goes
// next: the app's redirect URI with a code, or with error=access_denied.
func (c *Client) DecideAuthorization(ctx context.Context, accessToken, id string, approve bool) (string, error) {
	action := "deny"
	if approve {
		action = "approve"
	}
	res, err := c.do(ctx, request{method: http.MethodPost, path: "/auth/v1/oauth/authorizations/" + url.PathEscape(id) + "/consent",
		token: accessToken, body: map[string]string{"action": action}})
	if err != nil {
		return "", err
	}
	var v struct {
		RedirectURL string `json:"redirect_url"`
	}
	if err := json.Unmarshal(res.body, &v); err != nil || v.RedirectURL == "" {
		return "", fmt.Errorf("client: consent answer without redirect_url")
	}
	return v.RedirectURL, nil
}

// OAuthGrant is one app the person connected.
type OAuthGrant struct {
	Client    OAuthClient `json:"client"`
	Scopes    []string    `json:"scopes"`
	GrantedAt time.Time   `json:"granted_at"`
}

// ListOAuthGrants is GET /auth/v1/user/oauth/grants: the person's connected apps.
func (c *Client) ListOAuthGrants(ctx context.Context, accessToken string) ([]OAuthGrant, error) {
	res, err := c.do(ctx, request{method: http.MethodGet, path: "/auth/v1/user/oauth/grants", token: accessToken})
	if err != nil {
		return nil, err
	}
	var gs []OAuthGrant
	if err := json.Unmarshal(res.body, &gs); err != nil {
		return nil, fmt.Errorf("client: decode grants: %w", err)
	}
	return gs, nil
}

// RevokeOAuthGrant disconnects an app: its tokens stop working everywhere.
func (c *Client) RevokeOAuthGrant(ctx context.Context, accessToken, clientID string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: "/auth/v1/user/oauth/grants",
		query: url.Values{"client_id": {clientID}}, token: accessToken})
	return err
}
