package pg_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// event is one status_events row as a test reads it.
type event struct {
	from, to, intent, note, via string
	actor                       *string
}

func (f *fixture) events(t *testing.T, pub string) []event {
	t.Helper()
	rows, err := f.db.Owner(t).Query(context.Background(),
		`select from_status, to_status, intent, note, via, actor_id::text from status_events where publication_id = $1 order by id`, pub)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (event, error) {
		var e event
		return e, r.Scan(&e.from, &e.to, &e.intent, &e.note, &e.via, &e.actor)
	})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func (f *fixture) statusOf(t *testing.T, pub string) (string, int) {
	t.Helper()
	var s string
	var v int
	mustScan(t, f.db.Owner(t).QueryRow(context.Background(), `select status, version from publications where id = $1`, pub), &s, &v)
	return s, v
}

// TestLegalTransitions: every row of the workflow table works through its function, as each
// role allowed to make it, and writes exactly one audit row saying who, why and how.
func TestLegalTransitions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		from, fn, to string
		users        []string
		note         string
	}{
		{"draft", "submit_for_review", "reviewing", []string{"editorA", "leadA", "ownerA"}, "ready"},
		{"changes_requested", "submit_for_review", "reviewing", []string{"editorA"}, "fixed"},
		{"reviewing", "withdraw", "draft", []string{"editorA", "leadA"}, "not yet"},
		{"changes_requested", "withdraw", "draft", []string{"editor2A"}, "rethinking"},
		{"reviewing", "approve", "approved", []string{"reviewerA", "leadA", "ownerA"}, "lovely"},
		{"reviewing", "request_changes", "changes_requested", []string{"reviewerA", "leadA"}, "cut the intro"},
		{"approved", "schedule", "scheduled", []string{"leadA", "ownerA"}, ""},
		{"scheduled", "schedule", "scheduled", []string{"leadA"}, ""},
		{"scheduled", "unschedule", "approved", []string{"leadA", "ownerA"}, ""},
		{"approved", "publish_now", "published", []string{"leadA"}, ""},
		{"scheduled", "publish_now", "published", []string{"ownerA"}, ""},
		{"draft", "archive", "archived", []string{"leadA"}, "dropped"},
		{"approved", "archive", "archived", []string{"ownerA"}, "dropped"},
		{"published", "archive", "archived", []string{"leadA"}, "outdated"},
		{"archived", "restore", "draft", []string{"leadA", "ownerA"}, ""},
		{"approved", "reopen", "draft", []string{"leadA", "ownerA"}, "figures changed"},
		{"scheduled", "reopen", "draft", []string{"leadA"}, "embargo moved"},
	}
	intents := map[string]string{"submit_for_review": "submit", "publish_now": "publish"}
	for _, c := range cases {
		for _, u := range c.users {
			t.Run(fmt.Sprintf("%s_%s_by_%s", c.from, c.fn, u), func(t *testing.T) {
				id := f.inStatus(t, c.from)
				before := len(f.events(t, id))
				_, v0 := f.statusOf(t, id)
				var got string
				var v int
				var err error
				switch c.fn {
				case "schedule":
					got, v, err = f.rpcSchedule(u, id, "2 days", v0)
				case "unschedule", "publish_now", "restore":
					got, v, err = f.rpc(u, c.fn, id, v0)
				default:
					got, v, err = f.rpc(u, c.fn, id, c.note, v0)
				}
				if err != nil {
					t.Fatalf("%s by %s from %s: %v", c.fn, u, c.from, err)
				}
				if got != c.to || v != v0+1 {
					t.Fatalf("got %s v%d, want %s v%d", got, v, c.to, v0+1)
				}
				evs := f.events(t, id)
				if len(evs) != before+1 {
					t.Fatalf("%d audit rows written, want 1", len(evs)-before)
				}
				e := evs[len(evs)-1]
				intent := c.fn
				if i, ok := intents[c.fn]; ok {
					intent = i
				}
				if e.from != c.from || e.to != c.to || e.intent != intent || e.via != "rpc" || e.note != c.note ||
					e.actor == nil || *e.actor != f.users[u] {
					t.Fatalf("audit row %+v (actor %v), want %s→%s intent %s note %q via rpc by %s", e, e.actor, c.from, c.to, intent, c.note, u)
				}
			})
		}
	}
}

