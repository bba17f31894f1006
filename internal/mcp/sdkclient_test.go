package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkSDKClientShare measures what the go-sdk client itself adds to BenchmarkFloorMCPRead's
// sdk figure, so that the client's share and the server's can be told apart. It records, on the
// same data, the exact request the go-sdk client sends for each of the three calls and our
// server's exact answer, then replays the answer from a stub /mcp that does no work, to the
// go-sdk client (client-µs) and to a plain HTTP POST of the recorded request with its headers
// (post-µs), alternately in one loop. Both make the same HTTP exchange with the same bytes, so
// sdk-µs − post-µs (extra-µs, the median of the per-iteration differences) is the client
// library's own cost per call: encoding the request, the headers it derives from it, its reader
// goroutines, and decoding the answer (the JSON-RPC envelope, then the result, whose text and
// structuredContent it decodes in full). A fourth call, empty, is answered with no content at
// all, so its extra-µs is the client's fixed cost per call. Not a Floor benchmark: it has no floor of its own, it
// explains one.
//
//	go test ./internal/mcp -run '^$' -bench SDKClientShare
func BenchmarkSDKClientShare(b *testing.B) {
	ctx := context.Background()
	f := newReadFixture(b)
	env, sess := f.env, f.sess
	calls := []*sdk.CallToolParams{
		{Name: "list_projects"},
		{Name: "search_publications", Arguments: map[string]any{"project": "northwind", "status": []string{"draft", "reviewing"}}},
		{Name: "get_publication", Arguments: map[string]any{"publication_id": f.pub}},
	}

	// Record every exchange of the go-sdk client with the real /mcp, by JSON-RPC method and tool.
	rec := &recorder{token: sess.AccessToken, seen: map[string]exchange{}}
	live, err := sdk.NewClient(&sdk.Implementation{Name: "mcp-test", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: env.URL + "/mcp", HTTPClient: &http.Client{Transport: rec}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range calls {
		if res, err := live.CallTool(ctx, p); err != nil || res.IsError {
			b.Fatalf("%s: %v %v", p.Name, err, res)
		}
	}
	live.Close()
	rec.seen["tools/call "+empty.Name] = emptyExchange(rec.seen["tools/call list_projects"])
	calls = append(calls, empty)

	// The stub answers each request with the recorded answer to the same method and tool, its
	// id set to the request's.
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		x, ok := rec.seen[r.Header.Get("Mcp-Method")+" "+r.Header.Get("Mcp-Name")]
		if json.Unmarshal(body, &msg) != nil || !ok {
			http.Error(w, "not recorded", http.StatusBadRequest)
			return
		}
		answer := withID(x.answer, msg.ID)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		_, _ = w.Write(answer)
	}))
	defer stub.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "mcp-test", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: stub.URL}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	for _, p := range calls {
		x := rec.seen["tools/call "+p.Name]
		post := func() {
			req, _ := http.NewRequest(http.MethodPost, stub.URL, bytes.NewReader(x.request))
			req.Header = x.header.Clone()
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			out, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode != http.StatusOK || len(out) != len(x.answer) {
				b.Fatalf("post %s: %d %v", p.Name, res.StatusCode, err)
			}
		}
		b.Run(p.Name, func(b *testing.B) {
			var sdkCall, plain, extra, rest []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if res, err := cs.CallTool(ctx, p); err != nil || res.IsError {
					b.Fatalf("%v %v", err, res)
				}
				t1 := time.Now()
				post()
				s, q := t1.Sub(t0), time.Since(t1)
				sdkCall, plain, extra = append(sdkCall, s), append(plain, q), append(extra, s-q)
				if p == empty {
					t2 := time.Now()
					if err := f.listProjectsREST(); err != nil {
						b.Fatal(err)
					}
					rest = append(rest, time.Since(t2))
				}
			}
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
			b.ReportMetric(float64(len(x.answer)), "answer-bytes")
			b.ReportMetric(us(median(sdkCall)), "sdk-µs")
			b.ReportMetric(us(median(plain)), "post-µs")
			b.ReportMetric(us(median(extra)), "extra-µs")
			if p == empty {
				// The fixed cost against list_projects' REST request: how far above 1× the
				// go-sdk ratio of list_projects stays with an empty answer and a free /mcp.
				b.ReportMetric(us(median(rest)), "list-rest-µs")
				b.ReportMetric(float64(median(extra))/float64(median(rest)), "extra/list-rest")
			}
		})
	}
}

// empty is a call whose answer is the least a tool can answer, an empty content list: what the
// go-sdk client costs then is its fixed cost per call, which no answer of ours can avoid. For
// list_projects, it reports that cost against list_projects' REST request, timed in the same loop
// (extra/list-rest): what the go-sdk ratio of list_projects would be above 1× if its answer
// were empty and /mcp cost nothing beyond its REST request.
var empty = &sdk.CallToolParams{Name: "empty"}

// emptyExchange is x, a recorded call of list_projects (which takes no arguments), as a call of
// the tool empty answered with an empty content list.
func emptyExchange(x exchange) exchange {
	header := x.header.Clone()
	header.Set("Mcp-Name", empty.Name)
	return exchange{
		request: bytes.Replace(x.request, []byte(`"name":"list_projects"`), []byte(`"name":"`+empty.Name+`"`), 1),
		header:  header,
		answer:  []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}`),
	}
}

// exchange is one request of the go-sdk client (body and headers, token left out) and the
// server's answer.
type exchange struct {
	request []byte
	header  http.Header
	answer  []byte
}

// recorder is the go-sdk client's transport: it adds the bearer token and keeps the last
// exchange of each method and tool.
type recorder struct {
	token string
	mu    sync.Mutex
	seen  map[string]exchange
}

func (rec *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	x := exchange{header: r.Header.Clone()}
	if r.Body != nil {
		var err error
		if x.request, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(x.request))
	r.Header.Set("Authorization", "Bearer "+rec.token)
	res, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	x.answer, err = io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(x.answer))
	rec.mu.Lock()
	rec.seen[r.Header.Get("Mcp-Method")+" "+r.Header.Get("Mcp-Name")] = x
	rec.mu.Unlock()
	return res, nil
}

// withID is the JSON-RPC response answer with its id replaced by id; answer starts
// {"jsonrpc":"2.0","id":…, as our server writes it.
func withID(answer, id []byte) []byte {
	rest := answer[bytes.IndexByte(answer[len(`{"jsonrpc":"2.0","id":`):], ',')+len(`{"jsonrpc":"2.0","id":`):]
	out := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	return append(out, rest...)
}
