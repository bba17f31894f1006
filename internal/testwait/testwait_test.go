package testwait_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"masthead/internal/testwait"
)

// failures is a testing.TB that records its Fatalf and ends the goroutine, as testing does.
type failures struct {
	testing.TB
	msg string
}

func (f *failures) Helper() {}

func (f *failures) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// until runs Until with a recording TB on a goroutine of its own (Fatalf ends it) and returns
// what it failed with, if anything, and how long it took.
func until(t *testing.T, within time.Duration, cond func() (bool, string)) (string, time.Duration) {
	f := &failures{TB: t}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		testwait.Until(f, within, "the thing", cond)
	}()
	<-done
	return f.msg, time.Since(start)
}

// TestUntil: Until returns once the condition holds, looking again on a ticker, and fails at
// the deadline naming what it waited for and what the condition last said.
func TestUntil(t *testing.T) {
	t.Parallel()
	t.Run("returns once the condition holds", func(t *testing.T) {
		t.Parallel()
		looks := 0
		msg, _ := until(t, 10*time.Second, func() (bool, string) {
			looks++
			return looks == 3, ""
		})
		if msg != "" || looks != 3 {
			t.Errorf("failed %q after %d looks, want success at the third", msg, looks)
		}
	})
	t.Run("fails at the deadline with the last word", func(t *testing.T) {
		t.Parallel()
		looks := 0
		msg, took := until(t, 100*time.Millisecond, func() (bool, string) {
			looks++
			return false, fmt.Sprintf("look %d", looks)
		})
		if want := fmt.Sprintf("the thing: not within 100ms; last: look %d", looks); msg != want {
			t.Errorf("failed %q, want %q", msg, want)
		}
		if took < 100*time.Millisecond || took > 5*time.Second {
			t.Errorf("failed after %s, want at 100ms", took)
		}
		if looks < 2 {
			t.Errorf("%d looks in 100ms, want it to look again on its ticker", looks)
		}
	})
	t.Run("without a last word", func(t *testing.T) {
		t.Parallel()
		msg, _ := until(t, 10*time.Millisecond, func() (bool, string) { return false, "" })
		if !strings.HasSuffix(msg, "not within 10ms") {
			t.Errorf("failed %q, want it to end at the deadline", msg)
		}
	})
}