// TestVerdictsWriteReviews: approve and request_changes leave a review with the note.
func TestVerdictsWriteReviews(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.inStatus(t, "approved")
	c := f.inStatus(t, "changes_requested")
	for pub, want := range map[string]string{a: "approved|good", c: "changes_requested|tighten the intro"} {
		var got string
		mustScan(t, f.db.Owner(t).QueryRow(context.Background(),
			`select verdict || '|' || notes from reviews where publication_id = $1`, pub), &got)
		if got != want {
			t.Errorf("review %q, want %q", got, want)
		}
	}
}

var statuses = []string{"draft", "reviewing", "changes_requested", "approved", "scheduled", "published", "archived"}

// TestIllegalTransitionsRefused: from every status, every intent the table does not allow is
// refused by the function with 409, and every (from, to) pair it does not list is refused as a
// direct UPDATE; nothing changes either way.
func TestIllegalTransitionsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	legal := map[string]bool{}
	rows, _ := f.db.Owner(t).Query(context.Background(), `select intent, from_status, to_status from app.transitions`)
	for rows.Next() {
		var i, fr, to string
		_ = rows.Scan(&i, &fr, &to)
		legal[i+":"+fr] = true
		legal[fr+">"+to] = true
	}
	fns := map[string]string{"submit_for_review": "submit", "withdraw": "withdraw", "approve": "approve",
		"request_changes": "request_changes", "unschedule": "unschedule", "publish_now": "publish",
		"archive": "archive", "restore": "restore", "schedule": "schedule", "reopen": "reopen"}
	for _, from := range statuses {
		id := f.inStatus(t, from)
		for fn, intent := range fns {
			if legal[intent+":"+from] {
				continue
			}
			var err error
			switch fn {
			case "schedule":
				_, _, err = f.rpcSchedule("ownerA", id, "1 day")
			case "unschedule", "publish_now", "restore":
				_, _, err = f.rpc("ownerA", fn, id)
			default:
				_, _, err = f.rpc("ownerA", fn, id, "a note")
			}
			if code := sqlstate(err); code != "PT409" {
				t.Errorf("%s from %s: got %v (%s), want PT409", fn, from, err, code)
			}
		}
		for _, to := range statuses {
			if to == from || legal[from+">"+to] {
				continue
			}
			_, err := f.try("ownerA", `update publications set status = $2 where id = $1`, id, to)
			if err == nil {
				t.Errorf("direct update %s → %s accepted", from, to)
			}
		}
		if s, _ := f.statusOf(t, id); s != from {
			t.Errorf("refusals changed %s to %s", from, s)
		}
	}
}

// TestTransitionsAsDesigned: app.transitions, which the RPCs and the guard both read, holds
// exactly the workflow table of DESIGN.md, written out here by hand, so a row added, dropped or
// widened in the database (a status, a role, a note no longer required) shows up as a failure
// rather than as a new legal move that TestIllegalTransitionsRefused, deriving legality from the
// same table, would accept.
func TestTransitionsAsDesigned(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	editors, reviewers, leads := "editor,lead,owner", "lead,owner,reviewer", "lead,owner"
	// intent, from, to, roles (sorted), note required, rpc: one row per (from, to) of DESIGN's
	// "Workflow" table.
	want := []string{
		"submit draft reviewing " + editors + " false submit_for_review",
		"submit changes_requested reviewing " + editors + " false submit_for_review",
		"withdraw reviewing draft " + editors + " false withdraw",
		"withdraw changes_requested draft " + editors + " false withdraw",
		"approve reviewing approved " + reviewers + " false approve",
		"request_changes reviewing changes_requested " + reviewers + " true request_changes",
		"schedule approved scheduled " + leads + " false schedule",
		// Not a row of DESIGN's table: schedule on a scheduled publication moves its date
		// (a reschedule), audited as a schedule event, for the same roles.
		"schedule scheduled scheduled " + leads + " false schedule",
		"unschedule scheduled approved " + leads + " false unschedule",
		"publish approved published " + leads + " false publish_now",
		"publish scheduled published " + leads + " false publish_now",
		"archive draft archived " + leads + " false archive",
		"archive approved archived " + leads + " false archive",
		"archive published archived " + leads + " false archive",
		"restore archived draft " + leads + " false restore",
		"reopen approved draft " + leads + " true reopen",
		"reopen scheduled draft " + leads + " true reopen",
	}
	rows, err := f.db.Owner(t).Query(context.Background(), `
		select concat_ws(' ', intent, from_status, to_status,
		         (select string_agg(r, ',' order by r) from unnest(roles) r), note_required::text, rpc)
		  from app.transitions`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if !slices.Contains(want, r) {
			t.Errorf("app.transitions has %q, which DESIGN's workflow table does not", r)
		}
	}
	for _, r := range want {
		if !slices.Contains(got, r) {
			t.Errorf("app.transitions lacks %q", r)
		}
	}
}

