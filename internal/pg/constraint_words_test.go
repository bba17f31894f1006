package pg_test

import (
	"context"
	"strings"
	"testing"

	"masthead/internal/client"
)

// TestConstraintWords: each constraint whose refusal internal/client words for people (a form's,
// a tool's) is in the schema with the definition its words describe. A migration that changes
// one fails here until its words are read again and its definition below follows.
func TestConstraintWords(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	described := map[string]string{
		"collections_name_check":                   "CHECK (((length(name) >= 1) AND (length(name) <= 200)))",
		"collections_project_id_slug_key":          "UNIQUE (project_id, slug)",
		"collections_slug_check":                   "CHECK ((slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'::text))",
		"invitations_email_check":                  "CHECK (((email ~ '^[^@\\s]+@[^@\\s]+$'::text) AND (length(email) <= 320)))",
		"projects_name_check":                      "CHECK (((length(name) >= 1) AND (length(name) <= 200)))",
		"projects_slug_check":                      "CHECK ((slug ~ '^[a-z0-9][a-z0-9-]{1,62}$'::text))",
		"projects_slug_key":                        "UNIQUE (slug)",
		"publications_title_check":                 "CHECK (((length(title) >= 1) AND (length(title) <= 300)))",
		"site_url_is_an_http_url":                  "CHECK (((site_url ~ '^https?://[^[:space:]]+$'::text) AND (length(site_url) <= 500)))",
		"link_is_an_http_url":                      "CHECK (((link IS NULL) OR (link ~ '^https?://[^[:space:]]+$'::text))) NOT VALID",
		"title_without_control_or_bidi_characters": "CHECK ((title !~ '[[:cntrl:]\\u202a-\\u202e\\u2066-\\u2069]'::text))",
	}
	for _, name := range client.WordedConstraints() {
		var defs []string
		err := f.db.Owner(t).QueryRow(context.Background(), `
			select coalesce(array_agg(pg_get_constraintdef(k.oid)), '{}') from pg_constraint k
			 where k.connamespace = 'public'::regnamespace and k.conname = $1`, name).Scan(&defs)
		if err != nil {
			t.Fatal(err)
		}
		if len(defs) != 1 || defs[0] != described[name] {
			t.Errorf("%s: the schema has %q; its words describe %q", name, defs, described[name])
		}
	}
}

// TestBoundWords: each column whose length bound internal/client names in words has that bound
// in the schema (a constraint <column>_at_most_<n>_<unit> on its table), so a renamed column or
// bound is not silently read as the column's bare name.
func TestBoundWords(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, rc := range client.BoundedColumns() {
		table, column, _ := strings.Cut(rc, ".")
		var n int
		err := f.db.Owner(t).QueryRow(context.Background(), `
			select count(*) from pg_constraint k
			 where k.conrelid = ('public.' || quote_ident($1))::regclass and k.contype = 'c'
			   and k.conname ~ ('^' || $2 || '_at_most_[0-9]+_(chars|bytes|items)$')`, table, column).Scan(&n)
		if err != nil || n != 1 {
			t.Errorf("%s: %d length bounds (%v), want 1", rc, n, err)
		}
	}
}
