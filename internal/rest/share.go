package rest

import (
	"errors"
	"net/http"

	"masthead/internal/pg"
)

// overShare words the refusal of a request over its caller's share of the pool (see
// pg.Shares) as PostgREST words a saturated pool, 503 PGRST003, naming the limits; any other
// error is returned as it is.
func overShare(err error) error {
	var over *pg.OverShareError
	if !errors.As(err, &over) {
		return err
	}
	return &Error{Status: http.StatusServiceUnavailable, Code: "PGRST003",
		Message: "Timed out acquiring connection from connection pool.",
		Details: over.Explain(),
		Hint:    "Wait for your other requests to finish, or send fewer at once."}
}
