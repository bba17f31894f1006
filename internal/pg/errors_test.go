package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestHTTPStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code string
		anon bool
		want int
	}{
		{"PT409", false, 409},
		{"PT403", false, 403},
		{"PT999", false, 400}, // not a status: the default
		{"23505", false, 409},
		{"23503", false, 409},
		{"42501", true, 401},
		{"42501", false, 403},
		{"42P01", false, 404},
		{"P0001", false, 400},
		{"22P02", false, 400},
		{"23514", false, 400},
		{"08006", false, 503},
		{"57P01", false, 503}, // admin_shutdown: a restart under way
		{"57P02", false, 503},
		{"57P03", false, 503}, // cannot_connect_now
		{"57014", false, 500}, // query_canceled stays the server's failure
		{"40001", false, 500},
		{"XX000", false, 500},
	}
	for _, c := range cases {
		if got := HTTPStatus(c.code, c.anon); got != c.want {
			t.Errorf("HTTPStatus(%q, anon=%v) = %d, want %d", c.code, c.anon, got, c.want)
		}
	}
}

// TestUnavailable: what an outage looks like to a request (the server going away, refusing
// connections, or saying it is shutting down) is Unavailable; a refusal or a bug is not.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	dial := &net.OpError{Op: "dial", Net: "unix", Err: errors.New("connect: no such file or directory")}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"57P01 terminating connection", &pgconn.PgError{Code: "57P01"}, true},
		{"57P03 starting up", fmt.Errorf("connect: %w", &pgconn.PgError{Code: "57P03"}), true},
		{"08006 connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"53300 too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"socket gone", dial, true},
		{"connection cut mid-query", fmt.Errorf("failed to receive message: %w", io.ErrUnexpectedEOF), true},
		{"closed connection", pgconn.ErrConnClosed, true},
		{"deadline", context.DeadlineExceeded, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"raise exception", &pgconn.PgError{Code: "P0001"}, false},
		{"bug", errors.New("nil map"), false},
		{"canceled by the client", context.Canceled, false},
	}
	for _, c := range cases {
		if got := Unavailable(c.err); got != c.want {
			t.Errorf("%s: Unavailable(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
