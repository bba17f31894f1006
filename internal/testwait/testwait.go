// Package testwait waits, in tests, for something that does not announce itself: a backend
// reaching a lock, a line in a log, a listener closing, another process's state. It looks on a
// ticker until the condition holds or a deadline passes, because a test that sleeps a fixed
// time to let something happen is too short on a loaded machine and wasted time on an idle one
// (the project's tests never sleep as synchronisation). It is the one copy of that loop; only
// test code imports it.
package testwait

import (
	"testing"
	"time"
)

// every is how often Until looks again: often enough that a wait ends within a few
// milliseconds of its condition, seldom enough that the looks are no load.
const every = 10 * time.Millisecond

// Until calls cond at once and then every 10 ms until it reports true. It fails t when within
// has passed, or t has ended, first, naming what it waited for and what cond last said (its
// string; empty when cond has nothing to add). cond runs on the caller's goroutine, so it may
// fail t itself on an error that waiting cannot mend.
func Until(t testing.TB, within time.Duration, what string, cond func() (ok bool, last string)) {
	t.Helper()
	tick := time.NewTicker(every)
	defer tick.Stop()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		ok, last := cond()
		if ok {
			return
		}
		if last != "" {
			last = "; last: " + last
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("%s: not within %s%s", what, within, last)
		case <-t.Context().Done():
			t.Fatalf("%s: %v%s", what, t.Context().Err(), last)
		}
	}
}
