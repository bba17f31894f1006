package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// newPagedFixture is the fixture with eight more drafts in project A ("Page 1" … "Page 8",
// created a minute apart, each with a promo on x and on bluesky), so pages with offsets have
// rows with embeds on both sides of them, and the functions the paged reads call: every_pub
// (a set of publications, read like a table over /rpc), title_words (a computed column) and
// own_promos (a computed relationship).
func newPagedFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	own := f.db.Owner(t)
	mustExec(t, own, `
		insert into publications (project_id, title, slug, summary, body, author_id, created_at)
		select $1, 'Page ' || g, 'page-' || g, 'summary ' || g, 'body', $2, '2026-01-01'::timestamptz + g * interval '1 minute'
		  from generate_series(1, 8) g`, f.projA, f.users["leadA"])
	mustExec(t, own, `
		insert into promos (publication_id, channel, body)
		select p.id, c.channel, p.title || ' on ' || c.channel
		  from publications p, (values ('x'), ('bluesky')) c(channel)
		 where p.title like 'Page %'`)
	mustExec(t, own, `
		create function public.every_pub() returns setof public.publications language sql stable as $$ select * from publications $$;
		create function public.title_words(public.publications) returns integer language sql stable
		  as $$ select array_length(regexp_split_to_array($1.title, ' '), 1) $$;
		create function public.own_promos(public.publications) returns setof public.promos language sql stable
		  as $$ select * from promos where publication_id = $1.id $$;
		grant execute on all functions in schema public to authenticated`)
	if err := f.h.schema.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPagedReads: a page taken with an offset (limit/offset, Range, an embedded offset, an RPC
// result's page) is exactly the same rows, in the same order, with the same embeds, as the same
// rows cut out of the whole answer, whatever its select list reads: embeds to-one, to-many and
// many-to-many, nested embeds, spreads, !inner, renamed columns, computed columns and
// relationships, JSON paths, and an order by an embedded resource's column, by a computed
// column, by a renamed column's name. (Pages with an offset are taken in a subquery before
// their embeds are computed: pagedLevel.)
func TestPagedReads(t *testing.T) {
	t.Parallel()
	f := newPagedFixture(t)
	// Project A as leadA: Alpha launch, Beta notes, Gamma, with comma, Delta (draft), Page 1 … 8.
	for _, c := range []struct {
		path  string
		embed string // the embed whose rows are paged (its offset and limit), "" for the top level
	}{
		{"/publications?select=title,author:profiles!author_id(display_name),promos(channel,body)&promos.order=channel&order=title", ""},
		{"/publications?select=heading:title,writer:profiles!author_id(name:display_name),promos(channel,channels(name))&promos.order=channel.desc&order=created_at.desc,title", ""},
		{"/publications?select=title,profiles!author_id(display_name),promos(channel)&promos.order=channel&order=profiles(display_name).desc,title.desc", ""},
		{"/publications?select=title,...profiles!author_id(author:display_name)&order=title.desc", ""},
		{"/publications?select=title,promos!inner(channel)&promos.channel=eq.bluesky&order=title", ""},
		{"/publications?select=title,n:title_words,own_promos(channel)&own_promos.order=channel&order=title_words.desc,title", ""},
		{"/publications?select=id,title,version,promos(channel)&promos.order=channel&order=version.desc,slug", ""},
		{"/rpc/every_pub?select=title,promos(channel)&promos.order=channel&order=title", ""},
		{"/projects?select=slug,first:default_channels->>0,publications(title,promos(channel))&publications.order=title&publications.promos.order=channel", "publications"},
		{"/projects?select=slug,profiles(email,project_members(role))&profiles.order=email&profiles.project_members.order=role", "profiles"},
	} {
		t.Run(c.path, func(t *testing.T) {
			whole := f.do(t, call{user: "leadA", path: c.path})
			if whole.status != http.StatusOK {
				t.Fatalf("whole: %d %s", whole.status, whole.body)
			}
			all := pageOf(t, whole.body, c.embed)
			if len(all) < 4 {
				t.Fatalf("whole answer too short to page: %s", whole.body)
			}
			prefix := ""
			if c.embed != "" {
				prefix = c.embed + "."
			}
			for offset := 0; offset <= len(all)+1; offset++ {
				for _, limit := range []int{1, 3, len(all)} {
					r := f.do(t, call{user: "leadA", path: fmt.Sprintf("%s&%soffset=%d&%slimit=%d", c.path, prefix, offset, prefix, limit)})
					if r.status != http.StatusOK {
						t.Fatalf("offset %d limit %d: %d %s", offset, limit, r.status, r.body)
					}
					want := all[min(offset, len(all)):min(offset+limit, len(all))]
					if got := pageOf(t, r.body, c.embed); !slices.Equal(got, want) {
						t.Errorf("offset %d limit %d:\n got %q\nwant %q", offset, limit, got, want)
					}
				}
			}
			if c.embed != "" {
				return
			}
			// The same page asked with a Range header.
			r := f.do(t, call{user: "leadA", path: c.path, header: map[string]string{"Range": "2-4"}})
			if got, want := pageOf(t, r.body, ""), all[2:5]; r.status != http.StatusOK || !slices.Equal(got, want) {
				t.Errorf("Range 2-4: %d\n got %q\nwant %q", r.status, got, want)
			}
		})
	}
}

// pageOf splits the rows of a JSON array body, or of the array under key embed in its one
// row, into their elements, each as PostgreSQL wrote it (elements compare byte for byte).
func pageOf(t *testing.T, body, embed string) []string {
	t.Helper()
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatalf("not a JSON array: %v: %s", err, body)
	}
	if embed != "" {
		var row map[string]json.RawMessage
		if len(raw) != 1 || json.Unmarshal(raw[0], &row) != nil || json.Unmarshal(row[embed], &raw) != nil {
			t.Fatalf("not one row with an array %s: %s", embed, body)
		}
	}
	out := make([]string, len(raw))
	for i, r := range raw {
		out[i] = string(r)
	}
	return out
}

