package rest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
)

// acquire takes a slot of the caller's share of the pool and then a pooled connection, waiting
// at most PoolShareWait and AcquireTimeout: a caller over their share, or a saturated pool,
// answers 503 PGRST003 rather than queueing forever. h.release gives both back.
// A read (GET or HEAD) takes its connection from ReadPool when one is configured; replica then
// says it came from elsewhere than the handler's own pool.
func (h *Handler) acquire(rq *request) (conn *pgxpool.Conn, sh *pg.Share, replica bool, err error) {
	ctx := rq.c.Request().Context()
	sh, err = h.shares.Take(ctx, pg.ShareKey(rq.caller, rq.c.RealIP()))
	if err != nil {
		return nil, nil, false, overShare(err)
	}
	pool := h.pool
	if m := rq.c.Request().Method; h.cfg.ReadPool != nil && (m == http.MethodGet || m == http.MethodHead) {
		pool = h.cfg.ReadPool(ctx)
	}
	conn, err = h.pooled(ctx, pool)
	if err != nil {
		h.shares.Give(sh)
		return nil, nil, false, err
	}
	return conn, sh, pool != h.pool, nil
}

// release gives back what acquire took.
func (h *Handler) release(conn *pgxpool.Conn, sh *pg.Share) {
	conn.Release()
	h.shares.Give(sh)
}

// retryOnPrimary says whether err, met on a read replica, must be asked of the primary again: a
// session that began a moment ago may not have reached the replica yet, so only the primary
// can say it has ended. It switches the request's reads to the primary.
func retryOnPrimary(rq *request, replica bool, err error) bool {
	if !replica || !errors.Is(err, pg.ErrSessionEnded) {
		return false
	}
	r := rq.c.Request()
	rq.c.SetRequest(r.WithContext(pg.ReadPrimary(r.Context())))
	return true
}

// pooled takes a connection from pool through the handler's Acquirer, which bounds the wait by
// AcquireTimeout without arming a timer per request (see pg.Acquirer).
func (h *Handler) pooled(ctx context.Context, pool *pgxpool.Pool) (*pgxpool.Conn, error) {
	conn, err := h.acquirer.Acquire(ctx, pool)
	if err == nil {
		return conn, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: "PGRST003",
			Message: "Timed out acquiring connection from connection pool.", cause: err}
	}
	return nil, unavailable(err)
}

// unavailable is PostgREST's PGRST000 for a database that cannot be reached or is restarting;
// fail adds Retry-After to it.
func unavailable(cause error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "PGRST000",
		Message: "Database connection error. Retrying the connection.", cause: cause}
}

// callerFor adds PostgREST's per-request settings to the caller, as a list kept in rq (no map
// per request, and values the setup sends as they are).
func (h *Handler) callerFor(rq *request) pg.Caller {
	c := rq.caller
	r := rq.c.Request()
	rq.settings = [...]pg.Setting{
		{Name: settingMethod, Value: methodBytes(r.Method)},
		{Name: settingPath, Value: []byte(rq.path)},
		{Name: settingHeaders, Value: headersJSON(r.Header)},
		{Name: settingTimeout, Value: h.timeoutMS},
		{Name: settingEmbedded, Value: h.maxEmbedded},
	}
	if len(c.Settings) == 0 {
		c.Settings = rq.settings[:]
	} else {
		c.Settings = append(slices.Clip(c.Settings), rq.settings[:]...)
	}
	return c
}

// The names of the per-request settings, as the setup sends them.
var (
	settingMethod   = []byte("request.method")
	settingPath     = []byte("request.path")
	settingHeaders  = []byte("request.headers")
	settingTimeout  = []byte("statement_timeout")
	settingEmbedded = []byte("masthead.max_embedded_rows")
)

// methods are the usual request methods as request.method's value, not copied per request.
var methods = map[string][]byte{
	http.MethodGet:    []byte(http.MethodGet),
	http.MethodHead:   []byte(http.MethodHead),
	http.MethodPost:   []byte(http.MethodPost),
	http.MethodPut:    []byte(http.MethodPut),
	http.MethodPatch:  []byte(http.MethodPatch),
	http.MethodDelete: []byte(http.MethodDelete),
}

func methodBytes(m string) []byte {
	if b, ok := methods[m]; ok {
		return b
	}
	return []byte(m)
}

