package pg_test

import (
	"strings"
	"testing"
)

// TestFreezeAsksRoleInThePublicationsProject pins who the content freeze speaks for (on
// updates and deletes app.content_frozen, which since 027 asks app.editable_status one question
// per publication; on inserts, since 039, app.content_insert, whose one lookup also fills the
// project and says "not found"): an
// editor, lead or owner of the publication's own project meets the freeze, on every row of a
// many-row statement, while anyone else is left to the table's policies and lookups, which
// answer as they always did (a reviewer's write refused by the policy, another tenant's
// publication not found), never with the freeze's PT409, which would tell an outsider the
// publication's status.
func TestFreezeAsksRoleInThePublicationsProject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	draft := f.dressedIn(t, "draft")
	reviewing := f.dressedIn(t, "reviewing")
	changes := f.dressedIn(t, "changes_requested")
	frozenBefore := f.content(t, reviewing)

	for _, who := range []string{"editorA", "leadA", "ownerA"} {
		t.Run(who, func(t *testing.T) {
			// One statement over an open and a frozen publication: refused whole.
			_, err := f.try(who, `insert into promos (publication_id, channel, body)
				select unnest($1::uuid[]), 'bluesky', 'both'`, []string{draft, reviewing})
			if sqlstate(err) != "PT409" {
				t.Fatalf("insert over a draft and a publication in review: %v, want PT409", err)
			}
			// A delete over both, the frozen one's row met wherever it comes in the statement.
			_, err = f.try(who, `delete from promos where publication_id = any ($1::uuid[])`, []string{draft, reviewing})
			if sqlstate(err) != "PT409" {
				t.Fatalf("delete over a draft and a publication in review: %v, want PT409", err)
			}
			// Both open: every row written.
			if n, err := f.try(who, `insert into promos (publication_id, channel, body)
				select unnest($1::uuid[]), 'bluesky', 'both'`, []string{draft, changes}); err != nil || n != 2 {
				t.Fatalf("insert over a draft and a publication with changes requested: %d rows, %v", n, err)
			}
		})
	}

	// Not an editor there: the freeze says nothing; the policy refuses a reviewer of A, and a
	// publication of a project the caller is not in looks missing.
	_, err := f.try("reviewerA", `insert into promos (publication_id, channel, body) values ($1, 'bluesky', 'r')`, reviewing)
	if sqlstate(err) != "42501" {
		t.Errorf("a reviewer's promo on a publication in review: %v, want the policy's 42501", err)
	}
	_, err = f.try("editorB", `insert into promos (publication_id, channel, body) values ($1, 'bluesky', 'b')`, reviewing)
	if sqlstate(err) != "23503" {
		t.Errorf("another tenant's editor, on a publication in review: %v, want 23503 (not found)", err)
	}
	_, err = f.try("editorB", `delete from promos where publication_id = $1`, reviewing)
	if err != nil {
		t.Errorf("another tenant's editor deleting promos they cannot see: %v, want nothing done", err)
	}
	if after := f.content(t, reviewing); after != frozenBefore {
		t.Fatalf("the frozen publication changed from %q to %q", frozenBefore, after)
	}
}

// TestGuardRoleOnlyForEditsAndMoves: since 027 the guard looks the caller's role up only for
// an update that edits content or moves the publication; a version bump (a promo change) asks
// nothing. Each role still gets exactly what its role allows.
func TestGuardRoleOnlyForEditsAndMoves(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.draft(t, "Guarded")
	_, v0 := f.statusOf(t, id)
	// A bump: an editor's promo raises the version by one.
	if _, err := f.exec("editorA", `insert into promos (publication_id, channel, body) values ($1, 'bluesky', 'hi')`, id); err != nil {
		t.Fatal(err)
	}
	if _, v := f.statusOf(t, id); v != v0+1 {
		t.Fatalf("version %d after a promo, want %d", v, v0+1)
	}
	// An edit: a reviewer may not, an editor may.
	if _, err := f.try("reviewerA", `update publications set title = 'By a reviewer' where id = $1`, id); sqlstate(err) != "42501" {
		t.Errorf("a reviewer's edit: %v, want 42501", err)
	}
	if n, err := f.try("editorA", `update publications set title = 'By the editor' where id = $1`, id); err != nil || n != 1 {
		t.Errorf("the editor's edit: %d rows, %v", n, err)
	}
	// A move: a reviewer may not submit, an editor may.
	if _, err := f.try("reviewerA", `update publications set status = 'reviewing' where id = $1`, id); sqlstate(err) != "42501" {
		t.Errorf("a reviewer's submit: %v, want 42501", err)
	}
	if n, err := f.try("editorA", `update publications set status = 'reviewing' where id = $1`, id); err != nil || n != 1 {
		t.Errorf("the editor's submit: %d rows, %v", n, err)
	}
}

