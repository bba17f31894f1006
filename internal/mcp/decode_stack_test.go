package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/mcp"
)

// TestReadToolsDecodeAsEncodingJSON: every REST answer the read tools decode, on the stack's
// real data (promos, reviews, status history, schedules, another tenant's rows refused), is
// decoded into the same values as encoding/json would.
func TestReadToolsDecodeAsEncodingJSON(t *testing.T) {
	s := newStack(t)
	m := s.mcpServer(t)
	var mu sync.Mutex
	decoded := 0
	mcp.OnDecode(m, func(body []byte, out any) {
		want := reflect.New(reflect.TypeOf(out).Elem())
		if err := json.Unmarshal(body, want.Interface()); err != nil {
			t.Errorf("encoding/json refuses what decode took: %v\n%s", err, body)
			return
		}
		if !reflect.DeepEqual(out, want.Interface()) {
			t.Errorf("%s\ndecode:        %+v\nencoding/json: %+v", body, out, want.Interface())
		}
		mu.Lock()
		decoded++
		mu.Unlock()
	})
	token := s.token(t, "lead")
	c := sdk.NewClient(&sdk.Implementation{Name: "mcp-test", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: s.serve(t, m),
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"list_projects", nil},
		{"search_publications", nil},
		{"search_publications", map[string]any{"project": "northwind", "status": []string{"reviewing", "scheduled"}, "collection": "news"}},
		{"search_publications", map[string]any{"text": "tide", "date_field": "created", "from": "2020-01-01"}},
		{"search_publications", map[string]any{"project": s.projA, "date_field": "scheduled", "limit": 1}},
		{"review_queue", map[string]any{"project": "northwind"}},
		{"list_schedule", nil},
	}
	for title := range s.pubs {
		calls = append(calls, struct {
			tool string
			args map[string]any
		}{"get_publication", map[string]any{"publication_id": s.pubs[title]}})
	}
	for _, c := range calls {
		if _, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args}); err != nil {
			t.Fatalf("%s %v: %v", c.tool, c.args, err)
		}
	}
	// get_publication of the other tenant's two is refused before anything is decoded.
	if min := len(calls) - 2; decoded < min {
		t.Errorf("%d answers decoded, want at least %d", decoded, min)
	}
}
