// Package client is a typed HTTP client for Masthead's service surfaces /auth/v1 (GoTrue-style
// sign-in, refresh, user, logout) and /rest/v1 (PostgREST-style queries and RPCs). It is how the
// dashboard, and later the MCP server, act as a signed-in user: every call carries the
// publishable key in the apikey header and the caller's access token as a Bearer token, so the
// service and its row-level security decide what the caller may see and do.
//
// Because it only speaks HTTP, it works against any service with the same contract (a Masthead
// instance or a Supabase project carrying the same schema). It must not import the service
// packages (internal/auth, internal/rest, internal/pg) nor handlers or views.
package client
