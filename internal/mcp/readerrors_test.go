package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"masthead/internal/client"
)

// TestReadToolRefusals: a refusal from /rest/v1 behind a read tool (client.GetRaw) reaches the
// model as the tool error it was when the tools used client.Get, worded from PostgREST's
// code, message, details and hint; an answer that is not the rows' JSON is a failure of ours.
// The fast path and the SDK answer each alike.
func TestReadToolRefusals(t *testing.T) {
	t.Parallel()
	const pub = "7d5cf2c4-5a8e-4a34-9a0c-2f4c1b1e9f10"
	for _, tc := range []struct {
		name, tool, args string
		status           int
		body, want       string
	}{
		{"postgrest refusal", "search_publications", `{}`, 400,
			`{"code":"PGRST100","message":"failed to parse filter (eq)","details":"unexpected end of input","hint":null}`,
			"Invalid request: Failed to parse filter (eq). (unexpected end of input)"},
		{"refusal with a hint", "list_projects", `{}`, 400,
			`{"code":"42P01","message":"relation missing","details":null,"hint":"Reload the schema"}`,
			"Invalid request: Relation missing. Reload the schema."},
		{"not visible", "get_publication", `{"publication_id":"` + pub + `"}`, 406,
			`{"code":"PGRST116","message":"JSON object requested, multiple (or no) rows returned","details":"The result contains 0 rows","hint":null}`,
			"Not found: It does not exist or you cannot see it. Check the id with search_publications or list_projects."},
		{"forbidden", "review_queue", `{}`, 403,
			`{"code":"42501","message":"permission denied for table publications","details":null,"hint":null}`,
			"Not allowed: Permission denied for table publications. Your role in this project does not permit it; ask someone whose role does."},
		{"signed out", "list_schedule", `{}`, 401,
			`{"code":"PGRST301","message":"JWT expired","details":null,"hint":null}`,
			"Your sign-in is no longer valid (it expired, was revoked or you signed out). Reconnect Masthead to sign in again."},
		{"gateway page", "list_projects", `{}`, 502, `<html>bad gateway</html>`,
			"Masthead could not complete this request right now; try again shortly."},
		{"rows that are not JSON", "search_publications", `{}`, 200, `[{"id":"a",`,
			"Masthead could not complete this request right now; try again shortly."},
		{"rows of the wrong shape", "get_publication", `{"publication_id":"` + pub + `"}`, 200, `[{"id":"a"}]`,
			"Masthead could not complete this request right now; try again shortly."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stub := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			})
			answer := func(sdkOnly bool) []byte {
				s, err := New(Config{APIURL: "http://127.0.0.1:1", PublishableKey: "k", PublicURL: "http://mcp.test",
					Auth: fakeAuth{}, InvalidToken: errBadToken, HTTPClient: client.InProcess(stub, 0)})
				if err != nil {
					t.Fatal(err)
				}
				fast := false
				OnFast(s, func() { fast = true })
				if sdkOnly {
					SDKOnly(s)
				}
				w := postMCP(s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tc.tool+`","arguments":`+tc.args+`}}`)
				if w.Code != http.StatusOK || fast == sdkOnly {
					t.Fatalf("sdkOnly %v: %d, fast path %v: %s", sdkOnly, w.Code, fast, w.Body)
				}
				return w.Body.Bytes()
			}
			fast, slow := answer(false), answer(true)
			if !bytes.Equal(fast, slow) {
				t.Errorf("fast path: %s\nSDK:       %s", fast, slow)
			}
			var msg struct {
				Result struct {
					IsError bool `json:"isError"`
					Content []struct{ Text string }
				}
			}
			if err := json.Unmarshal(fast, &msg); err != nil || !msg.Result.IsError || len(msg.Result.Content) != 1 ||
				msg.Result.Content[0].Text != tc.want {
				t.Errorf("answer %s, want the tool error %q", fast, tc.want)
			}
		})
	}
}
