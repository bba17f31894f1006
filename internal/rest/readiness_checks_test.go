package rest

import (
	"testing"
)

// TestReadinessChecksColumn: readiness_checks (migration 031) is a computed column of the rows a
// caller reads, never a function a caller can hand a row of their own making: readiness_of,
// which it calls, reads as the owner. Its argument has no name, so /rpc does not offer it: not
// in the schema's functions, and a call by its name with a made-up row is not found.
func TestReadinessChecksColumn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.h.schema.Schema()
	if fns := s.Functions["readiness_checks"]; len(fns) != 0 {
		t.Errorf("readiness_checks is offered over /rpc: %+v", fns)
	}
	if s.Tables["publications"].Computed["readiness_checks"] == nil {
		t.Error("readiness_checks is not a computed column of publications")
	}
	alpha, bravo := f.pubs["Alpha launch"], f.pubs["Bravo in B"]
	made := `{"":{"id":"` + bravo + `","project_id":"` + f.projB + `","title":"t","summary":"s","body":"b"}}`
	runSequential(t, f, []scenario{
		{"a column of a visible row", call{user: "viewerA", path: "/publications?select=readiness_checks&id=eq." + alpha}, 200,
			exact(`[{"readiness_checks":[{"check" : "title", "ok" : true, "detail" : "Title is set"}, {"check" : "summary", "ok" : true, "detail" : "Summary is set"}, {"check" : "body", "ok" : true, "detail" : "Body is written"}, {"check" : "promo:x", "ok" : true, "detail" : "X: 10 / 280 characters"}, {"check" : "promo:bluesky", "ok" : true, "detail" : "Bluesky: 16 / 300 characters"}, {"check" : "alt_text", "ok" : true, "detail" : "The media item has alt text"}]}]`)},
		{"no row of another project", call{user: "viewerA", path: "/publications?select=readiness_checks&id=eq." + bravo}, 200, exact(`[]`)},
		{"not a function over /rpc (POST)", call{method: "POST", user: "editorB", path: "/rpc/readiness_checks", body: made}, 404, nil},
	})
}
