package pg_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
	"masthead/internal/testwait"
)

// lookupsFixture is a table whose policy shows each signed-in user their own rows, three users
// with a session each (the third signed out again), and Lookups of one lane on db's pool.
type lookupsFixture struct {
	db      *pgtest.DB
	own     *pgx.Conn
	lookups *pg.Lookups
	users   []pg.Caller // alice, bob, and carol, whose session has ended
	anon    pg.Caller
}

// whoSQL answers, for the caller it runs as, who PostgreSQL takes them for and which of the
// table's rows they see.
const whoSQL = `select current_user::text, coalesce(auth.uid()::text, '-'),
	coalesce((select string_agg(n::text, ',' order by n) from public.lookup_probe), '-'),
	current_setting('transaction_read_only')`

func newLookupsFixture(t *testing.T) *lookupsFixture {
	t.Helper()
	db := pgtest.New(t)
	ctx := context.Background()
	own := db.Owner(t)
	if _, err := own.Exec(ctx, `create table public.lookup_probe (owner uuid, n int);
		alter table public.lookup_probe enable row level security;
		create policy own on public.lookup_probe using (owner = auth.uid());
		grant select on public.lookup_probe to authenticated, anon`); err != nil {
		t.Fatal(err)
	}
	f := &lookupsFixture{db: db, own: own, lookups: pg.NewLookups(db.Pool, 1, 0), anon: pg.Caller{Role: pg.RoleAnon}}
	for i, name := range []string{"alice", "bob", "carol"} {
		var uid, sid string
		if err := own.QueryRow(ctx, `insert into auth.users (email) values ($1) returning id`, name+"@example.test").Scan(&uid); err != nil {
			t.Fatal(err)
		}
		if err := own.QueryRow(ctx, `insert into auth.sessions (user_id) values ($1) returning id`, uid).Scan(&sid); err != nil {
			t.Fatal(err)
		}
		if _, err := own.Exec(ctx, `insert into public.lookup_probe values ($1, $2), ($1, $3)`, uid, i+1, 10*(i+1)); err != nil {
			t.Fatal(err)
		}
		f.users = append(f.users, pg.VerifiedCaller([]byte(`{"sub":"`+uid+`","role":"authenticated","session_id":"`+sid+`"}`), uid, sid))
	}
	if _, err := own.Exec(ctx, `delete from auth.sessions where user_id = $1`, f.users[2].Subject); err != nil {
		t.Fatal(err)
	}
	return f
}

// want is what whoSQL answers c.
func (f *lookupsFixture) want(c pg.Caller) string {
	for i, u := range f.users {
		if u.Subject == c.Subject {
			return fmt.Sprintf("authenticated %s %d,%d on", u.Subject, i+1, 10*(i+1))
		}
	}
	return "anon - - on"
}

// who reads whoSQL as c through f's Lookups.
func (f *lookupsFixture) who(ctx context.Context, c pg.Caller) (string, error) {
	var got string
	err := f.lookups.Read(ctx, c, pg.Stmt{SQL: whoSQL}, func(row [][]byte) error {
		got = string(row[0]) + " " + string(row[1]) + " " + string(row[2]) + " " + string(row[3])
		return nil
	})
	return got, err
}

