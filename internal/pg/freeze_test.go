package pg_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
)

// dress gives a draft a promo on linkedin (not one of the project's default channels, which
// readiness fills) and media item A, with alt text, as its editor.
func (f *fixture) dress(t *testing.T, pub string) {
	t.Helper()
	if _, err := f.exec("editorA", `insert into promos (publication_id, channel, body) values ($1, 'linkedin', 'hi')`, pub); err != nil {
		t.Fatal(err)
	}
	if _, err := f.exec("editorA", `insert into publication_media (publication_id, media_id) values ($1, $2)`, pub, f.mediaA); err != nil {
		t.Fatal(err)
	}
	if _, err := f.exec("editorA", `update media set alt_text = 'A harbour at dawn' where id = $1`, f.mediaA); err != nil {
		t.Fatal(err)
	}
}

// dressedIn is inStatus for a publication that got its promo and media while still a draft.
func (f *fixture) dressedIn(t *testing.T, status string) string {
	t.Helper()
	id := f.draft(t, fmt.Sprintf("Dressed %s %d", status, f.seq.Add(1)))
	f.dress(t, id)
	if status == "approved" || status == "scheduled" || status == "published" {
		f.makeReady(t, id)
	}
	f.walk(t, id, status)
	return id
}

// walk moves a draft to status along paths.
func (f *fixture) walk(t *testing.T, id, status string) {
	t.Helper()
	for _, s := range paths[status] {
		var err error
		if s.fn == "schedule" {
			_, _, err = f.rpcSchedule(s.user, id, s.arg)
		} else {
			_, _, err = f.rpc(s.user, s.fn, id, s.args()...)
		}
		if err != nil {
			t.Fatalf("walking to %s: %s by %s: %v", status, s.fn, s.user, err)
		}
	}
}

// content is everything a refusal must leave alone: the publication's status, version, date,
// title, slug, summary, body and collection, its promos and media links, its audit and its
// reviews.
func (f *fixture) content(t *testing.T, pub string) string {
	t.Helper()
	var s string
	mustScan(t, f.db.Owner(t).QueryRow(context.Background(), `
		select concat_ws('|', p.status, p.version, p.scheduled_for, p.title, p.slug, p.summary, p.body, p.collection_id,
		  (select string_agg(channel || ':' || body, ',' order by channel) from promos where publication_id = p.id),
		  (select string_agg(media_id || '@' || position, ',' order by media_id) from publication_media where publication_id = p.id),
		  (select count(*) from status_events where publication_id = p.id),
		  (select count(*) from reviews where publication_id = p.id))
		from publications p where p.id = $1`, pub), &s)
	return s
}

// TestContentFrozen: title, slug, summary, body, collection, promos and media links change only
// while a publication is a draft or has changes requested; each allowed change bumps the version by one, and each refusal is a
// 409 that changes nothing.
func TestContentFrozen(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	writes := []struct {
		name, sql string
		extra     func() []any
	}{
		{"edit title", `update publications set title = 'Edited' where id = $1`, nil},
		{"edit slug", `update publications set slug = slug || '-edited' where id = $1`, nil},
		{"edit summary", `update publications set summary = 'Edited summary' where id = $1`, nil},
		{"edit body", `update publications set body = '# Edited' where id = $1`, nil},
		{"file in collection", `update publications set collection_id = $2 where id = $1`, func() []any { return []any{f.collA} }},
		{"insert promo", `insert into promos (publication_id, channel, body) values ($1, 'bluesky', 'new')`, nil},
		{"update promo", `update promos set body = 'changed' where publication_id = $1`, nil},
		{"delete promo", `delete from promos where publication_id = $1`, nil},
		{"attach media", `insert into publication_media (publication_id, media_id, position) values ($1, $2, 2)`, func() []any { return []any{f.mediaB} }},
		{"move media", `update publication_media set position = 5 where publication_id = $1`, nil},
		{"detach media", `delete from publication_media where publication_id = $1`, nil},
	}
	open := map[string]bool{"draft": true, "changes_requested": true}
	for _, st := range statuses {
		for _, w := range writes {
			for _, who := range []string{"editorA", "leadA"} {
				t.Run(st+"/"+w.name+"/"+who, func(t *testing.T) {
					id := f.dressedIn(t, st)
					before := f.content(t, id)
					_, v0 := f.statusOf(t, id)
					args := []any{id}
					if w.extra != nil {
						args = append(args, w.extra()...)
					}
					n, err := f.exec(who, w.sql, args...)
					if open[st] {
						if err != nil || n != 1 {
							t.Fatalf("refused on %s: %d rows, %v", st, n, err)
						}
						if _, v := f.statusOf(t, id); v != v0+1 {
							t.Fatalf("version %d after the change, want %d", v, v0+1)
						}
						return
					}
					if sqlstate(err) != "PT409" {
						t.Fatalf("on %s: got %d rows, %v; want PT409", st, n, err)
					}
					if after := f.content(t, id); after != before {
						t.Fatalf("refusal changed %q to %q", before, after)
					}
				})
			}
		}
	}
}

