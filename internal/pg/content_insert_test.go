package pg_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// oldContentTriggers puts back the row triggers an insert of a promo, media link or review ran
// before 039: for promos and media links content_frozen on insert too, then
// fill_project_from_publication (by name, the order PostgreSQL fires them in); for all three
// fill_project_from_publication as 008 wrote it (app.fill_project_from_publication_was, see
// oldFunction).
var oldContentTriggers = func() string {
	var b strings.Builder
	for _, table := range []string{"promos", "publication_media"} {
		fmt.Fprintf(&b, `drop trigger %[1]s_content_insert on public.%[1]s;
drop trigger %[1]s_content_frozen on public.%[1]s;
create trigger %[1]s_content_frozen before insert or update or delete on public.%[1]s
  for each row execute function app.content_frozen();
create trigger %[1]s_fill_project before insert on public.%[1]s
  for each row execute function app.fill_project_from_publication_was();
`, table)
	}
	b.WriteString(`drop trigger reviews_fill_project on public.reviews;
create trigger reviews_fill_project before insert on public.reviews
  for each row execute function app.fill_project_from_publication_was();`)
	return b.String()
}()

// TestContentInsertDecidesAsBefore: app.content_insert (039), the one row trigger of a promo or
// media link insert, answers every insert as the two triggers it replaced did, error for
// error (code and message) and project_id for project_id, and so does 039's
// fill_project_from_publication for a review written directly: by every member role of project A,
// B's editor, an outsider and the database owner; into a publication of A in every status, B's
// draft and B's published piece, an id that does not exist and none; with project_id left out,
// A's and B's. The same inserts run with 039's trigger and then with the old pair put back, in
// rolled-back transactions, and the answers must be the same. Each kind of answer the rules
// give must turn up, so the comparison covers the freeze, "not found", row-level security,
// the foreign key and success.
func TestContentInsertDecidesAsBefore(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	own := f.db.Owner(t)

	pubs := map[string]string{"missing": "00000000-0000-4000-8000-000000000000", "none": ""}
	for _, status := range []string{"draft", "reviewing", "changes_requested", "approved", "scheduled", "published", "archived"} {
		pubs["A "+status] = f.inStatus(t, status)
	}
	pubs["B draft"] = f.draftBy(t, "editorB", f.projB, "B's draft")
	var mediaB string
	mustScan(t, own.QueryRow(ctx, `insert into media (project_id, storage_path, mime_type) values ($1, 'proj-b/b.png', 'image/png') returning id`, f.projB), &mediaB)
	// B's published piece, written as the owner with the triggers off (B has no reviewer or
	// lead in the fixture to take it there).
	var bPublished string
	err := pgx.BeginFunc(ctx, own, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `set local session_replication_role = replica`); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `insert into publications (project_id, author_id, title, slug, summary, body, status, published_at)
			values ($1, $2, 'B out', 'b-out', 's', 'b', 'published', now()) returning id`, f.projB, f.users["editorB"]).Scan(&bPublished)
	})
	if err != nil {
		t.Fatal(err)
	}
	pubs["B published"] = bPublished

	callers := []string{"ownerA", "leadA", "editorA", "reviewerA", "viewerA", "editorB", "outsider", "owner"}
	projects := map[string]any{"no project": nil, "project A": f.projA, "project B": f.projB}
	inserts := map[string]string{
		"promo":      `insert into promos (project_id, publication_id, channel, body) values ($1, $2, 'mastodon', 'hi') returning project_id::text`,
		"media link": `insert into publication_media (project_id, publication_id, media_id) values ($1, $2, $3) returning project_id::text`,
		"review":     `insert into reviews (project_id, publication_id, verdict, notes) values ($1, $2, 'comment', 'hi') returning project_id::text`,
	}

	// answer runs one insert in a transaction it rolls back and says what came of it.
	answer := func(who, sql string, args ...any) string {
		var got string
		run := func(tx pgx.Tx) error {
			if err := tx.QueryRow(ctx, sql, args...).Scan(&got); err != nil {
				return err
			}
			return errRollback
		}
		var err error
		if who == "owner" {
			err = pgx.BeginFunc(ctx, own, run)
		} else {
			err = pg.WithCaller(ctx, f.db.Pool, f.caller(who), pg.ReadWrite, run)
		}
		// run never returns nil: the insert either failed or was rolled back on purpose.
		if errors.Is(err, errRollback) {
			return "inserted into " + map[string]string{f.projA: "A", f.projB: "B"}[got]
		}
		fe, _ := pg.ErrorFields(err)
		return fe.Code + " " + fe.Message
	}
	answers := func() map[string]string {
		out := map[string]string{}
		for _, who := range callers {
			for pubName, pub := range pubs {
				var pubArg any
				if pub != "" {
					pubArg = pub
				}
				media := f.mediaA
				if strings.HasPrefix(pubName, "B ") {
					media = mediaB
				}
				for projName, proj := range projects {
					for what, sql := range inserts {
						args := []any{proj, pubArg}
						if what == "media link" {
							args = append(args, media)
						}
						out[fmt.Sprintf("%s by %s into %s, %s", what, who, pubName, projName)] = answer(who, sql, args...)
					}
				}
			}
		}
		return out
	}

	now := answers()
	oldFunction(t, f, "008_workflow_rules.sql", "fill_project_from_publication")
	if _, err := own.Exec(ctx, oldContentTriggers); err != nil {
		t.Fatal(err)
	}
	before := answers()

	kinds := map[string]bool{}
	for k, want := range before {
		if got := now[k]; got != want {
			t.Errorf("%s:\n got %s\nwant %s (before 039)", k, got, want)
		}
		kinds[strings.SplitN(want, " ", 2)[0]] = true
	}
	// PT409: the freeze; 23503: not found, and the composite foreign key; 42501: row-level
	// security; inserted: success.
	for _, kind := range []string{"PT409", "23503", "42501", "inserted"} {
		if !kinds[kind] {
			t.Errorf("no insert was answered %s: the cases no longer cover it (answers: %v)", kind, kinds)
		}
	}
	if len(before) != len(callers)*len(pubs)*len(projects)*len(inserts) {
		t.Errorf("%d answers, want one per case", len(before))
	}
}
