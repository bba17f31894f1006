package mcp

import (
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
)

// Statuses of a publication, in workflow order.
var statuses = []any{"draft", "reviewing", "changes_requested", "approved", "scheduled", "published", "archived"}

// uuidPattern lets the SDK refuse a malformed id before any request, with a message naming
// the argument.
const uuidPattern = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`

// schema infers T's input schema (descriptions from jsonschema tags) and lets edit add what
// tags cannot say: enums, bounds, patterns. It panics on a malformed type, which is a
// programming error caught by every test that builds the server.
func schema[T any](edit func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema: %v", err))
	}
	if edit != nil {
		edit(s.Properties)
	}
	return s
}

// outputSchema infers the schema of a tool's result type.
func outputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: output schema: %v", err))
	}
	return s
}

// isUUID reports whether s is a UUID in its canonical text form.
// (uuid.Validate alone also accepts the urn:, braced and undashed forms.)
func isUUID(s string) bool { return len(s) == 36 && uuid.Validate(s) == nil }

// parseTime reads an RFC 3339 time or a plain date. A date means the start of that day in UTC,
// or with endOfDay the start of the next, so "to": "2026-05-01" includes all of 1 May.
func parseTime(arg, s string, endOfDay bool) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, refuse("Invalid request: %s must be a date (2026-05-01) or an RFC 3339 time (2026-05-01T09:00:00Z); got %q", arg, s)
	}
	if endOfDay {
		d = d.AddDate(0, 0, 1)
	}
	return d, nil
}
