package mcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"masthead/internal/auth"
	"masthead/internal/mcp"
)

// TestFastPathAnswersAsTheSDK sends the same requests to two /mcp servers on the same service,
// one with the fast path for read tools and one where the SDK answers everything, and wants
// the same status, headers and bytes from both; and wants the fast path to have answered
// exactly the plain tools/call of a read tool, leaving every other request to the SDK.
func TestFastPathAnswersAsTheSDK(t *testing.T) {
	s := newStack(t)
	token := s.token(t, "editor")
	build := func(sdkOnly bool) (string, *atomic.Int64) {
		svc := s.env.Server.Auth()
		m, err := mcp.New(mcp.Config{
			APIURL: s.url, PublishableKey: s.env.Key, PublicURL: s.url,
			Auth: mcp.TokenVerifier(func(token string) ([]byte, error) {
				c, err := svc.Verifier().Verify(token)
				if err != nil {
					return nil, err
				}
				return c.Raw, nil
			}),
			InvalidToken: auth.ErrInvalidToken,
		})
		if err != nil {
			t.Fatal(err)
		}
		var n atomic.Int64
		if sdkOnly {
			mcp.SDKOnly(m)
		}
		mcp.OnFast(m, func() { n.Add(1) })
		srv := httptest.NewServer(m.Handler())
		t.Cleanup(srv.Close)
		return srv.URL, &n
	}
	fastURL, fastN := build(false)
	sdkURL, sdkN := build(true)

	call := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`
	}
	for _, tc := range []struct {
		name, body, version, accept string
		fast                        bool
	}{
		{"list_projects without arguments", call(`1`, `{"name":"list_projects"}`), "", "", true},
		{"list_projects with null arguments", call(`20`, `{"name":"list_projects","arguments":null}`), "", "", true},
		{"list_projects with empty arguments", call(`2`, `{"name":"list_projects","arguments":{}}`), "", "", true},
		{"search by project and status", call(`3`, `{"name":"search_publications","arguments":{"project":"northwind","status":["reviewing","approved"],"limit":2}}`), "", "", true},
		{"search by text, string id", call(`"req-<1>"`, `{"name":"search_publications","arguments":{"text":"tide"}}`), "", "", true},
		{"get_publication", call(`5`, `{"name":"get_publication","arguments":{"publication_id":"`+s.pubs["Lighthouse gala"]+`"}}`), "", "", true},
		{"get_publication of another tenant: tool error", call(`6`, `{"name":"get_publication","arguments":{"publication_id":"`+s.pubs["Secret fares"]+`"}}`), "", "", true},
		{"review_queue", call(`7`, `{"name":"review_queue","arguments":{"project":"northwind"}}`), "", "", true},
		{"list_schedule", call(`8`, `{"name":"list_schedule","arguments":{}}`), "2025-11-25", "", true},
		{"older protocol", call(`9`, `{"name":"list_projects"}`), "2025-03-26", "", true},
		// The SDK's own answers: errors, other methods, anything unusual.
		{"get_publication with null arguments", call(`24`, `{"name":"get_publication","arguments":null}`), "", "", false},
		{"malformed id refused by the schema", call(`10`, `{"name":"get_publication","arguments":{"publication_id":"nope"}}`), "", "", false},
		{"unknown argument", call(`11`, `{"name":"search_publications","arguments":{"Project":"northwind"}}`), "", "", false},
		{"wrong argument type", call(`12`, `{"name":"search_publications","arguments":{"limit":"ten"}}`), "", "", false},
		{"unknown tool", call(`13`, `{"name":"drop_tables","arguments":{}}`), "", "", false},
		{"with _meta", call(`14`, `{"name":"list_projects","_meta":{"progressToken":"p"}}`), "", "", false},
		{"write tool", call(`15`, `{"name":"submit_for_review","arguments":{"publication_id":"`+s.pubs["Secret fares"]+`"}}`), "", "", false},
		{"tools/list", `{"jsonrpc":"2.0","id":16,"method":"tools/list"}`, "", "", false},
		{"batch", `[` + call(`17`, `{"name":"list_projects"}`) + `]`, "", "", false},
		{"notification", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_projects"}}`, "", "", false},
		{"fractional id", call(`1.5`, `{"name":"list_projects"}`), "", "", false},
		{"case of a member", `{"jsonrpc":"2.0","id":18,"Method":"tools/call","params":{"name":"list_projects"}}`, "", "", false},
		{"no protocol header", call(`19`, `{"name":"list_projects"}`), "-", "", false},
		{"unsupported protocol", call(`20`, `{"name":"list_projects"}`), "1999-01-01", "", false},
		{"wildcard accept", call(`21`, `{"name":"list_projects"}`), "", "*/*", false},
		{"json accept only", call(`22`, `{"name":"list_projects"}`), "", "application/json", false},
		{"not JSON", `{"jsonrpc":"2.0","id":23,`, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fastN.Load()
			post := func(base string) (*http.Response, []byte) {
				req, _ := http.NewRequest(http.MethodPost, base, bytes.NewReader([]byte(tc.body)))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if tc.accept != "" {
					req.Header.Set("Accept", tc.accept)
				}
				switch tc.version {
				case "":
					req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
				case "-":
				default:
					req.Header.Set("Mcp-Protocol-Version", tc.version)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				b, err := io.ReadAll(res.Body)
				if err != nil {
					t.Fatal(err)
				}
				return res, b
			}
			fr, fb := post(fastURL)
			sr, sb := post(sdkURL)
			if fr.StatusCode != sr.StatusCode || !bytes.Equal(fb, sb) {
				t.Fatalf("fast path: %d %s\nSDK:       %d %s", fr.StatusCode, fb, sr.StatusCode, sb)
			}
			for _, h := range []string{"Content-Type", "Cache-Control", "Mcp-Session-Id", "Access-Control-Allow-Origin"} {
				if fr.Header.Get(h) != sr.Header.Get(h) {
					t.Errorf("%s: fast path %q, SDK %q", h, fr.Header.Get(h), sr.Header.Get(h))
				}
			}
			if took := fastN.Load() > before; took != tc.fast {
				t.Errorf("fast path answered: %v, want %v", took, tc.fast)
			}
			if tc.fast && (fr.StatusCode != http.StatusOK || !json.Valid(fb)) {
				t.Errorf("a fast answer that is not a JSON 200: %d %s", fr.StatusCode, fb)
			}
		})
	}
	if sdkN.Load() != 0 {
		t.Errorf("the SDK-only server answered %d requests on its fast path", sdkN.Load())
	}
}
