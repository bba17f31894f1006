package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/client"
)

// BenchmarkOverhead measures what the MCP layer itself costs, without a database: /rest/v1 is
// a stub answering a canned list_projects body at once, so "rest" is a bare HTTP round trip
// through internal/client and "mcp" is the same plus /mcp's whole path (token check,
// JSON-RPC, stateless session, schema validation, result shaping, the go-sdk client); "post"
// is /mcp's path alone, driven by a plain HTTP POST of the JSON-RPC message.
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
		defer reportCPU(b)()
		for b.Loop() {
			var out []client.Project
			if _, err := api.Get(ctx, "good", client.From("projects").Select("*"), &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcp", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			if res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "list_projects"}); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
	rpc := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_projects","arguments":{}}}`)
	b.Run("post", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodPost, mcpSrv.URL, bytes.NewReader(rpc))
			req.Header.Set("Authorization", "Bearer good")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Fatal(res.Status)
			}
		}
	})
}

// reportCPU reports the process's CPU time per operation (client, server and stub alike, all
// in this process), which unlike wall time does not grow with other processes' load.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type bearerTransport string

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(t))
	return http.DefaultTransport.RoundTrip(r)
}
