package mcp

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"masthead/internal/client"
)

// TestFastPathBuffersConcurrent: answers written into the pooled buffers stay each call's own
// when calls of different sizes overlap (run with -race): every concurrent answer equals the
// one the same request got alone.
func TestFastPathBuffersConcurrent(t *testing.T) {
	t.Parallel()
	projects := `[{"id":"p1","slug":"northwind","name":"Northwind <Daily>","timezone":"Europe/London","default_channels":["x"],` +
		`"collections":[{"id":"c1","slug":"news","name":"News","kind":"section"}],"project_members":[{"user_id":"u1","role":"editor"}]}]`
	var rows []string
	for i := range 40 {
		rows = append(rows, fmt.Sprintf(`{"id":"pub-%d","project_id":"p1","title":"Title \"%d\" é","slug":"s","summary":"%s","status":"draft","version":%d,`+
			`"scheduled_for":null,"published_at":null,"created_at":"2026-05-01T09:00:00+00:00","updated_at":"2026-05-01T09:00:00.5+00:00",`+
			`"author":{"display_name":"Tom"},"project":{"slug":"northwind","name":"Northwind"},"collection":{"id":"c1","slug":"news","name":"News"}}`,
			i, i, strings.Repeat("long summary ", i), i))
	}
	stub := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/rest/v1/projects" {
			_, _ = w.Write([]byte(projects))
			return
		}
		n, err := strconv.Atoi(r.URL.Query().Get("limit")) // 1 or 40 rows: answers of very different sizes
		if err != nil || n < 1 || n > len(rows) {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Range", fmt.Sprintf("0-%d/40", n-1))
		w.WriteHeader(http.StatusPartialContent)
		_, _ = w.Write([]byte("[" + strings.Join(rows[:n], ",") + "]"))
	})
	s, err := New(Config{APIURL: "http://127.0.0.1:1", PublishableKey: "k", PublicURL: "http://mcp.test",
		Auth: fakeAuth{}, InvalidToken: errBadToken, HTTPClient: client.InProcess(stub, 0)})
	if err != nil {
		t.Fatal(err)
	}
	fast := 0
	var mu sync.Mutex
	OnFast(s, func() { mu.Lock(); fast++; mu.Unlock() })
	bodies := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_projects"}}`,
		`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"search_publications","arguments":{"limit":1}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_publications","arguments":{"limit":40}}}`,
	}
	post := func(body string) []byte { return postMCP(s, body).Body.Bytes() }
	want := make([][]byte, len(bodies))
	for i, b := range bodies {
		want[i] = post(b)
		if bytes.Contains(want[i], []byte(`"isError":true`)) || !bytes.Contains(want[i], []byte(`"structuredContent"`)) {
			t.Fatalf("%s: %s", b, want[i])
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for j := range 30 {
				i := (g + j) % len(bodies)
				if got := post(bodies[i]); !bytes.Equal(got, want[i]) {
					t.Errorf("concurrent answer to %s:\n%s\nalone:\n%s", bodies[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	if fast != len(bodies)+8*30 {
		t.Errorf("the fast path answered %d of %d calls", fast, len(bodies)+8*30)
	}
}

// postMCP sends one JSON-RPC message to s's /mcp as user u1 (fakeAuth's "good" token) the way
// MCP clients of protocol 2025-06-18 do.
func postMCP(s *Server, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer good")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w
}
