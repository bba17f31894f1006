package rest

import (
	"context"
	"strings"
	"testing"
	"time"
)

// scenario is one HTTP exchange and what must come back.
type scenario struct {
	name   string
	call   call
	status int
	check  func(t *testing.T, f *fixture, r reply)
}

// runSequential plays scenarios in order on one fixture: writes build on
// each other, so they cannot run in parallel.
func runSequential(t *testing.T, f *fixture, tests []scenario) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(t, tt.call)
			if r.status != tt.status {
				t.Fatalf("status = %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.check != nil {
				tt.check(t, f, r)
			}
		})
	}
}

func wantBody(want string) func(t *testing.T, f *fixture, r reply) {
	return func(t *testing.T, f *fixture, r reply) {
		t.Helper()
		if r.body != want {
			t.Errorf("body = %s\nwant   %s", r.body, want)
		}
	}
}

func prefer(p string) map[string]string { return map[string]string{"Prefer": p} }

func TestInsert(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	delta := f.pubs["Delta (draft)"]
	// Promos change only on drafts, so the bulk inserts go to a second one.
	gamma := f.draft(t, "editorA", "Kappa draft")
	runSequential(t, f, []scenario{
		{"single with representation", call{method: "POST", user: "editorA", path: "/promos?select=channel,body",
			body: `{"publication_id":"` + delta + `","channel":"x","body":"Delta on X"}`, header: prefer("return=representation")}, 201,
			func(t *testing.T, f *fixture, r reply) {
				wantBody(`[{"channel":"x","body":"Delta on X"}]`)(t, f, r)
				if pa := r.header.Get("Preference-Applied"); pa != "return=representation" {
					t.Errorf("Preference-Applied = %q", pa)
				}
			}},
		{"minimal is the default", call{method: "POST", user: "editorA", path: "/promos",
			body: `{"publication_id":"` + delta + `","channel":"bluesky","body":"b"}`}, 201, wantBody("")},
		{"bulk with embed in the representation", call{method: "POST", user: "editorA", path: "/promos?select=channel,publications(title)",
			body:   `[{"publication_id":"` + gamma + `","channel":"x","body":"1"},{"publication_id":"` + gamma + `","channel":"threads","body":"2"}]`,
			header: prefer("return=representation")}, 201,
			wantBody(`[{"channel":"x","publications":{"title":"Kappa draft"}}, 
 {"channel":"threads","publications":{"title":"Kappa draft"}}]`)},
		{"single object accept", call{method: "POST", user: "editorA", path: "/promos?select=channel",
			body:   `{"publication_id":"` + gamma + `","channel":"mastodon","body":"m"}`,
			header: map[string]string{"Prefer": "return=representation", "Accept": mediaObject}}, 201, wantBody(`{"channel":"mastodon"}`)},
		{"single object accept with two rows rolls back", call{method: "POST", user: "editorA", path: "/promos",
			body:   `[{"publication_id":"` + gamma + `","channel":"linkedin","body":"1"},{"publication_id":"` + gamma + `","channel":"facebook","body":"2"}]`,
			header: map[string]string{"Prefer": "return=representation", "Accept": mediaObject}}, 406, wantError("PGRST116")},
		{"rolled back rows are absent", call{user: "editorA", path: "/promos?select=channel&channel=in.(linkedin,facebook)"}, 200, wantBody("[]")},
		{"columns with missing=default", call{method: "POST", user: "editorA", path: "/promos?columns=publication_id,channel,body,link&select=channel,body,link&order=channel",
			body:   `[{"publication_id":"` + delta + `","channel":"threads","link":"https://e.test"},{"publication_id":"` + delta + `","channel":"instagram","body":"has body"}]`,
			header: prefer("return=representation,missing=default")}, 201,
			func(t *testing.T, f *fixture, r reply) {
				rows := r.rows(t)
				if len(rows) != 2 {
					t.Fatalf("rows = %s", r.body)
				}
				for _, row := range rows {
					switch row["channel"] {
					case "threads":
						if row["body"] != "" || row["link"] != "https://e.test" {
							t.Errorf("threads row = %v (body should take its default)", row)
						}
					case "instagram":
						if row["body"] != "has body" || row["link"] != nil {
							t.Errorf("instagram row = %v", row)
						}
					}
				}
				if pa := r.header.Get("Preference-Applied"); !strings.Contains(pa, "missing=default") {
					t.Errorf("Preference-Applied = %q", pa)
				}
			}},
		{"keys must match without columns", call{method: "POST", user: "editorA", path: "/promos",
			body: `[{"publication_id":"` + delta + `","channel":"x"},{"publication_id":"` + delta + `"}]`}, 400, wantError("PGRST102")},
		{"unknown column", call{method: "POST", user: "editorA", path: "/promos", body: `{"nope":1}`}, 400, wantError("PGRST204")},
		{"invalid json", call{method: "POST", user: "editorA", path: "/promos", body: `{"a":`}, 400, wantError("PGRST102")},
		{"wrong content type", call{method: "POST", user: "editorA", path: "/promos", body: `a=b`, header: map[string]string{"Content-Type": "text/plain"}}, 415, wantError("PGRST107")},
		{"body too large", call{method: "POST", user: "editorA", path: "/promos", body: `{"body":"` + strings.Repeat("x", 2<<20) + `"}`}, 413, nil},
		{"unique violation is 409", call{method: "POST", user: "editorA", path: "/promos",
			body: `{"publication_id":"` + delta + `","channel":"x","body":"again"}`}, 409, wantError("23505")},
		{"foreign key violation is 409", call{method: "POST", user: "editorA", path: "/promos",
			body: `{"publication_id":"` + delta + `","channel":"myspace","body":"?"}`}, 409, wantError("23503")},
		{"viewer may not insert (RLS)", call{method: "POST", user: "viewerA", path: "/promos",
			body: `{"publication_id":"` + delta + `","channel":"linkedin","body":"?"}`}, 403, wantError("42501")},
		{"other tenant may not insert into A: not found", call{method: "POST", user: "editorB", path: "/promos",
			body: `{"project_id":"` + f.projA + `","publication_id":"` + delta + `","channel":"linkedin","body":"?"}`}, 409, wantError("23503")},
		{"anon may not insert", call{method: "POST", user: "anon", path: "/promos", body: `{"body":"?"}`}, 401, func(t *testing.T, f *fixture, r reply) {
			wantError("42501")(t, f, r)
			if w := r.header.Get("WWW-Authenticate"); w != "Bearer" {
				t.Errorf("WWW-Authenticate = %q", w)
			}
		}},
		// The promo exists (the first scenario wrote it), so the upsert only updates: 200, as
		// PostgREST's UpsertSpec "UPDATEs rows on pk conflict" answers.
		{"upsert merge-duplicates", call{method: "POST", user: "editorA", path: "/promos?on_conflict=publication_id,channel&select=channel,body",
			body: `{"publication_id":"` + delta + `","channel":"x","body":"merged"}`, header: prefer("return=representation,resolution=merge-duplicates")}, 200,
			func(t *testing.T, f *fixture, r reply) {
				wantBody(`[{"channel":"x","body":"merged"}]`)(t, f, r)
				if pa := r.header.Get("Preference-Applied"); !strings.Contains(pa, "resolution=merge-duplicates") {
					t.Errorf("Preference-Applied = %q", pa)
				}
			}},
		{"upsert ignore-duplicates", call{method: "POST", user: "editorA", path: "/promos?on_conflict=publication_id,channel&select=body",
			body: `{"publication_id":"` + delta + `","channel":"x","body":"ignored"}`, header: prefer("return=representation,resolution=ignore-duplicates")}, 201, wantBody("[]")},
		{"upsert kept the merged row", call{user: "editorA", path: "/promos?select=body&publication_id=eq." + delta + "&channel=eq.x"}, 200, wantBody(`[{"body":"merged"}]`)},
		{"new publication is a draft by the caller", call{method: "POST", user: "editorA", path: "/publications?select=title,status,version,author_id",
			body: `{"project_id":"` + f.projA + `","title":"Epsilon","slug":"epsilon"}`, header: map[string]string{"Prefer": "return=representation", "Accept": mediaObject}}, 201,
			func(t *testing.T, f *fixture, r reply) {
				o := r.object(t)
				if o["status"] != "draft" || o["version"] != float64(1) || o["author_id"] != f.users["editorA"] {
					t.Errorf("row = %v", o)
				}
			}},
		{"headers-only gives Location", call{method: "POST", user: "editorA", path: "/publications",
			body: `{"project_id":"` + f.projA + `","title":"Zeta","slug":"zeta"}`, header: prefer("return=headers-only")}, 201,
			func(t *testing.T, f *fixture, r reply) {
				if loc := r.header.Get("Location"); !strings.HasPrefix(loc, "/publications?id=eq.") {
					t.Errorf("Location = %q", loc)
				}
			}},
		{"a new publication cannot skip review", call{method: "POST", user: "editorA", path: "/publications",
			body: `{"project_id":"` + f.projA + `","title":"Eta","slug":"eta","status":"published"}`}, 400, wantError("PT400")},
	})
}

func TestUpdateDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	delta := f.pubs["Delta (draft)"]
	alpha := f.pubs["Alpha launch"] // in review: its promos are frozen
	theta := f.draft(t, "editorA", "Theta draft")
	own := f.db.Owner(t)
	mustExec(t, own, `insert into promos (publication_id, channel, body) values ($1, 'x', 'Theta on X'), ($1, 'bluesky', 'Theta on Bluesky')`, theta)
	runSequential(t, f, []scenario{
		{"patch with representation", call{method: "PATCH", user: "editorA", path: "/publications?id=eq." + delta + "&select=title,version",
			body: `{"title":"Delta edited"}`, header: prefer("return=representation")}, 200, wantBody(`[{"title":"Delta edited","version":2}]`)},
		{"patch representation with an embed", call{method: "PATCH", user: "editorA", path: "/publications?id=eq." + delta + "&select=title,author:profiles!author_id(email),promos(channel)",
			body: `{"summary":"s1"}`, header: prefer("return=representation")}, 200, wantBody(`[{"title":"Delta edited","author":{"email":"editorA@example.test"},"promos":[]}]`)},
		{"patch minimal is 204", call{method: "PATCH", user: "editorA", path: "/publications?id=eq." + delta, body: `{"summary":"s2"}`}, 204, nil},
		{"patch without filter is refused", call{method: "PATCH", user: "editorA", path: "/promos", body: `{"body":"all"}`}, 400,
			func(t *testing.T, f *fixture, r reply) {
				wantError("21000")(t, f, r)
				if !strings.Contains(r.object(t)["hint"].(string), "limit") {
					t.Errorf("hint = %v", r.object(t)["hint"])
				}
			}},
		{"patch with limit and order", call{method: "PATCH", user: "editorA", path: "/promos?publication_id=eq." + theta + "&order=channel&limit=1&select=channel,body",
			body: `{"body":"limited"}`, header: prefer("return=representation")}, 200, wantBody(`[{"channel":"bluesky","body":"limited"}]`)},
		{"singular patch over two rows rolls back", call{method: "PATCH", user: "editorA", path: "/promos?publication_id=eq." + theta,
			body: `{"body":"both"}`, header: map[string]string{"Prefer": "return=representation", "Accept": mediaObject}}, 406, wantError("PGRST116")},
		{"rolled back patch changed nothing", call{user: "editorA", path: "/promos?select=body&body=eq.both"}, 200, wantBody("[]")},
		{"editing a publication in review is refused", call{method: "PATCH", user: "editorA", path: "/publications?id=eq." + alpha, body: `{"title":"x"}`}, 409, wantError("PT409")},
		{"direct status jump is refused", call{method: "PATCH", user: "leadA", path: "/publications?id=eq." + delta, body: `{"status":"published"}`}, 409, wantError("PT409")},
		{"reviewer may not edit", call{method: "PATCH", user: "reviewerA", path: "/publications?id=eq." + delta, body: `{"title":"x"}`}, 403, wantError("42501")},
		{"patch of an unknown column", call{method: "PATCH", user: "editorA", path: "/publications?id=eq." + delta, body: `{"nope":1}`}, 400, wantError("PGRST204")},
		{"patch body must be an object", call{method: "PATCH", user: "editorA", path: "/publications?id=eq." + delta, body: `[1]`}, 400, wantError("PGRST102")},
		{"other tenant patches nothing", call{method: "PATCH", user: "editorB", path: "/promos?publication_id=eq." + alpha + "&select=id",
			body: `{"body":"hijack"}`, header: prefer("return=representation")}, 200, wantBody("[]")},
		{"delete without filter is refused", call{method: "DELETE", user: "editorA", path: "/promos"}, 400, wantError("21000")},
		{"promos of a publication in review are frozen", call{method: "PATCH", user: "editorA", path: "/promos?publication_id=eq." + alpha,
			body: `{"body":"sneaky"}`}, 409, wantError("PT409")},
		{"and cannot be deleted", call{method: "DELETE", user: "editorA", path: "/promos?publication_id=eq." + alpha}, 409, wantError("PT409")},
		{"frozen promos are unchanged", call{user: "editorA", path: "/promos?select=channel,body&publication_id=eq." + alpha + "&order=channel"}, 200,
			wantBody(`[{"channel":"bluesky","body":"Alpha on Bluesky"}, 
 {"channel":"x","body":"Alpha on X"}]`)},
		{"delete with representation", call{method: "DELETE", user: "editorA", path: "/promos?publication_id=eq." + theta + "&channel=eq.x&select=channel",
			header: prefer("return=representation")}, 200, wantBody(`[{"channel":"x"}]`)},
		{"deleted row is gone", call{user: "editorA", path: "/promos?select=channel&publication_id=eq." + theta}, 200, wantBody(`[{"channel":"bluesky"}]`)},
		{"each promo change bumped the version", call{user: "editorA", path: "/publications?select=version&id=eq." + theta}, 200, wantBody(`[{"version":3}]`)},
		{"delete minimal is 204", call{method: "DELETE", user: "editorA", path: "/promos?publication_id=eq." + theta}, 204, nil},
		{"viewer deletes nothing", call{method: "DELETE", user: "viewerA", path: "/publications?id=eq." + delta + "&select=id", header: prefer("return=representation")}, 200, wantBody("[]")},
		{"delete a draft", call{method: "DELETE", user: "editorA", path: "/publications?id=eq." + delta + "&select=title", header: prefer("return=representation")}, 200, wantBody(`[{"title":"Delta edited"}]`)},
	})
}

