package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"masthead/internal/nodetest"
)

// openapiFixture is the fixture (whose database has migration 015's API comments) with a test-only table, view and function whose grants differ between anon and
// authenticated: notebook is the authenticated role's only, column by column; notebook_bodies
// (a view) is readable by both; tally is executable by authenticated only.
func openapiFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	own := f.db.Owner(t)
	mustExec(t, own, `create table public.notebook (id integer generated always as identity primary key,
		body varchar(200) not null default 'blank', secret text, tags text[], pages integer default 0)`)
	mustExec(t, own, `comment on table public.notebook is e'Notes of the day\n\nKept per person.'`)
	mustExec(t, own, `comment on column public.notebook.body is 'What was noted'`)
	mustExec(t, own, `grant select (id, body, tags, pages), insert (body) on public.notebook to authenticated`)
	mustExec(t, own, `create view public.notebook_bodies as select id, body from public.notebook`)
	mustExec(t, own, `grant select on public.notebook_bodies to anon, authenticated`)
	mustExec(t, own, `create function public.tally(variadic n integer[]) returns integer language sql stable
		as $$ select sum(x)::integer from unnest(n) x $$`)
	mustExec(t, own, `comment on function public.tally(integer[]) is 'Adds numbers'`)
	mustExec(t, own, `revoke execute on function public.tally(integer[]) from public`)
	mustExec(t, own, `grant execute on function public.tally(integer[]) to authenticated`)
	if err := f.h.schema.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f
}

// part checks the JSON value at path in the body (keys, object by object) against want,
// both compacted with sorted keys; want "" means the path must be absent.
func part(want string, path ...string) func(t *testing.T, f *fixture, r reply) {
	return func(t *testing.T, f *fixture, r reply) {
		t.Helper()
		var v any
		if err := json.Unmarshal([]byte(r.body), &v); err != nil {
			t.Fatalf("body is not JSON: %v", err)
		}
		for _, k := range path {
			var ok bool
			switch c := v.(type) {
			case []any: // a numeric key indexes an array
				i, err := strconv.Atoi(k)
				if ok = err == nil && i >= 0 && i < len(c); ok {
					v = c[i]
				}
			case map[string]any:
				v, ok = c[k]
			}
			if !ok {
				if want != "" {
					t.Fatalf("%s: no %q", strings.Join(path, " › "), k)
				}
				return
			}
		}
		if want == "" {
			t.Fatalf("%s is there, want it absent", strings.Join(path, " › "))
		}
		got, _ := json.Marshal(v)
		var w any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatalf("want is not JSON: %v", err)
		}
		exp, _ := json.Marshal(w)
		if !bytes.Equal(got, exp) {
			t.Errorf("%s =\n%s\nwant\n%s", strings.Join(path, " › "), got, exp)
		}
	}
}

// headers checks response headers, name then value.
func headers(kv ...string) func(t *testing.T, f *fixture, r reply) {
	return func(t *testing.T, f *fixture, r reply) {
		t.Helper()
		for i := 0; i+1 < len(kv); i += 2 {
			if got := r.header.Get(kv[i]); got != kv[i+1] {
				t.Errorf("%s = %q, want %q", kv[i], got, kv[i+1])
			}
		}
	}
}

func all(checks ...func(t *testing.T, f *fixture, r reply)) func(t *testing.T, f *fixture, r reply) {
	return func(t *testing.T, f *fixture, r reply) {
		t.Helper()
		for _, c := range checks {
			c(t, f, r)
		}
	}
}

