package pg_test

import (
	"context"
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
