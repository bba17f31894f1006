package mcp_test

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHostileToolCalls is the MCP surface's hostile-input table: each call names its input and
// what its refusal must say (a tool error in words: the schema's for arguments it rules out,
// the service's for the rest, or the protocol's for a tool that does not exist), and afterwards
// nothing stored has changed.
func TestHostileToolCalls(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	own := s.env.DB.Owner(t)
	snapshot := func() string {
		var v string
		if err := own.QueryRow(context.Background(), `select concat_ws('|',
			(select count(*) from publications), (select sum(version) from publications),
			(select count(*) from status_events), (select count(*) from reviews), (select count(*) from promos),
			(select string_agg(status || ':' || coalesce(scheduled_for::text, ''), ',' order by id) from publications))`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := snapshot()
	tide, harbour := s.pubs["Tide tables"], s.pubs["Harbour reopens"]
	lead, editor := s.connect(t, "lead"), s.connect(t, "editor")
	// Tide tables is in review; Ferry strike ends approved (version 3).
	ferry := s.pubs["Ferry strike ends"]
	cases := []struct {
		name  string
		sess  *sdk.ClientSession
		tool  string
		args  map[string]any
		words string // in the tool's error text, or in the protocol error
	}{
		{"a date that never comes", lead, "schedule", map[string]any{"publication_id": ferry, "scheduled_for": "infinity"}, "RFC 3339"},
		{"a date beyond the horizon", lead, "schedule", map[string]any{"publication_id": ferry, "scheduled_for": "2999-01-01T09:00:00Z"}, "5 years"},
		{"a publication id that is not a uuid", lead, "approve", map[string]any{"publication_id": "1 or 1=1"}, "publication_id"},
		{"another tenant's publication", lead, "approve", map[string]any{"publication_id": s.pubs["Island hopping"]}, "not found"},
		{"a NUL byte in a note", lead, "request_changes", map[string]any{"publication_id": tide, "note": "fine\x00then"}, ""},
		{"a note of spaces", lead, "request_changes", map[string]any{"publication_id": tide, "note": "   "}, "note is required"},
		{"a negative version", lead, "approve", map[string]any{"publication_id": tide, "expected_version": -1}, "expected_version"},
		{"a stale version", lead, "approve", map[string]any{"publication_id": tide, "expected_version": 1}, "version"},
		{"a body past its bound", editor, "update_draft", map[string]any{"publication_id": harbour, "expected_version": 1, "body": strings.Repeat("b", 200_001)}, "body"},
		{"a title of bidi controls", editor, "create_draft", map[string]any{"project": "northwind", "title": "evil\u202etxt.exe"}, "a title cannot hold control characters or characters that change the text's direction"},
		{"a project that is not a slug", editor, "create_draft", map[string]any{"project": "northwind'; drop table publications; --", "title": "x"}, "no project"},
		{"a promo for an unknown channel", editor, "upsert_promo", map[string]any{"publication_id": harbour, "channel": "../etc", "body": "x"}, "channel"},
		{"a promo link that is no web address", editor, "upsert_promo", map[string]any{"publication_id": harbour, "channel": "x", "body": "x", "link": "javascript:alert(1)"}, "a promo's link is a web address"},
		{"a tool that does not exist", editor, "drop_everything", map[string]any{}, "drop_everything"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.sess.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			msg := ""
			switch {
			case err != nil:
				msg = err.Error()
			case res.IsError:
				msg = text(res)
			default:
				t.Fatalf("accepted: %s", text(res))
			}
			if !strings.Contains(strings.ToLower(msg), strings.ToLower(tc.words)) {
				t.Errorf("refusal %q does not say %q", msg, tc.words)
			}
		})
	}
	if after := snapshot(); after != before {
		t.Errorf("hostile calls changed what is stored:\n%s\n%s", before, after)
	}
}
