package pg_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// createDraft calls create_draft as user and returns the new row's id, slug and version.
func (f *fixture) createDraft(user, project, title string, slug any) (id, gotSlug string, err error) {
	err = pg.WithCaller(context.Background(), f.db.Pool, f.caller(user), pg.ReadWrite, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(),
			`select id, slug from create_draft(project_id => $1, title => $2, summary => 'In short', body => 'Text', slug => $3)`,
			project, title, slug).Scan(&id, &gotSlug)
	})
	return
}

// updateDraft calls update_draft as user with a new body and returns the new version.
func (f *fixture) updateDraft(user, id string, expected any, body string) (version int, err error) {
	err = pg.WithCaller(context.Background(), f.db.Pool, f.caller(user), pg.ReadWrite, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(),
			`select version from update_draft(publication_id => $1, expected_version => $2, body => $3)`,
			id, expected, body).Scan(&version)
	})
	return
}

// TestCreateDraft: editors and up create drafts they author, with a slug derived from the
// title and made unique in the project; other roles are refused in words, and another tenant's
// project is not found.
func TestCreateDraft(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id, slug, err := f.createDraft("editorA", f.projA, "Spring Launch: What's New?", nil)
	if err != nil || slug != "spring-launch-what-s-new" {
		t.Fatalf("created %q: %v", slug, err)
	}
	if n := f.count("editorA", `select count(*) from publications where id = $1 and status = 'draft' and author_id = auth.uid() and version = 1`, id); n != 1 {
		t.Error("the draft is not the caller's, at version 1")
	}
	if _, slug, err = f.createDraft("leadA", f.projA, "Spring launch — what's new", nil); err != nil || slug != "spring-launch-what-s-new-2" {
		t.Errorf("a second with the same title: %q %v", slug, err)
	}
	if _, slug, err = f.createDraft("editorA", f.projA, "!!!", nil); err != nil || slug != "untitled" {
		t.Errorf("nothing to derive from: %q %v", slug, err)
	}
	refusals := []struct {
		name, user, project, title string
		slug                       any
		code, words                string
	}{
		{"a reviewer", "reviewerA", f.projA, "Mine", nil, "42501", "A reviewer cannot create publications"},
		{"a viewer", "viewerA", f.projA, "Mine", nil, "42501", "A viewer cannot create publications"},
		{"another tenant's project", "editorB", f.projA, "Mine", nil, "PT404", "project not found"},
		{"an outsider", "outsider", f.projA, "Mine", nil, "PT404", "project not found"},
		{"no title", "editorA", f.projA, "  ", nil, "PT400", "a title is required"},
		{"a taken slug", "editorA", f.projA, "Other", "untitled", "PT409", "the slug untitled is taken"},
		{"a bad slug", "editorA", f.projA, "Other", "Not A Slug", "PT400", "lower-case letters"},
		{"a title over its bound", "editorA", f.projA, strings.Repeat("t", 501), nil, "23514", "title"},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			before := f.count("ownerA", `select count(*) from publications`)
			_, _, err := f.createDraft(r.user, r.project, r.title, r.slug)
			if sqlstate(err) != r.code || !strings.Contains(err.Error(), r.words) {
				t.Errorf("got %v, want %s %q", err, r.code, r.words)
			}
			if after := f.count("ownerA", `select count(*) from publications`); after != before {
				t.Error("a refused create_draft stored a row")
			}
		})
	}
}

// TestUpdateDraft: a save at the version read changes the text and bumps the version; a save
// against an older version changes nothing and says which version it is at; frozen states and
// roles that may not edit are refused in words.
func TestUpdateDraft(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id, _, err := f.createDraft("editorA", f.projA, "Revisable", nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.updateDraft("editor2A", id, 1, "A better body")
	if err != nil || v != 2 {
		t.Fatalf("save at version 1: version %d, %v", v, err)
	}
	_, err = f.updateDraft("editorA", id, 1, "My stale body")
	if sqlstate(err) != "PT409" || !strings.Contains(err.Error(), "it is at version 2, you read version 1") {
		t.Errorf("a stale save: %v", err)
	}
	if n := f.count("editorA", `select count(*) from publications where id = $1 and body = 'A better body' and version = 2`, id); n != 1 {
		t.Error("a stale save changed the publication")
	}
	for _, r := range []struct {
		user, code, words string
		expected          any
	}{
		{"reviewerA", "42501", "A reviewer cannot edit publications", 2},
		{"viewerA", "42501", "A viewer cannot edit publications", 2},
		{"viewerA", "42501", "A viewer cannot edit publications", 1}, // the role first, whatever the version
		{"editorB", "PT404", "publication not found", 2},
		{"editorA", "PT400", "expected_version is required", nil},
	} {
		if _, err := f.updateDraft(r.user, id, r.expected, "Nope"); sqlstate(err) != r.code || !strings.Contains(err.Error(), r.words) {
			t.Errorf("%s: got %v, want %s %q", r.user, err, r.code, r.words)
		}
	}
	if _, _, err := f.rpc("editorA", "submit_for_review", id); err != nil {
		t.Fatal(err)
	}
	_, err = f.updateDraft("editorA", id, 3, "Edited in review")
	if sqlstate(err) != "PT409" || !strings.Contains(err.Error(), "only drafts can be edited") {
		t.Errorf("editing in review: %v", err)
	}
	// Only what is given changes; a collection can be set and cleared.
	if _, _, err := f.rpc("editorA", "withdraw", id); err != nil {
		t.Fatal(err)
	}
	var coll *string
	err = pg.WithCaller(context.Background(), f.db.Pool, f.caller("editorA"), pg.ReadWrite, func(tx pgx.Tx) error {
		if _, err := tx.Exec(context.Background(), `select update_draft(publication_id => $1, expected_version => 4, collection_id => $2)`, id, f.collA); err != nil {
			return err
		}
		return tx.QueryRow(context.Background(), `select (update_draft(publication_id => $1, expected_version => 5, clear_collection => true)).collection_id`, id).Scan(&coll)
	})
	if err != nil || coll != nil {
		t.Errorf("set then clear the collection: %v %v", coll, err)
	}
	if n := f.count("editorA", `select count(*) from publications where id = $1 and body = 'A better body' and title = 'Revisable'`, id); n != 1 {
		t.Error("arguments left out changed")
	}
}

// TestDeleteDraft: a draft never submitted can be deleted by an editor; one with a history is
// refused in words (archive it instead), not with a foreign-key error.
func TestDeleteDraft(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	fresh, _, _ := f.createDraft("editorA", f.projA, "Fresh", nil)
	if n, err := f.exec("editorA", `delete from publications where id = $1`, fresh); err != nil || n != 1 {
		t.Errorf("delete a fresh draft: %d %v", n, err)
	}
	used, _, _ := f.createDraft("editorA", f.projA, "Used", nil)
	if _, _, err := f.rpc("editorA", "submit_for_review", used); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.rpc("editorA", "withdraw", used); err != nil {
		t.Fatal(err)
	}
	_, err := f.exec("editorA", `delete from publications where id = $1`, used)
	if sqlstate(err) != "PT409" || !strings.Contains(err.Error(), "has a history") {
		t.Errorf("delete a draft with history: %v", err)
	}
}
