package pg_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The workflow's triggers hold for statements that write many rows exactly as for one row:
// these tests write several rows per statement, the way the bulk seed and a filtered REST
// PATCH or DELETE do, and compare with what one row per statement leaves.

// TestContentBumpsVersion: every promo or media-link row a statement inserts, changes or
// removes raises its publication's version by one, in a statement of one row or of many, over
// one publication or several; a statement that changes no row leaves the version alone (a row
// ON CONFLICT DO NOTHING skips included). An upsert that meets an existing promo raises it by
// two (its insert attempt and its update), as it did when each row bumped the version from its
// own trigger.
func TestContentBumpsVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	var mediaC string
	mustScan(t, f.db.Owner(t).QueryRow(ctx, `insert into media (project_id, storage_path, mime_type) values ($1, 'proj-a/c.png', 'image/png') returning id`, f.projA), &mediaC)

	// $1 has promos on x and bluesky and media A and B; $2 has a promo on x and media A; $3 is
	// media C, attached to neither.
	const upsert = ` on conflict (publication_id, channel) do update set body = excluded.body`
	cases := []struct {
		name, sql string
		want      [2]int // version increase of $1 and $2
	}{
		{"insert one promo", `insert into promos (publication_id, channel, body) values ($1, 'linkedin', 'new')`, [2]int{1, 0}},
		{"insert two promos", `insert into promos (publication_id, channel, body) values ($1, 'linkedin', 'a'), ($1, 'threads', 'b')`, [2]int{2, 0}},
		{"insert promos into two publications", `insert into promos (publication_id, channel, body)
			values ($1, 'linkedin', 'a'), ($2, 'linkedin', 'b'), ($1, 'threads', 'c')`, [2]int{2, 1}},
		{"insert from a select", `insert into promos (publication_id, channel, body)
			select p, ch, 'generated' from unnest(array[$1::uuid, $2::uuid]) p, unnest('{linkedin,threads,mastodon}'::text[]) ch`, [2]int{3, 3}},
		{"update one promo", `update promos set body = 'changed' where publication_id = $1 and channel = 'x'`, [2]int{1, 0}},
		{"update two promos", `update promos set body = 'changed' where publication_id = $1`, [2]int{2, 0}},
		{"update promos of two publications", `update promos set body = body || '!' where publication_id in ($1, $2)`, [2]int{2, 1}},
		{"update that matches nothing", `update promos set body = 'changed' where publication_id = $1 and channel = 'threads'`, [2]int{0, 0}},
		{"delete one promo", `delete from promos where publication_id = $1 and channel = 'x'`, [2]int{1, 0}},
		{"delete promos of two publications", `delete from promos where publication_id in ($1, $2)`, [2]int{2, 1}},
		{"upsert a new promo", `insert into promos (publication_id, channel, body) values ($1, 'linkedin', 'new')` + upsert, [2]int{1, 0}},
		{"upsert an existing promo", `insert into promos (publication_id, channel, body) values ($1, 'x', 'again')` + upsert, [2]int{2, 0}},
		{"upsert one new and one existing", `insert into promos (publication_id, channel, body)
			values ($1, 'x', 'again'), ($2, 'linkedin', 'new')` + upsert, [2]int{2, 1}},
		// Before migration 021 the insert attempt's row trigger raised the version by one
		// although no row was written; now only rows written count.
		{"insert that conflicts and does nothing", `insert into promos (publication_id, channel, body)
			values ($1, 'x', 'again'), ($2, 'linkedin', 'new') on conflict (publication_id, channel) do nothing`, [2]int{0, 1}},
		{"attach one media link", `insert into publication_media (publication_id, media_id, position) select $1, $3, 3 where $2::uuid is not null`, [2]int{1, 0}},
		{"attach to two publications", `insert into publication_media (publication_id, media_id, position) values ($1, $3, 3), ($2, $3, 2)`, [2]int{1, 1}},
		{"move two media links", `update publication_media set position = position + 10 where publication_id = $1`, [2]int{2, 0}},
		{"move media links of two publications", `update publication_media set position = position + 10 where publication_id in ($1, $2)`, [2]int{2, 1}},
		{"detach every media link", `delete from publication_media where publication_id in ($1, $2)`, [2]int{2, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			one := f.draft(t, fmt.Sprintf("Bumps one %d", f.seq.Add(1)))
			two := f.draft(t, fmt.Sprintf("Bumps two %d", f.seq.Add(1)))
			if _, err := f.exec("editorA", `insert into promos (publication_id, channel, body)
				values ($1, 'x', 'x1'), ($1, 'bluesky', 'b1'), ($2, 'x', 'x2')`, one, two); err != nil {
				t.Fatal(err)
			}
			if _, err := f.exec("editorA", `insert into publication_media (publication_id, media_id, position)
				values ($1, $3, 1), ($1, $4, 2), ($2, $3, 1)`, one, two, f.mediaA, f.mediaB); err != nil {
				t.Fatal(err)
			}
			_, v1 := f.statusOf(t, one)
			_, v2 := f.statusOf(t, two)
			if v1 != 5 || v2 != 3 {
				t.Fatalf("after the setup: versions %d and %d, want 5 (1 + 2 promos + 2 links) and 3", v1, v2)
			}
			args := []any{one, two, mediaC}
			for !strings.Contains(c.sql, fmt.Sprintf("$%d", len(args))) {
				args = args[:len(args)-1]
			}
			if _, err := f.exec("editorA", c.sql, args...); err != nil {
				t.Fatal(err)
			}
			_, w1 := f.statusOf(t, one)
			_, w2 := f.statusOf(t, two)
			if got := [2]int{w1 - v1, w2 - v2}; got != c.want {
				t.Errorf("versions rose by %v, want %v", got, c.want)
			}
		})
	}

	// The owner writes fixtures and repairs without moving versions, one row or many.
	id := f.draft(t, "Owner writes")
	if _, err := f.db.Owner(t).Exec(ctx, `insert into promos (publication_id, channel, body) values ($1, 'x', 'a'), ($1, 'bluesky', 'b')`, id); err != nil {
		t.Fatal(err)
	}
	if _, v := f.statusOf(t, id); v != 1 {
		t.Errorf("owner's promos moved the version to %d", v)
	}
}