// TestContentChangeCaughtByVersion: a promo changed after someone loaded the publication makes
// their expected_version stale.
func TestContentChangeCaughtByVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.draft(t, "Versioned")
	f.dress(t, id)
	_, v := f.statusOf(t, id)
	if _, err := f.exec("editor2A", `update promos set body = 'sneaky' where publication_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.rpc("editorA", "submit_for_review", id, "ready", v); sqlstate(err) != "PT409" {
		t.Fatalf("submit with the version before the promo change: %v, want PT409", err)
	}
}

// TestDirectStatusHeldToRPCRules: a PATCH of status meets the RPC's rules: the role, no
// self-approval, the required note (refused, naming the RPC), and the verdict row.
func TestDirectStatusHeldToRPCRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	patch := `update publications set status = $2 where id = $1`
	refusals := []struct {
		name, from, who, to, code, says string
	}{
		{"changes requested without a note", "reviewing", "reviewerA", "changes_requested", "PT400", "request_changes(publication_id, note)"},
		{"reopen without a note", "approved", "leadA", "draft", "PT400", "reopen(publication_id, note)"},
		{"reopen a scheduled one without a note", "scheduled", "ownerA", "draft", "PT400", "reopen(publication_id, note)"},
		{"author requests changes", "reviewing", "editorA", "changes_requested", "42501", "An editor cannot request changes"},
		{"editor approves", "reviewing", "editor2A", "approved", "42501", "An editor cannot approve"},
		{"editor reopens", "approved", "editorA", "draft", "42501", "An editor cannot reopen"},
	}
	for _, c := range refusals {
		id := f.inStatus(t, c.from)
		before := f.content(t, id)
		_, err := f.exec(c.who, patch, id, c.to)
		if sqlstate(err) != c.code || err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %s saying %q", c.name, err, c.code, c.says)
		}
		if after := f.content(t, id); after != before {
			t.Errorf("%s: refusal changed %q to %q", c.name, before, after)
		}
	}

	// An author who leads may not approve their own work directly either.
	own := f.draftBy(t, "leadA", f.projA, "Lead's own")
	if _, _, err := f.rpc("leadA", "submit_for_review", own); err != nil {
		t.Fatal(err)
	}
	if _, err := f.exec("leadA", patch, own, "approved"); sqlstate(err) != "42501" {
		t.Errorf("self-approval by PATCH: %v", err)
	}

	// A direct approval writes the verdict, audited as direct.
	id := f.inStatus(t, "reviewing")
	if _, err := f.exec("reviewerA", patch, id, "approved"); err != nil {
		t.Fatal(err)
	}
	evs := f.events(t, id)
	last := evs[len(evs)-1]
	if last.via != "direct" || last.intent != "approve" || last.actor == nil || *last.actor != f.users["reviewerA"] {
		t.Errorf("direct approve audited as %+v", last)
	}
	var verdicts int
	mustScan(t, f.db.Owner(t).QueryRow(context.Background(),
		`select count(*) from reviews where publication_id = $1 and verdict = 'approved' and reviewer_id = $2`, id, f.users["reviewerA"]), &verdicts)
	if verdicts != 1 {
		t.Errorf("%d approved verdicts after a direct approve, want 1", verdicts)
	}
	// Over everything this test did, approve events and approved verdicts agree.
	var events, reviews int
	mustScan(t, f.db.Owner(t).QueryRow(context.Background(), `
		select (select count(*) from status_events where intent = 'approve'),
		       (select count(*) from reviews where verdict = 'approved')`), &events, &reviews)
	if events != reviews || events == 0 {
		t.Errorf("%d approve events, %d approved verdicts", events, reviews)
	}
}

// TestReopen: reopen takes approved and scheduled publications back to draft for leads and
// owners, needs a note, clears the date and is audited; everyone and everything else is refused
// without a change.
func TestReopen(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, from := range []string{"approved", "scheduled"} {
		for _, who := range []string{"leadA", "ownerA"} {
			id := f.dressedIn(t, from)
			_, v := f.statusOf(t, id)
			st, v2, err := f.rpc(who, "reopen", id, "the figures changed", v)
			if err != nil || st != "draft" || v2 != v+1 {
				t.Fatalf("reopen %s by %s: %s v%d %v", from, who, st, v2, err)
			}
			var date *string
			mustScan(t, f.db.Owner(t).QueryRow(context.Background(), `select scheduled_for::text from publications where id = $1`, id), &date)
			if date != nil {
				t.Errorf("reopened %s still scheduled for %s", from, *date)
			}
			evs := f.events(t, id)
			e := evs[len(evs)-1]
			if e.from != from || e.to != "draft" || e.intent != "reopen" || e.via != "rpc" || e.note != "the figures changed" || *e.actor != f.users[who] {
				t.Errorf("reopen audited as %+v", e)
			}
			// Back in the editor's hands: promos can change again.
			if _, err := f.exec("editorA", `update promos set body = 'fixed' where publication_id = $1`, id); err != nil {
				t.Errorf("promo after reopen: %v", err)
			}
		}
	}
	refused := []struct {
		from, who, note, code string
	}{
		{"approved", "editorA", "x", "42501"},
		{"approved", "reviewerA", "x", "42501"},
		{"scheduled", "viewerA", "x", "42501"},
		{"approved", "leadA", " ", "PT400"},
		{"draft", "leadA", "x", "PT409"},
		{"reviewing", "leadA", "x", "PT409"},
		{"published", "ownerA", "x", "PT409"},
		{"archived", "ownerA", "x", "PT409"},
	}
	for _, c := range refused {
		id := f.inStatus(t, c.from)
		before := f.content(t, id)
		if _, _, err := f.rpc(c.who, "reopen", id, c.note); sqlstate(err) != c.code {
			t.Errorf("reopen %s by %s (note %q): %v, want %s", c.from, c.who, c.note, err, c.code)
		}
		if after := f.content(t, id); after != before {
			t.Errorf("refused reopen changed %q to %q", before, after)
		}
	}
}

// TestScheduleBounds: infinite dates, absurd years and dates past the horizon are 400s, by RPC
// and by PATCH; a date inside the horizon is accepted.
func TestScheduleBounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bad := []string{"infinity", "-infinity", "12345-01-01T00:00:00Z", "2999-01-01T00:00:00Z"}
	for _, at := range bad {
		id := f.inStatus(t, "approved")
		before := f.content(t, id)
		err := pg.WithCaller(context.Background(), f.db.Pool, f.caller("leadA"), pg.ReadWrite, func(tx pgx.Tx) error {
			_, err := tx.Exec(context.Background(), `select schedule($1, $2::timestamptz)`, id, at)
			return err
		})
		if sqlstate(err) != "PT400" {
			t.Errorf("schedule at %s: %v, want PT400", at, err)
		}
		if _, err := f.exec("leadA", `update publications set status = 'scheduled', scheduled_for = $2::timestamptz where id = $1`, id, at); sqlstate(err) != "PT400" {
			t.Errorf("PATCH schedule at %s: %v, want PT400", at, err)
		}
		if after := f.content(t, id); after != before {
			t.Errorf("refused %s changed %q to %q", at, before, after)
		}
	}
	sch := f.inStatus(t, "scheduled")
	if _, err := f.exec("leadA", `update publications set scheduled_for = 'infinity' where id = $1`, sch); sqlstate(err) != "PT400" {
		t.Errorf("moving a scheduled date to infinity: %v", err)
	}
	if _, _, err := f.rpcSchedule("leadA", f.inStatus(t, "approved"), "6 years"); sqlstate(err) != "PT400" || !strings.Contains(err.Error(), "masthead.schedule_horizon") {
		t.Errorf("6 years ahead: %v, want PT400 naming the setting", err)
	}
	if _, _, err := f.rpcSchedule("leadA", f.inStatus(t, "approved"), "4 years 11 months"); err != nil {
		t.Errorf("inside the horizon: %v", err)
	}
}

// TestTextBounds: every user-writable text column refuses a value over its bound with a check
// violation naming the column and the bound, and accepts one at the bound.
func TestTextBounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	draft := f.draft(t, "Bounded")
	f.dress(t, draft)
	cases := []struct {
		who, sql, constraint string
		args                 func(v string) []any
		bound                int
		least                int // a shorter value is refused by the same constraint
	}{
		{"editorA", `update publications set title = $2 where id = $1`, "publications_title_check",
			func(v string) []any { return []any{draft, v} }, 300, 1},
		{"ownerA", `update projects set name = $2 where id = $1`, "projects_name_check",
			func(v string) []any { return []any{f.projA, v} }, 200, 1},
		{"leadA", `update collections set name = $2 where id = $1`, "collections_name_check",
			func(v string) []any { return []any{f.collA, v} }, 200, 1},
		{"editorA", `insert into promos (publication_id, channel, body) values ($1, $2, 'hi')`, "channel_at_most_31_chars",
			func(v string) []any { return []any{draft, v} }, 31, 0},
		{"editorA", `update profiles set display_name = $2 where id = $1`, "display_name_at_most_100_chars",
			func(v string) []any { return []any{f.users["editorA"], v} }, 100, 0},
		{"leadA", `update collections set description = $2 where id = $1`, "description_at_most_2000_chars",
			func(v string) []any { return []any{f.collA, v} }, 2000, 0},
		{"editorA", `update publications set summary = $2 where id = $1`, "summary_at_most_2000_chars",
			func(v string) []any { return []any{draft, v} }, 2000, 0},
		{"editorA", `update publications set body = $2 where id = $1`, "body_at_most_200000_chars",
			func(v string) []any { return []any{draft, v} }, 200000, 0},
		{"editorA", `update promos set body = $2 where publication_id = $1`, "body_at_most_5000_chars",
			func(v string) []any { return []any{draft, v} }, 5000, 0},
		// A link is a web address (037): the same length, written as one.
		{"editorA", `update promos set link = $2 where publication_id = $1`, "link_at_most_2000_chars",
			func(v string) []any { return []any{draft, "https://x.test/" + string([]rune(v)[15:])} }, 2000, 0},
		{"editorA", `update media set alt_text = $2 where id = $1`, "alt_text_at_most_1000_chars",
			func(v string) []any { return []any{f.mediaA, v} }, 1000, 0},
		{"reviewerA", `insert into reviews (publication_id, verdict, notes) values ($1, 'comment', $2)`, "notes_at_most_20000_chars",
			func(v string) []any { return []any{draft, v} }, 20000, 0},
	}
	for _, c := range cases {
		_, err := f.try(c.who, c.sql, c.args(strings.Repeat("é", c.bound))...)
		if c.constraint == "channel_at_most_31_chars" {
			// No channel is called that: at its bound the foreign key refuses it, not the bound.
			if sqlstate(err) != "23503" {
				t.Errorf("%s at its bound: %v, want the foreign key's 23503", c.constraint, err)
			}
		} else if err != nil {
			t.Errorf("%s at its bound: %v", c.constraint, err)
		}
		_, err = f.try(c.who, c.sql, c.args(strings.Repeat("é", c.bound+1))...)
		if sqlstate(err) != "23514" || !strings.Contains(err.Error(), c.constraint) {
			t.Errorf("%s over its bound: %v", c.constraint, err)
		}
		if got := pg.HTTPStatus(sqlstate(err), false); got != 400 {
			t.Errorf("%s maps to %d, want 400", c.constraint, got)
		}
		if c.least > 0 {
			_, err := f.try(c.who, c.sql, c.args(strings.Repeat("é", c.least-1))...)
			if sqlstate(err) != "23514" || !strings.Contains(err.Error(), c.constraint) {
				t.Errorf("%s under its least length: %v", c.constraint, err)
			}
		}
	}
	// A channel of a few thousand characters that no compression shrinks was refused by the
	// unique index on (publication_id, channel), a 500, before its bound.
	if _, err := f.try("editorA", `insert into promos (publication_id, channel, body)
		values ($1, (select string_agg(md5(i::text), '') from generate_series(1, 400) i), 'hi')`, draft); sqlstate(err) != "23514" {
		t.Errorf("a 12,800-character channel: %v, want 23514", err)
	}
	// A media path is bounded in bytes, at 1024 as the storage surface bounds a key (S3's
	// limit), however it is written: inserted, or moved (the storage API's update, migration
	// 014). 1024 bytes pass whatever the characters; ASCII paths of 1001 to 1024 characters
	// were refused by migration 008's bound of 1000 characters, which the storage surface does
	// not have (migration 032 dropped it).
	ctx := context.Background()
	pathWrites := []struct {
		name  string
		write func(path string) error
	}{
		{"insert", func(path string) error {
			_, err := f.try("editorA", `insert into media (project_id, storage_path, mime_type) values ($1, $2, 'image/png')`, f.projA, path)
			return err
		}},
		{"move", func(path string) error {
			c := f.caller("editorA")
			c.Settings = append(c.Settings, pg.Setting{Name: []byte("masthead.storage_api"), Value: []byte("on")})
			err := pg.WithCaller(ctx, f.db.Pool, c, pg.ReadWrite, func(tx pgx.Tx) error {
				var id string
				if err := tx.QueryRow(ctx, `insert into media (project_id, storage_path, mime_type) values ($1, 'proj-a/moving.png', 'image/png') returning id`, f.projA).Scan(&id); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `update media set storage_path = $2 where id = $1`, id, path); err != nil {
					return err
				}
				return errRollback
			})
			if errors.Is(err, errRollback) {
				return nil
			}
			return err
		}},
	}
	// Not one character repeated, which the index would compress below its limit: 1000
	// four-byte characters were within the former bound of 1000 characters but too long for
	// the unique index (a 500), and the byte bound refuses them first.
	var incompressible strings.Builder
	for i := range 990 {
		incompressible.WriteRune(rune(0x10000 + i*7919%50000))
	}
	for _, w := range pathWrites {
		for _, c := range []struct {
			name, path string
			ok         bool
		}{
			{"1024 ASCII characters", "proj-a/" + strings.Repeat("a", 1017), true},
			{"1001 ASCII characters", "proj-a/" + strings.Repeat("a", 994), true},
			{"512 two-byte characters, 1024 bytes", "proj-a/" + strings.Repeat("é", 508) + "a", true},
			{"1025 ASCII characters", "proj-a/" + strings.Repeat("a", 1018), false},
			{"1025 bytes of two-byte characters", "proj-a/" + strings.Repeat("é", 509), false},
			{"997 characters of four bytes", "proj-a/" + incompressible.String(), false},
		} {
			err := w.write(c.path)
			if c.ok && err != nil {
				t.Errorf("%s of a path of %s: %v", w.name, c.name, err)
			}
			if !c.ok && (sqlstate(err) != "23514" || !strings.Contains(err.Error(), "storage_path_at_most_1024_bytes")) {
				t.Errorf("%s of a path of %s (%d bytes): %v, want 23514 storage_path_at_most_1024_bytes", w.name, c.name, len(c.path), err)
			}
		}
	}
	// An owner's default channels: known slugs only (a trigger), and at most 50 of them.
	defaults := `update projects set default_channels = array_fill('x'::text, array[$2::int]) where id = $1`
	if _, err := f.try("ownerA", defaults, f.projA, 50); err != nil {
		t.Errorf("50 default channels: %v", err)
	}
	if _, err := f.try("ownerA", defaults, f.projA, 51); sqlstate(err) != "23514" || !strings.Contains(err.Error(), "default_channels_at_most_50_items") {
		t.Errorf("51 default channels: %v", err)
	}
	// A workflow note is bounded too, whichever table it lands in first.
	rev := f.inStatus(t, "reviewing")
	if _, _, err := f.rpc("reviewerA", "request_changes", rev, strings.Repeat("n", 20001)); sqlstate(err) != "23514" {
		t.Errorf("a 20001-character note: %v", err)
	}
}

// TestTextColumnsBounded: every text column of schema public that a signed-in caller may
// insert or update (text arrays included) has a length bound: a length in its type
// (varchar(n)), a CHECK on its length, or a CHECK that it is one of a fixed set; an array, a
// CHECK on how many items it holds. The few columns bounded some other way are listed with
// how, and a write too long for each is shown refused. TestTextBounds pushes the bounds.
func TestTextColumnsBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	otherwise := map[string]struct {
		how, who, sql string
		args          []any
		code          string
	}{
		"collections.slug": {"its pattern admits at most 63 characters", "leadA",
			`update collections set slug = $2 where id = $1`, []any{f.collA, strings.Repeat("a", 64)}, "23514"},
		"projects.timezone": {"a time zone PostgreSQL resolves, which it does only for names of at most 255 characters (refused in words before the check, 035)", "ownerA",
			`update projects set timezone = $2 where id = $1`, []any{f.projA, "ABC" + strings.Repeat("a", 300) + "+1"}, "22023"},
		"projects.default_channels": {"each item a known channel (app.check_default_channels), whose slug is at most 31 characters", "ownerA",
			`update projects set default_channels = array[$2] where id = $1`, []any{f.projA, strings.Repeat("x", 32)}, "PT400"},
	}
	rows, err := f.db.Owner(t).Query(context.Background(), `
		select c.relname || '.' || a.attname, a.attname, t.typcategory = 'A',
		       a.atttypmod > 0 or coalesce(et.typlen, t.typlen) > 0,
		       coalesce(array_agg(pg_get_constraintdef(k.oid)) filter (where k.oid is not null), '{}')
		  from pg_class c
		  join pg_namespace n on n.oid = c.relnamespace
		  join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
		  join pg_type t on t.oid = a.atttypid
		  left join pg_type et on et.oid = t.typelem and t.typcategory = 'A'
		  left join pg_constraint k on k.conrelid = c.oid and k.contype = 'c' and a.attnum = any (k.conkey)
		 where n.nspname = 'public' and coalesce(et.typcategory, t.typcategory) = 'S'
		   and (has_column_privilege('authenticated', c.oid, a.attnum, 'INSERT')
		        or has_column_privilege('authenticated', c.oid, a.attnum, 'UPDATE'))
		 group by 1, 2, 3, 4
		 order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for rows.Next() {
		var col, name string
		var array, typed bool
		var checks []string
		if err := rows.Scan(&col, &name, &array, &typed, &checks); err != nil {
			t.Fatal(err)
		}
		seen[col] = true
		q := regexp.QuoteMeta(name)
		length := regexp.MustCompile(`\b(char_length|length|octet_length)\(` + q + `\) <= \d+`)
		set := regexp.MustCompile(`\(` + q + ` = ANY \(ARRAY\[`)
		items := regexp.MustCompile(`\bcardinality\(` + q + `\) <= \d+`)
		bounded := typed
		for _, c := range checks {
			bounded = bounded || (array && items.MatchString(c)) || (!array && (length.MatchString(c) || set.MatchString(c)))
		}
		_, listed := otherwise[col]
		switch {
		case array && !bounded:
			t.Errorf("%s: a user-writable text array without a CHECK on how many items it holds (checks %q)", col, checks)
		case array && !listed:
			t.Errorf("%s: a user-writable text array whose items have no known bound", col)
		case !array && !bounded && !listed:
			t.Errorf("%s: user-writable text without a length bound (checks %q)", col, checks)
		case !array && bounded && listed:
			t.Errorf("%s has a length bound of its own: take it off the list of columns bounded otherwise", col)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !seen["publications.body"] || !seen["promos.channel"] {
		t.Fatalf("the sweep missed columns it must see: %v", seen)
	}
	for col, o := range otherwise {
		if !seen[col] {
			t.Errorf("%s is no longer user-writable text: take it off the list", col)
		}
		if _, err := f.try(o.who, o.sql, o.args...); sqlstate(err) != o.code {
			t.Errorf("%s (%s): a value past that bound got %v, want %s", col, o.how, err, o.code)
		}
	}
}

// TestOtherTenantsIDsLookMissing: attaching to another tenant's publication answers exactly as
// attaching to one that does not exist, with or without ON CONFLICT DO NOTHING.
func TestOtherTenantsIDsLookMissing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	theirs := f.draftBy(t, "editorB", f.projB, "Theirs")
	if _, err := f.exec("editorB", `insert into promos (publication_id, channel, body) values ($1, 'x', 'b')`, theirs); err != nil {
		t.Fatal(err)
	}
	missing := "00000000-0000-4000-8000-000000000001"
	writes := []string{
		`insert into promos (publication_id, channel, body) values ($1, 'x', 'probe')`,
		`insert into promos (publication_id, channel, body) values ($1, 'x', 'probe') on conflict (publication_id, channel) do nothing`,
		`insert into promos (project_id, publication_id, channel, body) values ('` + f.projA + `', $1, 'x', 'probe') on conflict (publication_id, channel) do nothing`,
		`insert into publication_media (publication_id, media_id) values ($1, '` + f.mediaA + `') on conflict do nothing`,
		`insert into reviews (publication_id, verdict, notes) values ($1, 'comment', 'probe')`,
	}
	for _, q := range writes {
		_, errTheirs := f.try("ownerA", q, theirs)
		_, errMissing := f.try("ownerA", q, missing)
		a := strings.ReplaceAll(fmtErr(errTheirs), theirs, "<id>")
		b := strings.ReplaceAll(fmtErr(errMissing), missing, "<id>")
		if a != b || errTheirs == nil {
			t.Errorf("%s:\n another tenant's id: %s\n a missing id:        %s", q, a, b)
		}
	}
}

func fmtErr(err error) string {
	if fe, ok := pg.ErrorFields(err); ok {
		return fe.Code + " " + fe.Message + " " + fe.Details + " " + fe.Hint
	}
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestAuthorID: supabase-js sets author_id to the caller; that is accepted, another id is
// refused naming the column, and leaving it out still means the caller.
func TestAuthorID(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var got string
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller("editorA"), pg.ReadWrite, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(),
			`insert into publications (project_id, title, slug, author_id) values ($1, 'Mine', 'mine', $2) returning author_id::text`,
			f.projA, f.users["editorA"]).Scan(&got)
	})
	if err != nil || got != f.users["editorA"] {
		t.Fatalf("own author_id: %s %v", got, err)
	}
	_, err = f.try("editorA", `insert into publications (project_id, title, slug, author_id) values ($1, 'Forged', 'forged', $2)`, f.projA, f.users["leadA"])
	if sqlstate(err) != "42501" || !strings.Contains(err.Error(), "author_id") {
		t.Fatalf("another author_id: %v", err)
	}
	var author string
	id := f.draft(t, "Defaulted")
	mustScan(t, f.db.Owner(t).QueryRow(context.Background(), `select author_id::text from publications where id = $1`, id), &author)
	if author != f.users["editorA"] {
		t.Fatalf("default author %s", author)
	}
}

