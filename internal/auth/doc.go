// Package auth is the identity service behind /auth/v1, compatible with Supabase Auth (GoTrue)
// so that supabase-js works unchanged: the password and refresh_token grants, ES256 access
// tokens with a published JWK set, sessions with rotating refresh tokens, /user and /logout,
// the publishable-key check, and GoTrue's error bodies.
//
// It also owns the answer to "who is calling?" for every other surface: Verifier checks a
// bearer token offline, and Service.Caller turns a request into the pg.Caller its transaction
// runs as. Other surfaces depend on that through small interfaces of their own.
//
// It reads and writes schema auth only, always as role masthead_auth through pg.WithCaller,
// never as a superuser. It may import internal/pg; it must not import internal/server, config,
// rest, storage, mcp, handlers or views.
package auth