// block holds an advisory lock on the owner's connection and starts a read (as alice) that
// waits for it inside PostgreSQL, so the lane stays busy and later reads queue. It returns
// once that read waits; release lets it finish, and its outcome arrives on the channel.
func (f *lookupsFixture) block(t *testing.T) (release func(), done <-chan error) {
	t.Helper()
	ctx := context.Background()
	if _, err := f.own.Exec(ctx, `select pg_advisory_lock(4242)`); err != nil {
		t.Fatal(err)
	}
	out := make(chan error, 1)
	go func() {
		out <- f.lookups.Read(ctx, f.users[0], pg.Stmt{SQL: `select pg_advisory_xact_lock_shared(4242)::text`},
			func([][]byte) error { return nil })
	}()
	testwait.Until(t, 10*time.Second, "the blocking read to wait on its lock", func() (bool, string) {
		var n int
		if err := f.own.QueryRow(ctx, `select count(*) from pg_stat_activity
			where datname = current_database() and wait_event_type = 'Lock' and wait_event = 'advisory'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1, fmt.Sprintf("%d reads wait", n)
	})
	return func() {
		if _, err := f.own.Exec(ctx, `select pg_advisory_unlock(4242)`); err != nil {
			t.Fatal(err)
		}
	}, out
}

// waitQueued waits until n reads wait in f's queue.
func (f *lookupsFixture) waitQueued(t *testing.T, n int) {
	t.Helper()
	testwait.Until(t, 10*time.Second, fmt.Sprintf("%d reads to queue", n), func() (bool, string) {
		q := f.lookups.Queued()
		return q == n, fmt.Sprintf("%d queued", q)
	})
}

// TestLookupsShareRoundTrips: reads that queue while the lane is busy go to PostgreSQL
// together, in one batch, and each is still a transaction of its own: every caller is seen as
// itself (role, claims, the rows its policy shows it, read-only) whoever came before it in the
// batch, and a caller whose session has ended is refused alone, without failing the reads
// around it.
func TestLookupsShareRoundTrips(t *testing.T) {
	t.Parallel()
	f := newLookupsFixture(t)
	alice, bob, carol := f.users[0], f.users[1], f.users[2]
	// Warm the connection: its first read prepares the statements, alone.
	if got, err := f.who(context.Background(), alice); err != nil || got != f.want(alice) {
		t.Fatalf("first read: %q, %v", got, err)
	}
	release, blocked := f.block(t)
	before := batches(f.lookups)

	callers := []pg.Caller{alice, bob, f.anon, carol, bob, alice, f.anon, bob}
	got := make([]string, len(callers))
	errs := make([]error, len(callers))
	var wg sync.WaitGroup
	for i, c := range callers {
		wg.Go(func() { got[i], errs[i] = f.who(context.Background(), c) })
		f.waitQueued(t, i+1) // in this order, so neighbours in the batch differ
	}
	release()
	if err := <-blocked; err != nil {
		t.Fatalf("the blocking read: %v", err)
	}
	wg.Wait()
	for i, c := range callers {
		switch {
		case c.Subject == carol.Subject:
			if !errors.Is(errs[i], pg.ErrSessionEnded) {
				t.Errorf("read %d, signed out: %q, %v; want pg.ErrSessionEnded", i, got[i], errs[i])
			}
		case errs[i] != nil || got[i] != f.want(c):
			t.Errorf("read %d: %q, %v; want %q", i, got[i], errs[i], f.want(c))
		}
	}
	if n := batches(f.lookups) - before; n != 1 {
		t.Errorf("%d reads queued behind one made %d batches, want 1", len(callers), n)
	}
}

// TestLookupsQueue: a read whose context ends while it queues leaves the queue at once and is
// never sent; one already in a round trip when the connection fails gets the failure (no
// hang), and the reads queued behind it are served on another connection.
func TestLookupsQueue(t *testing.T) {
	t.Parallel()
	f := newLookupsFixture(t)
	bob := f.users[1]
	if _, err := f.who(context.Background(), bob); err != nil {
		t.Fatal(err)
	}

	t.Run("a read that gives up while it queues is not sent", func(t *testing.T) {
		release, blocked := f.block(t)
		before := batches(f.lookups)
		ctx, cancel := context.WithCancel(context.Background())
		gaveUp := make(chan error, 1)
		go func() {
			_, err := f.who(ctx, bob)
			gaveUp <- err
		}()
		f.waitQueued(t, 1)
		cancel()
		if err := <-gaveUp; !errors.Is(err, context.Canceled) {
			t.Errorf("the cancelled read: %v, want context.Canceled", err)
		}
		if q := f.lookups.Queued(); q != 0 {
			t.Errorf("%d reads still queued after the only one gave up", q)
		}
		release()
		if err := <-blocked; err != nil {
			t.Fatal(err)
		}
		if n := batches(f.lookups) - before; n != 0 {
			t.Errorf("%d batches ran for a read that gave up", n)
		}
	})

	t.Run("a failed connection fails only its own round trip", func(t *testing.T) {
		release, blocked := f.block(t)
		defer release()
		got := make([]string, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i], errs[i] = f.who(context.Background(), bob) })
			f.waitQueued(t, i+1)
		}
		if _, err := f.own.Exec(context.Background(), `select pg_terminate_backend(pid) from pg_stat_activity
			where datname = current_database() and wait_event = 'advisory'`); err != nil {
			t.Fatal(err)
		}
		if err := <-blocked; err == nil {
			t.Error("the read whose connection was terminated succeeded")
		}
		wg.Wait()
		for i := range got {
			if errs[i] != nil || got[i] != f.want(bob) {
				t.Errorf("read %d queued behind the failure: %q, %v", i, got[i], errs[i])
			}
		}
	})
}

// TestLookupsUnderLoad: 24 goroutines reading as four different callers through two lanes,
// every answer checked: batches form and pass from goroutine to goroutine (run it with -race)
// and no caller ever sees another's identity or rows.
func TestLookupsUnderLoad(t *testing.T) {
	t.Parallel()
	f := newLookupsFixture(t)
	f.lookups = pg.NewLookups(f.db.Pool, 2, 0)
	callers := []pg.Caller{f.users[0], f.users[1], f.anon, f.users[2]}
	const workers, reads = 24, 40
	var wg sync.WaitGroup
	failures := make(chan string, workers*reads)
	for w := range workers {
		wg.Go(func() {
			for i := range reads {
				c := callers[(w+i)%len(callers)]
				got, err := f.who(context.Background(), c)
				switch {
				case c.Subject == f.users[2].Subject:
					if !errors.Is(err, pg.ErrSessionEnded) {
						failures <- fmt.Sprintf("signed out: %q, %v", got, err)
					}
				case err != nil || got != f.want(c):
					failures <- fmt.Sprintf("%q, %v; want %q", got, err, f.want(c))
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	var msgs []string
	for m := range failures {
		msgs = append(msgs, m)
	}
	if len(msgs) > 0 {
		t.Fatalf("%d of %d reads wrong, e.g. %s", len(msgs), workers*reads, strings.Join(msgs[:min(3, len(msgs))], "; "))
	}
	if b := batches(f.lookups); b >= workers*reads {
		t.Errorf("%d reads in %d batches: none shared a round trip", workers*reads, b)
	}
}

// batches is how many batches l has run.
func batches(l *pg.Lookups) int64 {
	_, n := l.Stats()
	return n
}