// TestMultiRowContentChangeCaughtByVersion: promos changed several at a time after someone
// loaded the publication make their expected_version stale, and the version they read after
// the change is accepted.
func TestMultiRowContentChangeCaughtByVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.draft(t, "Versioned many")
	f.makeReady(t, id)
	_, v := f.statusOf(t, id)
	if n, err := f.exec("editor2A", `update promos set body = body || ' now' where publication_id = $1`, id); err != nil || n != 2 {
		t.Fatalf("update both promos: %d rows, %v", n, err)
	}
	if _, _, err := f.rpc("editorA", "submit_for_review", id, "ready", v); sqlstate(err) != "PT409" {
		t.Fatalf("submit with the version before the promo change: %v, want PT409", err)
	}
	_, v2 := f.statusOf(t, id)
	if v2 != v+2 {
		t.Fatalf("version %d after changing two promos from %d", v2, v)
	}
	if s, v3, err := f.rpc("editorA", "submit_for_review", id, "ready", v2); err != nil || s != "reviewing" || v3 != v2+1 {
		t.Fatalf("submit with the current version: %s v%d, %v", s, v3, err)
	}
}

// TestSetMovesAudited: an UPDATE that moves many publications at once leaves, for every row,
// what moving it alone leaves: one audit row (actor, via, from/to, intent), the verdict of an
// approval, the revision of a submit (round, version, submitter, snapshot) and a version one
// higher. A statement in which one row may not move changes nothing at all.
func TestSetMovesAudited(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	ids := make([]string, 3)
	for i := range ids {
		ids[i] = f.draft(t, fmt.Sprintf("Set move %d", i))
		f.makeReady(t, ids[i]) // promos on x and bluesky: version 3
	}
	// ids[0] shows media A, with the alt text readiness asks for.
	for _, sql := range []string{
		`insert into publication_media (publication_id, media_id, position) values ($1, $2, 1)`,
		`update media set alt_text = 'A harbour at dawn' where id = $2 and $1::uuid is not null`,
	} {
		if _, err := f.exec("editorA", sql, ids[0], f.mediaA); err != nil {
			t.Fatal(err)
		}
	}
	versions := func() []int {
		var vs []int
		for _, id := range ids {
			_, v := f.statusOf(t, id)
			vs = append(vs, v)
		}
		return vs
	}
	move := func(user, sql string, want int64, args ...any) {
		t.Helper()
		if n, err := f.exec(user, sql, args...); err != nil || n != want {
			t.Fatalf("%s as %s: %d rows, %v; want %d", sql, user, n, err, want)
		}
	}
	wantEvent := func(id, from, to, intent, user string, count int) {
		t.Helper()
		evs := f.events(t, id)
		e := evs[len(evs)-1]
		if len(evs) != count || e.from != from || e.to != to || e.intent != intent || e.via != "direct" || e.note != "" ||
			e.actor == nil || *e.actor != f.users[user] {
			t.Errorf("%s: %d events, last %+v (actor %v); want %d, %s→%s %s direct by %s", id, len(evs), e, e.actor, count, from, to, intent, user)
		}
	}

	// Submit all three in one statement: an event and a revision each.
	before := versions()
	move("editorA", `update publications set status = 'reviewing' where id = any ($1)`, 3, ids)
	after := versions()
	for i, id := range ids {
		if after[i] != before[i]+1 {
			t.Errorf("%s: version %d → %d", id, before[i], after[i])
		}
		wantEvent(id, "draft", "reviewing", "submit", "editorA", 1)
		revs := f.revisions(t, id)
		if len(revs) != 1 || revs[0].round != 1 || revs[0].version != after[i] || revs[0].by != f.users["editorA"] {
			t.Fatalf("%s: revisions %+v", id, revs)
		}
		s := revs[0].snap
		var channels []string
		for _, p := range s.Promos {
			channels = append(channels, p.Channel+":"+p.Body)
		}
		wantMedia := 0
		if i == 0 {
			wantMedia = 1
		}
		if s.Title != fmt.Sprintf("Set move %d", i) || s.Body != "# Hello" ||
			!slices.Equal(channels, []string{"bluesky:Read it", "x:Read it"}) || len(s.Media) != wantMedia {
			t.Errorf("%s: snapshot %+v", id, s)
		}
		if wantMedia == 1 && s.Media[0].ID != f.mediaA {
			t.Errorf("%s: snapshot media %+v", id, s.Media)
		}
	}

	// Approve two in one statement: events and verdicts by the reviewer, in round 1.
	move("reviewerA", `update publications set status = 'approved' where id = any ($1)`, 2, ids[:2])
	for _, id := range ids[:2] {
		wantEvent(id, "reviewing", "approved", "approve", "reviewerA", 2)
		var verdict string
		mustScan(t, f.db.Owner(t).QueryRow(ctx, `select string_agg(concat_ws('|', verdict, notes, reviewer_id, round), ',')
			from reviews where publication_id = $1`, id), &verdict)
		if want := "approved||" + f.users["reviewerA"] + "|1"; verdict != want {
			t.Errorf("%s: reviews %q, want %q", id, verdict, want)
		}
	}

	// One statement where one row may not make the move: refused whole, nothing written.
	before = versions()
	if _, err := f.exec("leadA", `update publications set status = 'published' where id = any ($1)`, ids); sqlstate(err) != "PT409" {
		t.Fatalf("publishing a publication in review along with approved ones: %v, want PT409", err)
	}
	if got := versions(); !slices.Equal(got, before) {
		t.Errorf("a refused statement moved versions %v → %v", before, got)
	}
	for i, id := range ids {
		if n := len(f.events(t, id)); n != []int{2, 2, 1}[i] {
			t.Errorf("%s: %d events after a refused statement", id, n)
		}
	}

	// Schedule two at once, then move both dates in one statement: a schedule event each time.
	move("leadA", `update publications set status = 'scheduled', scheduled_for = now() + interval '2 days' where id = any ($1)`, 2, ids[:2])
	move("leadA", `update publications set scheduled_for = scheduled_for + interval '1 day' where id = any ($1)`, 2, ids[:2])
	for _, id := range ids[:2] {
		wantEvent(id, "scheduled", "scheduled", "schedule", "leadA", 4)
	}

	// A statement that moves one row and only touches another: an event for the first alone,
	// a new version for both.
	before = versions()
	move("leadA", `update publications set status = case when id = $1 then 'published' else status end,
		scheduled_for = case when id = $1 then null else scheduled_for end where id = any ($2)`, 2, ids[0], ids[:2])
	after = versions()
	wantEvent(ids[0], "scheduled", "published", "publish", "leadA", 5)
	if n := len(f.events(t, ids[1])); n != 4 || after[0] != before[0]+1 || after[1] != before[1]+1 {
		t.Errorf("mixed statement: %d events for the untouched row, versions %v → %v", n, before, after)
	}

	// Withdraw the one in review and submit it again with a fresh draft: round 2 and round 1.
	move("editorA", `update publications set status = 'draft' where id = $1`, 1, ids[2])
	fresh := f.draft(t, "Set move fresh")
	move("editorA", `update publications set status = 'reviewing' where id = any ($1)`, 2, []string{ids[2], fresh})
	wantEvent(ids[2], "draft", "reviewing", "submit", "editorA", 3)
	wantEvent(fresh, "draft", "reviewing", "submit", "editorA", 1)
	if revs := f.revisions(t, ids[2]); len(revs) != 2 || revs[1].round != 2 {
		t.Errorf("resubmitted: revisions %+v", revs)
	}
	if revs := f.revisions(t, fresh); len(revs) != 1 || revs[0].round != 1 || len(revs[0].snap.Promos) != 0 {
		t.Errorf("fresh: revisions %+v", revs)
	}
}

