package pg_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// bulk fills both fixture projects with n publications each over every status, bypassing the
// workflow triggers (fixture data only: no caller can do this).
func (f *fixture) bulk(t testing.TB, n int) {
	t.Helper()
	ctx := context.Background()
	own := f.db.Owner(t)
	for _, q := range []string{
		`set session_replication_role = replica`,
		`insert into publications (project_id, title, slug, body, status, scheduled_for, author_id, created_at)
		 select p.id, 'Bulk ' || g, 'bulk-' || g, 'body', s.status,
		        case when s.status = 'scheduled' then now() + g * interval '1 minute' end,
		        $3::uuid, now() - g * interval '1 second'
		 from (values ($1::uuid), ($2::uuid)) p(id), generate_series(1, $4) g,
		      lateral (select (array['draft','reviewing','reviewing','changes_requested','approved','scheduled','published','published','archived'])[1 + g % 9] as status) s`,
		`set session_replication_role = origin`,
		`analyze`,
	} {
		args := []any{}
		if strings.Contains(q, "$4") {
			args = []any{f.projA, f.projB, f.users["editorA"], n}
		}
		if _, err := own.Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
}

// explain returns the plan of q as the given user.
func (f *fixture) explain(t *testing.T, user, q string, args ...any) string {
	t.Helper()
	var lines []string
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller(user), pg.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), "explain "+q, args...)
		if err != nil {
			return err
		}
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// TestQueuePlansUseIndexes: under RLS, the review queue, a point read (the membership check)
// and the scheduler's due scan probe indexes; none scans publications sequentially.
func TestQueuePlansUseIndexes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.bulk(t, 20000)
	var one string
	mustScan(t, f.db.Owner(t).QueryRow(context.Background(), `select id from publications where project_id = $1 limit 1`, f.projA), &one)
	cases := []struct {
		name, user, q string
		args          []any
		want          string
	}{
		{"queue of one project", "reviewerA",
			`select id, title, status, scheduled_for from publications where project_id = $1 and status = 'reviewing' order by created_at desc limit 20`,
			[]any{f.projA}, "publications_queue_idx"},
		{"queue of all my projects", "reviewerA",
			`select id, title, status, scheduled_for from publications where status = 'reviewing' order by created_at desc limit 20`,
			nil, "publications_status_idx"},
		{"point read", "viewerA", `select * from publications where id = $1`, []any{one}, "publications_pkey"},
		{"schedule", "leadA",
			`select id from publications where status = 'scheduled' and scheduled_for < now() + interval '7 days' order by scheduled_for`,
			nil, "publications_due_idx"},
	}
	for _, c := range cases {
		plan := f.explain(t, c.user, c.q, c.args...)
		if strings.Contains(plan, "Seq Scan on publications") {
			t.Errorf("%s: sequential scan:\n%s", c.name, plan)
		}
		if c.want != "" && !strings.Contains(plan, c.want) {
			t.Errorf("%s: plan does not use %s:\n%s", c.name, c.want, plan)
		}
	}
}

// TestAnyStatusQueueUsesIndex: the queue over every status, paged, walks publications_recent_idx.
func TestAnyStatusQueueUsesIndex(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.bulk(t, 20000)
	for _, q := range []string{
		`select id from publications where project_id = $1 order by created_at desc, id desc limit 20 offset 40`,
	} {
		plan := f.explain(t, "reviewerA", q, f.projA)
		if strings.Contains(plan, "Seq Scan on publications") || !strings.Contains(plan, "publications_recent_idx") {
			t.Errorf("want publications_recent_idx, no sequential scan:\n%s", plan)
		}
	}
}

