package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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
		m := s.mcpServer(t)
		var n atomic.Int64
		if sdkOnly {
			mcp.SDKOnly(m)
		}
		mcp.OnFast(m, func() { n.Add(1) })
		return s.serve(t, m), &n
	}
	fastURL, fastN := build(false)
	sdkURL, sdkN := build(true)

	call := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`
	}
	// newer is a request of protocol 2026-07-28 as the go-sdk client sends it.
	const meta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	newer := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "list_projects"}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{}
		for a, b := range h {
			out[a] = b
		}
		out[k] = v
		return out
	}
	for _, tc := range []struct {
		name, body, version, accept string
		fast                        bool
		headers                     map[string]string
	}{
		{"2026-07-28 list_projects", call(`30`, `{`+meta+`,"name":"list_projects","arguments":{}}`), "", "", true, newer},
		{"2026-07-28 tool error", call(`31`, `{`+meta+`,"name":"get_publication","arguments":{"publication_id":"`+s.pubs["Secret fares"]+`"}}`), "", "", true, with(newer, "Mcp-Name", "get_publication")},
		{"2026-07-28 log level", call(`32`, `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"list_projects"}`), "", "", true, newer},
		{"2026-07-28 without Mcp-Method", call(`33`, `{`+meta+`,"name":"list_projects"}`), "", "", false, with(newer, "Mcp-Method", "")},
		{"2026-07-28 Mcp-Name of another tool", call(`34`, `{`+meta+`,"name":"list_projects"}`), "", "", false, with(newer, "Mcp-Name", "review_queue")},
		{"2026-07-28 without _meta", call(`35`, `{"name":"list_projects"}`), "", "", false, newer},
		{"2026-07-28 _meta of another version", call(`36`, `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2025-06-18"},"name":"list_projects"}`), "", "", false, newer},
		{"2026-07-28 without capabilities", call(`37`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"list_projects"}`), "", "", false, newer},
		{"2026-07-28 capabilities of the wrong type", call(`38`, `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":true},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"list_projects"}`), "", "", false, newer},
		{"2026-07-28 progress token", call(`39`, `{"_meta":{"progressToken":"p","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"list_projects"}`), "", "", false, newer},
		{"list_projects without arguments", call(`1`, `{"name":"list_projects"}`), "", "", true, nil},
		{"list_projects with null arguments", call(`20`, `{"name":"list_projects","arguments":null}`), "", "", true, nil},
		{"list_projects with empty arguments", call(`2`, `{"name":"list_projects","arguments":{}}`), "", "", true, nil},
		{"list_projects with spaced empty arguments", call(`25`, `{"name":"list_projects","arguments":{ }}`), "", "", true, nil},
		{"search without arguments", call(`26`, `{"name":"search_publications"}`), "", "", true, nil},
		{"search by project and status", call(`3`, `{"name":"search_publications","arguments":{"project":"northwind","status":["reviewing","approved"],"limit":2}}`), "", "", true, nil},
		{"search by text, string id", call(`"req-<1>"`, `{"name":"search_publications","arguments":{"text":"tide"}}`), "", "", true, nil},
		{"get_publication", call(`5`, `{"name":"get_publication","arguments":{"publication_id":"`+s.pubs["Lighthouse gala"]+`"}}`), "", "", true, nil},
		{"get_publication of another tenant: tool error", call(`6`, `{"name":"get_publication","arguments":{"publication_id":"`+s.pubs["Secret fares"]+`"}}`), "", "", true, nil},
		{"review_queue", call(`7`, `{"name":"review_queue","arguments":{"project":"northwind"}}`), "", "", true, nil},
		{"list_schedule", call(`8`, `{"name":"list_schedule","arguments":{}}`), "2025-11-25", "", true, nil},
		{"older protocol", call(`9`, `{"name":"list_projects"}`), "2025-03-26", "", true, nil},
		{"spaced and indented", "{\n  \"jsonrpc\" : \"2.0\",\t\"method\": \"tools/call\",\r\n  \"params\" : { \"arguments\" : { \"project\" : \"northwind\" } , \"name\":\"search_publications\" } , \"id\" : 40 }\n", "", "", true, nil},
		{"escaped member name", `{"jsonrpc":"2.0","id":47,"\u006dethod":"tools/call","params":{"name":"list_projects"}}`, "", "", true, nil},
		{"repeated member", `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"get_publication","name":"list_projects"},"id":42}`, "", "", true, nil},
		// The SDK's own answers: errors, other methods, anything unusual.
		{"negative id", call(`-42`, `{"name":"list_projects"}`), "", "", true, nil},
		{"largest exact id", call(`-9007199254740992`, `{"name":"list_projects"}`), "", "", true, nil},
		{"id past 2^53, rounded by the SDK", call(`-9007199254740993`, `{"name":"list_projects"}`), "", "", false, nil},
		{"offset past int", call(`49`, `{"name":"search_publications","arguments":{"offset":1e21}}`), "", "", false, nil},
		{"trailing data", call(`43`, `{"name":"list_projects"}`) + ` {}`, "", "", false, nil},
		{"null params", `{"jsonrpc":"2.0","id":44,"method":"tools/call","params":null}`, "", "", false, nil},
		{"name in another case", call(`45`, `{"Name":"list_projects"}`), "", "", false, nil},
		{"unknown member of params", call(`46`, `{"name":"list_projects","cursor":"x"}`), "", "", false, nil},
		{"arguments not an object", call(`48`, `{"name":"list_projects","arguments":[]}`), "", "", false, nil},
		{"get_publication with null arguments", call(`24`, `{"name":"get_publication","arguments":null}`), "", "", false, nil},
		{"get_publication with empty arguments", call(`27`, `{"name":"get_publication","arguments":{}}`), "", "", false, nil},
		{"malformed id refused by the schema", call(`10`, `{"name":"get_publication","arguments":{"publication_id":"nope"}}`), "", "", false, nil},
		{"unknown argument", call(`11`, `{"name":"search_publications","arguments":{"Project":"northwind"}}`), "", "", false, nil},
		{"wrong argument type", call(`12`, `{"name":"search_publications","arguments":{"limit":"ten"}}`), "", "", false, nil},
		{"unknown tool", call(`13`, `{"name":"drop_tables","arguments":{}}`), "", "", false, nil},
		{"with _meta", call(`14`, `{"name":"list_projects","_meta":{"progressToken":"p"}}`), "", "", false, nil},
		{"write tool", call(`15`, `{"name":"submit_for_review","arguments":{"publication_id":"`+s.pubs["Secret fares"]+`"}}`), "", "", false, nil},
		{"tools/list", `{"jsonrpc":"2.0","id":16,"method":"tools/list"}`, "", "", false, nil},
		{"batch", `[` + call(`17`, `{"name":"list_projects"}`) + `]`, "", "", false, nil},
		{"notification", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_projects"}}`, "", "", false, nil},
		{"fractional id", call(`1.5`, `{"name":"list_projects"}`), "", "", false, nil},
		{"case of a member", `{"jsonrpc":"2.0","id":18,"Method":"tools/call","params":{"name":"list_projects"}}`, "", "", false, nil},
		{"no protocol header", call(`19`, `{"name":"list_projects"}`), "-", "", false, nil},
		{"unsupported protocol", call(`20`, `{"name":"list_projects"}`), "1999-01-01", "", false, nil},
		{"wildcard accept", call(`21`, `{"name":"list_projects"}`), "", "*/*", false, nil},
		{"json accept only", call(`22`, `{"name":"list_projects"}`), "", "application/json", false, nil},
		{"not JSON", `{"jsonrpc":"2.0","id":23,`, "", "", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fastN.Load()
			post := func(base string) (*http.Response, []byte) {
				req := rpcRequest(base, token, tc.body)
				if tc.accept != "" {
					req.Header.Set("Accept", tc.accept)
				}
				switch tc.version {
				case "":
				case "-":
					req.Header.Del("Mcp-Protocol-Version")
				default:
					req.Header.Set("Mcp-Protocol-Version", tc.version)
				}
				for k, v := range tc.headers {
					req.Header.Set(k, v)
				}
				return send(t, req)
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
	// The go-sdk client's own calls take the fast path and get what the SDK would answer.
	t.Run("go-sdk client", func(t *testing.T) {
		connect := func(base string) *sdk.ClientSession {
			c := sdk.NewClient(&sdk.Implementation{Name: "mcp-test", Version: "1"}, nil)
			sess, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: base,
				HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sess.Close() })
			return sess
		}
		fast, slow := connect(fastURL), connect(sdkURL)
		for _, p := range []*sdk.CallToolParams{
			{Name: "list_projects"},
			{Name: "search_publications", Arguments: map[string]any{"project": "northwind", "status": []string{"reviewing"}}},
			{Name: "get_publication", Arguments: map[string]any{"publication_id": s.pubs["Tide tables"]}},
			{Name: "get_publication", Arguments: map[string]any{"publication_id": s.pubs["Island hopping"]}},
		} {
			before := fastN.Load()
			fr, ferr := fast.CallTool(context.Background(), p)
			sr, serr := slow.CallTool(context.Background(), p)
			if ferr != nil || serr != nil {
				t.Fatalf("%s: %v / %v", p.Name, ferr, serr)
			}
			fb, _ := json.Marshal(fr)
			sb, _ := json.Marshal(sr)
			if !bytes.Equal(fb, sb) {
				t.Errorf("%s through the fast path: %s\nthrough the SDK: %s", p.Name, fb, sb)
			}
			if fastN.Load() != before+1 {
				t.Errorf("%s: the go-sdk client's call did not take the fast path", p.Name)
			}
		}
	})
	if sdkN.Load() != 0 {
		t.Errorf("the SDK-only server answered %d requests on its fast path", sdkN.Load())
	}
}

// mcpServer is an MCP server of its own on the stack's service (over loopback HTTP, not in
// process), verifying tokens as the service does, for tests that set its hooks.
func (s *stack) mcpServer(t *testing.T) *mcp.Server {
	t.Helper()
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
	return m
}

// serve serves m's /mcp until the test ends and returns its URL.
func (s *stack) serve(t *testing.T, m *mcp.Server) string {
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// rpcRequest is a POST of the JSON-RPC message body to the /mcp at url as the holder of token
// (none when empty), with the headers MCP clients of protocol 2025-06-18 send.
func rpcRequest(url, token, body string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	return req
}

// send makes req and returns the answer with its body read in full.
func send(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
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
