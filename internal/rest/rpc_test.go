package rest

import (
	"context"
	"net/http"
	"testing"
)

// exact checks the body byte for byte and, for each name/value pair in headers, that header's
// value ("" means the header is absent).
func exact(body string, headers ...string) func(t *testing.T, f *fixture, r reply) {
	return func(t *testing.T, f *fixture, r reply) {
		t.Helper()
		if r.body != body {
			t.Errorf("body = %s\nwant   %s", r.body, body)
		}
		for i := 0; i+1 < len(headers); i += 2 {
			if got := r.header.Get(headers[i]); got != headers[i+1] {
				t.Errorf("%s = %q, want %q", headers[i], got, headers[i+1])
			}
		}
	}
}

const ctypeJSON = "application/json; charset=utf-8"

// rpcFixtureSQL adds test-only functions of every return shape PostgREST distinguishes. They
// run as the caller (SECURITY INVOKER), so row-level security still decides what they read.
const rpcFixtureSQL = `
create type public.title_words as (title text, words integer);
create function public.pub_words(publication_id uuid) returns public.title_words language sql stable
  as $$ select p.title, array_length(regexp_split_to_array(p.title, ' '), 1) from publications p where p.id = pub_words.publication_id $$;
create function public.all_words() returns setof public.title_words language sql stable
  as $$ select p.title, array_length(regexp_split_to_array(p.title, ' '), 1) from publications p $$;
create function public.pub_record(publication_id uuid) returns record language sql stable
  as $$ select p.title, p.version from publications p where p.id = pub_record.publication_id $$;
create function public.draft_records() returns setof record language sql stable
  as $$ select p.title, p.version from publications p where p.status = 'draft' order by p.title $$;
create function public.plus_one(n integer, out n_plus_one integer) language sql immutable
  as $$ select n + 1 $$;
create function public.split_title(publication_id uuid, out first_word text, out word_count integer) language sql stable
  as $$ select split_part(p.title, ' ', 1), array_length(regexp_split_to_array(p.title, ' '), 1) from publications p where p.id = split_title.publication_id $$;
create function public.channel_slugs() returns table (slug text) language sql stable
  as $$ select c.slug from channels c order by c.slug $$;
create function public.nothing() returns integer language sql immutable as $$ select null::integer $$;
create function public.collect(variadic words text[] default '{}') returns text[] language sql immutable
  as $$ select words $$;
create function public.echo_args(n integer, b boolean, d date, tags text[]) returns jsonb language sql immutable
  as $$ select jsonb_build_object('n', n, 'b', b, 'd', d, 'tags', tags) $$;
create function public.prefix_count(prefix text) returns bigint language sql stable
  as $$ select count(*) from publications where title like prefix || '%' $$;
create function public.pubs_with(s text) returns setof public.publications language sql stable
  as $$ select * from publications where status = s order by title $$;
create function public.pub_by_slug(slug text) returns public.publications language sql stable
  as $$ select * from publications p where p.slug = pub_by_slug.slug $$;
grant execute on all functions in schema public to authenticated;
`