func TestRPC(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	mustExec(t, own, `create function public.title_count(prefix text) returns bigint language sql stable
		as $$ select count(*) from publications where title like prefix || '%' $$`)
	mustExec(t, own, `create function public.titles_like(prefix text) returns setof text language sql stable
		as $$ select title from publications where title like prefix || '%' order by title $$`)
	mustExec(t, own, `create function public.in_status(s text) returns setof publications language sql stable
		as $$ select * from publications where status = s $$`)
	mustExec(t, own, `create function public.noop() returns void language sql as $$ select $$`)
	mustExec(t, own, `grant execute on function public.title_count(text), public.titles_like(text), public.in_status(text), public.noop() to authenticated`)
	if err := f.h.schema.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	pub := func(title string) string { return `"publication_id":"` + f.pubs[title] + `"` }
	future := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	past := time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339)
	status := func(want string) func(t *testing.T, f *fixture, r reply) {
		return func(t *testing.T, f *fixture, r reply) {
			if got := r.object(t)["status"]; got != want {
				t.Errorf("status = %v, want %s (%s)", got, want, r.body)
			}
		}
	}
	runSequential(t, f, []scenario{
		{"submit_for_review", call{method: "POST", user: "editorA", path: "/rpc/submit_for_review", body: `{` + pub("Delta (draft)") + `,"note":"ready"}`}, 200, status("reviewing")},
		{"author cannot approve", call{method: "POST", user: "leadA", path: "/rpc/approve", body: `{` + pub("Gamma, with comma") + `}`}, 403, wantError("42501")},
		{"viewer cannot submit", call{method: "POST", user: "viewerA", path: "/rpc/withdraw", body: `{` + pub("Delta (draft)") + `}`}, 403, wantError("42501")},
		{"other tenant cannot even see it", call{method: "POST", user: "editorB", path: "/rpc/withdraw", body: `{` + pub("Delta (draft)") + `}`}, 404, wantError("PT404")},
		{"request_changes needs a note", call{method: "POST", user: "reviewerA", path: "/rpc/request_changes", body: `{` + pub("Delta (draft)") + `}`}, 400, nil},
		{"request_changes", call{method: "POST", user: "reviewerA", path: "/rpc/request_changes", body: `{` + pub("Delta (draft)") + `,"note":"tighten it"}`}, 200, status("changes_requested")},
		{"withdraw", call{method: "POST", user: "editorA", path: "/rpc/withdraw", body: `{` + pub("Delta (draft)") + `}`}, 200, status("draft")},
		{"stale version is 409", call{method: "POST", user: "editorA", path: "/rpc/submit_for_review", body: `{` + pub("Delta (draft)") + `,"expected_version":1}`}, 409,
			func(t *testing.T, f *fixture, r reply) {
				wantError("PT409")(t, f, r)
				if h, _ := r.object(t)["hint"].(string); h == "" {
					t.Errorf("hint missing: %s", r.body)
				}
			}},
		{"wrong status is 409", call{method: "POST", user: "reviewerA", path: "/rpc/approve", body: `{` + pub("Delta (draft)") + `}`}, 409, wantError("PT409")},
		{"approve", call{method: "POST", user: "reviewerA", path: "/rpc/approve", body: `{` + pub("Alpha launch") + `,"note":"good"}`}, 200, status("approved")},
		{"schedule in the past is 400", call{method: "POST", user: "leadA", path: "/rpc/schedule", body: `{` + pub("Alpha launch") + `,"scheduled_for":"` + past + `"}`}, 400, nil},
		{"schedule", call{method: "POST", user: "leadA", path: "/rpc/schedule", body: `{` + pub("Alpha launch") + `,"scheduled_for":"` + future + `"}`}, 200, status("scheduled")},
		{"unschedule", call{method: "POST", user: "leadA", path: "/rpc/unschedule", body: `{` + pub("Alpha launch") + `}`}, 200, status("approved")},
		{"editor cannot publish", call{method: "POST", user: "editorA", path: "/rpc/publish_now", body: `{` + pub("Alpha launch") + `}`}, 403, wantError("42501")},
		{"readiness", call{method: "POST", user: "viewerA", path: "/rpc/readiness", body: `{` + pub("Beta notes") + `}`}, 200, func(t *testing.T, f *fixture, r reply) {
			if !strings.Contains(string(r.body), `{"check":"promo:bluesky","ok":false,"detail":"Bluesky: no promo written"}`) {
				t.Errorf("readiness: %s", r.body)
			}
		}},
		{"publish_now refuses what is not ready", call{method: "POST", user: "leadA", path: "/rpc/publish_now", body: `{` + pub("Beta notes") + `}`}, 422, wantError("PT422")},
		{"publish_now", call{method: "POST", user: "leadA", path: "/rpc/publish_now", body: `{` + pub("Alpha launch") + `}`}, 200, status("published")},
		{"archive", call{method: "POST", user: "leadA", path: "/rpc/archive", body: `{` + pub("Alpha launch") + `,"note":"old"}`}, 200, status("archived")},
		{"restore", call{method: "POST", user: "leadA", path: "/rpc/restore", body: `{` + pub("Alpha launch") + `}`}, 200, status("draft")},
		{"add_review returns the review", call{method: "POST", user: "reviewerA", path: "/rpc/add_review", body: `{` + pub("Gamma, with comma") + `,"note":"a thought"}`}, 200,
			func(t *testing.T, f *fixture, r reply) {
				o := r.object(t)
				if o["verdict"] != "comment" || o["notes"] != "a thought" {
					t.Errorf("review = %s", r.body)
				}
			}},
		{"the audit tells the truth", call{user: "editorA", path: "/status_events?select=intent,via,note&publication_id=eq." + f.pubs["Delta (draft)"] + "&order=id"}, 200,
			wantBody(`[{"intent":"submit","via":"rpc","note":"ready"}, 
 {"intent":"request_changes","via":"rpc","note":"tighten it"}, 
 {"intent":"withdraw","via":"rpc","note":""}]`)},
		{"volatile function over GET is refused", call{user: "editorA", path: "/rpc/withdraw?publication_id=" + f.pubs["Delta (draft)"]}, 405, wantError("25006")},
		{"unknown function", call{method: "POST", user: "editorA", path: "/rpc/nope", body: `{}`}, 404, wantError("PGRST202")},
		{"unknown argument", call{method: "POST", user: "editorA", path: "/rpc/approve", body: `{"pub":"x"}`}, 404,
			func(t *testing.T, f *fixture, r reply) {
				wantError("PGRST202")(t, f, r)
				if m := r.object(t)["message"]; m != "Could not find the function public.approve(pub) in the schema cache" {
					t.Errorf("message = %v", m)
				}
			}},
		{"scalar over GET", call{user: "editorA", path: "/rpc/title_count?prefix=A"}, 200, wantBody("1")},
		{"scalar over POST", call{method: "POST", user: "editorA", path: "/rpc/title_count", body: `{"prefix":"G"}`}, 200, wantBody("1")},
		{"set of scalars", call{user: "editorA", path: "/rpc/titles_like?prefix=%25"}, 200, func(t *testing.T, f *fixture, r reply) {
			if !strings.HasPrefix(r.body, `["Alpha launch", "Beta notes"`) {
				t.Errorf("body = %s", r.body)
			}
		}},
		{"set of rows with select, filter, order and embed", call{user: "editorA", path: "/rpc/in_status?s=reviewing&select=title,promos(channel)&order=title&title=like.G*"}, 200,
			wantBody(`[{"title":"Gamma, with comma","promos":[]}]`)},
		{"set of rows with count", call{user: "editorA", path: "/rpc/in_status?s=draft&limit=1", header: prefer("count=exact")}, 206, func(t *testing.T, f *fixture, r reply) {
			if cr := r.header.Get("Content-Range"); cr != "0-0/2" {
				t.Errorf("Content-Range = %q", cr)
			}
		}},
		{"void is 204", call{method: "POST", user: "editorA", path: "/rpc/noop"}, 204, nil},
	})
}
