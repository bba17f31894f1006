package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestGetRaw: GetRaw hands over the service's body byte for byte with the count of
// Content-Range, and refuses exactly as Get does: PostgREST's error fields kept, Single's 406
// reported as 404, a non-JSON error page as its status text, Retry-After read, and a request
// that outlives the client's timeout failing as a network error (no status). Get, built on it,
// decodes the same body, announced in length or chunked.
func TestGetRaw(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("apikey") != "key" || r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		switch r.URL.Path {
		case "/rest/v1/rows":
			if r.URL.Query().Get("select") != "id,title" {
				w.WriteHeader(http.StatusTeapot)
				return
			}
			w.Header().Set("Content-Range", "0-1/*")
			if r.Header.Get("Prefer") == "count=exact" {
				w.Header().Set("Content-Range", "0-1/57")
			}
			w.WriteHeader(http.StatusPartialContent)
			_, _ = w.Write([]byte(`[{"id":"a","title":"Caf\u00e9 \"x\""} ,{"id":"b","title":null}]`))
		case "/rest/v1/one":
			if r.Header.Get("Accept") != "application/vnd.pgrst.object+json" {
				w.WriteHeader(http.StatusTeapot)
				return
			}
			w.WriteHeader(http.StatusNotAcceptable)
			_, _ = w.Write([]byte(`{"code":"PGRST116","message":"JSON object requested, multiple (or no) rows returned","details":"The result contains 0 rows","hint":null}`))
		case "/rest/v1/bad":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"code":"PGRST100","message":"failed to parse filter (eq)","details":"unexpected end of input","hint":"Quote the value."}`))
		case "/rest/v1/gateway":
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte(`<html>bad gateway</html>`))
		case "/rest/v1/busy":
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"code":"PGRST003","message":"Timed out acquiring connection from connection pool."}`))
		case "/rest/v1/chunked": // no Content-Length: read to the end
			_, _ = w.Write([]byte(`[` + strings.Repeat(`{"id":"x"},`, 300)))
			w.(http.Flusher).Flush()
			_, _ = w.Write([]byte(`{"id":"last"}]`))
		case "/rest/v1/slow":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, "key", &http.Client{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	body, res, err := c.GetRaw(ctx, "tok", From("rows").Select("id,title").Count())
	if err != nil || res.Total != 57 || string(body) != `[{"id":"a","title":"Caf\u00e9 \"x\""} ,{"id":"b","title":null}]` {
		t.Fatalf("rows: %s %+v %v", body, res, err)
	}
	var rows []struct{ ID, Title string }
	if res, err := c.Get(ctx, "tok", From("rows").Select("id,title").Count(), &rows); err != nil || res.Total != 57 ||
		len(rows) != 2 || rows[0].Title != `Café "x"` || rows[1].ID != "b" {
		t.Fatalf("Get rows: %+v %+v %v", rows, res, err)
	}
	if _, res, err := c.GetRaw(ctx, "tok", From("rows").Select("id,title")); err != nil || res.Total != -1 {
		t.Errorf("without Count: total %d, %v", res.Total, err)
	}

	var chunked []struct{ ID string }
	if _, err := c.Get(ctx, "tok", From("chunked"), &chunked); err != nil || len(chunked) != 301 || chunked[300].ID != "last" {
		t.Errorf("chunked: %d rows, %v", len(chunked), err)
	}

	for _, tc := range []struct {
		name string
		q    *Query
		want Error
	}{
		{"single without a row", From("one").Single(), Error{Status: 404, Code: "PGRST116",
			Message: "JSON object requested, multiple (or no) rows returned", Details: "The result contains 0 rows"}},
		{"postgrest refusal", From("bad"), Error{Status: 400, Code: "PGRST100", Message: "failed to parse filter (eq)",
			Details: "unexpected end of input", Hint: "Quote the value."}},
		{"error page", From("gateway"), Error{Status: 502, Message: "Bad Gateway"}},
		{"busy", From("busy"), Error{Status: 503, Code: "PGRST003", Message: "Timed out acquiring connection from connection pool.",
			RetryAfter: 3 * time.Second}},
	} {
		body, res, err := c.GetRaw(ctx, "tok", tc.q)
		e, ok := ErrorOf(err)
		if body != nil || res.Total != -1 || !ok || *e != tc.want {
			t.Errorf("%s: %s %+v %v, want %+v", tc.name, body, res, err, tc.want)
		}
		var out any
		if _, getErr := c.Get(ctx, "tok", tc.q, &out); getErr == nil || getErr.Error() != err.Error() {
			t.Errorf("%s: Get says %v, GetRaw %v", tc.name, getErr, err)
		}
	}

	start := time.Now()
	body, res, err = c.GetRaw(ctx, "tok", From("slow"))
	var netErr interface{ Timeout() bool }
	if body != nil || res.Total != -1 || StatusOf(err) != 0 || !errors.As(err, &netErr) || !netErr.Timeout() ||
		!strings.Contains(err.Error(), "/rest/v1/slow") {
		t.Errorf("slow: %s %+v %v", body, res, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the timed-out request took %v", took)
	}

	var wrong []int
	if _, err := c.Get(ctx, "tok", From("rows").Select("id,title").Count(), &wrong); err == nil || !strings.HasPrefix(err.Error(), "client: decode rows: ") {
		t.Errorf("Get into the wrong type: %v", err)
	}
}
