// Package auth is the identity service behind /auth/v1, compatible with Supabase Auth (GoTrue)
// so that supabase-js works unchanged: the password and refresh_token grants, ES256 access
// tokens with a published JWK set, sessions with rotating refresh tokens, /user (read and
// updateUser) and /logout, the publishable-key check, and GoTrue's error bodies. Sign-ups are
// disabled; people arrive through invitations, which are accepted here (invite.go) because
// accepting sets a password and starts a session, which only this service may do. Under /auth/v1/oauth it is also an
// OAuth 2.1 authorization server for AI connectors (dynamic registration, PKCE, consent,
// grants a person can revoke), and it signs people in through upstream OpenID Connect
// providers; both issue the same access tokens as the password grant.
//
// It also owns the answer to "who is calling?" for every other surface: Verifier checks a
// bearer token offline (remembering tokens it has verified), and Service.Caller turns a request
// into the pg.Caller its transaction runs as; whether the token's session still exists is
// checked by the database when that transaction starts. Other surfaces depend on that through
// small interfaces of their own.
//
// It reads and writes schema auth only, always as role masthead_auth through pg.WithCaller,
// never as a superuser. It may import internal/pg, internal/tokencache (verified tokens) and
// internal/metrics (grants and rate-limit refusals are counted there); it must not import
// internal/server, config, rest, storage, mcp, handlers or views.
package auth
