package rest

import (
	"net/http"
	"testing"
)

// TestPlanCacheKeepsRequestsApart: a read of a shape seen before reuses its statements, yet
// every answer is the one its own request asks for: another tenant's member gets their own
// rows for the same URL, and a different Range, Prefer or Accept on the same URL changes the
// answer as it would without the cache. Each case runs twice, so the second is served from it.
func TestPlanCacheKeepsRequestsApart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const path = "/publications?select=title&order=title.asc"
	cases := []struct {
		name         string
		user         string
		header       map[string]string
		status       int
		body, cRange string
	}{
		{"editor of A", "editorA", nil, http.StatusOK,
			`[{"title":"Alpha launch"}, ` + "\n " + `{"title":"Beta notes"}, ` + "\n " + `{"title":"Delta (draft)"}, ` + "\n " + `{"title":"Gamma, with comma"}]`, "0-3/*"},
		{"editor of B, same URL", "editorB", nil, http.StatusOK, `[{"title":"Bravo in B"}]`, "0-0/*"},
		{"outsider, same URL", "outsider", nil, http.StatusOK, `[]`, "*/*"},
		{"a range", "editorA", map[string]string{"Range": "1-2"}, http.StatusOK,
			`[{"title":"Beta notes"}, ` + "\n " + `{"title":"Delta (draft)"}]`, "1-2/*"},
		{"a range, counted", "editorA", map[string]string{"Range": "1-2", "Prefer": "count=exact"}, http.StatusPartialContent, "", "1-2/4"},
		{"counted", "editorA", map[string]string{"Prefer": "count=exact"}, http.StatusOK, "", "0-3/4"},
		{"one object", "editorB", map[string]string{"Accept": "application/vnd.pgrst.object+json"}, http.StatusOK, `{"title":"Bravo in B"}`, "0-0/*"},
	}
	for round := range 2 {
		for _, c := range cases {
			r := f.do(t, call{path: path, user: c.user, header: c.header})
			if r.status != c.status || (c.body != "" && r.body != c.body) || r.header.Get("Content-Range") != c.cRange {
				t.Errorf("round %d, %s: %d %s (Content-Range %q), want %d %s (%q)", round, c.name,
					r.status, r.body, r.header.Get("Content-Range"), c.status, c.body, c.cRange)
			}
		}
	}
}