// TestAuditInsertsOnlyFromTriggers: since 027 the append-only triggers of the audit and the
// revisions test the trigger depth in their WHEN clause. The workflow's triggers still write
// both (a submit: one event, one revision), while an insert from anywhere else is refused,
// whoever makes it: the table owner, a statement in a function (not a trigger), a member.
func TestAuditInsertsOnlyFromTriggers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.draft(t, "Audited")
	if _, _, err := f.rpc("editorA", "submit_for_review", id); err != nil {
		t.Fatal(err)
	}
	own := f.db.Owner(t)
	var events, revisions int
	mustScan(t, own.QueryRow(t.Context(), `select (select count(*) from status_events where publication_id = $1),
		(select count(*) from publication_revisions where publication_id = $1)`, id), &events, &revisions)
	if events != 1 || revisions != 1 {
		t.Fatalf("after a submit: %d events and %d revisions, want 1 and 1", events, revisions)
	}
	event := `insert into status_events (project_id, publication_id, from_status, to_status, intent, via)
		select project_id, id, 'draft', 'reviewing', 'submit', 'direct' from publications where id = '` + id + `'`
	revision := `insert into publication_revisions (project_id, publication_id, round, version, snapshot)
		select project_id, id, 9, version, '{}' from publications where id = '` + id + `'`
	for _, q := range []string{event, revision} {
		for _, wrapped := range []string{q, `do $$ begin ` + q + `; end $$`} {
			if _, err := own.Exec(t.Context(), wrapped); sqlstate(err) != "42501" {
				t.Errorf("the owner ran %q: %v, want 42501", wrapped, err)
			}
		}
		if _, err := f.try("ownerA", q); err == nil {
			t.Errorf("a project owner ran %q", q)
		}
	}
	mustScan(t, own.QueryRow(t.Context(), `select (select count(*) from status_events where publication_id = $1),
		(select count(*) from publication_revisions where publication_id = $1)`, id), &events, &revisions)
	if events != 1 || revisions != 1 {
		t.Fatalf("after the refused inserts: %d events and %d revisions, want 1 and 1", events, revisions)
	}
}

// TestPublicationChecksRewritten: 027 rewrote two CHECKs of publications to cost less; the
// rules are the same. A slug is one lowercase letter or digit and then at most 199 of those or
// hyphens; a body has at most 200,000 characters, however many bytes they take (TestTextBounds
// has the two-byte case at the bound; here the one-byte one, which the byte count decides).
func TestPublicationChecksRewritten(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	slugs := []struct {
		slug string
		ok   bool
	}{
		{"a", true}, {"9", true}, {"a-b-9", true}, {"a--", true},
		{"a" + strings.Repeat("-", 199), true}, {strings.Repeat("x", 200), true},
		{strings.Repeat("x", 201), false}, {"a" + strings.Repeat("b", 200), false},
		{"", false}, {"-a", false}, {"A", false}, {"aB", false}, {"a_b", false}, {"a b", false},
		{"é", false}, {"aé", false}, {"a\n", false}, {"a\nb", false}, {"a.b", false},
	}
	for _, c := range slugs {
		_, err := f.try("editorA", `insert into publications (project_id, collection_id, title, slug) values ($1, $2, 'T', $3)`,
			f.projA, f.collA, c.slug)
		switch {
		case c.ok && err != nil:
			t.Errorf("slug %q refused: %v", c.slug, err)
		case !c.ok && (sqlstate(err) != "23514" || !strings.Contains(err.Error(), "publications_slug_check")):
			t.Errorf("slug %q: %v, want 23514 naming publications_slug_check", c.slug, err)
		}
	}
	draft := f.draft(t, "Long body")
	if _, err := f.try("editorA", `update publications set body = $2 where id = $1`, draft, strings.Repeat("b", 200000)); err != nil {
		t.Errorf("200,000 one-byte characters: %v", err)
	}
	_, err := f.try("editorA", `update publications set body = $2 where id = $1`, draft, strings.Repeat("b", 200001))
	if sqlstate(err) != "23514" || !strings.Contains(err.Error(), "body_at_most_200000_chars") {
		t.Errorf("200,001 one-byte characters: %v, want 23514 naming body_at_most_200000_chars", err)
	}
}
