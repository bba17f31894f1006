package pg_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// inbox returns "reason title" for each entry of a user's inbox, sorted.
func (f *fixture) inbox(t *testing.T, user string) []string {
	t.Helper()
	var out []string
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller(user), pg.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), `select reason || ' ' || title || case when detail <> '' then ': ' || detail else '' end from my_inbox()`)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestInbox: each role's inbox holds exactly what waits on them, with the reason.
func TestInbox(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	rev := f.draft(t, "To review")
	if _, _, err := f.rpc("editorA", "submit_for_review", rev); err != nil {
		t.Fatal(err)
	}
	back := f.draft(t, "Sent back")
	for _, s := range []step{{"editorA", "submit_for_review", ""}, {"reviewer2A", "request_changes", "Cut the second paragraph."}} {
		if _, _, err := f.rpc(s.user, s.fn, back, s.args()...); err != nil {
			t.Fatal(err)
		}
	}
	approved := f.inStatus(t, "approved")
	overdue := f.inStatus(t, "scheduled")
	soon := f.inStatus(t, "scheduled")
	later := f.inStatus(t, "scheduled")
	stale := f.draft(t, "Old draft")
	f.draft(t, "Fresh draft")
	ownerDoes(t, own, `alter table publications disable trigger publications_guard`)
	ownerDoes(t, own, `update publications set scheduled_for = now() - interval '1 hour' where id = $1`, overdue)
	ownerDoes(t, own, `update publications set updated_at = now() - interval '8 days' where id = $1`, stale)
	ownerDoes(t, own, `update publications set scheduled_for = now() + interval '2 hours' where id = $1`, soon)
	ownerDoes(t, own, `update publications set scheduled_for = now() + interval '3 days' where id = $1`, later)
	ownerDoes(t, own, `alter table publications enable trigger publications_guard`)
	// Due within a day and no longer ready (only a superuser could take its promo away now),
	// and one further out that is not ready either: only the first waits on the lead.
	ownerDoes(t, own, `delete from promos where publication_id in ($1, $2) and channel = 'x'`, soon, later)
	title := func(id string) string {
		var s string
		mustScan(t, own.QueryRow(context.Background(), `select title from publications where id = $1`, id), &s)
		return s
	}

	// A reviewer's comment in this round takes the item out of their inbox, not another's.
	if _, err := f.exec("reviewerA", `insert into reviews (publication_id, verdict, notes) values ($1, 'comment', 'looking')`, rev); err != nil {
		t.Fatal(err)
	}
	cases := map[string][]string{
		"reviewerA":  nil,
		"reviewer2A": {"review To review"},
		"editorA":    {"changes_requested Sent back: Cut the second paragraph.", "stale_draft Old draft"},
		"leadA": {"needs_date " + title(approved), "overdue " + title(overdue), "review To review",
			"due_not_ready " + title(soon) + ": X: no promo written"},
		"viewerA":  nil,
		"ownerB":   nil,
		"outsider": nil,
	}
	for user, want := range cases {
		slices.Sort(want)
		if got := f.inbox(t, user); !slices.Equal(got, want) {
			t.Errorf("%s's inbox = %q, want %q", user, got, want)
		}
	}

	// A cap per reason keeps the page small; each entry still says how many wait in all.
	f.inStatus(t, "approved")
	var got []string
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller("leadA"), pg.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), `select reason || ' of ' || reason_total from my_inbox(1)`)
		if err != nil {
			return err
		}
		got, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	slices.Sort(got)
	if want := []string{"due_not_ready of 1", "needs_date of 2", "overdue of 1", "review of 1"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("my_inbox(1) = %q (%v), want %q", got, err, want)
	}
}

// TestVisits: visit() returns when the caller last looked at a list (null the first time) and
// keeps one row per person and list, which only that person reads.
func TestVisits(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	visit := func(user, list string) (*time.Time, error) {
		var prev *time.Time
		err := pg.WithCaller(context.Background(), f.db.Pool, f.caller(user), pg.ReadWrite, func(tx pgx.Tx) error {
			return tx.QueryRow(context.Background(), `select visit($1)`, list).Scan(&prev)
		})
		return prev, err
	}
	if prev, err := visit("editorA", "queue:a"); err != nil || prev != nil {
		t.Fatalf("first visit: %v %v", prev, err)
	}
	if prev, err := visit("editorA", "queue:a"); err != nil || prev != nil {
		t.Fatalf("a second look in the same sitting: %v %v", prev, err)
	}
	// An hour later is a new sitting: what is new is measured from the last one.
	ownerDoes(t, f.db.Owner(t), `update list_visits set seen_at = seen_at - interval '1 hour'`)
	prev, err := visit("editorA", "queue:a")
	if err != nil || prev == nil || time.Since(*prev) < 59*time.Minute || time.Since(*prev) > 61*time.Minute {
		t.Fatalf("a new sitting: %v %v", prev, err)
	}
	if again, err := visit("editorA", "queue:a"); err != nil || again == nil || !again.Equal(*prev) {
		t.Errorf("paging within the sitting moved the mark: %v %v", again, err)
	}
	if prev, err := visit("leadA", "queue:a"); err != nil || prev != nil {
		t.Errorf("another person's first visit: %v %v", prev, err)
	}
	if _, err := visit("anon", "queue:a"); sqlstate(err) != "42501" {
		t.Errorf("anon visits: %v", err)
	}
	if _, err := visit("editorA", strings.Repeat("x", 201)); sqlstate(err) != "PT400" {
		t.Errorf("a long list name: %v", err)
	}
	if n := f.count("leadA", `select count(*) from list_visits`); n != 1 {
		t.Errorf("leadA reads %d visits, want only their own", n)
	}
	if n, err := f.try("editorA", `update list_visits set seen_at = now() - interval '1 year'`); err == nil && n > 0 {
		t.Error("a visit was rewritten directly")
	}
}

