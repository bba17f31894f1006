package mcp

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"masthead/internal/client"
)

// TestRESTTimeoutInProcess: with the service handed over in process (client.InProcess), the
// REST client's Timeout still bounds each request, as a deadline its handler sees, and a tool
// call whose request outlives it fails as a failure of ours rather than hanging.
func TestRESTTimeoutInProcess(t *testing.T) {
	t.Parallel()
	const timeout = 100 * time.Millisecond
	deadlines := make(chan time.Duration, 1)
	stub := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dl, ok := r.Context().Deadline()
		if !ok {
			deadlines <- -1
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		deadlines <- time.Until(dl)
		<-r.Context().Done() // a request that outlives the timeout
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	hc := client.InProcess(stub, timeout)
	s, err := New(Config{APIURL: "http://127.0.0.1:1", PublishableKey: "k", PublicURL: "http://mcp.test",
		Auth: fakeAuth{}, InvalidToken: errBadToken, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	w := postMCP(s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_projects"}}`)
	if left := <-deadlines; left <= 0 || left > timeout {
		t.Errorf("the REST handler saw a deadline %v away, want within %v", left, timeout)
	}
	if took := time.Since(start); took > 10*timeout {
		t.Errorf("the tool call took %v with a %v REST timeout", took, timeout)
	}
	if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"isError":true`)) ||
		!bytes.Contains(w.Body.Bytes(), []byte("unavailable right now")) {
		t.Errorf("answer: %d %s", w.Code, w.Body)
	}
}
