package rest

import (
	"context"
	"testing"
)

// TestEmbedsByKeyAndSpread: embedding as PostgREST's EmbedDisambiguationSpec and
// SpreadQueriesSpec describe it, on our fixture: by a foreign key's column or constraint name
// (to-one, as client:client_id(*)), a table referencing itself both ways without a false
// ambiguity, and spread embeds, to-one always and to-many only with aggregates enabled.
func TestEmbedsByKeyAndSpread(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	// topics is test-only: a tree through a foreign key to itself.
	mustExec(t, own, `create table public.topics (id integer primary key, parent_id integer references public.topics (id), name text not null)`)
	mustExec(t, own, `insert into public.topics values (1, null, 'news'), (2, 1, 'world'), (3, 1, 'local'), (4, 2, 'europe')`)
	mustExec(t, own, `grant select on public.topics to authenticated`)
	if err := f.h.schema.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	alpha := f.pubs["Alpha launch"]
	aggregatesOff := `{"code":"PGRST123","details":null,"hint":null,"message":"Use of aggregate functions is not allowed"}`
	run := func(t *testing.T, tests []scenario) {
		t.Helper()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := f.do(t, tt.call)
				if r.status != tt.status {
					t.Fatalf("status = %d, want %d: %s", r.status, tt.status, r.body)
				}
				tt.check(t, f, r)
			})
		}
	}
	run(t, []scenario{
		// By the foreign key's column or constraint.
		{"by column", call{user: "editorA", path: "/publications?select=title,author:author_id(email)&id=eq." + alpha}, 200,
			exact(`[{"title":"Alpha launch","author":{"email":"editorA@example.test"}}]`)},
		{"by column, keyed by it", call{user: "editorA", path: "/publications?select=title,author_id(email)&id=eq." + alpha}, 200,
			exact(`[{"title":"Alpha launch","author_id":{"email":"editorA@example.test"}}]`)},
		{"by column next to the column itself", call{user: "editorA", path: "/promos?select=channel,channel_row:channel(name)&channel=eq.bluesky"}, 200,
			exact(`[{"channel":"bluesky","channel_row":{"name":"Bluesky"}}]`)},
		{"by constraint", call{user: "editorA", path: "/publications?select=title,publications_author_id_fkey(email)&id=eq." + alpha}, 200,
			exact(`[{"title":"Alpha launch","publications_author_id_fkey":{"email":"editorA@example.test"}}]`)},
		{"by a composite constraint", call{user: "editorA", path: "/promos?select=channel,pub:promos_project_id_publication_id_fkey(title)&channel=eq.bluesky"}, 200,
			exact(`[{"channel":"bluesky","pub":{"title":"Alpha launch"}}]`)},
		{"a constraint names only the to-one side", call{user: "editorA", path: "/profiles?select=email,publications_author_id_fkey(title)"}, 400,
			exact(`{"code":"PGRST200","details":"Searched for a foreign key relationship between 'profiles' and 'publications_author_id_fkey' in the schema 'public', but no matches were found.","hint":"Perhaps you meant 'publication_revisions' instead of 'publications_author_id_fkey'.","message":"Could not find a relationship between 'profiles' and 'publications_author_id_fkey' in the schema cache"}`)},

		// A table referencing itself.
		{"the plain self-embed is ambiguous, with hints that work", call{user: "editorA", path: "/topics?select=name,topics(name)"}, 300,
			exact(`{"code":"PGRST201","details":[{"cardinality":"many-to-one","embedding":"topics with topics","relationship":"topics_parent_id_fkey using topics(parent_id) and topics(id)"},{"cardinality":"one-to-many","embedding":"topics with topics","relationship":"topics_parent_id_fkey using topics(id) and topics(parent_id)"}],"hint":"Try changing 'topics' to one of the following: 'parent_id', 'topics!topics_parent_id_fkey'. Find the desired relationship in the 'details' key.","message":"Could not embed because more than one relationship was found for 'topics' and 'topics'"}`)},
		{"the parent by column", call{user: "editorA", path: "/topics?select=name,parent:parent_id(name)&order=id"}, 200,
			exact(`[{"name":"news","parent":null}, 
 {"name":"world","parent":{"name":"news"}}, 
 {"name":"local","parent":{"name":"news"}}, 
 {"name":"europe","parent":{"name":"world"}}]`)},
		{"the parent by constraint", call{user: "editorA", path: "/topics?select=name,up:topics_parent_id_fkey(name)&id=eq.4"}, 200,
			exact(`[{"name":"europe","up":{"name":"world"}}]`)},
		{"the children by the key's column", call{user: "editorA", path: "/topics?select=name,children:topics!parent_id(name)&children.order=id&id=eq.1"}, 200,
			exact(`[{"name":"news","children":[{"name":"world"}, 
 {"name":"local"}]}]`)},
		{"the children by the key's constraint, filtered", call{user: "editorA",
			path: "/topics?select=name,children:topics!topics_parent_id_fkey!inner(name)&children.name=eq.europe"}, 200,
			exact(`[{"name":"world","children":[{"name":"europe"}]}]`)},
		{"three generations", call{user: "editorA", path: "/topics?select=name,parent:parent_id(name,parent:parent_id(name))&id=eq.4"}, 200,
			exact(`[{"name":"europe","parent":{"name":"world","parent":{"name":"news"}}}]`)},

		// To-one spreads.
		{"a to-one spread", call{user: "editorA", path: "/promos?select=channel,...publications(title,status)&order=channel&limit=2"}, 200,
			exact(`[{"channel":"bluesky","title":"Alpha launch","status":"reviewing"}, 
 {"channel":"x","title":"Alpha launch","status":"reviewing"}]`)},
		{"nested to-one spreads with aliases", call{user: "editorA", path: "/promos?select=channel,...publications(title,...projects(project:slug)),...channels(channel_name:name)&channel=eq.bluesky"}, 200,
			exact(`[{"channel":"bluesky","title":"Alpha launch","project":"proj-a","channel_name":"Bluesky"}]`)},
		{"a spread inside an embed", call{user: "editorA", path: "/publications?select=title,promos(channel,...channels(name))&promos.order=channel&id=eq." + alpha}, 200,
			exact(`[{"title":"Alpha launch","promos":[{"channel":"bluesky","name":"Bluesky"}, 
 {"channel":"x","name":"X"}]}]`)},
		{"a spread of a self-reference's parent", call{user: "editorA", path: "/topics?select=name,...parent_id(parent:name)&id=in.(1,4)&order=id"}, 200,
			exact(`[{"name":"news","parent":null}, 
 {"name":"europe","parent":"world"}]`)},
		{"a spread with !inner and a filter", call{user: "editorA", path: "/promos?select=channel,...publications!inner(title)&publications.title=eq.Beta%20notes"}, 200,
			exact(`[{"channel":"x","title":"Beta notes"}]`)},
		{"ordered by a spread's column", call{user: "editorA", path: "/promos?select=channel,...publications(title)&order=publications(title).desc,channel&limit=1"}, 200,
			exact(`[{"channel":"x","title":"Beta notes"}]`)},
		{"a to-many spread needs aggregates", call{user: "editorA", path: "/publications?select=title,...promos(channel)"}, 400, exact(aggregatesOff)},
	})

	f.serve(t, Config{Aggregates: true})
	run(t, []scenario{
		{"a to-many spread is arrays of values", call{user: "editorA", path: "/publications?select=title,...promos(channel,body)&promos.order=channel&id=eq." + alpha}, 200,
			exact(`[{"title":"Alpha launch","channel":["bluesky", "x"],"body":["Alpha on Bluesky", "Alpha on X"]}]`)},
		{"a to-many spread without rows", call{user: "editorA", path: "/publications?select=title,...promos(channels:channel)&title=eq.Delta%20(draft)"}, 200,
			exact(`[{"title":"Delta (draft)","channels":[]}]`)},
		{"with a nested to-one spread and embed", call{user: "editorA",
			path: "/publications?select=title,...promos(channel,...channels(names:name),channels(slug))&promos.order=channel&id=eq." + alpha}, 200,
			exact(`[{"title":"Alpha launch","channel":["bluesky", "x"],"names":["Bluesky", "X"],"channels":[{"slug":"bluesky"}, {"slug":"x"}]}]`)},
		{"a many-to-many spread", call{user: "editorA", path: "/projects?select=slug,...profiles(emails:email)&profiles.order=email&profiles.limit=2"}, 200,
			exact(`[{"slug":"proj-a","emails":["editorA@example.test", "leadA@example.test"]}]`)},
		{"to-many inside a to-many spread is not implemented", call{user: "editorA", path: "/projects?select=slug,...publications(title,promos(channel))"}, 400,
			exact(`{"code":"PGRST127","details":"A to-many spread embed ('publications') may hold columns, to-one spread embeds and to-one embeds, not to-many ones","hint":null,"message":"Feature not implemented"}`)},
		{"a to-one spread still works", call{user: "editorA", path: "/promos?select=channel,...publications(title)&channel=eq.bluesky"}, 200,
			exact(`[{"channel":"bluesky","title":"Alpha launch"}]`)},
	})
}
