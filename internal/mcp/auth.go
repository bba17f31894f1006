package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"masthead/internal/pg"
)

// tokenKey is where verify keeps the raw bearer token in TokenInfo.Extra, so tools can
// forward it to /rest/v1. TokenInfo never leaves the process.
const tokenKey = "masthead_token"

// clientIDKey holds the OAuth client the token was issued to ("" for a password-grant token),
// for the tool log: which app acted for the person.
const clientIDKey = "client_id"

// errAuthUnavailable is the whole answer a client gets when the token could not be checked for
// a reason of ours (the database is down); the cause is logged.
var errAuthUnavailable = errors.New("the token could not be checked right now; try again shortly")

// verify is the SDK's TokenVerifier: it asks the Authenticator who the request is and admits
// only signed-in users. The publishable key as bearer (anon) is refused like a bad token, since
// an assistant without a user could see nothing anyway and should be sent to sign in.
func (s *Server) verify(ctx context.Context, token string, r *http.Request) (*sdkauth.TokenInfo, error) {
	caller, err := s.auth.Caller(r)
	if err != nil {
		if s.invalid == nil || errors.Is(err, s.invalid) {
			return nil, fmt.Errorf("%w: %s", sdkauth.ErrInvalidToken, reason(err))
		}
		s.log.ErrorContext(ctx, "mcp: authenticate", "err", err)
		return nil, errAuthUnavailable
	}
	if caller.Role != pg.RoleAuthenticated {
		return nil, fmt.Errorf("%w: sign in as a user; the publishable key alone cannot use /mcp", sdkauth.ErrInvalidToken)
	}
	var c struct {
		Sub      string `json:"sub"`
		Exp      int64  `json:"exp"`
		Scope    string `json:"scope"`
		ClientID string `json:"client_id"`
	}
	// segmentio's decoder: the claims are a few hundred bytes of which four members are read,
	// and encoding/json spent ~7 µs of CPU on them for every /mcp request.
	if err := segjson.Unmarshal(caller.Claims, &c); err != nil || c.Sub == "" {
		return nil, fmt.Errorf("%w: claims without a subject", sdkauth.ErrInvalidToken)
	}
	return &sdkauth.TokenInfo{
		UserID:     c.Sub,
		Expiration: time.Unix(c.Exp, 0),
		Scopes:     strings.Fields(c.Scope),
		Extra:      map[string]any{tokenKey: token, clientIDKey: c.ClientID},
	}, nil
}

// reason is the refusal's explanation without the sentinel's own prefix, e.g. "token is expired".
func reason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// TokenVerifier adapts an offline token check to Authenticator: it returns the token's claims
// exactly as signed (what auth.Verifier.Verify reports as Claims.Raw) or an error wrapping
// Config.InvalidToken. It is the recommended Authenticator for /mcp: a tool reaches data only
// through /rest/v1, which checks on every call that the token's session is still alive, so a
// second session lookup here would cost a database transaction per MCP request and guard
// nothing more. What a revoked but unexpired token still gets is the tool catalogue
// (initialize, tools/list); each of its tool calls fails with "reconnect to sign in again".
type TokenVerifier func(token string) (claims []byte, err error)

// Caller verifies the request's bearer token. The SDK's middleware has already refused
// requests without an "Authorization: Bearer …" header.
func (f TokenVerifier) Caller(r *http.Request) (pg.Caller, error) {
	_, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	claims, err := f(strings.TrimSpace(token))
	if err != nil {
		return pg.Caller{}, err
	}
	return pg.UserCaller(claims), nil
}

// identity is the caller of one tool call.
type identity struct {
	token    string
	userID   string
	clientID string
}

// caller reads the identity verify stored for this request. A tool call without one cannot
// happen behind RequireBearerToken; refusing it anyway keeps a wiring mistake from turning
// into anonymous REST calls.
func caller(req *sdk.CallToolRequest) (identity, error) {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return identity{}, errors.New("not signed in: reconnect to sign in again")
	}
	tok, _ := req.Extra.TokenInfo.Extra[tokenKey].(string)
	if tok == "" {
		return identity{}, errors.New("not signed in: reconnect to sign in again")
	}
	cid, _ := req.Extra.TokenInfo.Extra[clientIDKey].(string)
	return identity{token: tok, userID: req.Extra.TokenInfo.UserID, clientID: cid}, nil
}

// cors lets browser-based MCP clients (MCP Inspector, web connectors) call /mcp from any
// origin. That is safe because the endpoint never reads cookies: only a bearer token the page
// already holds opens it. The 401's WWW-Authenticate must be readable for discovery to start.
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "86400")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
