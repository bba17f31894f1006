package pg

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// RetryAfter is the Retry-After every surface sends with its 503 for an outage, in seconds:
// the pool reconnects on the next request, so a client may try again at once after a restart.
const RetryAfter = "1"

// Unavailable reports whether err means the database cannot serve right now rather than that
// the request is wrong: it could not be reached, it closed the connection, or it said it is
// shutting down, starting up or out of connections (SQLSTATE 57P01-57P03, classes 08 and 53).
// Every surface answers these as 503 with Retry-After, and the pool recovers by itself when the
// database is back, so no restart of the service is needed.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	if f, ok := ErrorFields(err); ok {
		return HTTPStatus(f.Code, false) == http.StatusServiceUnavailable
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed)
}

// ErrSessionEnded says the caller's claims name an auth session that no longer exists: the user
// signed out, or the session was revoked. Surfaces answer it as an invalid token (401).
var ErrSessionEnded = errors.New("pg: the session of this token has ended")

// sessionEndedCode is what app.check_session raises.
const sessionEndedCode = "PT401"

// sessionError marks the setup's refusal of an ended session as ErrSessionEnded.
func sessionError(err error) error {
	if err == nil {
		return nil // every successful request passes here: errors.As would allocate
	}
	if f, ok := ErrorFields(err); ok && f.Code == sessionEndedCode {
		return fmt.Errorf("%w: %w", ErrSessionEnded, err)
	}
	return err
}

// Fields are the parts of a database error that are safe to show a client: PostgREST shows
// code, message, details and hint, and so do we.
type Fields struct {
	Code    string
	Message string
	Details string
	Hint    string
}

// ErrorFields extracts the client-safe parts of a PostgreSQL error, or false when err did not
// come from the server (a network failure, a bug): those are logged and answered as 500 or 503.
func ErrorFields(err error) (Fields, bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return Fields{}, false
	}
	return Fields{Code: pe.Code, Message: pe.Message, Details: pe.Detail, Hint: pe.Hint}, true
}

// exactStatus and classStatus are PostgREST's SQLSTATE table: exact codes first, then the
// two-character class; anything else is the client's fault (400).
var exactStatus = map[string]int{
	"23503": http.StatusConflict,            // foreign_key_violation
	"23505": http.StatusConflict,            // unique_violation
	"25006": http.StatusMethodNotAllowed,    // read_only_sql_transaction
	"42883": http.StatusNotFound,            // undefined_function
	"42P01": http.StatusNotFound,            // undefined_table
	"42P17": http.StatusInternalServerError, // infinite_recursion (a broken policy)
	"57P01": http.StatusServiceUnavailable,  // admin_shutdown: the server is stopping or restarting
	"57P02": http.StatusServiceUnavailable,  // crash_shutdown: another backend crashed, all are reset
	"57P03": http.StatusServiceUnavailable,  // cannot_connect_now: starting up or shutting down
	"P0001": http.StatusBadRequest,          // raise_exception
	// Our own: one request asked for more than a request may cost (internal/rest's limits).
	CodeEmbeddedRows:  http.StatusBadRequest,
	CodeResponseBytes: http.StatusBadRequest,
}

// The codes of the per-request cost limits, in PostgREST's error shape like any SQLSTATE:
// CodeEmbeddedRows is raised by app.embedded_row when a response embeds more rows than
// MASTHEAD_MAX_EMBEDDED_ROWS allows; CodeResponseBytes by the REST engine when a response
// grows past MASTHEAD_MAX_RESPONSE_BYTES.
const (
	CodeEmbeddedRows  = "MH001"
	CodeResponseBytes = "MH002"
)

var classStatus = map[string]int{
	"08": http.StatusServiceUnavailable, "53": http.StatusServiceUnavailable,
	"0L": http.StatusForbidden, "0P": http.StatusForbidden, "28": http.StatusForbidden,
	"09": 500, "25": 500, "2D": 500, "38": 500, "39": 500, "3B": 500, "40": 500, "54": 500,
	"55": 500, "57": 500, "58": 500, "F0": 500, "HV": 500, "P0": 500, "XX": 500,
}

// HTTPStatus maps a SQLSTATE to an HTTP status the way PostgREST does. anon says whether the
// caller was anonymous: insufficient privilege is then 401 (sign in), otherwise 403. Our own
// functions raise `PTnnn` to choose status nnn, as PostgREST allows.
func HTTPStatus(code string, anon bool) int {
	if len(code) == 5 && strings.HasPrefix(code, "PT") {
		if n, err := strconv.Atoi(code[2:]); err == nil && n >= 100 && n <= 599 {
			return n
		}
	}
	if code == "42501" {
		if anon {
			return http.StatusUnauthorized
		}
		return http.StatusForbidden
	}
	if s, ok := exactStatus[code]; ok {
		return s
	}
	if len(code) >= 2 {
		if s, ok := classStatus[code[:2]]; ok {
			return s
		}
	}
	return http.StatusBadRequest
}
