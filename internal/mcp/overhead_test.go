package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/client"
)

// BenchmarkOverhead measures what the MCP layer itself costs, without a database: /rest/v1 is
// a stub answering a canned list_projects body at once, so "rest" is a bare HTTP round trip
// through internal/client and "mcp" is the same plus /mcp's whole path (token check,
// JSON-RPC, stateless session, schema validation, result shaping, the go-sdk client).
func BenchmarkOverhead(b *testing.B) {
	const body = `[{"id":"p1","slug":"northwind","name":"Northwind Daily","timezone":"Europe/London","default_channels":["x","bluesky","linkedin"],` +
		`"collections":[{"id":"c1","slug":"news","name":"News","kind":"section"},{"id":"c2","slug":"spring","name":"Spring","kind":"campaign"}],` +
		`"project_members":[{"user_id":"u1","role":"editor"}]}]`
	restStub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	defer restStub.Close()
	s, err := New(Config{APIURL: restStub.URL, PublishableKey: "k", PublicURL: "http://mcp.test", Auth: fakeAuth{}, InvalidToken: errBadToken})
	if err != nil {
		b.Fatal(err)
	}
	mcpSrv := httptest.NewServer(s.Handler())
	defer mcpSrv.Close()
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	sess, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: mcpSrv.URL,
		HTTPClient: &http.Client{Transport: bearerTransport("good")}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	api, err := client.New(restStub.URL, "k", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("rest", func(b *testing.B) {
		for b.Loop() {
			var out []client.Project
			if _, err := api.Get(ctx, "good", client.From("projects").Select("*"), &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcp", func(b *testing.B) {
		for b.Loop() {
			if res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "list_projects"}); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}

type bearerTransport string

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(t))
	return http.DefaultTransport.RoundTrip(r)
}
