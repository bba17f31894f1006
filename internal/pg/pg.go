// Package pg owns the connection pool and each caller's fair share of it (Shares), the schema
// migrations, running a transaction as a caller (role + JWT claims, as PostgREST and Supabase
// do), and the one mapping from SQLSTATEs to HTTP.
//
// Every public surface reaches the database through WithCaller, so row-level security decides
// what each request may see and change. It must not import any other masthead package.
package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Roles the service switches into. The login role (`authenticator`) holds no privileges itself.
const (
	RoleAnon          = "anon"
	RoleAuthenticated = "authenticated"
	RoleAuth          = "masthead_auth"      // the identity service: reads auth.* only
	RoleScheduler     = "masthead_scheduler" // the scheduler loop: may run app.publish_due()
	LoginRole         = "authenticator"
)

// Caller is who a transaction runs as.
type Caller struct {
	// Role is the database role to switch into; it must be one of the Role constants.
	Role string
	// Claims is the JSON object published as request.jwt.claims; nil means none.
	Claims json.RawMessage
	// Settings are further transaction-local settings (REST's request.method, request.headers,
	// …; storage's masthead.storage_api), applied in order, so a later one of the same name
	// wins. Names and values are bytes the setup sends as they are: a caller that makes them
	// on every request holds them so already, with no map built and copied per request.
	Settings []Setting
	// Subject and SessionID are the sub and session_id inside Claims, for claims the identity
	// service has verified and decoded (VerifiedCaller): the database then checks the session
	// and learns the user without parsing Claims (migration 019). Empty, it reads them from
	// Claims.
	Subject, SessionID string
}

// Setting is one further transaction-local setting: its name (a constant of the caller's, never
// input, held as bytes so that the setup sends it as it is) and its value.
type Setting struct {
	Name, Value []byte
}

// Anon is the caller holding only the publishable key.
var Anon = Caller{Role: RoleAnon, Claims: json.RawMessage(`{"role":"anon"}`)}

// UserCaller builds the caller for a signed-in user from their verified claims.
func UserCaller(claims json.RawMessage) Caller {
	return Caller{Role: RoleAuthenticated, Claims: claims}
}

// VerifiedCaller is UserCaller for claims whose sub and session_id the caller has already
// decoded from the same verified token; they must be the values inside claims.
func VerifiedCaller(claims json.RawMessage, sub, sessionID string) Caller {
	return Caller{Role: RoleAuthenticated, Claims: claims, Subject: sub, SessionID: sessionID}
}

// Open connects a pool. The URL should name the login role, never a superuser, so that no
// request can bypass row-level security.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	return OpenWith(ctx, url, Options{})
}

// Options says what lies between the service and PostgreSQL.
type Options struct {
	// Pooler is true when url names a transaction-mode pooler (PgBouncer, Supavisor, RDS Proxy):
	// consecutive transactions of one client connection may run on different server
	// connections, so nothing may outlive a transaction on them. Statements then run unnamed
	// (no prepared statement survives to the next transaction), and no session setting is sent
	// at connect (poolers refuse most startup parameters; jit is off for the login role itself,
	// migration 013).
	Pooler bool
}

// unpreparedKey marks, in a connection's CustomData, a connection through a pooler: the
// request pipeline prepares nothing on it.
const unpreparedKey = "masthead.unprepared"

// OpenWith is Open for a database behind what opts describes.
func OpenWith(ctx context.Context, url string, opts Options) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pg: parse database url: %w", err)
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	cfg.MaxConnIdleTime = 5 * time.Minute
	if opts.Pooler {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
		cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
			c.PgConn().CustomData()[unpreparedKey] = true
			return nil
		}
	} else if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
		// No JIT compilation unless the URL asks for it: requests are short, and compiling a
		// plan whose estimate crosses jit_above_cost costs about a second on its first run per
		// connection (seen on the inbox at 10,000 publications a project) to save milliseconds.
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pg: connect: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pg: ping: %w", err)
	}
	return pool, nil
}

// The setup switches role, publishes the claims and applies further settings in one fixed
// statement. Everything is local to the transaction, so nothing leaks to the next user of the
// pooled connection. The claims pass through app.check_session, which refuses those of a session
// that has ended; passing them as its argument makes the order certain: published, then checked.
//
// It comes in a few fixed texts, each prepared once per connection, so that a request pays only
// for what it sets:
//   - with the caller's sub and session_id (VerifiedCaller), sub is published as
//     request.jwt.claim.sub and the session is checked from them, so PostgreSQL parses the claims
//     JSON neither in the check nor in auth.uid() (migration 019); each parse of ~450 bytes of
//     claims cost about 11 µs (half of check_session's 22 µs, measured in a loop);
//   - a read-only pipeline sets transaction_read_only by itself;
//   - further settings are one set_config($k, $v, true) per setting, name and value both
//     parameters, so the text depends only on how many there are. They were one count over an
//     unnest of two text[] literals, which cost PostgreSQL about 4 µs more for REST's five
//     settings (5.8 against 1.9 µs in pg_stat_statements, same loop) and Go the quoting of the
//     literals (every quote of request.headers' JSON escaped again).
//
// The first two took BenchmarkFloorDownload's PostgreSQL CPU from 108–117 to 85–107 µs a
// download (both builds run in turn, -benchtime 5s, on a shared 2-core machine).
const (
	setupRole        = `select set_config('role', $1, true), `
	setupCheckClaims = `app.check_session(set_config('request.jwt.claims', $2, true))`
	setupCheckIDs    = `app.check_session(set_config('request.jwt.claims', $2, true), set_config('request.jwt.claim.sub', $3, true), $4)`
	setupReadOnly    = `, set_config('transaction_read_only', 'on', true)`
)