// TestOpenAPI: GET /rest/v1/ is PostgREST's Swagger 2.0 document of what the caller's role may
// use, in PostgREST's shapes: tables and views with their columns' types, formats, defaults,
// length bounds and comments (key notes included), row filters and operations (writes only
// where a grant allows them), functions the role may execute with their arguments (GET too
// unless volatile, a variadic one repeated). anon and a signed-in editor see different things.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	f := openapiFixture(t)
	const ctype = "application/openapi+json; charset=utf-8"
	notebook := `{"type":"object","description":"Notes of the day\n\nKept per person.","properties":{
		"id":{"description":"Note:\nThis is a Primary Key.<pk/>","format":"integer","type":"integer"},
		"body":{"description":"What was noted","default":"blank","format":"character varying","maxLength":200,"type":"string"},
		"tags":{"format":"text[]","type":"array","items":{"type":"string"}},
		"pages":{"default":0,"format":"integer","type":"integer"}},
		"required":["id","body"]}`
	tallyGet := `{"tags":["(rpc) tally"],"summary":"Adds numbers",
		"produces":["application/json","application/vnd.pgrst.object+json;nulls=stripped","application/vnd.pgrst.object+json"],
		"parameters":[{"name":"n","required":true,"in":"query","type":"array","collectionFormat":"multi","items":{"type":"integer","format":"integer"}}],
		"responses":{"200":{"description":"OK"}}}`
	tallyPost := `{"tags":["(rpc) tally"],"summary":"Adds numbers",
		"produces":["application/json","application/vnd.pgrst.object+json;nulls=stripped","application/vnd.pgrst.object+json"],
		"parameters":[{"name":"args","required":true,"in":"body","schema":{"type":"object","description":"Adds numbers",
			"properties":{"n":{"format":"integer[]","type":"array","items":{"type":"integer"}}},"required":["n"]}},
			{"$ref":"#/parameters/preferParams"}],
		"responses":{"200":{"description":"OK"}}}`
	status := `{"description":"Workflow state: draft, reviewing, changes_requested, approved, scheduled, published or archived.",
		"default":"draft","format":"text","type":"string"}`
	runSequential(t, f, []scenario{
		{"anon: the frame", call{user: "anon", path: "/"}, 200, all(
			headers("Content-Type", ctype),
			part(`"2.0"`, "swagger"), part(`"/rest/v1"`, "basePath"), part(`["http"]`, "schemes"),
			part(`["application/json","application/vnd.pgrst.object+json;nulls=stripped","application/vnd.pgrst.object+json","text/csv"]`, "produces"),
			part(`{"get":{"tags":["Introspection"],"summary":"OpenAPI description (this document)",
				"produces":["application/openapi+json","application/json"],"responses":{"200":{"description":"OK"}}}}`, "paths", "/"),
			part(`{"name":"select","description":"Filtering Columns","required":false,"in":"query","type":"string"}`, "parameters", "select"),
			part(`{"name":"Prefer","description":"Preference","required":false,"in":"header","type":"string"}`, "parameters", "preferParams"),
			part(`{"name":"Range-Unit","description":"Limiting and Pagination","required":false,"in":"header","type":"string","default":"items"}`, "parameters", "rangeUnit"),
		)},
		{"anon: tables it may read, GET only", call{user: "anon", path: "/"}, 200, all(
			part(`["publications"]`, "paths", "/publications", "get", "tags"),
			part("", "paths", "/publications", "post"),
			part("", "paths", "/publications", "patch"),
			part("", "paths", "/publications", "delete"),
			part(status, "definitions", "publications", "properties", "status"),
		)},
		{"anon: no notebook, no functions", call{user: "anon", path: "/"}, 200, all(
			part("", "definitions", "notebook"), part("", "paths", "/notebook"),
			part("", "parameters", "rowFilter.notebook.body"),
			part("", "paths", "/rpc/tally"), part("", "paths", "/rpc/submit_for_review"), part("", "paths", "/rpc/my_inbox"),
			part(`{"type":"object","properties":{"body":{"format":"character varying","maxLength":200,"type":"string"},
				"id":{"description":"Note:\nThis is a Primary Key.<pk/>","format":"integer","type":"integer"}}}`, "definitions", "notebook_bodies"),
			part("", "paths", "/notebook_bodies", "post"),
		)},
		{"editor: the notebook's granted columns only", call{user: "editorA", path: "/"}, 200, all(
			part(notebook, "definitions", "notebook"),
			part(`{"name":"body","description":"What was noted","required":false,"in":"query","type":"string","format":"character varying"}`,
				"parameters", "rowFilter.notebook.body"),
			part("", "parameters", "rowFilter.notebook.secret"),
			part(`{"name":"notebook","description":"notebook","required":false,"in":"body","schema":{"$ref":"#/definitions/notebook"}}`,
				"parameters", "body.notebook"),
		)},
		{"editor: the notebook's operations", call{user: "editorA", path: "/"}, 200, all(
			part(`{"tags":["notebook"],"summary":"Notes of the day","description":"Kept per person.",
				"parameters":[{"$ref":"#/parameters/rowFilter.notebook.id"},{"$ref":"#/parameters/rowFilter.notebook.body"},
					{"$ref":"#/parameters/rowFilter.notebook.tags"},{"$ref":"#/parameters/rowFilter.notebook.pages"},
					{"$ref":"#/parameters/select"},{"$ref":"#/parameters/order"},{"$ref":"#/parameters/range"},{"$ref":"#/parameters/rangeUnit"},
					{"$ref":"#/parameters/offset"},{"$ref":"#/parameters/limit"},{"$ref":"#/parameters/preferCount"}],
				"responses":{"200":{"description":"OK","schema":{"type":"array","items":{"$ref":"#/definitions/notebook"}}},"206":{"description":"Partial Content"}}}`,
				"paths", "/notebook", "get"),
			part(`{"tags":["notebook"],"summary":"Notes of the day","description":"Kept per person.",
				"parameters":[{"$ref":"#/parameters/body.notebook"},{"$ref":"#/parameters/select"},{"$ref":"#/parameters/preferPost"}],
				"responses":{"201":{"description":"Created"}}}`, "paths", "/notebook", "post"),
			part(`{"name":"Prefer","description":"Preference","required":false,"in":"header","type":"string",
				"enum":["return=representation","return=minimal","return=none","resolution=ignore-duplicates","resolution=merge-duplicates"]}`,
				"parameters", "preferPost"),
		)},
		{"editor: tables they may write", call{user: "editorA", path: "/"}, 200, all(
			part(`["publications"]`, "paths", "/publications", "patch", "tags"),
			part(`["promos"]`, "paths", "/promos", "delete", "tags"),
			part("", "paths", "/status_events", "post"),
			part(`{"description":"Note:\nThis is a Foreign Key to `+"`projects.id`"+`.<fk table='projects' column='id'/>","format":"uuid","type":"string"}`,
				"definitions", "publications", "properties", "project_id"),
			part(`"Publications: the pieces a project writes, reviews and publishes\nStatus changes only through the workflow (the RPCs, or a PATCH held to the same rules)."`,
				"definitions", "publications", "description"),
			part(`{"description":"How a promo is measured on this network, e.g. {\"max_chars\":280,\"count\":\"chars\",\"url_chars\":23,\"max_media\":4}.","format":"jsonb"}`,
				"definitions", "channels", "properties", "limits"),
		)},
		{"editor: functions they may execute, with their arguments", call{user: "editorA", path: "/"}, 200, all(
			part(tallyGet, "paths", "/rpc/tally", "get"),
			part(tallyPost, "paths", "/rpc/tally", "post"),
			part(`{"type":"object","description":"Send a draft (or a publication with changes requested) for review\nStarts a review round and records what was submitted. Editors, leads and owners.",
				"properties":{"expected_version":{"format":"integer","type":"integer"},"note":{"format":"text","type":"string"},"publication_id":{"format":"uuid","type":"string"}},
				"required":["publication_id"]}`, "paths", "/rpc/submit_for_review", "post", "parameters", "0", "schema"),
			part("", "paths", "/rpc/submit_for_review", "get"),
			part(`"What waits on the caller, by reason"`, "paths", "/rpc/my_inbox", "get", "summary"),
		)},
		{"/rest/v1 without the slash too", call{user: "anon", path: ""}, 200, part(`"2.0"`, "swagger")},
		{"application/openapi+json is accepted", call{user: "anon", path: "/", header: map[string]string{"Accept": "application/openapi+json"}}, 200,
			part(`"2.0"`, "swagger")},
		{"other media types are not", call{user: "anon", path: "/", header: map[string]string{"Accept": "text/csv"}}, 406,
			exact(`{"code":"PGRST107","details":null,"hint":null,"message":"None of these media types are available: text/csv"}`, "Content-Type", ctypeJSON)},
		{"key notes as PostgREST writes them, unescaped", call{user: "anon", path: "/"}, 200, func(t *testing.T, f *fixture, r reply) {
			if !strings.Contains(r.body, `"Note:\nThis is a Primary Key.<pk/>"`) {
				t.Errorf("no literal <pk/> note in %.300s…", r.body)
			}
		}},
		{"HEAD answers the headers", call{method: "HEAD", user: "editorA", path: "/"}, 200, exact("", "Content-Type", ctype)},
	})
}