// TestInboxPlanUsesIndexes: my_inbox reads publications through indexes and looks up a current
// round only by primary key, for the publications the caller has reviewed: the inbox never scans
// publications or every revision in review. The function is inlined where it is called (SQL,
// no SECURITY DEFINER), so its plan shows in the caller's. Its totals are those counted here
// independently, with reviews in a round since superseded (migration 040 counts them apart
// from the lists).
func TestInboxPlanUsesIndexes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.bulk(t, 20000)
	ctx := context.Background()
	own := f.db.Owner(t)
	for _, q := range inboxRounds(f.users["reviewerA"]) {
		if _, err := own.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, user := range []string{"reviewerA", "leadA", "editorA"} {
		plan := f.explain(t, user, `select * from my_inbox(50)`)
		if !strings.Contains(plan, "on publications") {
			t.Fatalf("%s: my_inbox was not inlined:\n%s", user, plan)
		}
		if strings.Contains(plan, "Seq Scan on publications") {
			t.Errorf("%s: sequential scan of publications:\n%s", user, plan)
		}
		lines := strings.Split(plan, "\n")
		for i, line := range lines {
			if !strings.Contains(line, "on publication_revisions") || strings.Contains(line, "publication_revisions_pkey") {
				continue
			}
			// A bitmap heap scan names no index: the bitmap index scan under it does, on the
			// next line that scans one. By primary key either way is what is asked.
			if strings.Contains(line, "Bitmap Heap Scan") && bitmapIndexAfter(lines[i+1:]) == "publication_revisions_pkey" {
				continue
			}
			t.Errorf("%s: revisions read other than by primary key: %s\n%s", user, line, plan)
		}
	}

	// The totals, counted independently of my_inbox: in review in reviewerA's project, not
	// reviewed by them in the round in progress; approved in leadA's.
	var waiting, approved int
	mustScan(t, own.QueryRow(ctx, `select count(*) from publications p
		where p.project_id = $1 and p.status = 'reviewing'
		  and not exists (select 1 from reviews r where r.publication_id = p.id and r.reviewer_id = $2
		                  and r.round = (select max(round) from publication_revisions v where v.publication_id = p.id))`,
		f.projA, f.users["reviewerA"]), &waiting)
	mustScan(t, own.QueryRow(ctx, `select count(*) from publications where project_id = $1 and status = 'approved'`, f.projA), &approved)
	for _, c := range []struct {
		user, reason string
		want         int
	}{{"reviewerA", "review", waiting}, {"leadA", "needs_date", approved}} {
		var total, shown int
		err := pg.WithCaller(ctx, f.db.Pool, f.caller(c.user), pg.ReadOnly, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `select max(reason_total), count(*) from my_inbox(50) where reason = $1`, c.reason).Scan(&total, &shown)
		})
		if err != nil || total != c.want || shown != 50 {
			t.Errorf("%s: %s total %d, %d shown (%v), want %d total, 50 shown", c.user, c.reason, total, shown, err, c.want)
		}
	}
}

// bitmapIndexAfter is the index of the first bitmap index scan in the plan lines given, "" for
// none.
func bitmapIndexAfter(lines []string) string {
	for _, l := range lines {
		if _, after, ok := strings.Cut(l, "Bitmap Index Scan on "); ok {
			name, _, _ := strings.Cut(after, " ")
			return name
		}
	}
	return ""
}

// inboxRounds are the statements that give a bulk fixture's publications in review a first
// round each and half of them a second, with a comment by reviewer in the first round on a
// third of them: a third of those in their second round wait on reviewer again.
func inboxRounds(reviewer string) []string {
	return []string{
		`set session_replication_role = replica`,
		`insert into publication_revisions (project_id, publication_id, round, version, snapshot, submitted_by)
		 select project_id, id, r, r, '{}', author_id from publications, generate_series(1, 2) r
		  where status = 'reviewing' and (r = 1 or hashtext(id::text) % 2 = 0)`,
		`insert into reviews (project_id, publication_id, reviewer_id, verdict, round)
		 select project_id, id, '` + reviewer + `', 'comment', 1 from publications
		  where status = 'reviewing' and hashtext(id::text) % 3 = 0`,
		`set session_replication_role = origin`,
		`analyze`,
	}
}