// TestDeletingAttachedMedia: deleting a media item is a change to every publication showing it:
// refused while one of them is frozen, and a version bump for each draft otherwise.
func TestDeletingAttachedMedia(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var media string
	mustScan(t, f.db.Owner(t).QueryRow(context.Background(),
		`insert into media (project_id, storage_path, mime_type) values ($1, 'proj-a/c.png', 'image/png') returning id`, f.projA), &media)
	draft := f.draft(t, "Shows C")
	if _, err := f.exec("editorA", `insert into publication_media (publication_id, media_id) values ($1, $2)`, draft, media); err != nil {
		t.Fatal(err)
	}
	_, v := f.statusOf(t, draft)
	approved := f.dressedIn(t, "approved") // shows media A
	before := f.content(t, approved)
	if _, err := f.exec("editorA", `delete from media where id = $1`, f.mediaA); sqlstate(err) != "PT409" {
		t.Errorf("deleting media shown by an approved publication: %v, want PT409", err)
	}
	if after := f.content(t, approved); after != before {
		t.Errorf("refusal changed %q to %q", before, after)
	}
	if n, err := f.exec("editorA", `delete from media where id = $1`, media); err != nil || n != 1 {
		t.Fatalf("deleting media shown by a draft: %d %v", n, err)
	}
	if _, v2 := f.statusOf(t, draft); v2 != v+1 {
		t.Errorf("draft version %d after its media was deleted, want %d", v2, v+1)
	}
}