// TestOpenAPITypeScript: openapi-typescript (the npm package people generate client types with)
// reads the running instance's document as a signed-in editor, and the types it writes compile
// with TypeScript's own compiler and name publications.status as a string, and the notebook's
// columns the editor may use but not the one it may not (an expected error that did not occur
// would fail the compile as well).
func TestOpenAPITypeScript(t *testing.T) {
	t.Parallel()
	f := openapiFixture(t)
	node := nodetest.Install(t, "jstest", "openapi-typescript")
	dir := t.TempDir()
	gen := exec.Command(node, filepath.Join("jstest", "node_modules", "openapi-typescript", "bin", "cli.js"),
		f.srv.URL+"/rest/v1/", "--output", filepath.Join(dir, "schema.ts"),
		"--header", "apikey: "+testKey, "--header", "Authorization: Bearer user:"+f.users["editorA"])
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("openapi-typescript: %v\n%s", err, out)
	}
	check := `import type { definitions, paths } from "./schema";

const status: definitions["publications"]["status"] = "draft";
const body: definitions["notebook"]["body"] = "noted";
const tags: definitions["notebook"]["tags"] = ["a", "b"];
// @ts-expect-error: the editor has no grant on the secret column, so it is not in the type
type Secret = definitions["notebook"]["secret"];
// @ts-expect-error: a status is a string, not a number
const wrong: definitions["publications"]["status"] = 1;
type Submit = paths["/rpc/submit_for_review"]["post"]["parameters"]["body"]["args"];
const submit: Submit = { publication_id: "00000000-0000-0000-0000-000000000000", note: "ready" };
type Rows = paths["/publications"]["get"]["responses"]["200"]["schema"];
const rows: Rows = [];
export { status, body, tags, wrong, submit, rows };
export type { Secret };
`
	if err := os.WriteFile(filepath.Join(dir, "check.ts"), []byte(check), 0o644); err != nil {
		t.Fatal(err)
	}
	tsc := exec.Command(node, filepath.Join("jstest", "node_modules", "typescript", "bin", "tsc"),
		"--noEmit", "--strict", "--target", "es2022", "--module", "esnext", "--moduleResolution", "bundler",
		filepath.Join(dir, "check.ts"))
	if out, err := tsc.CombinedOutput(); err != nil {
		schema, _ := os.ReadFile(filepath.Join(dir, "schema.ts"))
		t.Fatalf("tsc: %v\n%s\ngenerated types:\n%s", err, out, schema)
	}
	schema, err := os.ReadFile(filepath.Join(dir, "schema.ts"))
	if err != nil {
		t.Fatal(err)
	}
	// The column's comment travels into the types as its doc comment.
	if !strings.Contains(string(schema), "Workflow state: draft, reviewing") {
		t.Errorf("generated types lack the status column's description:\n%s", schema)
	}
}
