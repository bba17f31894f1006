package rest

import (
	"context"
	"strings"
	"testing"
)

// TestComputedJSONAndFTS: computed columns and relationships (functions of a table's row), in
// select, filters, order, embeds, writes and function results; JSON paths into arrays and
// composites (through to_jsonb) and how PostgREST names a path ending in an index; and
// full-text search with a configuration on a text column, as PostgREST's specs describe them.
func TestComputedJSONAndFTS(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	mustExec(t, f.db.Owner(t), `
		create function public.title_words(public.publications) returns integer language sql stable
		  as $$ select array_length(regexp_split_to_array($1.title, ' '), 1) $$;
		create function public.own_promos(public.publications) returns setof public.promos language sql stable
		  as $$ select * from promos where publication_id = $1.id $$;
		create function public.first_promo(public.publications) returns setof public.promos rows 1 language sql stable
		  as $$ select * from promos where publication_id = $1.id order by channel limit 1 $$;
		create function public.every_pub() returns setof public.publications language sql stable as $$ select * from publications $$;
		create type public.point2 as (x integer, y integer);
		create table public.shapes (id integer primary key, at public.point2, tags jsonb);
		insert into public.shapes values (1, '(1,2)', '["a", ["b", "c"]]'), (2, '(3,4)', '["d"]');
		grant select on public.shapes to authenticated;
		grant execute on all functions in schema public to authenticated`)
	if err := f.h.schema.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	alpha, delta := f.pubs["Alpha launch"], f.pubs["Delta (draft)"]
	runSequential(t, f, []scenario{
		// Computed columns.
		{"a computed column", call{user: "editorA", path: "/publications?select=title,title_words&order=title"}, 200,
			exact(`[{"title":"Alpha launch","title_words":2}, 
 {"title":"Beta notes","title_words":2}, 
 {"title":"Delta (draft)","title_words":2}, 
 {"title":"Gamma, with comma","title_words":3}]`)},
		{"filtered and ordered by a computed column", call{user: "editorA", path: "/publications?select=title,n:title_words&title_words=gt.1&order=title_words.desc,title&limit=2"}, 200,
			exact(`[{"title":"Gamma, with comma","n":3}, 
 {"title":"Alpha launch","n":2}]`)},
		{"not part of *", call{user: "editorA", path: "/publications?select=*&id=eq." + alpha}, 200,
			func(t *testing.T, f *fixture, r reply) {
				if strings.Contains(r.body, "title_words") || !strings.Contains(r.body, `"title":"Alpha launch"`) {
					t.Errorf("body = %s", r.body)
				}
			}},
		{"a computed column in an embed", call{user: "editorA", path: "/projects?select=slug,publications(title_words)&publications.id=eq." + alpha}, 200,
			exact(`[{"slug":"proj-a","publications":[{"title_words":2}]}]`)},
		{"a computed column of written rows", call{method: "PATCH", user: "editorA", path: "/publications?id=eq." + delta + "&select=title,title_words",
			body: `{"title":"Delta has four words"}`, header: prefer("return=representation")}, 200,
			exact(`[{"title":"Delta has four words","title_words":4}]`)},
		{"a computed column of a function's rows", call{user: "editorA", path: "/rpc/every_pub?select=title_words&id=eq." + alpha}, 200,
			exact(`[{"title_words":2}]`)},

		// Computed relationships.
		{"a to-many computed relationship", call{user: "editorA", path: "/publications?select=title,own_promos(channel)&own_promos.order=channel&id=eq." + alpha}, 200,
			exact(`[{"title":"Alpha launch","own_promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`)},
		{"a to-one computed relationship (rows 1)", call{user: "editorA", path: "/publications?select=title,first:first_promo(channel)&order=title&limit=2"}, 200,
			exact(`[{"title":"Alpha launch","first":{"channel":"bluesky"}}, 
 {"title":"Beta notes","first":{"channel":"x"}}]`)},
		{"a computed relationship filtering with !inner", call{user: "editorA", path: "/publications?select=title,own_promos!inner()&own_promos.channel=eq.bluesky"}, 200,
			exact(`[{"title":"Alpha launch"}]`)},
		{"ordered by a to-one computed relationship", call{user: "editorA", path: "/publications?select=title,first_promo(channel)&first_promo=not.is.null&order=first_promo(channel).desc"}, 200,
			exact(`[{"title":"Beta notes","first_promo":{"channel":"x"}}, 
 {"title":"Alpha launch","first_promo":{"channel":"bluesky"}}]`)},
		{"spread of a to-one computed relationship", call{user: "editorA", path: "/publications?select=title,...first_promo(first_channel:channel)&id=eq." + alpha}, 200,
			exact(`[{"title":"Alpha launch","first_channel":"bluesky"}]`)},

		// JSON paths into arrays and composites, and their names.
		{"array items", call{user: "editorA", path: "/projects?select=slug,first:default_channels->0,second:default_channels->>1"}, 200,
			exact(`[{"slug":"proj-a","first":"x","second":"bluesky"}]`)},
		{"an array item is named by its column", call{user: "editorA", path: "/projects?select=default_channels->>0"}, 200,
			exact(`[{"default_channels":"x"}]`)},
		{"filtered and ordered by an array item", call{user: "editorA", path: "/projects?select=slug&default_channels->>1=eq.bluesky&order=default_channels->0"}, 200,
			exact(`[{"slug":"proj-a"}]`)},
		{"composite fields", call{user: "editorA", path: "/shapes?select=at->x,y:at->>y&order=id"}, 200,
			exact(`[{"x":1,"y":"2"}, 
 {"x":3,"y":"4"}]`)},
		{"filtered and ordered by a composite field", call{user: "editorA", path: "/shapes?select=id&at->>x=gt.1&order=at->y.desc"}, 200, exact(`[{"id":2}]`)},
		{"a JSON path ending in indexes is named by its last key", call{user: "editorA", path: "/shapes?select=tags->>0,inner:tags->1->>0,n:tags->-1&order=id"}, 200,
			exact(`[{"tags":"a","inner":"b","n":["b", "c"]}, 
 {"tags":"d","inner":null,"n":"d"}]`)},

		// Full-text search on a text column, with a configuration.
		{"fts with english stems both sides", call{user: "editorA", path: "/publications?select=title&title=fts(english).note"}, 200, exact(`[{"title":"Beta notes"}]`)},
		{"fts with simple does not", call{user: "editorA", path: "/publications?select=title&title=fts(simple).note"}, 200, exact(`[]`)},
		{"plfts with simple matches the word", call{user: "editorA", path: "/publications?select=title&title=plfts(simple).notes"}, 200, exact(`[{"title":"Beta notes"}]`)},
		{"an unknown configuration", call{user: "editorA", path: "/publications?select=title&title=fts(klingon).note"}, 400,
			exact(`{"code":"42704","details":null,"hint":null,"message":"text search configuration \"klingon\" does not exist"}`)},
	})
}
