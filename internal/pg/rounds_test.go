package pg_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"masthead/internal/channels"
	"masthead/internal/pg"
)

// revision is one publication_revisions row as a test reads it.
type revision struct {
	round, version int
	by             string
	snap           struct {
		Title, Summary, Body string
		Promos               []struct{ Channel, Body string }
		Media                []struct {
			ID      string `json:"id"`
			AltText string `json:"alt_text"`
		}
	}
}

func (f *fixture) revisions(t *testing.T, pub string) []revision {
	t.Helper()
	rows, err := f.db.Owner(t).Query(context.Background(),
		`select round, version, coalesce(submitted_by::text, ''), snapshot from publication_revisions where publication_id = $1 order by round`, pub)
	if err != nil {
		t.Fatal(err)
	}
	revs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (revision, error) {
		var v revision
		var raw []byte
		if err := r.Scan(&v.round, &v.version, &v.by, &raw); err != nil {
			return v, err
		}
		return v, json.Unmarshal(raw, &v.snap)
	})
	if err != nil {
		t.Fatal(err)
	}
	return revs
}

// TestRevisionsPerSubmit: every submit records exactly one revision of what was submitted, in
// a new round, by the person who submitted; reviews carry the round they were written in.
func TestRevisionsPerSubmit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.draft(t, "Rounds")
	if _, err := f.exec("editorA", `insert into promos (publication_id, channel, body) values ($1, 'x', 'first promo')`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := f.exec("editorA", `update media set alt_text = 'A cat' where id = $1`, f.mediaA); err != nil {
		t.Fatal(err)
	}
	if _, err := f.exec("editorA", `insert into publication_media (publication_id, media_id, position) values ($1, $2, 0)`, id, f.mediaA); err != nil {
		t.Fatal(err)
	}
	step := func(user, fn string, args ...any) {
		t.Helper()
		if _, _, err := f.rpc(user, fn, id, args...); err != nil {
			t.Fatalf("%s by %s: %v", fn, user, err)
		}
	}
	step("editorA", "submit_for_review", "round one")
	step("reviewerA", "request_changes", "tighten the lede")
	if _, err := f.exec("editorA", `update publications set body = '# Hello, tighter' where id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := f.exec("editorA", `update promos set body = 'second promo' where publication_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	step("editor2A", "submit_for_review", "round two")
	if _, err := f.exec("reviewerA", `insert into reviews (publication_id, verdict, notes, round) values ($1, 'comment', 'better', 7)`, id); err == nil {
		t.Fatal("a caller chose a review's round")
	}
	if _, err := f.exec("reviewerA", `insert into reviews (publication_id, verdict, notes) values ($1, 'comment', 'better')`, id); err != nil {
		t.Fatal(err)
	}
	step("reviewerA", "approve", "ship it")

	revs := f.revisions(t, id)
	if len(revs) != 2 {
		t.Fatalf("%d revisions after two submits, want 2", len(revs))
	}
	r1, r2 := revs[0], revs[1]
	if r1.round != 1 || r2.round != 2 || r1.by != f.users["editorA"] || r2.by != f.users["editor2A"] {
		t.Errorf("rounds %d/%d by %s/%s", r1.round, r2.round, r1.by, r2.by)
	}
	if r1.snap.Body != "# Hello" || r2.snap.Body != "# Hello, tighter" || r1.snap.Title != "Rounds" || r1.snap.Summary != "In short" {
		t.Errorf("snapshots: %+v / %+v", r1.snap, r2.snap)
	}
	if len(r1.snap.Promos) != 1 || r1.snap.Promos[0].Body != "first promo" || r2.snap.Promos[0].Body != "second promo" {
		t.Errorf("promos: %+v / %+v", r1.snap.Promos, r2.snap.Promos)
	}
	if len(r1.snap.Media) != 1 || r1.snap.Media[0].ID != f.mediaA || r1.snap.Media[0].AltText != "A cat" {
		t.Errorf("media: %+v", r1.snap.Media)
	}
	if r2.version <= r1.version {
		t.Errorf("versions %d then %d", r1.version, r2.version)
	}

	rows, err := f.db.Owner(t).Query(context.Background(), `select verdict || ':' || round from reviews where publication_id = $1 order by created_at`, id)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := "changes_requested:1 comment:2 approved:2"; strings.Join(got, " ") != want {
		t.Errorf("reviews %v, want %s", got, want)
	}

	// A submit made by a direct PATCH of status records its revision too.
	other := f.draft(t, "Direct")
	if _, err := f.exec("editorA", `update publications set status = 'reviewing' where id = $1`, other); err != nil {
		t.Fatal(err)
	}
	if revs := f.revisions(t, other); len(revs) != 1 || revs[0].round != 1 {
		t.Errorf("direct submit: %+v", revs)
	}
}

// TestRevisionsImmutable: nobody, the table's owner included, writes, changes or removes a
// revision; members read their project's, nobody else does.
func TestRevisionsImmutable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.inStatus(t, "reviewing")
	own := f.db.Owner(t)
	for _, q := range []string{
		`insert into publication_revisions (project_id, publication_id, round, version, snapshot) select project_id, id, 9, 1, '{}' from publications where id = $1`,
		`update publication_revisions set snapshot = '{}' where publication_id = $1`,
		`delete from publication_revisions where publication_id = $1`,
	} {
		if _, err := own.Exec(context.Background(), q, id); sqlstate(err) != "42501" {
			t.Errorf("owner: %s: %v", q, err)
		}
		for _, who := range everyone {
			if n, err := f.try(who, q, id); err == nil && n > 0 {
				t.Errorf("%s: %s changed %d rows", who, q, n)
			}
		}
	}
	if _, err := own.Exec(context.Background(), `truncate publication_revisions`); sqlstate(err) != "42501" {
		t.Errorf("owner truncate: %v", err)
	}
	if len(f.revisions(t, id)) != 1 {
		t.Error("the revision is gone")
	}
	for _, who := range everyone {
		n := f.count(who, `select count(*) from publication_revisions where publication_id = $1`, id)
		member := strings.HasSuffix(who, "A")
		if member != (n == 1) {
			t.Errorf("%s sees %d revisions", who, n)
		}
	}
}

