package pg_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// TestReadinessCountWords: every readiness message that counts something agrees with its count
// (migration 034): one media item is "the media item", one of several without alt text "has",
// one media item over a channel's max_media is "1 media item", and a length limit of one is
// "1 character" or "1 byte"; counts other than one read as before, and lengths are grouped in
// thousands as the dashboard groups its own ("1,200 / 3,000 characters").
func TestReadinessCountWords(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	ctx := context.Background()
	if _, err := own.Exec(ctx, `insert into channels (slug, name, limits, upload_post_platform) values
		('tiny', 'Tiny', '{"max_chars":1,"count":"chars"}', 'x'),
		('tinyb', 'Tiny bytes', '{"max_chars":1,"count":"bytes"}', 'threads'),
		('nomedia', 'No media', '{"max_chars":280,"count":"chars","max_media":0}', 'x'),
		('onemedia', 'One image', '{"max_chars":280,"count":"chars","max_media":1}', 'x'),
		('long', 'Long form', '{"max_chars":3000,"count":"chars"}', 'linkedin')`); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Exec(ctx, `update projects set default_channels = '{x,bluesky,tiny,tinyb,nomedia,onemedia,long}' where id = $1`, f.projA); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		check string
		promo string   // the body of the promo for check's channel, when it is a promo:<channel>
		alts  []string // one media item attached per entry, with that alt text
		want  string
	}{
		{"alt_text", "", nil, "No media attached"},
		{"alt_text", "", []string{"A harbour"}, "The media item has alt text"},
		{"alt_text", "", []string{"A harbour", "A quay"}, "All 2 media items have alt text"},
		{"alt_text", "", []string{""}, "The media item has no alt text"},
		{"alt_text", "", []string{"A harbour", ""}, "1 of 2 media items has no alt text"},
		{"alt_text", "", []string{"", " "}, "2 of 2 media items have no alt text"},
		{"alt_text", "", []string{"A harbour", "", ""}, "2 of 3 media items have no alt text"},
		{"promo:nomedia", "Read it", []string{"A harbour"}, "No media: 1 media item attached, at most 0"},
		{"promo:onemedia", "Read it", []string{"A harbour"}, "One image: 7 / 280 characters"},
		{"promo:onemedia", "Read it", []string{"A harbour", "A quay"}, "One image: 2 media attached, at most 1"},
		{"promo:onemedia", "Read it", []string{"A harbour", "A quay", "A boat"}, "One image: 3 media attached, at most 1"},
		{"promo:tiny", "a", nil, "Tiny: 1 / 1 character"},
		{"promo:tiny", "ab", nil, "Tiny: 2 / 1 character (1 over)"},
		{"promo:tinyb", "é", nil, "Tiny bytes: 2 / 1 byte (1 over)"},
		{"promo:x", "a", nil, "X: 1 / 280 characters"},
		{"promo:x", "Read it", nil, "X: 7 / 280 characters"},
		{"promo:long", strings.Repeat("a", 1200), nil, "Long form: 1,200 / 3,000 characters"},
		{"promo:long", strings.Repeat("a", 3200), nil, "Long form: 3,200 / 3,000 characters (200 over)"},
		{"promo:long", strings.Repeat("a", 4500), nil, "Long form: 4,500 / 3,000 characters (1,500 over)"},
	}
	for i, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			id := f.draft(t, fmt.Sprintf("Count words %d", f.seq.Add(1)))
			if c.promo != "" {
				if _, err := own.Exec(ctx, `insert into promos (publication_id, channel, body) values ($1, $2, $3)`,
					id, c.check[len("promo:"):], c.promo); err != nil {
					t.Fatal(err)
				}
			}
			for j, alt := range c.alts {
				if _, err := own.Exec(ctx, `with m as (insert into media (project_id, storage_path, mime_type, alt_text)
						values ($1, $2, 'image/png', $3) returning id)
					insert into publication_media (publication_id, media_id, position) select $4, id, $5 from m`,
					f.projA, "proj-a/words-"+strconv.Itoa(i)+"-"+strconv.Itoa(j)+".png", alt, id, j); err != nil {
					t.Fatal(err)
				}
			}
			var got string
			err := pg.WithCaller(ctx, f.db.Pool, f.caller("viewerA"), pg.ReadOnly, func(tx pgx.Tx) error {
				return tx.QueryRow(ctx, `select detail from readiness($1) where "check" = $2`, id, c.check).Scan(&got)
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("readiness %s = %q, want %q", c.check, got, c.want)
			}
		})
	}
}

// TestEmbeddedRowsCountWords: the refusal of a response that embeds too many rows names its cap
// with a noun that agrees with it: "more than 1 row" at the least cap the service accepts.
func TestEmbeddedRowsCountWords(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, c := range []struct {
		limit           int
		message, detail string
	}{
		{1, "The response would embed more than 1 row", "One request may embed at most 1 row in all (MASTHEAD_MAX_EMBEDDED_ROWS)."},
		{2, "The response would embed more than 2 rows", "One request may embed at most 2 rows in all (MASTHEAD_MAX_EMBEDDED_ROWS)."},
		{20000, "The response would embed more than 20000 rows", "One request may embed at most 20000 rows in all (MASTHEAD_MAX_EMBEDDED_ROWS)."},
	} {
		t.Run(strconv.Itoa(c.limit), func(t *testing.T) {
			err := pg.WithCaller(context.Background(), f.db.Pool, f.caller("viewerA"), pg.ReadOnly, func(tx pgx.Tx) error {
				if _, err := tx.Exec(context.Background(), `select set_config('masthead.max_embedded_rows', $1, true)`, strconv.Itoa(c.limit)); err != nil {
					return err
				}
				_, err := tx.Exec(context.Background(), `select count(app.embedded_row()) from generate_series(1, $1::integer)`, c.limit+1)
				return err
			})
			fe, _ := pg.ErrorFields(err)
			if fe.Code != pg.CodeEmbeddedRows || fe.Message != c.message || fe.Details != c.detail {
				t.Errorf("embedding %d rows past a cap of %d: %q / %q (%v), want %q / %q", c.limit+1, c.limit, fe.Message, fe.Details, err, c.message, c.detail)
			}
		})
	}
}
