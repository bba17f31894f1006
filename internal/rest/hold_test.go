package rest

import (
	"context"
	"strings"
	"testing"
	"time"
)

// draft adds a draft to project A written by author, as the fixture does, and returns its id.
func (f *fixture) draft(t testing.TB, author, title string) string {
	t.Helper()
	var id string
	mustScan(t, f.db.Owner(t).QueryRow(context.Background(), `insert into publications (project_id, title, slug, author_id)
		values ($1, $2, lower(replace($2, ' ', '-')), $3) returning id`, f.projA, title, f.users[author]), &id)
	f.pubs[title] = id
	return id
}

func wantMessage(parts ...string) func(t *testing.T, f *fixture, r reply) {
	return func(t *testing.T, f *fixture, r reply) {
		t.Helper()
		for _, p := range parts {
			if !strings.Contains(r.body, p) {
				t.Errorf("body %s does not say %q", r.body, p)
			}
		}
	}
}

// TestWorkflowHoldsOverREST: the rules of the workflow meet a PATCH exactly as they meet the
// RPC, content is frozen outside draft, reopen hands it back, and bad values are 400s.
func TestWorkflowHoldsOverREST(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	alpha := f.pubs["Alpha launch"] // in review
	beta := f.pubs["Beta notes"]    // approved
	bravo := f.pubs["Bravo in B"]   // B's draft, with a promo on x
	missing := "00000000-0000-4000-8000-00000000000b"
	far := time.Now().AddDate(6, 0, 0).UTC().Format(time.RFC3339)
	runSequential(t, f, []scenario{
		{"PATCH to changes_requested names the RPC", call{method: "PATCH", user: "reviewerA", path: "/publications?id=eq." + alpha,
			body: `{"status":"changes_requested"}`}, 400, wantMessage(`"code":"PT400"`, "request_changes(publication_id, note)")},
		{"the author may not request changes on their own work", call{method: "PATCH", user: "editorA", path: "/publications?id=eq." + alpha,
			body: `{"status":"changes_requested"}`}, 403, wantError("42501")},
		{"nothing changed", call{user: "editorA", path: "/publications?select=status,version&id=eq." + alpha}, 200, wantBody(`[{"status":"reviewing","version":2}]`)},
		{"PATCH to approved writes the verdict", call{method: "PATCH", user: "reviewerA", path: "/publications?id=eq." + alpha + "&select=status",
			body: `{"status":"approved"}`, header: prefer("return=representation")}, 200, wantBody(`[{"status":"approved"}]`)},
		{"audited as direct", call{user: "editorA", path: "/status_events?select=intent,via&publication_id=eq." + alpha + "&order=id.desc&limit=1"}, 200,
			wantBody(`[{"intent":"approve","via":"direct"}]`)},
		{"approve events and approved verdicts agree", call{user: "editorA", path: "/reviews?select=verdict&verdict=eq.approved&order=created_at"}, 200,
			wantBody(`[{"verdict":"approved"}, 
 {"verdict":"approved"}]`)}, // Beta by RPC, Alpha by PATCH
		{"promos of an approved publication are frozen", call{method: "POST", user: "editorA", path: "/promos",
			body: `{"publication_id":"` + beta + `","channel":"bluesky","body":"late"}`}, 409, wantMessage("promos can only change", "approved")},
		{"so are its media links", call{method: "POST", user: "editorA", path: "/publication_media",
			body: `{"publication_id":"` + beta + `","media_id":"` + f.media + `"}`}, 409, wantError("PT409")},
		{"PATCH back to draft needs reopen's note", call{method: "PATCH", user: "leadA", path: "/publications?id=eq." + beta,
			body: `{"status":"draft"}`}, 400, wantMessage("reopen(publication_id, note)")},
		{"reopen needs a note", call{method: "POST", user: "leadA", path: "/rpc/reopen", body: `{"publication_id":"` + beta + `"}`}, 400, wantError("PT400")},
		{"editors may not reopen", call{method: "POST", user: "editorA", path: "/rpc/reopen", body: `{"publication_id":"` + beta + `","note":"x"}`}, 403, wantError("42501")},
		{"reopen", call{method: "POST", user: "leadA", path: "/rpc/reopen", body: `{"publication_id":"` + beta + `","note":"numbers changed"}`}, 200,
			wantMessage(`"status":"draft"`, `"scheduled_for":null`)},
		{"a reopened draft takes promos again", call{method: "POST", user: "editorA", path: "/promos",
			body: `{"publication_id":"` + beta + `","channel":"bluesky","body":"late"}`}, 201, nil},
		{"schedule at infinity is 400", call{method: "POST", user: "leadA", path: "/rpc/schedule",
			body: `{"publication_id":"` + alpha + `","scheduled_for":"infinity"}`}, 400, wantError("PT400")},
		{"schedule in year 12345 is 400", call{method: "POST", user: "leadA", path: "/rpc/schedule",
			body: `{"publication_id":"` + alpha + `","scheduled_for":"12345-01-01T00:00:00Z"}`}, 400, wantError("PT400")},
		{"schedule past the horizon is 400", call{method: "POST", user: "leadA", path: "/rpc/schedule",
			body: `{"publication_id":"` + alpha + `","scheduled_for":"` + far + `"}`}, 400, wantMessage("within 5 years", "masthead.schedule_horizon")},
		{"PATCH a date at infinity is 400", call{method: "PATCH", user: "leadA", path: "/publications?id=eq." + alpha,
			body: `{"status":"scheduled","scheduled_for":"infinity"}`}, 400, wantError("PT400")},
		{"still approved, no date", call{user: "editorA", path: "/publications?select=status,scheduled_for&id=eq." + alpha}, 200,
			wantBody(`[{"status":"approved","scheduled_for":null}]`)},
		{"a display name over its bound", call{method: "PATCH", user: "editorA", path: "/profiles?id=eq." + f.users["editorA"],
			body: `{"display_name":"` + strings.Repeat("n", 101) + `"}`}, 400, wantMessage(`"code":"23514"`, "display_name_at_most_100_chars")},
		{"a summary over its bound", call{method: "POST", user: "editorA", path: "/publications",
			body: `{"project_id":"` + f.projA + `","title":"Long","slug":"long","summary":"` + strings.Repeat("s", 2001) + `"}`}, 400,
			wantMessage("summary_at_most_2000_chars")},
		// A media path is bounded at 1024 bytes, as the storage surface bounds a key; 1001 to
		// 1024 ASCII characters were refused by a bound of 1000 characters until migration 032.
		{"a media path of 1024 bytes", call{method: "POST", user: "editorA", path: "/media?select=storage_path",
			body:   `{"project_id":"` + f.projA + `","storage_path":"proj-a/` + strings.Repeat("p", 1017) + `","mime_type":"image/png"}`,
			header: prefer("return=representation")}, 201, wantBody(`[{"storage_path":"proj-a/` + strings.Repeat("p", 1017) + `"}]`)},
		{"a media path of 1025 bytes", call{method: "POST", user: "editorA", path: "/media",
			body: `{"project_id":"` + f.projA + `","storage_path":"proj-a/` + strings.Repeat("q", 1018) + `","mime_type":"image/png"}`}, 400,
			wantMessage(`"code":"23514"`, "storage_path_at_most_1024_bytes")},
		{"a media path changes only through the storage API", call{method: "PATCH", user: "editorA", path: "/media?id=eq." + f.media,
			body: `{"storage_path":"proj-a/` + strings.Repeat("r", 1017) + `"}`}, 403, wantMessage(`"code":"42501"`, "only through the storage API")},
		{"author_id may be the caller (supabase-js)", call{method: "POST", user: "editorA", path: "/publications?select=author_id",
			body:   `{"project_id":"` + f.projA + `","title":"Mine","slug":"mine","author_id":"` + f.users["editorA"] + `"}`,
			header: prefer("return=representation")}, 201, wantBody(`[{"author_id":"` + f.users["editorA"] + `"}]`)},
		{"author_id may not be someone else", call{method: "POST", user: "editorA", path: "/publications",
			body: `{"project_id":"` + f.projA + `","title":"Forged","slug":"forged","author_id":"` + f.users["leadA"] + `"}`}, 403,
			wantMessage(`"code":"42501"`, "author_id")},
	})

	// Another tenant's publication id answers as a missing one, with ignore-duplicates too.
	for _, path := range []string{"/promos", "/promos?on_conflict=publication_id,channel"} {
		hdr := prefer("return=representation,resolution=ignore-duplicates")
		probe := func(id string) reply {
			return f.do(t, call{method: "POST", user: "editorA", path: path, header: hdr,
				body: `{"project_id":"` + f.projA + `","publication_id":"` + id + `","channel":"x","body":"probe"}`})
		}
		a, b := probe(bravo), probe(missing)
		if a.status != b.status || strings.ReplaceAll(a.body, bravo, "<id>") != strings.ReplaceAll(b.body, missing, "<id>") {
			t.Errorf("%s: another tenant's id %d %s; a missing id %d %s", path, a.status, a.body, b.status, b.body)
		}
	}
}
