package rest

import (
	"context"
	"testing"
)

// TestAggregates: count(), sum(), avg(), min() and max() in select, as PostgREST's
// AggregateFunctionsSpec describes them on our fixture: refused (PGRST123) unless
// MASTHEAD_DB_AGGREGATES_ENABLED is on; then with aliases, input and output casts, grouping by
// the other selected columns, inside embeds, over spread columns and on function results.
func TestAggregates(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	mustExec(t, f.db.Owner(t), `create function public.all_pubs() returns setof public.publications language sql stable as $$ select * from publications $$;
		grant execute on function public.all_pubs() to authenticated`)
	if err := f.h.schema.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	aggregatesOff := `{"code":"PGRST123","details":null,"hint":null,"message":"Use of aggregate functions is not allowed"}`
	runSequential(t, f, []scenario{
		{"off by default: count()", call{user: "editorA", path: "/publications?select=count()"}, 400, exact(aggregatesOff)},
		{"off by default: sum()", call{user: "editorA", path: "/publications?select=version.sum()"}, 400, exact(aggregatesOff)},
		{"off by default: inside an embed", call{user: "editorA", path: "/projects?select=slug,publications(count())"}, 400, exact(aggregatesOff)},
	})
	f.serve(t, Config{Aggregates: true})
	runSequential(t, f, []scenario{
		{"count() of every row", call{user: "editorA", path: "/publications?select=count()"}, 200, exact(`[{"count":4}]`)},
		{"count() with a filter", call{user: "editorA", path: "/publications?select=count()&status=eq.reviewing"}, 200, exact(`[{"count":2}]`)},
		{"count() renamed and cast", call{user: "editorA", path: "/publications?select=n:count()::text"}, 200, exact(`[{"n":"4"}]`)},
		{"grouped by the other columns", call{user: "editorA", path: "/publications?select=status,count()&order=status"}, 200,
			exact(`[{"status":"approved","count":1}, 
 {"status":"draft","count":1}, 
 {"status":"reviewing","count":2}]`)},
		{"every function at once", call{user: "editorA", path: "/publications?select=version.sum(),version.max(),version.min(),version.avg(),version.count()"}, 200,
			exact(`[{"sum":8,"max":3,"min":1,"avg":2.0000000000000000,"count":4}]`)},
		{"renamed and grouped by a renamed column", call{user: "editorA", path: "/publications?select=s:status,total:version.sum()&order=status.desc"}, 200,
			exact(`[{"s":"reviewing","total":4}, 
 {"s":"draft","total":1}, 
 {"s":"approved","total":3}]`)},
		{"the result cast", call{user: "editorA", path: "/publications?select=version.avg()::int"}, 200, exact(`[{"avg":2}]`)},
		{"the input cast, from JSON", call{user: "editorA", path: "/channels?select=limits->>max_chars::int.max()"}, 200, exact(`[{"max":63206}]`)},
		{"alias, input cast and result cast", call{user: "editorA", path: "/channels?select=m:limits->>max_chars::int.min()::text"}, 200, exact(`[{"m":"280"}]`)},
		{"inside an embed", call{user: "editorA", path: "/projects?select=slug,publications(status,count())&publications.order=status"}, 200,
			exact(`[{"slug":"proj-a","publications":[{"status":"approved","count":1}, 
 {"status":"draft","count":1}, 
 {"status":"reviewing","count":2}]}]`)},
		{"grouped by a to-one spread's column", call{user: "editorA", path: "/promos?select=...channels(name),count()&channel=eq.x"}, 200,
			exact(`[{"name":"X","count":2}]`)},
		{"over a to-one spread's column", call{user: "editorA", path: "/promos?select=channel,...publications(newest:version.max())&order=channel"}, 200,
			exact(`[{"channel":"bluesky","newest":2}, 
 {"channel":"x","newest":3}]`)},
		{"grouped by an embed", call{user: "editorA", path: "/promos?select=publications(title),count()&channel=eq.bluesky"}, 200,
			exact(`[{"publications":{"title":"Alpha launch"},"count":1}]`)},
		{"on a function's rows", call{user: "editorA", path: "/rpc/all_pubs?select=version.max()"}, 200, exact(`[{"max":3}]`)},
		{"inside a to-many spread", call{user: "editorA", path: "/publications?select=title,...promos(channel.count())"}, 400,
			exact(`{"code":"PGRST127","details":"An aggregate inside a to-many spread embed ('promos') is not supported","hint":null,"message":"Feature not implemented"}`)},
		{"an unknown function", call{user: "editorA", path: "/publications?select=version.median()"}, 400,
			exact(`{"code":"PGRST100","details":"unexpected \"m\" expecting aggregate function (count(), sum(), avg(), max(), min())","hint":null,"message":"\"failed to parse select parameter (version.median())\" (line 1, column 9)"}`)},
		{"an unknown result type", call{user: "editorA", path: "/publications?select=version.sum()::money"}, 400,
			exact(`{"code":"42704","details":null,"hint":null,"message":"type \"money\" does not exist"}`)},
	})
}
