// Package rest serves /rest/v1, the PostgREST-compatible interface over the
// public schema: it parses PostgREST's query-string grammar, plans embeds
// from a schema cache, builds one SQL statement per request that returns the
// JSON body, and runs it in one transaction as the caller.
//
// The package owns the grammar, the schema cache, the planner, the SQL
// builder and the Echo handler. It never decides access: row-level security
// in PostgreSQL does, so nothing here filters rows for security. It builds
// SQL only from identifiers found in the schema cache and passes every value
// as a bind parameter.
//
// It may import internal/pg (pool, run-as-caller, SQLSTATE mapping) but must
// not import handlers, views, internal/client or any other service surface
// (auth, storage, mcp); the caller's identity arrives through the
// Authenticator interface declared here.
package rest
