package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"masthead/internal/client"
	"masthead/internal/metrics"
)

// userError is a refusal decided in this package (a malformed date, a promo over its channel's
// limit): its text is written for the person and shown as is.
type userError struct{ msg string }

func (e *userError) Error() string { return e.msg }

// refuse builds a userError.
func refuse(format string, a ...any) error { return &userError{msg: fmt.Sprintf(format, a...)} }

// addTool registers a typed tool. fn receives the verified caller; whatever it returns as an
// error reaches the model as a tool error (IsError) worded by toolError, so the model can
// tell the person what to change rather than retrying blindly.
//
// The output schema is inferred from Out and advertised, but the result is marshalled here
// rather than by the SDK: its generic path re-parses and validates every result against the
// schema, which costs more than the REST call behind a small read, and a value built from Out
// matches Out's schema by construction. A read-only tool is also offered to the fast path
// (fast.go), which calls the same code.
func addTool[In, Out any](s *Server, t *sdk.Tool, schema *jsonschema.Schema, fn func(context.Context, identity, In) (Out, error)) {
	t.InputSchema = schema
	t.OutputSchema = outputSchema[Out]()
	// call runs fn and encodes its result: the JSON of Out, or a tool error worded by toolError.
	var sizeHint atomic.Int64
	call := func(ctx context.Context, id identity, in In, dst []byte) ([]byte, error) {
		start := time.Now()
		out, err := fn(ctx, id, in)
		outcome := metrics.OutcomeOK
		if err != nil {
			outcome = metrics.OutcomeRefused
			err = s.toolError(ctx, t.Name, err)
			var ie *internalError
			if errors.As(err, &ie) {
				outcome = metrics.OutcomeError
			}
		}
		took := time.Since(start)
		s.metrics.ToolCall(t.Name, outcome, took)
		s.log.LogAttrs(ctx, slog.LevelInfo, "mcp tool call",
			slog.String("tool", t.Name),
			slog.String("user_id", id.userID),
			slog.String("client_id", id.clientID),
			slog.String("outcome", outcome),
			slog.Float64("duration_ms", float64(took.Microseconds())/1000))
		if err != nil {
			return nil, err
		}
		b, err := encodeResult(out, dst, &sizeHint)
		if err != nil {
			return nil, fmt.Errorf("mcp: encode %s result: %w", t.Name, err)
		}
		return b, nil
	}
	sdk.AddTool(s.mcp, t, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		id, err := caller(req)
		if err != nil {
			return nil, nil, err
		}
		b, err := call(ctx, id, in, nil)
		if err != nil {
			return nil, nil, err
		}
		// The text block repeats the JSON for clients that read only content, as the spec
		// suggests for structured results. The fast path writes the same two (appendResult).
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: string(b)}},
			StructuredContent: json.RawMessage(b),
		}, nil, nil
	})
	if t.Annotations != nil && t.Annotations.ReadOnlyHint {
		s.addFastTool(t.Name, schema, func(ctx context.Context, id identity, args, dst []byte) ([]byte, error) {
			// Validated arguments, decoded as encoding/json would (field names matched in any
			// case) in a quarter of the time.
			var in In
			if err := segjson.Unmarshal(args, &in); err != nil {
				return nil, errNotFast
			}
			return call(ctx, id, in, dst)
		})
	}
}

// encodeResult is json.Marshal(v), written by v itself into dst when it can (encode.go). With
// no dst, sizeHint (the size of the tool's last result) sizes the buffer it allocates.
func encodeResult(v any, dst []byte, sizeHint *atomic.Int64) ([]byte, error) {
	if a, ok := v.(jsonAppender); ok {
		if dst == nil {
			dst = make([]byte, 0, sizeHint.Load()+512)
		}
		if b, ok := a.appendJSON(dst[:0]); ok {
			sizeHint.Store(int64(len(b)))
			return b, nil
		}
	}
	return json.Marshal(v)
}

// internalError is a failure of ours (network, 5xx, a body we could not read). The model sees
// only that it failed and may be retried; the cause goes to the log.
type internalError struct{ msg string }

func (e *internalError) Error() string { return e.msg }

// toolError words err for the model and the person behind it. Refusals from the service keep
// the message and hint the database wrote for people (the workflow's "cannot approve: the
// publication is in review"); anything else is logged and summarised.
func (s *Server) toolError(ctx context.Context, tool string, err error) error {
	var ue *userError
	if errors.As(err, &ue) {
		return ue
	}
	e, ok := client.ErrorOf(err)
	if ok && e.Status == http.StatusServiceUnavailable {
		// The service said the database is down or restarting: worth a retry in a moment.
		s.log.WarnContext(ctx, "mcp: tool met an outage", "tool", tool, "err", err)
		return &internalError{msg: "Masthead's database is unavailable right now (it may be restarting); try again in a few seconds."}
	}
	if !ok || e.Status >= 500 {
		s.log.ErrorContext(ctx, "mcp: tool failed", "tool", tool, "err", err)
		return &internalError{msg: "Masthead could not complete this request right now; try again shortly."}
	}
	msg := sentence(e.Message)
	if e.Hint != "" {
		msg += " " + sentence(e.Hint)
	}
	switch e.Status {
	case http.StatusUnauthorized:
		return &userError{msg: "Your sign-in is no longer valid (it expired, was revoked or you signed out). Reconnect Masthead to sign in again."}
	case http.StatusForbidden:
		if e.Hint == "" {
			msg += " Your role in this project does not permit it; ask someone whose role does."
		}
		return &userError{msg: "Not allowed: " + msg}
	case http.StatusNotFound, http.StatusNotAcceptable:
		if e.Details != "" && e.Code == "PT404" {
			msg += " " + sentence(e.Details)
		} else {
			msg = "It does not exist or you cannot see it."
		}
		return &userError{msg: "Not found: " + msg + " Check the id with search_publications or list_projects."}
	case http.StatusConflict:
		return &userError{msg: "Refused: " + msg}
	default:
		if e.Details != "" {
			msg += " (" + e.Details + ")"
		}
		return &userError{msg: "Invalid request: " + msg}
	}
}

// sentence capitalises s and ends it with a full stop, so joined messages read as prose.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
		s += "."
	}
	return s
}
