package pg_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
	"masthead/internal/testwait"
)

// TestAcquirer pins what REST's pool acquisition promises (pg.Acquirer): an idle connection is
// taken without arming a timer per acquire, an exhausted pool answers ErrAcquireTimeout after
// the configured wait (each waiter's own, counted from its start), a connection released
// meanwhile goes to the waiter, and the caller's own cancellation wins over the timeout.
func TestAcquirer(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()

	t.Run("idle connections are taken without a timer each", func(t *testing.T) {
		a := pg.NewAcquirer(time.Minute)
		for range 200 {
			c, err := a.Acquire(ctx, db.Pool)
			if err != nil {
				t.Fatal(err)
			}
			c.Release()
		}
		// One timer, armed by the first acquire, still pending (a minute): never re-armed.
		if n := a.Arms(); n != 1 {
			t.Errorf("timer armed %d times for 200 acquires, want 1", n)
		}
		if n := a.Waiting(); n != 0 {
			t.Errorf("%d acquires still listed", n)
		}
	})

	t.Run("exhausted pool times out after the configured wait", func(t *testing.T) {
		pool := smallPool(t, db, 2)
		held := holdAll(t, pool)
		const timeout = 150 * time.Millisecond
		a := pg.NewAcquirer(timeout)
		// Three waiters started at different times each wait their own full timeout: the
		// timer, armed for the first, re-arms for the next.
		var wg sync.WaitGroup
		errs := make([]error, 3)
		took := make([]time.Duration, 3)
		for i := range 3 {
			if i > 0 {
				waitListed(t, a, i)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				_, errs[i] = a.Acquire(ctx, pool)
				took[i] = time.Since(start)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if !errors.Is(err, pg.ErrAcquireTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("waiter %d: err %v, want ErrAcquireTimeout (a DeadlineExceeded)", i, err)
			}
			if took[i] < timeout || took[i] > timeout+2*time.Second {
				t.Errorf("waiter %d gave up after %v, want %v", i, took[i], timeout)
			}
		}
		if n := a.Waiting(); n != 0 {
			t.Errorf("%d acquires still listed", n)
		}
		// Freed, the pool serves the same Acquirer again at once.
		releaseAll(held)
		c, err := a.Acquire(ctx, pool)
		if err != nil {
			t.Fatalf("after release: %v", err)
		}
		c.Release()
	})

	t.Run("a connection released while waiting goes to the waiter", func(t *testing.T) {
		pool := smallPool(t, db, 1)
		held := holdAll(t, pool)
		a := pg.NewAcquirer(time.Minute)
		done := make(chan error, 1)
		go func() {
			c, err := a.Acquire(ctx, pool)
			if err == nil {
				c.Release()
			}
			done <- err
		}()
		waitListed(t, a, 1)
		releaseAll(held)
		if err := <-done; err != nil {
			t.Errorf("waiter: %v", err)
		}
	})

	t.Run("the caller's cancellation ends the wait", func(t *testing.T) {
		pool := smallPool(t, db, 1)
		holdAll(t, pool)
		a := pg.NewAcquirer(time.Minute)
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := a.Acquire(cctx, pool)
			done <- err
		}()
		waitListed(t, a, 1)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) || errors.Is(err, pg.ErrAcquireTimeout) {
			t.Errorf("err %v, want context.Canceled", err)
		}
		if n := a.Waiting(); n != 0 {
			t.Errorf("%d acquires still listed", n)
		}
	})
}

// smallPool is a pool of n connections of its own, all open.
func smallPool(t *testing.T, db *pgtest.DB, n int32) *pgxpool.Pool {
	t.Helper()
	pcfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns, pcfg.MinConns = n, n
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// holdAll acquires every connection of pool, given back at the latest when the test ends.
func holdAll(t *testing.T, pool *pgxpool.Pool) []*pgxpool.Conn {
	t.Helper()
	var held []*pgxpool.Conn
	for range pool.Config().MaxConns {
		c, err := pool.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	t.Cleanup(func() { releaseAll(held) })
	return held
}

func releaseAll(held []*pgxpool.Conn) {
	for _, c := range held {
		c.Release()
	}
}

// waitListed waits until a has n acquires in progress.
func waitListed(t *testing.T, a *pg.Acquirer, n int) {
	t.Helper()
	testwait.Until(t, 10*time.Second, fmt.Sprintf("%d acquires in progress", n), func() (bool, string) {
		got := a.Waiting()
		return got == n, fmt.Sprintf("%d in progress", got)
	})
}
