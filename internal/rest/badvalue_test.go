package rest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

// TestBadValues: values PostgreSQL cannot take as their column's or argument's type (a NUL in
// JSON text, an integer out of range, a malformed uuid or time) and bodies of the wrong shape
// are the caller's 400 (or 415 for a body type it does not read), in PostgREST's shape, with
// PostgreSQL's SQLSTATE as the code; none is a 500, and nothing stored changes.
func TestBadValues(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	delta, alpha := f.pubs["Delta (draft)"], f.pubs["Alpha launch"]
	snapshot := func() string {
		var s string
		mustScan(t, f.db.Owner(t).QueryRow(context.Background(), `select concat_ws('|',
			(select string_agg(title || ':' || status || ':' || version, ',' order by id) from publications),
			(select count(*) from status_events), (select count(*) from promos))`), &s)
		return s
	}
	before := snapshot()
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for _, tc := range []struct {
		name   string
		call   call
		status int
		code   string
	}{
		{"an integer filter past int4", call{path: "/publications?version=eq.99999999999999999999"}, 400, "22003"},
		{"a time filter that is no time", call{path: "/publications?created_at=gt.notadate"}, 400, "22007"},
		{"a time filter out of range", call{path: "/publications?created_at=gt.2024-13-45"}, 400, "22008"},
		{"a uuid list with junk", call{path: "/publications?id=in.(x,y)"}, 400, "22P02"},
		{"a NUL in a query value", call{path: "/publications?title=eq.a%00b"}, 400, "PGRST100"},
		{"a NUL in a JSON value", call{method: "PATCH", path: "/publications?id=eq." + delta, body: `{"title":"a\u0000b"}`}, 400, "22P05"},
		{"a lone surrogate in an RPC argument", call{method: "POST", path: "/rpc/search_publications", body: `{"phrase":"\ud800"}`}, 400, "22P02"},
		{"an RPC version past int4", call{method: "POST", path: "/rpc/submit_for_review", body: `{"publication_id":"` + delta + `","expected_version":2147483648}`}, 400, "22003"},
		{"an RPC uuid that is none", call{method: "POST", path: "/rpc/approve", body: `{"publication_id":"1 or 1=1"}`}, 400, "22P02"},
		{"an RPC time out of range", call{method: "POST", path: "/rpc/schedule", body: `{"publication_id":"` + alpha + `","scheduled_for":"294277-01-01T00:00:00Z"}`}, 400, "22008"},
		{"a NUL in a form-encoded RPC argument", call{method: "POST", path: "/rpc/submit_for_review", body: "publication_id=" + delta + "&note=a%00", header: form}, 400, "22P05"},
		{"PATCH with an array", call{method: "PATCH", path: "/publications?id=eq." + delta, body: `[{"title":"x"}]`}, 400, "PGRST102"},
		{"POST with an array of numbers", call{method: "POST", path: "/publications", body: `[1]`}, 400, "PGRST102"},
		{"PATCH with nothing", call{method: "PATCH", path: "/publications?id=eq." + delta, header: map[string]string{"Content-Type": "application/json"}}, 400, "PGRST102"},
		{"JSON nested past the decoder's depth", call{method: "POST", path: "/publications", body: deep(100000)}, 400, "PGRST102"},
		{"a body type it does not read", call{method: "PATCH", path: "/publications?id=eq." + delta, body: `{"title":"x"}`, header: map[string]string{"Content-Type": "text/plain"}}, 415, "PGRST107"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.call.user = "leadA"
			r := f.do(t, tc.call)
			var body map[string]any
			if err := json.Unmarshal([]byte(r.body), &body); err != nil || r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tc.status)
			}
			keys := make([]string, 0, len(body))
			for k := range body {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, []string{"code", "details", "hint", "message"}) || body["code"] != tc.code || body["message"] == "" {
				t.Errorf("body %s, want PostgREST's shape with code %s", r.body, tc.code)
			}
		})
	}
	if after := snapshot(); after != before {
		t.Errorf("refused requests changed what is stored:\n%s\n%s", before, after)
	}
}

// deep is JSON arrays nested n deep.
func deep(n int) string {
	b := make([]byte, 2*n)
	for i := range n {
		b[i], b[2*n-1-i] = '[', ']'
	}
	return string(b)
}