// TestPagedReadBodies: exact bodies, statuses and Content-Range of pages with offsets and
// embeds, counted and not, at the edges: the last row, past the end, limit=0, an embedded
// offset, an RPC result's page.
func TestPagedReadBodies(t *testing.T) {
	t.Parallel()
	f := newPagedFixture(t)
	const pages = "/publications?select=title,promos(channel)&promos.order=channel&title=like.Page*&order=title.desc"
	count := prefer("count=exact")
	runSequential(t, f, []scenario{
		{"a middle page", call{user: "leadA", path: pages + "&offset=2&limit=2"}, 200,
			exact(`[{"title":"Page 6","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}, 
 {"title":"Page 5","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`, "Content-Range", "2-3/*")},
		{"a middle page counted", call{user: "leadA", path: pages + "&offset=2&limit=2", header: count}, 206,
			exact(`[{"title":"Page 6","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}, 
 {"title":"Page 5","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`, "Content-Range", "2-3/8", "Preference-Applied", "count=exact")},
		{"the last row, counted", call{user: "leadA", path: pages + "&offset=7&limit=5", header: count}, 206,
			exact(`[{"title":"Page 1","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`, "Content-Range", "7-7/8")},
		{"the page just past the end", call{user: "leadA", path: pages + "&offset=8&limit=5"}, 200,
			exact(`[]`, "Content-Range", "*/*")},
		{"far past the end", call{user: "leadA", path: pages + "&offset=100"}, 200, exact(`[]`, "Content-Range", "*/*")},
		{"far past the end, counted", call{user: "leadA", path: pages + "&offset=100", header: count}, 416,
			exact(`{"code":"PGRST103","details":"An offset of 100 was requested, but there are only 8 rows.","hint":null,"message":"Requested range not satisfiable"}`,
				"Content-Range", "*/8")},
		{"limit=0 with an offset", call{user: "leadA", path: pages + "&offset=3&limit=0", header: count}, 206,
			exact(`[]`, "Content-Range", "*/8")},
		{"a Range header with embeds", call{user: "leadA", path: pages, header: map[string]string{"Range": "6-9", "Prefer": "count=exact"}}, 206,
			exact(`[{"title":"Page 2","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}, 
 {"title":"Page 1","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`, "Content-Range", "6-7/8")},
		// The largest row numbers a client can write: the window's arithmetic must not wrap
		// around into an empty page.
		{"a Range up to the largest row number", call{user: "leadA", path: pages + "&title=in.(Page%201,Page%202)",
			header: map[string]string{"Range": "0-9223372036854775807", "Prefer": "count=exact"}}, 200,
			exact(`[{"title":"Page 2","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}, 
 {"title":"Page 1","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`, "Content-Range", "0-1/2")},
		{"the largest limit under a Range", call{user: "leadA", path: pages + "&offset=6&limit=9223372036854775807",
			header: map[string]string{"Range": "0-6", "Prefer": "count=exact"}}, 206,
			exact(`[{"title":"Page 2","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`, "Content-Range", "6-6/8")},
		{"an embedded offset under a paged parent", call{user: "leadA",
			path: "/projects?select=slug,publications(title,promos(channel))&publications.title=like.Page*&publications.order=title.desc&publications.offset=2&publications.limit=2&publications.promos.order=channel.desc&publications.promos.offset=1"}, 200,
			exact(`[{"slug":"proj-a","publications":[{"title":"Page 6","promos":[{"channel":"bluesky"}]}, 
 {"title":"Page 5","promos":[{"channel":"bluesky"}]}]}]`)},
		{"renamed columns and an embed ordered by its column", call{user: "leadA",
			path: "/publications?select=heading:title,by:profiles!author_id(display_name),promos(channel)&promos.order=channel&order=profiles(display_name).desc,title&title=like.Page*&offset=6", header: count}, 206,
			exact(`[{"heading":"Page 7","by":{"display_name":"leadA"},"promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}, 
 {"heading":"Page 8","by":{"display_name":"leadA"},"promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`, "Content-Range", "6-7/8")},
		{"an RPC result's page, counted", call{user: "leadA", path: "/rpc/every_pub?select=title,promos(channel)&promos.order=channel&title=like.Page*&order=title&offset=6&limit=5", header: count}, 206,
			exact(`[{"title":"Page 7","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}, 
 {"title":"Page 8","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`,
				"Content-Range", "6-7/8")},
		{"an RPC result past the end, counted", call{method: "POST", user: "leadA", path: "/rpc/every_pub?select=title,promos(channel)&offset=100", body: `{}`, header: count}, 416,
			exact(`{"code":"PGRST103","details":"An offset of 100 was requested, but there are only 12 rows.","hint":null,"message":"Requested range not satisfiable"}`)},
	})
}

