package rest

import (
	"context"
	"net/http"
	"testing"
)

// TestShapes: the shape of answers as PostgREST gives them, on our fixture: limit=0 and in.()
// are empty pages, select= is every column, rel() filters without being emitted, and writes
// say how many rows they wrote (Content-Range, Preference-Applied), refuse a singular Accept
// that does not match exactly one row (rolling back, whatever return= says), and RETURN only
// the columns the answer reads, so column grants suffice.
func TestShapes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	// notes is test-only: the caller may read only id and body, and write body and secret.
	mustExec(t, own, `create table public.notes (id integer generated always as identity primary key,
		body text not null default 'blank', secret text not null default 'hidden', pinned boolean not null default false)`)
	mustExec(t, own, `grant select (id, body), insert (body, secret), update (body, pinned), delete on public.notes to authenticated`)
	mustExec(t, own, `insert into public.notes (body) values ('one'), ('two'), ('three')`)
	if err := f.h.schema.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	theta := f.draft(t, "editorA", "Theta draft")
	mustExec(t, own, `insert into promos (publication_id, channel, body) values ($1, 'x', 'Theta on X'), ($1, 'bluesky', 'Theta on Bluesky')`, theta)
	star := f.do(t, call{user: "editorA", path: "/channels?select=*&slug=eq.x"})
	single := map[string]string{"Accept": mediaObject}
	singleMinimal := map[string]string{"Accept": mediaObject, "Prefer": "return=minimal"}
	notSingular := func(n string) string {
		return `{"code":"PGRST116","details":"The result contains ` + n + ` rows","hint":null,"message":"Cannot coerce the result to a single JSON object"}`
	}
	runSequential(t, f, []scenario{
		// Empty pages.
		{"limit=0 is an empty page", call{user: "editorA", path: "/publications?select=title&limit=0"}, 200,
			exact(`[]`, "Content-Range", "*/*", "Content-Type", ctypeJSON)},
		{"limit=0 with a count", call{user: "editorA", path: "/publications?select=title&limit=0", header: prefer("count=exact")}, 206,
			exact(`[]`, "Content-Range", "*/5")},
		{"an embedded limit=0", call{user: "editorA", path: "/publications?select=title,promos(channel)&promos.limit=0&title=eq.Alpha%20launch"}, 200,
			exact(`[{"title":"Alpha launch","promos":[]}]`)},
		{"in.() matches nothing", call{user: "editorA", path: "/publications?select=title&id=in.()"}, 200, exact(`[]`)},
		{"not.in.() matches everything", call{user: "editorA", path: "/publications?select=title&status=not.in.()&order=title&limit=2"}, 200,
			exact(`[{"title":"Alpha launch"}, 
 {"title":"Beta notes"}]`)},
		{"in.() inside or", call{user: "editorA", path: "/publications?select=title&or=(id.in.(),title.eq.Beta%20notes)"}, 200, exact(`[{"title":"Beta notes"}]`)},

		// select= and rel().
		{"select= is every column", call{user: "editorA", path: "/channels?select=&slug=eq.x"}, 200, exact(star.body)},
		{"an empty embed filters without being emitted", call{user: "editorA",
			path: "/publications?select=title,promos()&promos.body=like.*Bluesky&promos=not.is.null&order=title"}, 200, exact(`[{"title":"Alpha launch"}, 
 {"title":"Theta draft"}]`)},
		{"an empty !inner embed", call{user: "editorA", path: "/publications?select=title,promos!inner()&promos.channel=eq.x&order=title"}, 200,
			exact(`[{"title":"Alpha launch"}, 
 {"title":"Beta notes"}, 
 {"title":"Theta draft"}]`)},
		{"an empty embed as an anti-join", call{user: "editorA", path: "/publications?select=title,promos()&promos=is.null&order=title"}, 200,
			exact(`[{"title":"Delta (draft)"}, 
 {"title":"Gamma, with comma"}]`)},
		{"an empty to-one embed ordered by", call{user: "editorA", path: "/promos?select=channel,publications()&order=publications(title).desc,channel&limit=1"}, 200,
			exact(`[{"channel":"bluesky"}]`)},

		// Counts and preferences on writes.
		{"POST minimal with a count", call{method: "POST", user: "editorA", path: "/notes", body: `[{"body":"four"},{"body":"five"}]`, header: prefer("count=exact")}, 201,
			exact(``, "Content-Range", "*/2", "Preference-Applied", "count=exact", "Content-Type", "")},
		{"POST minimal without a count", call{method: "POST", user: "editorA", path: "/notes", body: `{"body":"six"}`}, 201,
			exact(``, "Content-Range", "*/*", "Preference-Applied", "")},
		{"POST with every preference, listed in PostgREST's order", call{method: "POST", user: "editorA", path: "/notes?columns=body&select=body",
			body: `[{"body":"seven"},{}]`, header: prefer("count=exact, return=representation, missing=default")}, 201,
			exact(`[{"body":"seven"}, 
 {"body":"blank"}]`, "Content-Range", "*/2", "Preference-Applied", "missing=default, return=representation, count=exact", "Content-Type", ctypeJSON)},
		{"PATCH of two rows with a count", call{method: "PATCH", user: "editorA", path: "/promos?publication_id=eq." + theta, body: `{"link":"https://e.test"}`,
			header: prefer("count=exact")}, 204, exact(``, "Content-Range", "0-1/2", "Preference-Applied", "count=exact", "Content-Type", "")},
		{"PATCH of two rows without a count", call{method: "PATCH", user: "editorA", path: "/promos?publication_id=eq." + theta, body: `{"link":null}`}, 204,
			exact(``, "Content-Range", "0-1/*")},
		{"PATCH of no row, asking only for granted columns", call{method: "PATCH", user: "editorA", path: "/notes?id=eq.999&select=id,body", body: `{"body":"x"}`, header: prefer("count=exact,return=representation")}, 200,
			exact(`[]`, "Content-Range", "*/0", "Preference-Applied", "return=representation, count=exact")},
		{"DELETE with a count", call{method: "DELETE", user: "editorA", path: "/notes?body=eq.six", header: prefer("count=exact")}, 204,
			exact(``, "Content-Range", "*/1")},

		// Singular writes.
		{"singular PATCH of one row, minimal", call{method: "PATCH", user: "editorA", path: "/notes?body=eq.one", body: `{"pinned":true}`, header: singleMinimal}, 204,
			exact(``, "Content-Type", "", "Preference-Applied", "return=minimal")},
		{"singular PATCH of one row, representation", call{method: "PATCH", user: "editorA", path: "/notes?body=eq.one&select=id,body", body: `{"body":"uno"}`,
			header: map[string]string{"Accept": mediaObject, "Prefer": "return=representation"}}, 200,
			exact(`{"id":1,"body":"uno"}`, "Content-Type", mediaObject+"; charset=utf-8")},
		{"singular PATCH of two rows, minimal, is refused", call{method: "PATCH", user: "editorA", path: "/promos?publication_id=eq." + theta,
			body: `{"body":"both"}`, header: singleMinimal}, 406, exact(notSingular("2"), "Content-Type", ctypeJSON)},
		{"and changed nothing", call{user: "editorA", path: "/promos?select=channel,body&publication_id=eq." + theta + "&order=channel"}, 200,
			exact(`[{"channel":"bluesky","body":"Theta on Bluesky"}, 
 {"channel":"x","body":"Theta on X"}]`)},
		{"singular POST of two rows, minimal, is refused", call{method: "POST", user: "editorA", path: "/notes", body: `[{"body":"a"},{"body":"b"}]`, header: singleMinimal}, 406,
			exact(notSingular("2"))},
		{"singular POST of no rows is refused", call{method: "POST", user: "editorA", path: "/notes", body: `[]`, header: single}, 406, exact(notSingular("0"))},
		{"singular DELETE of no rows is refused", call{method: "DELETE", user: "editorA", path: "/notes?id=eq.999", header: single}, 406, exact(notSingular("0"))},
		{"singular DELETE of two rows is refused", call{method: "DELETE", user: "editorA", path: "/notes?body=in.(two,three)", header: single}, 406, exact(notSingular("2"))},
		{"the refused writes changed nothing", call{user: "editorA", path: "/notes?select=body&order=id"}, 200,
			exact(`[{"body":"uno"}, 
 {"body":"two"}, 
 {"body":"three"}, 
 {"body":"four"}, 
 {"body":"five"}, 
 {"body":"seven"}, 
 {"body":"blank"}]`)},

		// RETURNING only what the answer reads.
		{"POST returning the granted columns", call{method: "POST", user: "editorA", path: "/notes?select=body", body: `{"body":"eight","secret":"s"}`,
			header: prefer("return=representation")}, 201, exact(`[{"body":"eight"}]`)},
		{"PATCH returning the granted columns, ordered", call{method: "PATCH", user: "editorA", path: "/notes?select=body&body=in.(two,three)&order=id.desc", body: `{"pinned":true}`,
			header: prefer("return=representation")}, 200, exact(`[{"body":"three"}, 
 {"body":"two"}]`)},
		{"DELETE returning the granted columns", call{method: "DELETE", user: "editorA", path: "/notes?select=id&body=eq.eight", header: prefer("return=representation")}, 200,
			exact(`[{"id":11}]`)},
		{"asking for a column without a grant is refused", call{method: "POST", user: "editorA", path: "/notes?select=secret", body: `{"body":"nine"}`,
			header: prefer("return=representation")}, 403,
			exact(`{"code":"42501","details":null,"hint":null,"message":"permission denied for table notes"}`)},
		{"headers-only returns the key for Location", call{method: "POST", user: "editorA", path: "/notes", body: `{"body":"ten"}`, header: prefer("return=headers-only")}, 201,
			exact(``, "Location", "/notes?id=eq.12", "Content-Range", "*/*")},
	})
	if r := f.do(t, call{user: "editorA", path: "/notes?select=body&id=eq.10"}); r.status != http.StatusOK || r.body != `[]` {
		t.Errorf("the refused POST left a row: %d %s", r.status, r.body)
	}
}
