package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
)

// Provider is an upstream sign-in provider as GET /auth/v1/settings lists it.
type Provider struct {
	Name, Label string
	Enabled     bool
}

// Providers lists the external sign-in providers the service knows, enabled or not, by name.
// Email sign-in is not among them: it is the form itself.
func (c *Client) Providers(ctx context.Context) ([]Provider, error) {
	res, err := c.do(ctx, request{method: http.MethodGet, path: "/auth/v1/settings"})
	if err != nil {
		return nil, err
	}
	var v struct {
		External map[string]bool   `json:"external"`
		Labels   map[string]string `json:"external_labels"`
	}
	if err := json.Unmarshal(res.body, &v); err != nil {
		return nil, fmt.Errorf("client: decode settings: %w", err)
	}
	var out []Provider
	for name, on := range v.External {
		if name == "email" || name == "phone" {
			continue
		}
		label := v.Labels[name]
		if label == "" {
			label = name
		}
		out = append(out, Provider{Name: name, Label: label, Enabled: on})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ProviderURL is where a browser starts signing in with provider: the service sends it on to
// the provider and back to redirectTo with a code for ExchangeCode (GoTrue's PKCE flow).
func (c *Client) ProviderURL(provider, redirectTo, codeChallenge string) string {
	u := *c.base
	u.Path += "/auth/v1/authorize"
	u.RawQuery = url.Values{"provider": {provider}, "redirect_to": {redirectTo},
		"code_challenge": {codeChallenge}, "code_challenge_method": {"s256"}}.Encode()
	return u.String()
}

// ExchangeCode is POST /auth/v1/token?grant_type=pkce: the code from the provider round trip
// and the verifier of its challenge become a session.
func (c *Client) ExchangeCode(ctx context.Context, code, verifier string) (*Session, error) {
	return c.token(ctx, "pkce", map[string]string{"auth_code": code, "code_verifier": verifier})
}
