package pg_test

import (
	"context"
	"strings"
	"testing"
)

// TestPromoLinkIsAWebAddress: a promo links to an http(s) address or to nothing (migration 037);
// a link stored before the check (it is NOT VALID) stays until its promo is next changed.
func TestPromoLinkIsAWebAddress(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pub := f.draft(t, "Links")
	for _, tc := range []struct {
		link any
		code string
	}{
		{"https://example.test/a?b=c#d", ""},
		{"http://example.test/", ""},
		{nil, ""},
		{"javascript:alert(1)", "23514"},
		{"JAVASCRIPT:alert(1)", "23514"},
		{"ftp://example.test/file", "23514"},
		{"https://exa mple.test/", "23514"},
		{"https://", "23514"},
		{"", "23514"},
		{"see the site", "23514"},
	} {
		_, err := f.exec("editorA", `
			insert into promos (publication_id, channel, body, link) values ($1, 'linkedin', 'hi', $2)
			on conflict (publication_id, channel) do update set link = excluded.link`, pub, tc.link)
		if sqlstate(err) != tc.code {
			t.Errorf("link %v: %v, want %q", tc.link, err, tc.code)
		}
	}

	// A link from before the check: its row is kept, and the next change to the promo must
	// give it a web address.
	own := f.db.Owner(t)
	ctx := context.Background()
	var check string // as the schema has it: put back as it was
	mustScan(t, own.QueryRow(ctx, `select pg_get_constraintdef(oid) from pg_constraint
		where conrelid = 'promos'::regclass and conname = 'link_is_an_http_url'`), &check)
	if !strings.HasSuffix(check, " NOT VALID") {
		t.Fatalf("link_is_an_http_url is %q: the rows from before 037 are not meant to be checked", check)
	}
	for _, q := range []string{
		`alter table promos drop constraint link_is_an_http_url`,
		`update promos set link = 'see the site' where channel = 'linkedin'`,
		`alter table promos add constraint link_is_an_http_url ` + check,
	} {
		if _, err := own.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.count("editorA", `select count(*) from promos where link = 'see the site'`); n != 1 {
		t.Errorf("%d promos kept their old link, want 1", n)
	}
	if _, err := f.exec("editorA", `update promos set body = 'hello' where publication_id = $1`, pub); sqlstate(err) != "23514" {
		t.Errorf("changing a promo with an old link: %v, want 23514", err)
	}
	if _, err := f.exec("editorA", `update promos set body = 'hello', link = 'https://example.test/' where publication_id = $1`, pub); err != nil {
		t.Errorf("changing it with a web address: %v", err)
	}
}
