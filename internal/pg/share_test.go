package pg_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
)

// TestShares: a caller holding their whole share waits for the share's wait and is refused with
// an *OverShareError naming the limits, while another caller takes a slot at once; a slot given
// back is taken again; a request whose context ends while it waits gets the context's error.
func TestShares(t *testing.T) {
	t.Parallel()
	const wait = 50 * time.Millisecond
	s := pg.NewShares(2, wait)
	ctx := context.Background()
	a1, err := s.Take(ctx, "user:a")
	if err != nil {
		t.Fatal(err)
	}
	a2, err := s.Take(ctx, "user:a")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Take(ctx, "user:a")
	var over *pg.OverShareError
	if !errors.As(err, &over) || over.Per != 2 || over.Wait != wait || time.Since(start) < wait {
		t.Errorf("over the share: %v after %s", err, time.Since(start))
	}
	b, err := s.Take(ctx, "addr:192.0.2.1")
	if err != nil {
		t.Fatalf("another caller: %v", err)
	}
	s.Give(b)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Take(cancelled, "user:a"); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait: %v", err)
	}
	s.Give(a1)
	a3, err := s.Take(ctx, "user:a")
	if err != nil {
		t.Fatalf("after a slot came back: %v", err)
	}
	s.Give(a2)
	s.Give(a3)
}

// TestOverShareExplain: the refusal's words name both limits, and the count agrees with its noun.
func TestOverShareExplain(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		per  int
		want string
	}{
		{1, "You already have 1 request running against the database, the most one caller may (MASTHEAD_POOL_SHARE); this one waited 2s (MASTHEAD_POOL_SHARE_WAIT)."},
		{4, "You already have 4 requests running against the database, the most one caller may (MASTHEAD_POOL_SHARE); this one waited 2s (MASTHEAD_POOL_SHARE_WAIT)."},
	} {
		if got := (&pg.OverShareError{Per: c.per, Wait: 2 * time.Second}).Explain(); got != c.want {
			t.Errorf("Explain() with a share of %d = %q, want %q", c.per, got, c.want)
		}
	}
}

// TestShareKey: a signed-in caller's share is their user's, whichever session or app they call
// from; an anonymous caller's (or one whose claims name no user) is their address's.
func TestShareKey(t *testing.T) {
	t.Parallel()
	user := func(sub, session string) pg.Caller {
		c, _ := json.Marshal(map[string]string{"sub": sub, "session_id": session, "role": "authenticated"})
		return pg.UserCaller(c)
	}
	for _, tc := range []struct {
		name   string
		caller pg.Caller
		addr   string
		want   string
	}{
		{"signed in", user("u1", "s1"), "192.0.2.1", "user:u1"},
		{"another session of the same user, elsewhere", user("u1", "s2"), "192.0.2.9", "user:u1"},
		{"another user at the same address", user("u2", "s3"), "192.0.2.1", "user:u2"},
		{"anonymous", pg.Anon, "192.0.2.1", "addr:192.0.2.1"},
		{"claims without a user", pg.UserCaller(json.RawMessage(`{"role":"authenticated"}`)), "192.0.2.1", "addr:192.0.2.1"},
	} {
		if got := pg.ShareKey(tc.caller, tc.addr); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSharesUncontendedAllocs: a signed-in caller's request within their share allocates
// nothing for it (key, take, give), so the share costs the download path no garbage.
func TestSharesUncontendedAllocs(t *testing.T) {
	s := pg.NewShares(2, time.Second)
	caller := pg.UserCaller(json.RawMessage(`{"sub":"u1","role":"authenticated"}`))
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		sh, err := s.Take(ctx, pg.ShareKey(caller, "192.0.2.1"))
		if err != nil {
			t.Fatal(err)
		}
		s.Give(sh)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per uncontended take and give, want 0", allocs)
	}
}

// TestFairShare: by default one caller may hold a quarter of the pool, and at least 2.
func TestFairShare(t *testing.T) {
	for _, tc := range []struct{ maxConns, want int }{{1, 2}, {4, 2}, {8, 2}, {12, 3}, {40, 10}} {
		cfg, err := pgxpool.ParseConfig(fmt.Sprintf("postgres://x@127.0.0.1:1/x?pool_max_conns=%d", tc.maxConns))
		if err != nil {
			t.Fatal(err)
		}
		pool, err := pgxpool.NewWithConfig(context.Background(), cfg) // connects only when used
		if err != nil {
			t.Fatal(err)
		}
		if got := pg.FairShare(pool); got != tc.want {
			t.Errorf("a pool of %d: share %d, want %d", tc.maxConns, got, tc.want)
		}
		pool.Close()
	}
}