// headersJSON renders request.headers as PostgREST does: one JSON object
// with lower-case names and the first value of each header. A name needing no
// escape (every name net/http parsed) is lowered straight into the buffer.
func headersJSON(h http.Header) []byte {
	n := 2
	for k, v := range h {
		if len(v) > 0 {
			n += len(k) + len(v[0]) + 6
		}
	}
	var b bytes.Buffer
	b.Grow(n)
	b.WriteByte('{')
	for k, v := range h {
		if len(v) == 0 {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		if plainJSON(k) {
			b.WriteByte('"')
			for i := 0; i < len(k); i++ {
				b.WriteByte(lowerByte(k[i]))
			}
			b.WriteByte('"')
		} else {
			writeJSONString(&b, lowerASCII(k))
		}
		b.WriteByte(':')
		writeJSONString(&b, v[0])
	}
	b.WriteByte('}')
	return b.Bytes()
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerByte(c)
	}
	return string(b)
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// run executes stmts as the caller in one pipelined round trip and hands
// the results to check. Reads run in a read-only implicit transaction;
// writes in an explicit one that check may still refuse (returning an
// *Error), which rolls everything back.
func (h *Handler) run(rq *request, write bool, stmts []pg.Stmt, check func([]*pgconn.Result) error) error {
	ctx := rq.c.Request().Context()
	conn, sh, replica, err := h.acquire(rq)
	if err != nil {
		return err
	}
	pc := conn.Conn().PgConn()
	results, err := pg.ExecAsCaller(ctx, pc, h.callerFor(rq), !write, write, stmts...)
	if retryOnPrimary(rq, replica, err) {
		h.release(conn, sh)
		return h.run(rq, write, stmts, check)
	}
	defer h.release(conn, sh)
	if err != nil {
		return h.dbError(rq, err)
	}
	if err := check(results); err != nil {
		if write {
			_ = pg.EndTx(ctx, pc, false)
		}
		return h.dbError(rq, err)
	}
	if write {
		return h.dbError(rq, pg.EndTx(ctx, pc, true))
	}
	return nil
}

// stream runs a read whose last statement returns one row per item, handing each row's values
// to each as it arrives (see pg.StreamAsCaller); the results of the statements before it are
// returned. An error from each stops the statement and is returned as is.
func (h *Handler) stream(rq *request, stmts []pg.Stmt, each func(row [][]byte) error) ([]*pgconn.Result, error) {
	conn, sh, replica, err := h.acquire(rq)
	if err != nil {
		return nil, err
	}
	rs, err := pg.StreamAsCaller(rq.c.Request().Context(), conn.Conn().PgConn(), h.callerFor(rq), stmts, each)
	h.release(conn, sh)
	if retryOnPrimary(rq, replica, err) {
		return h.stream(rq, stmts, each)
	}
	if err != nil {
		return nil, h.dbError(rq, err)
	}
	return rs[:len(rs)-1], nil
}

// scanResult reads our statements' one row: total (or NULL), page size
// and body, all in text format (and, for some, more columns after them).
func scanResult(r *pgconn.Result) (result, error) {
	if len(r.Rows) != 1 || len(r.Rows[0]) < 3 {
		return result{}, errors.New("rest: statement did not return one row of three columns")
	}
	row := r.Rows[0]
	var res result
	// ReadAll copies values, so NULL arrives empty; a count is never empty.
	if len(row[0]) > 0 {
		n, err := strconv.ParseInt(string(row[0]), 10, 64)
		if err != nil {
			return result{}, err
		}
		res.total = &n
	}
	n, err := strconv.ParseInt(string(row[1]), 10, 64)
	if err != nil {
		return result{}, err
	}
	res.page, res.body = n, row[2]
	return res, nil
}

// dbError maps a database failure to PostgREST's answer through the one
// SQLSTATE table in internal/pg; our own *Error passes through.
func (h *Handler) dbError(rq *request, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, pg.ErrSessionEnded) {
		// The token verified, but its session is gone (signed out or revoked): to the client
		// this is an invalid token, answered as the Authenticator's refusals are.
		return &Error{Status: http.StatusUnauthorized, Code: "PGRST301", Message: "JWT session has ended", cause: err}
	}
	if f, ok := pg.ErrorFields(err); ok {
		return &Error{Status: sqlStatus(f, rq.caller.Role == pg.RoleAnon), Code: f.Code,
			Message: f.Message, Details: f.Details, Hint: f.Hint, cause: err}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Status: 499, Code: "PGRST000", Message: "Request canceled", cause: err}
	}
	if pg.Unavailable(err) {
		return unavailable(err)
	}
	return &Error{Status: http.StatusInternalServerError, Code: "PGRST000", Message: "Internal server error", cause: err}
}

// sqlStatus is the status PostgREST answers a database error with: internal/pg's SQLSTATE
// table, except where PostgREST decides on more than the code. A cardinality violation is the
// server's fault (500) unless it is pg-safeupdate's "… requires a WHERE clause" (400); a
// nonexistent role is a bad token (401); a configured limit exceeded (53400) is the server's
// (500); and a PT code whose rest is not a number is 500.
func sqlStatus(f pg.Fields, anon bool) int {
	switch {
	case f.Code == "21000":
		if strings.HasSuffix(f.Message, "requires a WHERE clause") {
			return http.StatusBadRequest
		}
		return http.StatusInternalServerError
	case f.Code == "22023" && strings.HasPrefix(f.Message, "role") && strings.HasSuffix(f.Message, "does not exist"):
		return http.StatusUnauthorized
	case f.Code == "53400":
		return http.StatusInternalServerError
	case strings.HasPrefix(f.Code, "PT") && strings.Trim(f.Code[2:], "0123456789") != "":
		return http.StatusInternalServerError
	}
	return pg.HTTPStatus(f.Code, anon)
}