// TestRolesRefused: each intent, attempted by every role that may not make it, is refused with
// insufficient_privilege by the function and by a direct UPDATE.
func TestRolesRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		from, fn, to string
		refused      []string
	}{
		{"draft", "submit_for_review", "reviewing", []string{"reviewerA", "viewerA"}},
		{"reviewing", "withdraw", "draft", []string{"reviewerA", "viewerA"}},
		{"reviewing", "approve", "approved", []string{"editor2A", "viewerA"}},
		{"reviewing", "request_changes", "changes_requested", []string{"editor2A", "viewerA"}},
		{"approved", "publish_now", "published", []string{"editorA", "reviewerA", "viewerA"}},
		{"scheduled", "unschedule", "approved", []string{"editorA", "reviewerA", "viewerA"}},
		{"draft", "archive", "archived", []string{"editorA", "reviewerA", "viewerA"}},
		{"archived", "restore", "draft", []string{"editorA", "reviewerA", "viewerA"}},
		{"approved", "reopen", "draft", []string{"editorA", "reviewerA", "viewerA"}},
	}
	for _, c := range cases {
		id := f.inStatus(t, c.from)
		for _, u := range c.refused {
			var err error
			switch c.fn {
			case "unschedule", "publish_now", "restore":
				_, _, err = f.rpc(u, c.fn, id)
			default:
				_, _, err = f.rpc(u, c.fn, id, "note")
			}
			if code := sqlstate(err); code != "42501" {
				t.Errorf("%s by %s: got %v, want 42501", c.fn, u, err)
			}
			n, err := f.try(u, `update publications set status = $2 where id = $1`, id, c.to)
			if err == nil && n > 0 {
				t.Errorf("direct %s by %s accepted", c.fn, u)
			}
		}
		if s, _ := f.statusOf(t, id); s != c.from {
			t.Errorf("refusals moved %s to %s", c.from, s)
		}
	}
	for _, u := range []string{"editorA", "reviewerA", "viewerA"} {
		id := f.inStatus(t, "approved")
		if _, _, err := f.rpcSchedule(u, id, "1 day"); sqlstate(err) != "42501" {
			t.Errorf("schedule by %s: %v", u, err)
		}
	}
	// The refusal says who may not do what, in a sentence a person reads.
	rev := f.inStatus(t, "reviewing")
	if _, _, err := f.rpc("editor2A", "approve", rev, "x"); err == nil || !strings.Contains(err.Error(), "An editor cannot approve publications") {
		t.Errorf("refusal message: %v", err)
	}
	// Reviewers judge drafts; they do not edit them.
	id := f.inStatus(t, "draft")
	if _, err := f.try("reviewerA", `update publications set body = 'rewritten' where id = $1`, id); sqlstate(err) != "42501" {
		t.Errorf("reviewer edited a draft: %v", err)
	}
	// Another tenant's member cannot even see it.
	if _, _, err := f.rpc("ownerB", "archive", id, "x"); sqlstate(err) != "PT404" {
		t.Errorf("other tenant: %v, want PT404", err)
	}
}

