package mcp

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"masthead/internal/client"
)

// TestToolErrorOutage: a 503 from the service reaches the model as a temporary failure to
// retry shortly, distinct from other failures of ours.
func TestToolErrorOutage(t *testing.T) {
	t.Parallel()
	s := &Server{log: slog.New(slog.DiscardHandler)}
	cases := []struct {
		err  error
		want string
	}{
		{&client.Error{Status: 503, Code: "PGRST000", Message: "Database connection error. Retrying the connection."}, "database is unavailable right now"},
		{&client.Error{Status: 500, Code: "PGRST000", Message: "Internal server error"}, "could not complete this request right now"},
		{errors.New("dial tcp: connection refused"), "could not complete this request right now"},
	}
	for _, c := range cases {
		err := s.toolError(context.Background(), "search_publications", c.err)
		var ie *internalError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("toolError(%v) = %v, want an internal error saying %q", c.err, err, c.want)
		}
	}
}