// TestRPCShapes: what each kind of function answers, as PostgREST's RpcSpec describes it on its
// own fixtures: a composite result is one object (it used to crash), a record too, a single OUT
// parameter is an object keyed by its name, TABLE results are arrays of objects, NULL is null,
// variadic arguments come from arrays or repeated parameters, forms are arguments, the Range
// header counts only on GET, and methods other than GET, HEAD and POST are 405 PGRST101.
func TestRPCShapes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	mustExec(t, own, rpcFixtureSQL)
	if err := f.h.schema.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	alpha := f.pubs["Alpha launch"]
	form := func(p string) map[string]string {
		return map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Prefer": p}
	}
	formHdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	tests := []scenario{
		// Composite types: one object, with select and count like a one-row table.
		{"composite over POST", call{method: "POST", user: "editorA", path: "/rpc/pub_words", body: `{"publication_id":"` + alpha + `"}`}, 200,
			exact(`{"title":"Alpha launch","words":2}`, "Content-Type", ctypeJSON, "Content-Range", "0-0/*")},
		{"composite over GET", call{user: "editorA", path: "/rpc/pub_words?publication_id=" + alpha}, 200,
			exact(`{"title":"Alpha launch","words":2}`)},
		{"composite with select", call{user: "editorA", path: "/rpc/pub_words?publication_id=" + alpha + "&select=words"}, 200, exact(`{"words":2}`)},
		{"composite with exact count", call{user: "editorA", path: "/rpc/pub_words?publication_id=" + alpha, header: prefer("count=exact")}, 200,
			exact(`{"title":"Alpha launch","words":2}`, "Content-Range", "0-0/1")},
		{"composite with an unknown column", call{user: "editorA", path: "/rpc/pub_words?publication_id=" + alpha + "&select=nope"}, 400,
			exact(`{"code":"42703","details":null,"hint":null,"message":"column title_words.nope does not exist"}`)},
		{"set of composites filtered and ordered", call{user: "editorA", path: "/rpc/all_words?words=gt.2&order=title.desc"}, 200,
			exact(`[{"title":"Gamma, with comma","words":3}]`, "Content-Range", "0-0/*")},
		{"a table row with an embed", call{user: "editorA", path: "/rpc/pub_by_slug?slug=pub-a&select=title,promos(channel)&promos.order=channel"}, 200,
			exact(`{"title":"Alpha launch","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}`)},

		// record and setof record: objects with the columns the function's query names.
		{"record", call{method: "POST", user: "editorA", path: "/rpc/pub_record", body: `{"publication_id":"` + alpha + `"}`}, 200,
			exact(`{"title":"Alpha launch","version":2}`, "Content-Type", ctypeJSON)},
		{"setof record", call{user: "editorA", path: "/rpc/draft_records"}, 200,
			exact(`[{"title":"Delta (draft)","version":1}]`)},

		// OUT and TABLE parameters.
		{"single OUT parameter is an object", call{user: "editorA", path: "/rpc/plus_one?n=5"}, 200, exact(`{"n_plus_one":6}`)},
		{"many OUT parameters", call{method: "POST", user: "editorA", path: "/rpc/split_title", body: `{"publication_id":"` + alpha + `"}`}, 200,
			exact(`{"first_word":"Alpha","word_count":2}`)},
		{"TABLE with one column is an array of objects, filterable", call{user: "editorA", path: "/rpc/channel_slugs?slug=in.(x,bluesky)"}, 200,
			exact(`[{"slug":"bluesky"}, 
 {"slug":"x"}]`, "Content-Range", "0-1/*")},

		// Values.
		{"null", call{method: "POST", user: "editorA", path: "/rpc/nothing", body: `{}`}, 200, exact(`null`, "Content-Type", ctypeJSON)},
		{"scalar with exact count", call{user: "editorA", path: "/rpc/prefix_count?prefix=A", header: prefer("count=exact")}, 200,
			exact(`1`, "Content-Range", "0-0/1", "Preference-Applied", "count=exact")},
		{"a filter on a scalar", call{user: "editorA", path: "/rpc/prefix_count?prefix=A&n=eq.1"}, 400,
			exact(`{"code":"42703","details":null,"hint":null,"message":"column prefix_count.n does not exist"}`)},
		{"repeated non-variadic parameter: the last wins", call{user: "editorA", path: "/rpc/prefix_count?prefix=Z&prefix=G"}, 200, exact(`1`)},
		{"an array body gives its first object", call{method: "POST", user: "editorA", path: "/rpc/prefix_count", body: `[{"prefix":"A"},{"prefix":"Nothing"}]`}, 200, exact(`1`)},
		{"columns= keeps only those keys", call{method: "POST", user: "editorA", path: "/rpc/prefix_count?columns=prefix", body: `{"prefix":"B","other":1}`}, 200, exact(`1`)},
		{"an empty body is no arguments", call{method: "POST", user: "editorA", path: "/rpc/channel_slugs?slug=eq.x"}, 200, exact(`[{"slug":"x"}]`)},

		// Variadic arguments.
		{"variadic from a JSON array", call{method: "POST", user: "editorA", path: "/rpc/collect", body: `{"words":["hi","hello","there"]}`}, 200,
			exact(`["hi","hello","there"]`)},
		{"variadic from repeated parameters", call{user: "editorA", path: "/rpc/collect?words=hi&words=there"}, 200, exact(`["hi","there"]`)},
		{"variadic from one parameter", call{user: "editorA", path: "/rpc/collect?words=hi"}, 200, exact(`["hi"]`)},
		{"variadic through its default", call{user: "editorA", path: "/rpc/collect"}, 200, exact(`[]`)},
		{"variadic from a repeated form field", call{method: "POST", user: "editorA", path: "/rpc/collect", body: "words=hi&words=there", header: formHdr}, 200,
			exact(`["hi","there"]`)},

		// Form bodies: each field is an argument, read as its parameter's type.
		{"form arguments of several types", call{method: "POST", user: "editorA", path: "/rpc/echo_args", body: "n=43&b=true&d=20240102&tags=%7Ba,b%7D", header: formHdr}, 200,
			exact(`{"b": true, "d": "2024-01-02", "n": 43, "tags": ["a", "b"]}`)},
		{"form with spaces and a Prefer", call{method: "POST", user: "editorA", path: "/rpc/prefix_count", body: "prefix=Beta+n", header: form("count=exact")}, 200,
			exact(`1`, "Content-Range", "0-0/1")},
		{"an empty form is no arguments", call{method: "POST", user: "editorA", path: "/rpc/collect", body: " ", header: formHdr}, 200, exact(`[]`)},
		{"other body types are 415", call{method: "POST", user: "editorA", path: "/rpc/collect", body: "a,b", header: map[string]string{"Content-Type": "text/csv"}}, 415,
			exact(`{"code":"PGRST107","details":null,"hint":null,"message":"The request's Content-Type is not acceptable: text/csv"}`)},

		// Range counts only on GET; limit and offset always.
		{"Range on GET", call{user: "editorA", path: "/rpc/pubs_with?s=reviewing&select=title", header: map[string]string{"Range": "1-1"}}, 200,
			exact(`[{"title":"Gamma, with comma"}]`, "Content-Range", "1-1/*")},
		{"Range on GET with a count", call{user: "editorA", path: "/rpc/pubs_with?s=reviewing&select=title", header: map[string]string{"Range": "1-1", "Prefer": "count=exact"}}, 206,
			exact(`[{"title":"Gamma, with comma"}]`, "Content-Range", "1-1/2")},
		{"Range ignored on POST", call{method: "POST", user: "editorA", path: "/rpc/pubs_with?select=title", body: `{"s":"reviewing"}`,
			header: map[string]string{"Range": "1-1", "Prefer": "count=exact"}}, 200,
			exact(`[{"title":"Alpha launch"}, 
 {"title":"Gamma, with comma"}]`, "Content-Range", "0-1/2")},
		{"Range ignored on HEAD", call{method: "HEAD", user: "editorA", path: "/rpc/pubs_with?s=reviewing", header: map[string]string{"Range": "1-1", "Prefer": "count=exact"}}, 200,
			exact(``, "Content-Range", "0-1/2", "Content-Type", ctypeJSON)},
		{"an inverted Range is no error on POST", call{method: "POST", user: "editorA", path: "/rpc/pubs_with?select=title&limit=1&offset=1", body: `{"s":"reviewing"}`,
			header: map[string]string{"Range": "1-0", "Prefer": "count=exact"}}, 206,
			exact(`[{"title":"Gamma, with comma"}]`, "Content-Range", "1-1/2")},
		{"limit and offset on a set of values", call{user: "editorA", path: "/rpc/channel_slugs?order=slug&limit=2&offset=1", header: prefer("count=exact")}, 206,
			func(t *testing.T, f *fixture, r reply) {
				if r.header.Get("Content-Range") != "1-2/7" || len(r.rows(t)) != 2 {
					t.Errorf("%q %s", r.header.Get("Content-Range"), r.body)
				}
			}},

		// Methods.
		{"DELETE is 405 PGRST101", call{method: "DELETE", user: "editorA", path: "/rpc/prefix_count"}, 405,
			exact(`{"code":"PGRST101","details":null,"hint":null,"message":"Cannot use the DELETE method on RPC"}`, "Content-Type", ctypeJSON)},
		{"PATCH is 405 PGRST101", call{method: "PATCH", user: "editorA", path: "/rpc/prefix_count", body: `{}`}, 405,
			exact(`{"code":"PGRST101","details":null,"hint":null,"message":"Cannot use the PATCH method on RPC"}`)},
		{"PUT is 405 PGRST101", call{method: "PUT", user: "editorA", path: "/rpc/prefix_count", body: `{}`}, 405,
			exact(`{"code":"PGRST101","details":null,"hint":null,"message":"Cannot use the PUT method on RPC"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.do(t, tt.call)
			if r.status != tt.status {
				t.Fatalf("status = %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.check != nil {
				tt.check(t, f, r)
			}
		})
	}
	if r := f.do(t, call{method: http.MethodGet, user: "editorA", path: "/rpc/pub_words?publication_id=not-a-uuid"}); r.status != http.StatusBadRequest {
		t.Errorf("a bad argument: %d %s", r.status, r.body)
	}
}