// TestNobodyApprovesOwnWork: the author is refused, whatever their role.
func TestNobodyApprovesOwnWork(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.draftBy(t, "leadA", f.projA, "By the lead")
	if _, _, err := f.rpc("leadA", "submit_for_review", id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.rpc("leadA", "approve", id, "self"); sqlstate(err) != "42501" {
		t.Fatalf("author approved own publication via rpc: %v", err)
	}
	if _, err := f.try("leadA", `update publications set status = 'approved' where id = $1`, id); sqlstate(err) != "42501" {
		t.Fatalf("author approved own publication directly: %v", err)
	}
	if _, _, err := f.rpc("ownerA", "approve", id, "fine"); err != nil {
		t.Fatalf("another lead could not approve: %v", err)
	}
}

// TestArgumentsAndVersions: bad arguments are 400s, a stale expected_version is a 409, and
// neither changes anything.
func TestArgumentsAndVersions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.inStatus(t, "reviewing")
	_, v := f.statusOf(t, id)
	if _, _, err := f.rpc("reviewerA", "request_changes", id, "  "); sqlstate(err) != "PT400" {
		t.Errorf("request_changes without a note: %v", err)
	}
	if _, _, err := f.rpc("reviewerA", "approve", id, "ok", v-1); sqlstate(err) != "PT409" {
		t.Errorf("stale version: %v", err)
	}
	if s, v2 := f.statusOf(t, id); s != "reviewing" || v2 != v {
		t.Errorf("refusal changed the row: %s v%d", s, v2)
	}
	if n := len(f.events(t, id)); n != 1 {
		t.Errorf("%d events, want only the submit", n)
	}
	ap := f.inStatus(t, "approved")
	if _, _, err := f.rpcSchedule("leadA", ap, "-1 hour"); sqlstate(err) != "PT400" {
		t.Errorf("schedule in the past: %v", err)
	}
	if _, err := f.try("leadA", `update publications set status = 'scheduled', scheduled_for = now() - interval '1 hour' where id = $1`, ap); sqlstate(err) != "PT400" {
		t.Errorf("direct schedule in the past: %v", err)
	}
	if _, _, err := f.rpc("reviewerA", "approve", "00000000-0000-0000-0000-000000000000", "x"); sqlstate(err) != "PT404" {
		t.Errorf("unknown publication: %v", err)
	}
	if _, err := f.try("editorA", `update publications set version = 99 where id = $1`, id); err == nil {
		t.Error("a caller set version")
	}
}

// TestDirectUpdateAudited: a legal PATCH-style update is accepted and audited as 'direct'.
func TestDirectUpdateAudited(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.draft(t, "Direct")
	if n, err := f.exec("editorA", `update publications set status = 'reviewing' where id = $1`, id); err != nil || n != 1 {
		t.Fatalf("direct submit: %d %v", n, err)
	}
	evs := f.events(t, id)
	if len(evs) != 1 || evs[0].via != "direct" || evs[0].intent != "submit" || evs[0].actor == nil || *evs[0].actor != f.users["editorA"] {
		t.Fatalf("events %+v", evs)
	}
	// Editing content without moving writes no event but bumps the version.
	d := f.draft(t, "Edit me")
	if _, err := f.exec("editorA", `update publications set body = 'v2' where id = $1`, d); err != nil {
		t.Fatal(err)
	}
	if _, v := f.statusOf(t, d); v != 2 || len(f.events(t, d)) != 0 {
		t.Fatalf("edit: version %d, %d events", v, len(f.events(t, d)))
	}
}

// TestConcurrentVerdicts: 20 reviewers racing approve and request_changes on one publication:
// exactly one wins, the rest get the conflict, exactly one event is written.
func TestConcurrentVerdicts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.inStatus(t, "reviewing")
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			who := []string{"reviewerA", "reviewer2A", "leadA", "ownerA"}[i%4]
			fn := []string{"approve", "request_changes"}[i%2]
			_, _, errs[i] = f.rpc(who, fn, id, fmt.Sprintf("verdict %d", i))
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case sqlstate(err) != "PT409":
			t.Errorf("loser got %v, want PT409", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d calls succeeded, want exactly 1", ok)
	}
	evs := f.events(t, id)
	if len(evs) != 2 { // the submit and the one verdict
		t.Fatalf("%d events, want 2", len(evs))
	}
	var reviews int
	mustScan(t, f.db.Owner(t).QueryRow(context.Background(), `select count(*) from reviews where publication_id = $1`, id), &reviews)
	if reviews != 1 {
		t.Fatalf("%d reviews, want 1", reviews)
	}
}

