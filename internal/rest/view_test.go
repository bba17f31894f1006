package rest

import (
	"context"
	"testing"
)

// TestViews: relationships reach through views as PostgREST's do (a view showing a table's
// foreign-key columns, or the columns they point to, has that foreign key too: view to table,
// table to view, view to view, spreads included), and a view showing a table's primary key has
// it, so PUT and upserts work on the view. The views are security_invoker, so RLS still decides.
func TestViews(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	alpha := f.pubs["Alpha launch"]
	mustExec(t, own, `create view public.pub_cards with (security_invoker = true) as
		select id, project_id, title as headline, status from public.publications`)
	mustExec(t, own, `create view public.promo_lines with (security_invoker = true) as
		select id, project_id, publication_id, channel, body from public.promos`)
	mustExec(t, own, `create view public.card_titles with (security_invoker = true) as
		select id as card, project_id as proj, headline from public.pub_cards`)
	mustExec(t, own, `grant select on public.pub_cards, public.promo_lines, public.card_titles to authenticated`)
	mustExec(t, own, `create table public.labels (id integer primary key, name text not null)`)
	mustExec(t, own, `create view public.label_names as select id, name from public.labels`)
	mustExec(t, own, `grant select, insert, update on public.label_names to authenticated`)
	if err := f.h.schema.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	runSequential(t, f, []scenario{
		{"view to table", call{user: "editorA", path: "/pub_cards?select=headline,projects(slug)&id=eq." + alpha}, 200,
			exact(`[{"headline":"Alpha launch","projects":{"slug":"proj-a"}}]`)},
		{"table to view", call{user: "editorA", path: "/publications?select=title,promo_lines(channel)&promo_lines.order=channel&id=eq." + alpha}, 200,
			exact(`[{"title":"Alpha launch","promo_lines":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`)},
		{"view to view", call{user: "editorA", path: "/pub_cards?select=headline,promo_lines(channel)&promo_lines.order=channel&id=eq." + alpha}, 200,
			exact(`[{"headline":"Alpha launch","promo_lines":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`)},
		{"view to view, to-one, spread", call{user: "editorA", path: "/promo_lines?select=channel,...pub_cards(headline,status)&channel=eq.bluesky"}, 200,
			exact(`[{"channel":"bluesky","headline":"Alpha launch","status":"reviewing"}]`)},
		{"by the constraint's name, which a view shares with its table", call{user: "editorA",
			path: "/promo_lines?select=channel,pub:promos_project_id_publication_id_fkey(headline)&channel=eq.bluesky"}, 300,
			exact(`{"code":"PGRST201","details":[` +
				`{"cardinality":"many-to-one","embedding":"promo_lines with publications","relationship":"promos_project_id_publication_id_fkey using promo_lines(project_id, publication_id) and publications(project_id, id)"},` +
				`{"cardinality":"many-to-one","embedding":"promo_lines with card_titles","relationship":"promos_project_id_publication_id_fkey using promo_lines(project_id, publication_id) and card_titles(proj, card)"},` +
				`{"cardinality":"many-to-one","embedding":"promo_lines with pub_cards","relationship":"promos_project_id_publication_id_fkey using promo_lines(project_id, publication_id) and pub_cards(project_id, id)"}],` +
				`"hint":"Try changing 'promos_project_id_publication_id_fkey' to one of the following: 'publications!promos_project_id_publication_id_fkey', 'card_titles!promos_project_id_publication_id_fkey', 'pub_cards!promos_project_id_publication_id_fkey'. Find the desired relationship in the 'details' key.",` +
				`"message":"Could not embed because more than one relationship was found for 'promo_lines' and 'promos_project_id_publication_id_fkey'"}`)},
		{"the hint works", call{user: "editorA", path: "/promo_lines?select=channel,pub:pub_cards!promos_project_id_publication_id_fkey(headline)&channel=eq.bluesky"}, 200,
			exact(`[{"channel":"bluesky","pub":{"headline":"Alpha launch"}}]`)},
		{"a view of a view, with renamed keys, to a table", call{user: "editorA", path: "/card_titles?select=headline,projects(slug)&card=eq." + alpha}, 200,
			exact(`[{"headline":"Alpha launch","projects":{"slug":"proj-a"}}]`)},
		{"a view of a view, with renamed keys, to a view", call{user: "editorA",
			path: "/card_titles?select=headline,promo_lines(channel)&promo_lines.order=channel&card=eq." + alpha}, 200,
			exact(`[{"headline":"Alpha launch","promo_lines":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`)},
		{"a view that does not show the key has no relationship", call{user: "editorA", path: "/label_names?select=name,projects(slug)"}, 400,
			exact(`{"code":"PGRST200","details":"Searched for a foreign key relationship between 'label_names' and 'projects' in the schema 'public', but no matches were found.","hint":"Perhaps you meant 'pub_cards' instead of 'label_names'.","message":"Could not find a relationship between 'label_names' and 'projects' in the schema cache"}`)},
		{"RLS still decides", call{user: "editorB", path: "/pub_cards?select=headline,promo_lines(channel)&order=headline"}, 200,
			exact(`[{"headline":"Bravo in B","promo_lines":[{"channel":"x"}]}]`)},
		{"PUT on a view by its inferred key", call{method: "PUT", user: "editorA", path: "/label_names?id=eq.1", body: `{"id":1,"name":"one"}`,
			header: prefer("return=representation")}, 201, exact(`[{"id":1,"name":"one"}]`)},
		{"PUT again replaces", call{method: "PUT", user: "editorA", path: "/label_names?id=eq.1", body: `{"id":1,"name":"uno"}`,
			header: prefer("return=representation")}, 200, exact(`[{"id":1,"name":"uno"}]`)},
		{"an upsert on a view", call{method: "POST", user: "editorA", path: "/label_names", body: `[{"id":1,"name":"eins"},{"id":2,"name":"zwei"}]`,
			header: prefer("resolution=merge-duplicates, return=representation")}, 201, exact(`[{"id":1,"name":"eins"}, 
 {"id":2,"name":"zwei"}]`)},
	})
}
