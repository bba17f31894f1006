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
// Behaviour follows PostgREST v13 as its documentation and spec tests
// describe it, including the wording of its errors (PGRST codes, "Perhaps
// you meant …" hints, its SQLSTATE to HTTP status table). Writes RETURN only
// the columns the answer reads (none for return=minimal, whose rows are
// counted from the command tag), so column grants are enough.
//
// Aggregate functions and to-many spread embeds are off unless
// Config.Aggregates (MASTHEAD_DB_AGGREGATES_ENABLED) is set, as PostgREST's
// db-aggregates-enabled; off, they are 400 PGRST123.
//
// One difference is deliberate: a PATCH or DELETE without any filter or
// limit is refused with 400 {"code":"21000","message":"UPDATE requires a
// WHERE clause"} (or DELETE …), as the pg-safeupdate extension does on
// Supabase projects, because touching every row the caller can see is almost
// always a mistake.
//
// It may import internal/pg (pool, run-as-caller, SQLSTATE mapping) but must
// not import handlers, views, internal/client or any other service surface
// (auth, storage, mcp); the caller's identity arrives through the
// Authenticator interface declared here.
package rest
