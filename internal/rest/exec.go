package rest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
)

// acquire takes a pooled connection, waiting at most AcquireTimeout: a
// saturated pool answers 503 PGRST003 rather than queueing forever.
func (h *Handler) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	actx, cancel := context.WithTimeout(ctx, h.cfg.AcquireTimeout)
	defer cancel()
	conn, err := h.pool.Acquire(actx)
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
	return nil, &Error{Status: http.StatusServiceUnavailable, Code: "PGRST000",
		Message: "Database connection error. Retrying the connection.", cause: err}
}

// callerFor adds PostgREST's per-request settings to the caller.
func (h *Handler) callerFor(rq *request) pg.Caller {
	c := rq.caller
	settings := make(map[string]string, len(c.Settings)+4)
	for k, v := range c.Settings {
		settings[k] = v
	}
	r := rq.c.Request()
	settings["request.method"] = r.Method
	settings["request.path"] = rq.path
	settings["request.headers"] = headersJSON(r.Header)
	settings["statement_timeout"] = strconv.FormatInt(h.cfg.StatementTimeout.Milliseconds(), 10)
	c.Settings = settings
	return c
}

// headersJSON renders request.headers as PostgREST does: one JSON object
// with lower-case names and the first value of each header.
func headersJSON(h http.Header) string {
	m := make(map[string]string, len(h))
	for k, v := range h {
		if len(v) > 0 {
			m[lowerASCII(k)] = v[0]
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// runRead sends the caller setup and b in one round trip, in one
// read-only implicit transaction, and hands the results to read.
func (h *Handler) runRead(rq *request, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	ctx := rq.c.Request().Context()
	conn, err := h.acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	br, err := pg.SendAsCaller(ctx, conn.Conn(), h.callerFor(rq), true, b)
	if err != nil {
		return h.dbError(rq, err)
	}
	if err := read(br); err != nil {
		_ = br.Close()
		return h.dbError(rq, err)
	}
	return h.dbError(rq, br.Close())
}

// runWrite runs b in an explicit transaction so that read may still
// refuse the outcome (returning an *Error) and roll everything back.
func (h *Handler) runWrite(rq *request, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	ctx := rq.c.Request().Context()
	conn, err := h.acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return h.dbError(rq, err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	br, err := pg.SendAsCaller(ctx, tx, h.callerFor(rq), false, b)
	if err != nil {
		return h.dbError(rq, err)
	}
	rerr := read(br)
	cerr := br.Close()
	if rerr != nil {
		return h.dbError(rq, rerr)
	}
	if cerr != nil {
		return h.dbError(rq, cerr)
	}
	return h.dbError(rq, tx.Commit(ctx))
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
	if f, ok := pg.ErrorFields(err); ok {
		return &Error{Status: pg.HTTPStatus(f.Code, rq.caller.Role == pg.RoleAnon), Code: f.Code,
			Message: f.Message, Details: f.Details, Hint: f.Hint, cause: err}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Status: 499, Code: "PGRST000", Message: "Request canceled", cause: err}
	}
	return &Error{Status: http.StatusServiceUnavailable, Code: "PGRST000",
		Message: "Database connection error. Retrying the connection.", cause: err}
}