// readiness returns check → ok as a user sees it.
func (f *fixture) readiness(t *testing.T, user, id string) (map[string]bool, error) {
	t.Helper()
	out := map[string]bool{}
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller(user), pg.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), `select "check", ok from readiness($1)`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c string
			var ok bool
			if err := rows.Scan(&c, &ok); err != nil {
				return err
			}
			out[c] = ok
		}
		return rows.Err()
	})
	return out, err
}

// TestReadinessGatesGoingLive: readiness lists every check; schedule, publish_now, a direct
// PATCH and the scheduler refuse an item that is not ready and change nothing.
func TestReadinessGatesGoingLive(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.draft(t, "Not ready")
	if _, err := f.exec("editorA", `insert into promos (publication_id, channel, body) values ($1, 'x', $2)`, id, strings.Repeat("a", 290)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.exec("editorA", `insert into publication_media (publication_id, media_id) values ($1, $2)`, id, f.mediaA); err != nil {
		t.Fatal(err)
	}
	for _, s := range paths["approved"] {
		if _, _, err := f.rpc(s.user, s.fn, id, s.args()...); err != nil {
			t.Fatalf("submit and approve do not refuse an item that is not ready: %v", err)
		}
	}
	got, err := f.readiness(t, "viewerA", id)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"title": true, "summary": true, "body": true, "promo:x": false, "promo:bluesky": false, "alt_text": false}
	if len(got) != len(want) {
		t.Errorf("checks %v, want %v", got, want)
	}
	for c, ok := range want {
		if got[c] != ok {
			t.Errorf("check %s = %v, want %v", c, got[c], ok)
		}
	}
	if _, err := f.readiness(t, "ownerB", id); sqlstate(err) != "PT404" {
		t.Errorf("another tenant asks readiness: %v", err)
	}

	_, v0 := f.statusOf(t, id)
	events := len(f.events(t, id))
	refusals := f.goLive(id)
	for name, try := range refusals {
		err := try()
		if sqlstate(err) != "PT422" {
			t.Fatalf("%s of an item that is not ready: %v", name, err)
		}
		fe, _ := pg.ErrorFields(err)
		var failing []struct{ Check, Detail string }
		if err := json.Unmarshal([]byte(fe.Details), &failing); err != nil || len(failing) != 3 {
			t.Errorf("%s: details %q (%v)", name, fe.Details, err)
		}
		if !strings.Contains(fe.Message, "X: 290 / 280 characters (10 over)") {
			t.Errorf("%s: message %q", name, fe.Message)
		}
	}
	if s, v := f.statusOf(t, id); s != "approved" || v != v0 || len(f.events(t, id)) != events {
		t.Errorf("a refusal changed something: %s v%d (was v%d)", s, v, v0)
	}

	// Once ready, it goes.
	if _, err := f.exec("editorA", `update media set alt_text = 'A cat' where id = $1`, f.mediaA); err != nil {
		t.Fatal(err)
	}
	own := f.db.Owner(t)
	// Content is the editors' while a draft; the owner fixes the promos of this approved item
	// directly, as only a superuser could, to make it ready without another round.
	ownerDoes(t, own, `update promos set body = 'short' where publication_id = $1`, id)
	ownerDoes(t, own, `insert into promos (project_id, publication_id, channel, body) select project_id, id, 'bluesky', 'hi' from publications where id = $1`, id)
	if _, _, err := f.rpcSchedule("leadA", id, "1 day"); err != nil {
		t.Fatalf("schedule once ready: %v", err)
	}

	// The scheduler leaves a due item that is no longer ready where it is, and says which.
	ownerDoes(t, own, `alter table publications disable trigger publications_guard`)
	ownerDoes(t, own, `update publications set scheduled_for = now() - interval '1 minute' where id = $1`, id)
	ownerDoes(t, own, `alter table publications enable trigger publications_guard`)
	ownerDoes(t, own, `update media set alt_text = '' where id = $1`, f.mediaA)
	var published, notReady []string
	err = pg.WithCaller(context.Background(), f.db.Pool, pg.Caller{Role: pg.RoleScheduler}, pg.ReadWrite, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), `select id::text from app.publish_due(10)`)
		if err != nil {
			return err
		}
		if published, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		rows, err = tx.Query(context.Background(), `select id::text || ' ' || failing from app.due_not_ready(10)`)
		if err != nil {
			return err
		}
		notReady, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(published) != 0 || len(notReady) != 1 || !strings.Contains(notReady[0], id+" The media item has no alt text") {
		t.Errorf("scheduler published %v, not ready %v", published, notReady)
	}
	if s, _ := f.statusOf(t, id); s != "scheduled" {
		t.Errorf("status %s after the scheduler met an item that is not ready", s)
	}
}