// TestPublishDue: the scheduler publishes exactly the due rows, once, even with two callers at
// the same time, and only the scheduler role may call it.
func TestPublishDue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	var due, later []string
	for range 30 {
		due = append(due, f.inStatus(t, "scheduled"))
	}
	for range 5 {
		later = append(later, f.inStatus(t, "scheduled"))
	}
	// Make the first group due. No caller can put a date in the past, so the fixture does it as
	// the owner with triggers off.
	own := f.db.Owner(t)
	if _, err := own.Exec(ctx, `set session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Exec(ctx, `update publications set scheduled_for = now() - interval '1 minute' where id = any($1)`, due); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Exec(ctx, `set session_replication_role = origin`); err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"anon", "leadA", "ownerA"} {
		err := pg.WithCaller(ctx, f.db.Pool, f.caller(who), pg.ReadWrite, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `select app.publish_due()`)
			return err
		})
		if sqlstate(err) != "42501" {
			t.Errorf("%s ran publish_due: %v", who, err)
		}
	}
	results := make([][]string, 2)
	var wg sync.WaitGroup
	start := make(chan struct{})
	// Both transactions hold their locks until both have run publish_due, so they overlap for
	// certain; a second caller that blocked on the first's locks (no SKIP LOCKED) never arrives.
	var arrived sync.WaitGroup
	arrived.Add(len(results))
	bothIn := make(chan struct{})
	go func() { arrived.Wait(); close(bothIn) }()
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := pg.WithCaller(ctx, f.db.Pool, pg.Caller{Role: pg.RoleScheduler}, pg.ReadWrite, func(tx pgx.Tx) error {
				rows, err := tx.Query(ctx, `select id::text from app.publish_due(7)`)
				if err != nil {
					return err
				}
				ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
				results[i] = ids
				arrived.Done()
				select {
				case <-bothIn:
				case <-time.After(10 * time.Second):
					t.Error("publish_due waited on the other caller's locks")
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	seen := map[string]int{}
	for _, ids := range results {
		for _, id := range ids {
			seen[id]++
		}
	}
	// Keep calling until nothing is due, as the loop in the service does.
	for {
		var ids []string
		err := pg.WithCaller(ctx, f.db.Pool, pg.Caller{Role: pg.RoleScheduler}, pg.ReadWrite, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `select id::text from app.publish_due(7)`)
			if err != nil {
				return err
			}
			ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) == 0 {
			break
		}
		for _, id := range ids {
			seen[id]++
		}
	}
	if len(seen) != len(due) {
		t.Fatalf("published %d rows, want %d", len(seen), len(due))
	}
	for _, id := range due {
		if seen[id] != 1 {
			t.Errorf("%s published %d times", id, seen[id])
		}
		if s, _ := f.statusOf(t, id); s != "published" {
			t.Errorf("%s is %s", id, s)
		}
		evs := f.events(t, id)
		last := evs[len(evs)-1]
		if last.via != "scheduler" || last.intent != "publish" || last.actor != nil || last.from != "scheduled" {
			t.Errorf("scheduler event %+v", last)
		}
	}
	for _, id := range later {
		if s, _ := f.statusOf(t, id); s != "scheduled" {
			t.Errorf("not-yet-due %s is %s", id, s)
		}
	}
}

// TestStatusSideEffects: a move has the same side effects however it is made (RPC, direct
// PATCH or the scheduler): publishing stamps published_at with the moment of the move, and
// leaving scheduled clears scheduled_for. Nobody sets published_at by hand.
func TestStatusSideEffects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	patch := func(to string) func(t *testing.T, id string) error {
		return func(t *testing.T, id string) error {
			_, err := f.exec("leadA", `update publications set status = $2 where id = $1`, id, to)
			return err
		}
	}
	rpc := func(fn string) func(t *testing.T, id string) error {
		return func(t *testing.T, id string) error { _, _, err := f.rpc("leadA", fn, id); return err }
	}
	scheduler := func(t *testing.T, id string) error {
		// Due a minute ago: no caller can put a date in the past, so the owner does, triggers off.
		own := f.db.Owner(t)
		ownerDoes(t, own, `set session_replication_role = replica`)
		ownerDoes(t, own, `update publications set scheduled_for = now() - interval '1 minute' where id = $1`, id)
		ownerDoes(t, own, `set session_replication_role = origin`)
		return pg.WithCaller(ctx, f.db.Pool, pg.Caller{Role: pg.RoleScheduler}, pg.ReadWrite, func(tx pgx.Tx) error {
			var got string
			if err := tx.QueryRow(ctx, `select id::text from app.publish_due(10)`).Scan(&got); err != nil {
				return err
			}
			if got != id {
				return fmt.Errorf("publish_due published %s, want %s", got, id)
			}
			return nil
		})
	}
	cases := []struct {
		name, from, to, via string
		move                func(t *testing.T, id string) error
	}{
		{"publish_now approved", "approved", "published", "rpc", rpc("publish_now")},
		{"publish_now scheduled", "scheduled", "published", "rpc", rpc("publish_now")},
		{"PATCH publish approved", "approved", "published", "direct", patch("published")},
		{"PATCH publish scheduled", "scheduled", "published", "direct", patch("published")},
		{"scheduler", "scheduled", "published", "scheduler", scheduler},
		{"unschedule", "scheduled", "approved", "rpc", rpc("unschedule")},
		{"PATCH unschedule", "scheduled", "approved", "direct", patch("approved")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := f.inStatus(t, c.from)
			if err := c.move(t, id); err != nil {
				t.Fatal(err)
			}
			var status, via string
			var stamped, dated bool
			mustScan(t, f.db.Owner(t).QueryRow(ctx, `
				select p.status, p.published_at is not null and p.published_at = p.updated_at
				         and p.published_at > now() - interval '1 minute',
				       p.scheduled_for is not null,
				       (select e.via from status_events e where e.publication_id = p.id order by e.id desc limit 1)
				  from publications p where p.id = $1`, id), &status, &stamped, &dated, &via)
			if status != c.to || via != c.via {
				t.Fatalf("%s via %s, want %s via %s", status, via, c.to, c.via)
			}
			if stamped != (c.to == "published") {
				t.Errorf("published_at stamped with the move: %v, want %v", stamped, c.to == "published")
			}
			if dated {
				t.Errorf("still has a scheduled_for after moving to %s", c.to)
			}
		})
	}
	draft := f.draft(t, "Backdated")
	if _, err := f.exec("editorA", `update publications set published_at = now() where id = $1`, draft); sqlstate(err) != "42501" {
		t.Errorf("an editor set published_at: %v, want 42501", err)
	}
	pub := f.inStatus(t, "published")
	if _, err := f.exec("ownerA", `update publications set published_at = '2000-01-01' where id = $1`, pub); sqlstate(err) != "42501" {
		t.Errorf("an owner backdated published_at: %v, want 42501", err)
	}
}

// TestAddReview: reviewers, leads and owners comment without moving the publication; the review
// is theirs; editors and viewers are refused; an empty note is a 400.
func TestAddReview(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.inStatus(t, "reviewing")
	addReview := func(user, note string) (reviewer, verdict string, err error) {
		err = pg.WithCaller(context.Background(), f.db.Pool, f.caller(user), pg.ReadWrite, func(tx pgx.Tx) error {
			return tx.QueryRow(context.Background(), `select reviewer_id::text, verdict from add_review($1, $2)`, id, note).Scan(&reviewer, &verdict)
		})
		return
	}
	for _, u := range []string{"reviewerA", "leadA", "ownerA"} {
		reviewer, verdict, err := addReview(u, "Consider a stronger headline.")
		if err != nil || reviewer != f.users[u] || verdict != "comment" {
			t.Errorf("add_review by %s: %s %s %v", u, reviewer, verdict, err)
		}
	}
	for _, u := range []string{"editorA", "viewerA"} {
		if _, _, err := addReview(u, "drive-by"); sqlstate(err) != "42501" {
			t.Errorf("add_review by %s: %v, want 42501", u, err)
		}
	}
	if _, _, err := addReview("reviewerA", " "); sqlstate(err) != "PT400" {
		t.Errorf("empty note: %v", err)
	}
	if s, _ := f.statusOf(t, id); s != "reviewing" || len(f.events(t, id)) != 1 {
		t.Errorf("a comment moved the publication: %s", s)
	}
}
