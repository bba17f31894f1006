package pg_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// TestMediaLinks: an editor attaches an image with its alt text (required), last; reorders the
// attached images in one write; another tenant's image or publication is not found; a
// publication in review keeps its images as they are; a stale order is refused.
func TestMediaLinks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	id, _, err := f.createDraft("editorA", f.projA, "With pictures", nil)
	if err != nil {
		t.Fatal(err)
	}
	attach := func(user, pub, media, alt string) error {
		return pg.WithCaller(ctx, f.db.Pool, f.caller(user), pg.ReadWrite, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `select attach_media($1, $2, $3)`, pub, media, alt)
			return err
		})
	}
	reorder := func(user, pub string, ids ...string) error {
		return pg.WithCaller(ctx, f.db.Pool, f.caller(user), pg.ReadWrite, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `select count(*) from reorder_media($1, $2)`, pub, ids)
			return err
		})
	}
	if err := attach("editorA", id, f.mediaA, "  "); sqlstate(err) != "PT400" || !strings.Contains(err.Error(), "alt text is required") {
		t.Errorf("no alt text: %v", err)
	}
	for _, m := range []string{f.mediaA, f.mediaB} {
		if err := attach("editorA", id, m, "A harbour at dawn"); err != nil {
			t.Fatalf("attach: %v", err)
		}
	}
	order := func() string {
		var s string
		if err := pg.WithCaller(ctx, f.db.Pool, f.caller("editorA"), pg.ReadOnly, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `select string_agg(media_id::text, ',' order by position) from publication_media where publication_id = $1`, id).Scan(&s)
		}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := order(); got != f.mediaA+","+f.mediaB {
		t.Fatalf("attached in order %s", got)
	}
	if n := f.count("editorA", `select count(*) from media where id = $1 and alt_text = 'A harbour at dawn'`, f.mediaA); n != 1 {
		t.Error("attach did not set the alt text")
	}
	_, v0 := f.statusVersion(t, id)
	if err := reorder("editorA", id, f.mediaB, f.mediaA); err != nil {
		t.Fatal(err)
	}
	if got := order(); got != f.mediaB+","+f.mediaA {
		t.Errorf("after reorder: %s", got)
	}
	if _, v := f.statusVersion(t, id); v <= v0 {
		t.Error("reordering did not bump the version")
	}
	if err := reorder("editorA", id, f.mediaB); sqlstate(err) != "PT409" {
		t.Errorf("a stale order: %v", err)
	}
	if err := attach("editorB", id, f.mediaA, "alt"); sqlstate(err) != "PT404" {
		t.Errorf("another tenant attaches: %v", err)
	}
	if _, _, err := f.rpc("editorA", "submit_for_review", id); err != nil {
		t.Fatal(err)
	}
	if err := reorder("editorA", id, f.mediaA, f.mediaB); sqlstate(err) != "PT409" || !strings.Contains(err.Error(), "can only change while") {
		t.Errorf("reorder in review: %v", err)
	}
}

// statusVersion reads a publication's status and version as the owner.
func (f *fixture) statusVersion(t *testing.T, id string) (string, int) {
	t.Helper()
	var st string
	var v int
	mustScan(t, f.db.Owner(t).QueryRow(context.Background(), `select status, version from publications where id = $1`, id), &st, &v)
	return st, v
}