// inbox013 installs my_inbox as migration 013 wrote it, as public.my_inbox_013, for comparing
// 040's rewrite with it.
func inbox013(tb testing.TB, f *fixture) {
	tb.Helper()
	src, err := os.ReadFile("migrations/013_inbox_rounds.sql")
	if err != nil {
		tb.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)create or replace function public\.my_inbox\(.*?\n\$\$;`).Find(src)
	if m == nil {
		tb.Fatal("no public.my_inbox in 013")
	}
	def := strings.Replace(string(m), "public.my_inbox(", "public.my_inbox_013(", 1)
	for _, q := range []string{def, `grant execute on function public.my_inbox_013(integer) to authenticated`} {
		if _, err := f.db.Owner(tb).Exec(context.Background(), q); err != nil {
			tb.Fatalf("install 013's my_inbox: %v", err)
		}
	}
}

// inboxRows returns the rows fn (my_inbox or my_inbox_013) answers user with perReason as
// max_per_reason, each as text, sorted.
func (f *fixture) inboxRows(tb testing.TB, user, fn string, perReason any) []string {
	tb.Helper()
	var out []string
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller(user), pg.ReadOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), `select i::text from public.`+fn+`($1) i`, perReason)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		tb.Fatalf("%s as %s: %v", fn, user, err)
	}
	slices.Sort(out)
	return out
}

// inboxAtScale fills the fixture with n publications a project in every status (plan_test's
// bulk, all written by editorA), rounds and reviews for those in review (inboxRounds), drafts
// left untouched for eight days, scheduled ones overdue and an eleventh of all written by leadA
// instead, then vacuums, as autovacuum would have.
func inboxAtScale(tb testing.TB, f *fixture, n int) {
	tb.Helper()
	f.bulk(tb, n)
	own := f.db.Owner(tb)
	stmts := append(inboxRounds(f.users["reviewerA"]),
		`set session_replication_role = replica`,
		`update publications set updated_at = now() - interval '8 days' where status = 'draft' and hashtext(id::text) % 5 = 0`,
		`update publications set scheduled_for = now() - interval '1 hour' where status = 'scheduled' and hashtext(id::text) % 7 = 0`,
		`update publications set author_id = '`+f.users["leadA"]+`' where hashtext(id::text) % 11 = 0`,
		`set session_replication_role = origin`,
		`vacuum analyze`)
	for _, q := range stmts {
		if _, err := own.Exec(context.Background(), q); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestInboxAnswersAs013: 040's inbox, which walks publications_waiting_idx and counts apart,
// answers what 013's answered, row for row with every total, for every kind of caller and
// several caps, over publications in every status, in review in a first or a second round,
// reviewed or not, due or not, sent back and stale.
func TestInboxAnswersAs013(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	inbox013(t, f)
	inboxAtScale(t, f, 3000)
	for _, user := range []string{"ownerA", "leadA", "editorA", "reviewerA", "reviewer2A", "viewerA", "ownerB", "outsider"} {
		for _, perReason := range []any{nil, 1, 7, 50, 5000} {
			got, want := f.inboxRows(t, user, "my_inbox", perReason), f.inboxRows(t, user, "my_inbox_013", perReason)
			if !slices.Equal(got, want) {
				t.Errorf("%s, %v per reason: %d rows, 013 had %d\nnow: %.400q\n013: %.400q", user, perReason, len(got), len(want), got, want)
			}
		}
	}
}

// BenchmarkInbox measures my_inbox against 013's at 100,000 publications a project (two in nine
// of them in review), as a lead (who also reviews) and as a reviewer, the two in turn within
// each iteration, as the service runs it (JIT off). It reports each one's median and 013's
// over 040's.
//
//	go test ./internal/pg -run '^$' -bench Inbox -benchtime 20x
func BenchmarkInbox(b *testing.B) {
	f := newFixture(b)
	inbox013(b, f)
	inboxAtScale(b, f, 100_000)
	for _, user := range []string{"leadA", "reviewerA"} {
		b.Run(user, func(b *testing.B) {
			if got, want := f.inboxRows(b, user, "my_inbox", nil), f.inboxRows(b, user, "my_inbox_013", nil); !slices.Equal(got, want) {
				b.Fatalf("%s: %d rows, 013 had %d", user, len(got), len(want))
			}
			var now, was []time.Duration
			for b.Loop() {
				for _, fn := range []string{"my_inbox", "my_inbox_013"} {
					start := time.Now()
					f.inboxRows(b, user, fn, nil)
					if fn == "my_inbox" {
						now = append(now, time.Since(start))
					} else {
						was = append(was, time.Since(start))
					}
				}
			}
			ms := func(d []time.Duration) float64 {
				slices.Sort(d)
				return float64(d[len(d)/2].Microseconds()) / 1000
			}
			b.ReportMetric(ms(now), "ours-ms")
			b.ReportMetric(ms(was), "013-ms")
			b.ReportMetric(ms(was)/ms(now), "013/ours")
		})
	}
}