// TestPagedEmbedsOnlyForThePage: the embeds of the rows an offset skips are not computed. The
// cap on embedded rows (MaxEmbeddedRows) counts every embedded row PostgreSQL produces, so with
// a cap of 2 a page of one publication with 2 promos, 7 publications in, is answered only if
// the 14 promos of the 7 skipped ones were never embedded; and the statement's plan runs the
// promos embed once per row shown.
func TestPagedEmbedsOnlyForThePage(t *testing.T) {
	t.Parallel()
	f := newPagedFixture(t)
	f.serve(t, Config{MaxEmbeddedRows: 2})
	const path = "/publications?select=title,promos(channel)&promos.order=channel&title=like.Page*&order=title"
	for _, c := range []struct {
		name string
		call call
		body string
	}{
		{"a table's page", call{user: "leadA", path: path + "&offset=7&limit=1"},
			`[{"title":"Page 8","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`},
		{"a Range", call{user: "leadA", path: path, header: map[string]string{"Range": "7-7"}},
			`[{"title":"Page 8","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`},
		{"an RPC result's page", call{user: "leadA", path: "/rpc/every_pub?select=title,promos(channel)&promos.order=channel&title=like.Page*&order=title&offset=7&limit=1"},
			`[{"title":"Page 8","promos":[{"channel":"bluesky"}, 
 {"channel":"x"}]}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := f.do(t, c.call)
			if r.status != http.StatusOK || r.body != c.body {
				t.Errorf("%d %s\nwant %s", r.status, r.body, c.body)
			}
		})
	}
	// Still refused when the page itself embeds more than the cap.
	if r := f.do(t, call{user: "leadA", path: path + "&offset=6&limit=2"}); r.status != http.StatusBadRequest || r.errCode(t) != pg.CodeEmbeddedRows {
		t.Errorf("two publications of two promos with a cap of 2: %d %s", r.status, r.body)
	}

	// The plan: the promos subquery runs once per row of the page, not per row read.
	s := f.h.schema.Schema()
	q, err := ParseQuery("select=title,promos(channel)&title=like.Page*&order=title&offset=5&limit=2", false)
	if err != nil {
		t.Fatal(err)
	}
	tbl, perr := s.table("publications")
	if perr != nil {
		t.Fatal(perr)
	}
	root, perr := s.planRead(tbl, q, f.h.planOpts())
	if perr != nil {
		t.Fatal(perr)
	}
	st := buildRows(root, true, false).stmt()
	plan := f.explain(t, "leadA", st)
	if !strings.Contains(plan, "promos") {
		t.Fatalf("no promos in the plan:\n%s", plan)
	}
	var loops []int
	for _, line := range strings.Split(plan, "\n") {
		if strings.Contains(line, " on promos ") || strings.Contains(line, " on public.promos ") {
			var n int
			if i := strings.LastIndex(line, "loops="); i >= 0 {
				fmt.Sscanf(line[i:], "loops=%d", &n)
			}
			loops = append(loops, n)
		}
	}
	if len(loops) == 0 || slices.Max(loops) != 2 {
		t.Errorf("the promos embed ran %v times, want 2 (the page's rows):\n%s", loops, plan)
	}
}

// explain runs EXPLAIN ANALYZE of st as user and returns the plan's text.
func (f *fixture) explain(t *testing.T, user string, st pg.Stmt) string {
	t.Helper()
	ctx := context.Background()
	claims, _ := json.Marshal(map[string]any{"sub": f.users[user], "role": "authenticated"})
	args := []any{pgx.QueryExecModeExec} // text parameters, typed by PostgreSQL as the engine's are
	for _, p := range st.Params {
		args = append(args, string(p))
	}
	var lines []string
	err := pg.WithCaller(ctx, f.db.Pool, pg.UserCaller(claims), pg.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "+st.SQL, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				return err
			}
			lines = append(lines, l)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, st.SQL)
	}
	return strings.Join(lines, "\n")
}
