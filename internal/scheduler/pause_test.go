package scheduler

import (
	"testing"
	"time"
)

// TestPauseJitter: every pause lies within ±20 % of the interval, and pauses differ, so
// instances started together drift apart instead of running in step.
func TestPauseJitter(t *testing.T) {
	s := New(nil, Config{Interval: time.Second}, nil)
	seen := map[time.Duration]bool{}
	for range 1000 {
		p := s.pause()
		if p < 800*time.Millisecond || p > 1200*time.Millisecond {
			t.Fatalf("pause %s outside [0.8s, 1.2s]", p)
		}
		seen[p] = true
	}
	if len(seen) < 100 {
		t.Errorf("only %d distinct pauses in 1000: no jitter", len(seen))
	}
}