// TestScheduleHorizonSetting: the horizon is the database setting masthead.schedule_horizon
// when one is set (here for the database, as an operator would), five years otherwise.
func TestScheduleHorizonSetting(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.db.Owner(t).Exec(ctx, `do $$ begin
		execute format('alter database %I set masthead.schedule_horizon = %L', current_database(), '10 years'); end $$`); err != nil {
		t.Fatal(err)
	}
	// Settings of a database apply to connections opened after the change.
	pool, err := pgxpool.New(ctx, f.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	id := f.inStatus(t, "approved")
	err = pg.WithCaller(ctx, pool, f.caller("leadA"), pg.ReadWrite, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `select schedule($1, now() + interval '8 years')`, id)
		return err
	})
	if err != nil {
		t.Fatalf("8 years ahead with a 10-year horizon: %v", err)
	}
}

// TestLongIdentityNames: a sign-up or provider name over the bound is cut to it, so signing in
// never fails on it; the profile stays within its CHECK.
func TestLongIdentityNames(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var name string
	if _, err := f.db.Owner(t).Exec(context.Background(),
		`insert into auth.users (email, raw_user_meta_data) values ('long@example.test', jsonb_build_object('name', repeat('N', 5000)))`); err != nil {
		t.Fatal(err)
	}
	mustScan(t, f.db.Owner(t).QueryRow(context.Background(), `select display_name from profiles p join auth.users u on u.id = p.id where u.email = 'long@example.test'`), &name)
	if len(name) != 100 {
		t.Fatalf("display name of %d characters, want 100", len(name))
	}
}
