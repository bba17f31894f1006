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
// you meant …" hints, its SQLSTATE to HTTP status table). Supported, each
// with a table test of exact bodies and headers:
//
//   - select with aliases, casts, JSON paths (-> and ->> on json, arrays
//     and composites, ->>0 named by its last key), nested embeds, !inner,
//     hints by table, foreign-key constraint or column (client:client_id(*)),
//     self-references (parent and children), empty embeds rel() that only
//     filter, select= meaning every column; spread embeds ...rel(cols),
//     to-one and (with aggregates on) to-many;
//   - relationships through views: a view showing a table's key columns
//     (renamed or not, through views of views) shares its foreign keys, to
//     and from tables and views, and its primary key, so PUT and upserts
//     work on it (TestViews);
//   - computed columns and computed relationships: functions taking the
//     table's row type, in select, filters, order and embeds;
//   - aggregates count(), sum(), avg(), min(), max() with ::casts, grouped
//     by the other selected columns;
//   - filters eq … isdistinct, fts/plfts/phfts/wfts with a language
//     configuration (fts(english)), cs cd ov, not., or=() and=(), in.()
//     matching nothing; order with nulls first/last; limit/offset (limit=0
//     is []; a page past an offset is picked before its embeds are
//     computed, so skipped rows cost no embeds), Range, counts (exact,
//     planned, estimated);
//   - POST (bulk, {} of all defaults, columns=, missing=default, on_conflict,
//     merge-duplicates answering 200 when it only updated a table (201 on
//     views and partitioned tables, which cannot tell), ignore-duplicates),
//     PUT (one row by its whole primary key), PATCH, DELETE; text/csv
//     answers for reads and CSV bodies for bulk inserts; Content-Range and
//     Preference-Applied on writes; the singular media type on reads and
//     writes (PGRST116 rolls the write back);
//   - /rpc: named, form-urlencoded and variadic arguments, GET for stable
//     functions (Range only there), 405 PGRST101 for other methods; scalar,
//     composite, record, setof and single-OUT results;
//   - GET /rest/v1/ (openapi.go): the OpenAPI (Swagger 2.0) document
//     PostgREST serves in its follow-privileges mode, of the tables, views,
//     columns (types, defaults, comments) and functions (arguments,
//     comments) the caller's role holds a privilege on.
//
// Writes RETURN only the columns the answer reads (none for return=minimal,
// whose rows are counted from the command tag), so column grants are enough.
//
// Aggregate functions and to-many spread embeds are off unless
// Config.Aggregates (MASTHEAD_DB_AGGREGATES_ENABLED) is set, as PostgREST's
// db-aggregates-enabled; off, they are 400 PGRST123.
//
// Not built: nested spreads of to-many embeds with aggregates inside them
// (400 PGRST127); functions of one unnamed json, text or bytea parameter
// that take the whole body (they are not offered over /rpc); the OpenAPI
// document's ignore-privileges mode and security definitions; views over
// tables of schemas other than public (their columns are not traced).
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