// TestTriggerHelpersRefuseCallers: the owner-run helpers the statement triggers call (raising
// versions, writing the audit, verdicts and revisions) refuse a caller who calls them outside a
// trigger, and change nothing.
func TestTriggerHelpersRefuseCallers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.inStatus(t, "reviewing")
	before := f.content(t, id)
	for _, sql := range []string{
		`select app.bump_versions(array[$1::uuid], array[5]) where $2::uuid is not null and $3::uuid is not null`,
		`select app.write_events(array[$2::uuid], array[$1::uuid], '{reviewing}', '{approved}', '{approve}', $3::uuid, 'forged', 'rpc', true)`,
		`select app.write_revisions(array[$1::uuid]) where $2::uuid is not null and $3::uuid is not null`,
	} {
		for _, who := range []string{"editorA", "leadA"} {
			_, err := f.exec(who, sql, id, f.projA, f.users["reviewerA"])
			if sqlstate(err) != "42501" || !strings.Contains(err.Error(), "triggers only") {
				t.Errorf("%s as %s: %v, want 42501 naming the triggers", sql, who, err)
			}
		}
	}
	if after := f.content(t, id); after != before {
		t.Errorf("refused calls changed %q to %q", before, after)
	}
	if revs := f.revisions(t, id); len(revs) != 1 {
		t.Errorf("%d revisions after refused calls", len(revs))
	}
	// The per-row writers the statement triggers replaced are gone (024): they ran as the owner
	// with EXECUTE granted to every signed-in user, and wrote whatever event or verdict they
	// were handed.
	for _, sql := range []string{
		`select app.write_event($2, $1, 'reviewing', 'approved', $3, 'approve', 'forged', 'rpc')`,
		`select app.write_verdict(p, 'approved', 'forged') from public.publications p where p.id = $1 and $2::uuid is not null and $3::uuid is not null`,
	} {
		for _, who := range []string{"editorA", "leadA"} {
			if _, err := f.exec(who, sql, id, f.projA, f.users["reviewerA"]); sqlstate(err) != "42883" {
				t.Errorf("%s as %s: %v, want 42883 (no such function)", sql, who, err)
			}
		}
	}
}
