package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// Error is a refusal answered to the client in PostgREST's JSON shape
// ({"code","details","hint","message"}). Message, Details and Hint are safe
// to show; the internal cause is only ever logged.
type Error struct {
	Status  int
	Code    string
	Message string
	Details string // empty renders as null, as PostgREST does
	Hint    string // empty renders as null
	// DetailsJSON replaces Details when PostgREST answers structured
	// details (the candidate list of an ambiguous embed).
	DetailsJSON json.RawMessage
	cause       error
}

func (e *Error) Error() string {
	if e.Details != "" {
		return "rest: " + e.Code + ": " + e.Message + ": " + e.Details
	}
	return "rest: " + e.Code + ": " + e.Message
}

// Unwrap exposes the internal cause to errors.Is/As and to logging.
func (e *Error) Unwrap() error { return e.cause }

// MarshalJSON writes the body with PostgREST's key order and nulls.
func (e *Error) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"code":`)
	writeJSONString(&b, e.Code)
	b.WriteString(`,"details":`)
	if e.DetailsJSON != nil {
		b.Write(e.DetailsJSON)
	} else {
		writeNullable(&b, e.Details)
	}
	b.WriteString(`,"hint":`)
	writeNullable(&b, e.Hint)
	b.WriteString(`,"message":`)
	writeJSONString(&b, e.Message)
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeNullable(b *bytes.Buffer, s string) {
	if s == "" {
		b.WriteString("null")
		return
	}
	writeJSONString(b, s)
}

// writeJSONString writes s as a JSON string without escaping <, > and & (as PostgREST's
// encoder does not).
func writeJSONString(b *bytes.Buffer, s string) {
	if plainJSON(s) {
		// Nothing to escape: what the encoder would write, without building one (an
		// encoder per string was 2 of the 10 allocations request.headers took per header).
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode ends with a newline
}

// plainJSON says whether s is printable ASCII without '"' and '\\', which a JSON string holds
// as it is.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// parseError is PGRST100: the query string does not follow the grammar.
func parseError(message, details string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "PGRST100", Message: message, Details: details}
}

// quoteShow renders a parse context the way PostgREST prints parser
// source names: in double quotes with quotes and backslashes escaped.
func quoteShow(s string) string { return strconv.Quote(s) }