// TestReadinessNeedsContent: a publication whose title, summary or body is blank (empty, or
// only white space, which reads as nothing), or whose promo or media alt text is, is not ready,
// for that reason alone, and schedule, publish_now and a direct PATCH refuse it with that check
// failing and change nothing.
func TestReadinessNeedsContent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// Each blanks a draft's value as its editor, as any edit of a draft.
	field := func(col string) func(id, v string) error {
		return func(id, v string) error {
			_, err := f.exec("editorA", fmt.Sprintf(`update publications set %s = $2 where id = $1`, pgx.Identifier{col}.Sanitize()), id, v)
			return err
		}
	}
	altText := func(id, v string) error {
		if _, err := f.exec("editorA", `insert into publication_media (publication_id, media_id) values ($1, $2)`, id, f.mediaB); err != nil {
			return err
		}
		_, err := f.exec("editorA", `update media set alt_text = $2 where id = $1`, f.mediaB, v)
		return err
	}
	promo := func(id, v string) error {
		_, err := f.exec("editorA", `update promos set body = $2 where publication_id = $1 and channel = 'x'`, id, v)
		return err
	}
	cases := []struct {
		check, value, detail string
		blank                func(id, v string) error
	}{
		{"title", " ", "Title is missing", field("title")},
		{"title", "\u00a0\u3000", "Title is missing", field("title")},
		{"summary", "", "Summary is missing", field("summary")},
		{"summary", "\n", "Summary is missing", field("summary")},
		{"body", "", "Body is empty", field("body")},
		{"body", "\n\t\r\n  ", "Body is empty", field("body")},
		{"alt_text", "\u00a0", "The media item has no alt text", altText},
		{"promo:x", "\n", "X: no promo written", promo},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s=%q", c.check, c.value), func(t *testing.T) {
			id := f.draft(t, fmt.Sprintf("Blank %s %d", c.check, f.seq.Add(1)))
			f.makeReady(t, id)
			// Blanked while a draft; submit and approve only show it.
			if err := c.blank(id, c.value); err != nil {
				t.Fatal(err)
			}
			f.walk(t, id, "approved")
			got, err := f.readiness(t, "viewerA", id)
			if err != nil {
				t.Fatal(err)
			}
			for _, check := range []string{"title", "summary", "body", "promo:x", "promo:bluesky", "alt_text"} {
				if got[check] != (check != c.check) {
					t.Errorf("check %s = %v with %s %q", check, got[check], c.check, c.value)
				}
			}
			_, v0 := f.statusOf(t, id)
			refusals := f.goLive(id)
			for name, try := range refusals {
				err := try()
				fe, _ := pg.ErrorFields(err)
				if fe.Code != "PT422" {
					t.Errorf("%s: %v, want PT422", name, err)
					continue
				}
				var failing []struct{ Check, Detail string }
				if err := json.Unmarshal([]byte(fe.Details), &failing); err != nil || len(failing) != 1 ||
					failing[0].Check != c.check || failing[0].Detail != c.detail {
					t.Errorf("%s: failing checks %q (%v), want only %s: %s", name, fe.Details, err, c.check, c.detail)
				}
			}
			if s, v := f.statusOf(t, id); s != "approved" || v != v0 {
				t.Errorf("a refusal changed it: %s v%d (was approved v%d)", s, v, v0)
			}
		})
	}
}

