package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"masthead/internal/pg"
)

// TestErrorWording: refusals worded as PostgREST v13 words them, byte for byte, on our fixture:
// PGRST125 for a path that names nothing, "Perhaps you meant …" hints on PGRST200, PGRST202
// and PGRST205, the candidates of PGRST203, PGRST106 and PGRST103's texts, PostgreSQL's own
// codes for a negative limit or offset, and pg-safeupdate's refusal of PATCH and DELETE
// without a filter, which we keep on purpose.
func TestErrorWording(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	mustExec(t, own, `create function public.pick(a integer) returns integer language sql immutable as $$ select a $$;
		create function public.pick(a text) returns integer language sql immutable as $$ select 2 $$;
		create function public.too_many() returns integer language sql stable as $$ select (select 1 from generate_series(1, 2)) $$;
		create function public.odd_code() returns integer language plpgsql as $$ begin raise sqlstate 'PT40A' using message = 'Wrong'; end $$;
		grant execute on all functions in schema public to authenticated`)
	if err := f.h.schema.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	alpha := f.pubs["Alpha launch"]
	invalidPath := `{"code":"PGRST125","details":null,"hint":null,"message":"Invalid path specified in request URL"}`
	tests := []scenario{
		{"a path below a table", call{user: "editorA", path: "/publications/" + alpha}, 404, exact(invalidPath, "Content-Type", ctypeJSON)},
		{"a path below a function", call{method: "POST", user: "editorA", path: "/rpc/approve/now", body: `{}`}, 404, exact(invalidPath)},
		{"any method on a deep path", call{method: "DELETE", user: "editorA", path: "/a/b/c"}, 404, exact(invalidPath)},
		{"a table that is not there, with a close one", call{user: "editorA", path: "/publication"}, 404,
			exact(`{"code":"PGRST205","details":null,"hint":"Perhaps you meant the table 'public.publications'","message":"Could not find the table 'public.publication' in the schema cache"}`)},
		{"a table that is not there, with none close", call{user: "editorA", path: "/zzz"}, 404,
			exact(`{"code":"PGRST205","details":null,"hint":null,"message":"Could not find the table 'public.zzz' in the schema cache"}`)},
		{"a relationship that is not there, with a close one", call{user: "editorA", path: "/publications?select=title,promo(*)"}, 400,
			exact(`{"code":"PGRST200","details":"Searched for a foreign key relationship between 'publications' and 'promo' in the schema 'public', but no matches were found.","hint":"Perhaps you meant 'promos' instead of 'promo'.","message":"Could not find a relationship between 'publications' and 'promo' in the schema cache"}`)},
		{"a relationship whose hint matches nothing", call{user: "editorA", path: "/publications?select=title,promos!nope(*)"}, 400,
			exact(`{"code":"PGRST200","details":"Searched for a foreign key relationship between 'publications' and 'promos' using the hint 'nope' in the schema 'public', but no matches were found.","hint":null,"message":"Could not find a relationship between 'publications' and 'promos' in the schema cache"}`)},
		{"a function that is not there, with a close one", call{method: "POST", user: "editorA", path: "/rpc/submit_for_reviw", body: `{"publication_id":"` + alpha + `"}`}, 404,
			exact(`{"code":"PGRST202","details":"Searched for the function public.submit_for_reviw with parameter publication_id or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.","hint":"Perhaps you meant to call the function public.submit_for_review","message":"Could not find the function public.submit_for_reviw(publication_id) in the schema cache"}`)},
		{"a function without parameters over GET", call{user: "editorA", path: "/rpc/zzz"}, 404,
			exact(`{"code":"PGRST202","details":"Searched for the function public.zzz without parameters, but no matches were found in the schema cache.","hint":null,"message":"Could not find the function public.zzz without parameters in the schema cache"}`)},
		{"a function's parameters mistyped", call{user: "editorA", path: "/rpc/approve?publication=x&nte=y"}, 404,
			exact(`{"code":"PGRST202","details":"Searched for the function public.approve with parameters nte, publication, but no matches were found in the schema cache.","hint":"Perhaps you meant to call the function public.approve(expected_version, note, publication_id)","message":"Could not find the function public.approve(nte, publication) in the schema cache"}`)},
		{"overloads that cannot be told apart", call{user: "editorA", path: "/rpc/pick?a=1"}, 300,
			exact(`{"code":"PGRST203","details":null,"hint":"Try renaming the parameters or the function itself in the database so function overloading can be resolved","message":"Could not choose the best candidate function between: public.pick(a => integer), public.pick(a => text)"}`)},
		{"a schema that is not exposed", call{user: "editorA", path: "/channels", header: map[string]string{"Accept-Profile": "auth"}}, 406,
			exact(`{"code":"PGRST106","details":null,"hint":"Only the following schemas are exposed: public","message":"Invalid schema: auth"}`)},
		{"an inverted Range", call{user: "editorA", path: "/channels", header: map[string]string{"Range": "5-1"}}, 416,
			exact(`{"code":"PGRST103","details":"The lower boundary must be lower than or equal to the upper boundary in the Range header.","hint":null,"message":"Requested range not satisfiable"}`)},
		{"a negative limit", call{user: "editorA", path: "/channels?limit=-1"}, 400,
			exact(`{"code":"2201W","details":null,"hint":null,"message":"LIMIT must not be negative"}`)},
		{"a negative offset", call{user: "editorA", path: "/channels?offset=-4"}, 400,
			exact(`{"code":"2201X","details":null,"hint":null,"message":"OFFSET must not be negative"}`)},
		{"PATCH without a filter (pg-safeupdate)", call{method: "PATCH", user: "editorA", path: "/promos", body: `{"body":"all"}`}, 400,
			exact(`{"code":"21000","details":null,"hint":"Add a filter (for example id=eq.<id>) or a limit to update rows on purpose.","message":"UPDATE requires a WHERE clause"}`)},
		{"DELETE without a filter (pg-safeupdate)", call{method: "DELETE", user: "editorA", path: "/promos"}, 400,
			exact(`{"code":"21000","details":null,"hint":"Add a filter (for example id=eq.<id>) or a limit to delete rows on purpose.","message":"DELETE requires a WHERE clause"}`)},
		{"a cardinality violation in a function is the server's", call{user: "editorA", path: "/rpc/too_many"}, 500,
			exact(`{"code":"21000","details":null,"hint":null,"message":"more than one row returned by a subquery used as an expression"}`)},
		{"a PT code that is no status is 500", call{method: "POST", user: "editorA", path: "/rpc/odd_code"}, 500,
			exact(`{"code":"PT40A","details":null,"hint":null,"message":"Wrong"}`)},
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
}

// TestSQLStatus: PostgREST's status table where it looks past the code, and internal/pg's
// table everywhere else.
func TestSQLStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code, message string
		anon          bool
		want          int
	}{
		{"21000", "UPDATE requires a WHERE clause", false, 400},
		{"21000", "more than one row returned by a subquery used as an expression", false, 500},
		{"22023", `role "ghost" does not exist`, false, 401},
		{"22023", "invalid parameter", false, 400},
		{"53400", "configuration limit exceeded", false, 500},
		{"53300", "too many connections", false, 503},
		{"PT40A", "Wrong", false, 500},
		{"PT402", "Payment Required", false, 402},
		{"42501", "permission denied", true, 401},
		{"42501", "permission denied", false, 403},
		{"23505", "duplicate key", false, 409},
		{"25006", "read-only transaction", false, 405},
		{"42883", "function does not exist", false, 404},
		{"P0001", "raised", false, 400},
		{"XX000", "internal", false, 500},
	}
	for _, tt := range tests {
		if got := sqlStatus(pg.Fields{Code: tt.code, Message: tt.message}, tt.anon); got != tt.want {
			t.Errorf("sqlStatus(%s %q) = %d, want %d", tt.code, tt.message, got, tt.want)
		}
	}
	if got := sqlStatus(pg.Fields{Code: "23503"}, false); got != http.StatusConflict {
		t.Errorf("23503 = %d", got)
	}
}

// TestWriteJSONStringAsEncoder: the fast path for strings with nothing to escape writes what
// encoding/json (without HTML escaping) writes, and the rest still goes through the encoder.
func TestWriteJSONStringAsEncoder(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "Bearer user:1234-abcd", "a<b>&c", `quo"te`, `back\slash`,
		"tab\there", "new\nline", "del\x7f", "ünïcödé", "\u2028", "bad\xffutf8", "x-forwarded-for"} {
		var got, want bytes.Buffer
		writeJSONString(&got, s)
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if w := strings.TrimSuffix(want.String(), "\n"); got.String() != w {
			t.Errorf("%q: got %s, want %s", s, got.String(), w)
		}
	}
	h := http.Header{"Authorization": {"Bearer x"}, "X-Odd\"Name": {"v"}, "Empty": nil}
	var m map[string]string
	if err := json.Unmarshal(headersJSON(h), &m); err != nil || len(m) != 2 || m["authorization"] != "Bearer x" || m[`x-odd"name`] != "v" {
		t.Errorf("headersJSON = %s (%v)", headersJSON(h), err)
	}
}
