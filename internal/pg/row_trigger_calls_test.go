package pg_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"masthead/internal/channels"
)

// oldFunction installs a function as a migration defined it, under another name, so a test can
// compare a rewrite with it: the text from "create [or replace] function app.<name>(" to its
// "end $$;" in that migration (the first such), renamed app.<name>_was, with each pair of
// strings in replace (old, new) replaced in its text.
func oldFunction(t *testing.T, f *fixture, migration, name string, replace ...string) {
	t.Helper()
	src, err := os.ReadFile("migrations/" + migration)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)create (?:or replace )?function app\.` + name + `\(.*?\nend \$\$;`).Find(src)
	if m == nil {
		t.Fatalf("no app.%s in %s", name, migration)
	}
	def := strings.Replace(string(m), "create or replace function", "create function", 1)
	def = strings.Replace(def, "app."+name+"(", "app."+name+"_was(", 1)
	def = strings.NewReplacer(replace...).Replace(def)
	if _, err := f.db.Owner(t).Exec(context.Background(), def); err != nil {
		t.Fatalf("install %s's app.%s: %v", migration, name, err)
	}
}

// TestPromoMeasureCountsAsRegexpMatches: promo_measure (029 counts matches with regexp_count)
// gives what 006's version, counting the rows of regexp_matches, gave: every field, for every
// body and link of the channel corpus under every channel's limits, and for bodies made to
// trip the two patterns (links next to each other, hashtags back to back, a hashtag after a
// character that does not start one, non-ASCII).
func TestPromoMeasureCountsAsRegexpMatches(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	oldFunction(t, f, "006_rounds_readiness.sql", "promo_measure")
	own := f.db.Owner(t)
	ctx := context.Background()
	type promo struct{ body, link string }
	promos := []promo{
		{"", ""}, {"#a#b#c", ""}, {"#1 #_ #x1 #é #日本 a#b &#c /#d _#e", ""},
		{"see https://a.example/x https://b.example/y<z> http://c.example", "https://a.example/x"},
		{"https://a.example/xhttps://b.example", "https://d.example"}, {"#tag\n#tag2\t#3tag ##x", "  "},
	}
	for _, c := range channels.Corpus {
		promos = append(promos, promo{c.Body, c.Link})
	}
	rows, err := own.Query(ctx, `select limits from public.channels order by slug`)
	if err != nil {
		t.Fatal(err)
	}
	var limits []json.RawMessage
	for rows.Next() {
		var l json.RawMessage
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		limits = append(limits, l)
	}
	if rows.Err() != nil || len(limits) < 5 {
		t.Fatalf("channels' limits: %d, %v", len(limits), rows.Err())
	}
	for _, p := range promos {
		for _, l := range limits {
			var now, was string
			mustScan(t, own.QueryRow(ctx, `select row(m.*)::text from app.promo_measure($1, $2, $3) m`, p.body, p.link, l), &now)
			mustScan(t, own.QueryRow(ctx, `select row(m.*)::text from app.promo_measure_was($1, $2, $3) m`, p.body, p.link, l), &was)
			if now != was {
				t.Errorf("promo_measure(%q, %q, %s) = %s, 006 gave %s", p.body, p.link, l, now, was)
			}
		}
	}
}

// TestReadinessOfAnswersAsBefore: readiness_of, whose promo_measure 029 rewrote, lists what 006's
// readiness_of with 006's promo_measure listed (taught 030's rule that text of only white space
// is blank, which TestReadinessNeedsContent holds, and 034's words for a count of one and its
// lengths grouped in thousands, which TestReadinessCountWords holds), row for row and in order,
// for publications
// made to fail and pass each check:
// a blank title, summary or body; no promo, a blank one, one over its length, one with too
// many hashtags, one with links counted at a fixed length, on channels counting characters,
// bytes and graphemes; no media, media with and without alt text, more media than a channel
// takes.
func TestReadinessOfAnswersAsBefore(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// 006's readiness_of calling 006's promo_measure, as before 029.
	oldFunction(t, f, "006_rounds_readiness.sql", "promo_measure")
	written := `'[^\s\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]'`
	oldFunction(t, f, "006_rounds_readiness.sql", "readiness_of", "app.promo_measure(", "app.promo_measure_was(",
		"btrim(p.title) <> ''", "p.title ~ "+written, "btrim(p.summary) <> ''", "p.summary ~ "+written,
		"btrim(p.body) <> ''", "p.body ~ "+written, "btrim(md.alt_text) = ''", "md.alt_text !~ "+written,
		"btrim(pr.body) = ''", "pr.body !~ "+written,
		"case m.unit when 'bytes' then 'bytes' when 'graphemes' then 'characters' else 'characters' end",
		"case m.unit when 'bytes' then 'byte' else 'character' end || case when m.max_chars = 1 then '' else 's' end",
		"format('%s: %s media attached, at most %s', ch.name, n_media,",
		"format('%s: %s %s attached, at most %s', ch.name, n_media, case when n_media = 1 then 'media item' else 'media' end,",
		"format('%s: %s / %s %s (%s over)', ch.name, m.used, m.max_chars, unitword, m.used - m.max_chars)",
		"format('%s: %s / %s %s (%s over)', ch.name, to_char(m.used, 'FM999,999,999,990'), to_char(m.max_chars, 'FM999,999,999,990'), unitword, to_char(m.used - m.max_chars, 'FM999,999,999,990'))",
		"format('%s: %s / %s %s', ch.name, m.used, m.max_chars, unitword)",
		"format('%s: %s / %s %s', ch.name, to_char(m.used, 'FM999,999,999,990'), to_char(m.max_chars, 'FM999,999,999,990'), unitword)",
		"when ok then format('All %s media items have alt text', n_media)",
		"when n_media = 1 and ok then 'The media item has alt text' when n_media = 1 then 'The media item has no alt text' "+
			"when ok then format('All %s media items have alt text', n_media) "+
			"when n_noalt = 1 then format('1 of %s media items has no alt text', n_media)")
	own := f.db.Owner(t)
	ctx := context.Background()
	ownerDoes(t, own, `update projects set default_channels = '{x,bluesky,threads,instagram,mastodon}' where id = $1`, f.projA)
	var media []string
	for i := range 6 {
		alt := ""
		if i%2 == 0 {
			alt = "a picture"
		}
		var id string
		mustScan(t, own.QueryRow(ctx, `insert into media (project_id, storage_path, mime_type, alt_text)
			values ($1, 'proj-a/r' || $2::int || '.png', 'image/png', $3) returning id`, f.projA, i, alt), &id)
		media = append(media, id)
	}
	long := strings.Repeat("word ", 80)
	cases := []struct {
		name   string
		promos map[string]string // channel → body
		media  []string
	}{
		{"bare", nil, nil},
		{"every promo", map[string]string{"x": "Read it", "bluesky": "Read it", "threads": "Read it", "instagram": "Read it", "mastodon": "Read it"}, media[:1]},
		{"blank and missing", map[string]string{"x": "   ", "bluesky": "Read it"}, media[1:2]},
		{"over", map[string]string{"x": long, "bluesky": long + "👍🏽", "threads": strings.Repeat("é", 300), "mastodon": long}, media[:3]},
		{"hashtags", map[string]string{"x": "#a #b #c", "instagram": strings.Repeat("#t ", 31), "bluesky": "#a #b #c"}, media},
		{"links", map[string]string{"x": "see https://example.test/" + strings.Repeat("a", 300), "mastodon": "https://example.test/a https://example.test/b"}, media[:5]},
	}
	for _, c := range cases {
		id := f.draft(t, "Ready "+c.name)
		for ch, body := range c.promos {
			ownerDoes(t, own, `insert into promos (publication_id, channel, body, link) values ($1, $2, $3, 'https://example.test/p')`, id, ch, body)
		}
		for i, m := range c.media {
			ownerDoes(t, own, `insert into publication_media (publication_id, media_id, position) values ($1, $2, $3)`, id, m, i)
		}
		for _, edit := range []string{`{}`, `{"title": " "}`, `{"summary": ""}`, `{"body": " \n "}`} {
			var now, was []string
			q := `select array(select row(r.*)::text from publications p, jsonb_populate_record(p, $2::jsonb) x, %s(x) r where p.id = $1)`
			mustScan(t, own.QueryRow(ctx, strings.Replace(q, "%s", "app.readiness_of", 1), id, edit), &now)
			mustScan(t, own.QueryRow(ctx, strings.Replace(q, "%s", "app.readiness_of_was", 1), id, edit), &was)
			if strings.Join(now, "\n") != strings.Join(was, "\n") {
				t.Errorf("%s %s: readiness_of\n%s\n006 gave\n%s", c.name, edit, strings.Join(now, "\n"), strings.Join(was, "\n"))
			}
			if len(now) != 9 {
				t.Errorf("%s %s: %d checks, want 9 (title, summary, body, 5 promos, alt text)", c.name, edit, len(now))
			}
		}
	}
}

// TestPublicationsReadFollowsMembership: publications_read, now through app.caller_projects
// (029), answers as app.project_ids() did: the publications of every project the caller belongs
// to, in any role, and no other, following membership from one statement to the next. The
// lookup fill_project_from_publication makes under it follows too: a removed member's promo
// is refused as naming a publication not found.
func TestPublicationsReadFollowsMembership(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	a := f.draft(t, "Read in A")
	f.draftBy(t, "editorB", f.projB, "Read in B")
	for _, who := range everyone {
		inA := who != "anon" && who != "outsider" && who != "ownerB" && who != "editorB"
		inB := who == "ownerB" || who == "editorB"
		if n := f.count(who, `select count(*) from publications where project_id = $1`, f.projA); (n == 1) != inA || n > 1 {
			t.Errorf("%s sees %d of A's 1 publication", who, n)
		}
		if n := f.count(who, `select count(*) from publications where project_id = $1`, f.projB); (n == 1) != inB || n > 1 {
			t.Errorf("%s sees %d of B's 1 publication", who, n)
		}
	}
	ownerDoes(t, own, `delete from project_members where project_id = $1 and user_id = $2`, f.projA, f.users["editor2A"])
	if n := f.count("editor2A", `select count(*) from publications`); n != 0 {
		t.Errorf("a removed member still sees %d publications", n)
	}
	_, err := f.try("editor2A", `insert into promos (publication_id, channel, body) values ($1, 'x', 'hi')`, a)
	if sqlstate(err) != "23503" || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a removed member's promo: %v, want 23503 publication not found", err)
	}
	ownerDoes(t, own, `insert into project_members (project_id, user_id, role) values ($1, $2, 'editor')`, f.projA, f.users["editor2A"])
	if n := f.count("editor2A", `select count(*) from publications where id = $1`, a); n != 1 {
		t.Errorf("a member added back sees %d of 1 publication", n)
	}
	if n, err := f.try("editor2A", `insert into promos (publication_id, channel, body) values ($1, 'x', 'hi')`, a); err != nil || n != 1 {
		t.Errorf("a member added back writes a promo: %d rows, %v", n, err)
	}
}