// setupTextsMax is the most further settings whose setup texts are made in advance; a caller
// with more gets its text built on each request (still one prepared statement per count).
const setupTextsMax = 8

// setupTexts[ids][readOnly][n]: the setup with the sub and session_id (ids 1) or not, with
// transaction_read_only or not, and n further settings.
var setupTexts = func() (t [2][2][setupTextsMax + 1]string) {
	for ids := range 2 {
		for ro := range 2 {
			for n := range setupTextsMax + 1 {
				t[ids][ro][n] = setupText(ids, ro == 1, n)
			}
		}
	}
	return t
}()

func setupText(ids int, readOnly bool, n int) string {
	var b strings.Builder
	b.WriteString(setupRole)
	next := 3 // the first parameter after the check's
	if ids == 1 {
		b.WriteString(setupCheckIDs)
		next = 5
	} else {
		b.WriteString(setupCheckClaims)
	}
	if readOnly {
		b.WriteString(setupReadOnly)
	}
	for i := range n {
		fmt.Fprintf(&b, ", set_config($%d, $%d, true)", next+2*i, next+2*i+1)
	}
	return b.String()
}

// setup returns the setup text for c and its text parameters, appended to params (which
// pipeline keeps from one request to the next); readOnly adds transaction_read_only for a
// pipeline that has no BEGIN of its own.
func setup(c Caller, readOnly bool, params [][]byte) (string, [][]byte) {
	claims := c.Claims
	if len(claims) == 0 {
		claims = json.RawMessage("{}")
	}
	params = append(params, roleBytes(c.Role), claims)
	if c.SessionID != "" {
		params = append(params, []byte(c.Subject), []byte(c.SessionID))
	}
	for _, s := range c.Settings {
		params = append(params, s.Name, s.Value)
	}
	return setupSQL(c, readOnly), params
}

// setupSQL is the text of c's setup, as setup returns it.
func setupSQL(c Caller, readOnly bool) string {
	ids, ro := 0, 0
	if c.SessionID != "" {
		ids = 1
	}
	if readOnly {
		ro = 1
	}
	n := len(c.Settings)
	if n > setupTextsMax {
		return setupText(ids, readOnly, n)
	}
	return setupTexts[ids][ro][n]
}

// setupParams keeps the setup's parameter lists between requests (a list of 14 for REST's).
var setupParams = sync.Pool{New: func() any { return new([][]byte) }}

// WithCaller runs fn in one transaction as c. The transaction commits when fn returns nil and
// rolls back otherwise, so a multi-step write is all or nothing.
func WithCaller(ctx context.Context, pool *pgxpool.Pool, c Caller, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	if !knownRole(c.Role) {
		return fmt.Errorf("pg: refusing unknown role %q", c.Role)
	}
	return pgx.BeginTxFunc(ctx, pool, opts, func(tx pgx.Tx) error {
		if err := Setup(ctx, tx, c); err != nil {
			return err
		}
		return fn(tx)
	})
}

// Setup applies c to an open transaction in one statement.
func Setup(ctx context.Context, tx pgx.Tx, c Caller) error {
	sql, params := setup(c, false, nil) // the transaction's own options say whether it is read-only
	args := make([]any, len(params))
	for i, p := range params {
		args[i] = string(p)
	}
	if _, err := tx.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("pg: set caller: %w", sessionError(err))
	}
	return nil
}

// roleNames are the roles' names as the setup's first parameter, so that a request does not
// copy its role's name to the heap.
var roleNames = map[string][]byte{RoleAnon: []byte(RoleAnon), RoleAuthenticated: []byte(RoleAuthenticated),
	RoleAuth: []byte(RoleAuth), RoleScheduler: []byte(RoleScheduler)}

func roleBytes(r string) []byte {
	if b, ok := roleNames[r]; ok {
		return b
	}
	return []byte(r)
}

func knownRole(r string) bool {
	switch r {
	case RoleAnon, RoleAuthenticated, RoleAuth, RoleScheduler:
		return true
	}
	return false
}

// ReadOnly is the transaction mode for GET and HEAD.
var ReadOnly = pgx.TxOptions{AccessMode: pgx.ReadOnly}

// ReadWrite is the default transaction mode.
var ReadWrite = pgx.TxOptions{}

// IsNoRows reports whether err means a query found no row.
func IsNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