// TestPromoMeasureAgreesWithChannels: the database counts promos as internal/channels does on
// its whole corpus, exactly for characters and bytes; for grapheme clusters and hashtags, where
// PostgreSQL cannot count as the networks do, it may only count more, never less.
func TestPromoMeasureAgreesWithChannels(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	for _, c := range channels.Corpus {
		limits, _ := json.Marshal(map[string]any{"max_chars": c.Limits.MaxChars, "count": c.Limits.Count,
			"url_chars": c.Limits.URLChars, "max_hashtags": c.Limits.MaxHashtags})
		var used, maxChars, tags, maxTags int
		var unit string
		mustScan(t, own.QueryRow(context.Background(), `select used, max_chars, unit, hashtags, max_hashtags from app.promo_measure($1, $2, $3)`,
			c.Body, c.Link, limits), &used, &maxChars, &unit, &tags, &maxTags)
		over := (maxChars > 0 && used > maxChars) || (maxTags > 0 && tags > maxTags)
		exact := unit != channels.UnitGraphemes
		switch {
		case exact && used != c.Used, !exact && used < c.Used:
			t.Errorf("%s: database counts %d %s, internal/channels %d", c.Name, used, unit, c.Used)
		case tags < c.Hashtags:
			t.Errorf("%s: database counts %d hashtags, internal/channels %d", c.Name, tags, c.Hashtags)
		case c.Over && !over:
			t.Errorf("%s: the database lets through what the network refuses", c.Name)
		}
		if used != c.Used || tags != c.Hashtags {
			t.Logf("%s: database counts from above: %d %s (exactly %d), %d hashtags (exactly %d)", c.Name, used, unit, c.Used, tags, c.Hashtags)
		}
	}
}

// ownerDoes runs one statement as the database owner, bypassing the workflow, to set up what
// no caller could.
func ownerDoes(t *testing.T, own interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, sql string, args ...any) {
	t.Helper()
	if _, err := own.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// goLive are the ways a lead may take id live (schedule, publish_now, a direct update of its
// status), by name: readiness must refuse each alike.
func (f *fixture) goLive(id string) map[string]func() error {
	return map[string]func() error{
		"schedule":    func() error { _, _, err := f.rpcSchedule("leadA", id, "1 day"); return err },
		"publish_now": func() error { _, _, err := f.rpc("leadA", "publish_now", id); return err },
		"direct publish": func() error {
			_, err := f.exec("leadA", `update publications set status = 'published' where id = $1`, id)
			return err
		},
	}
}
