package scheduler_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"masthead/internal/metrics"
	"masthead/internal/metrics/metricstest"
	"masthead/internal/pg/pgtest"
	"masthead/internal/scheduler"
)

// TestRunsAreCounted: each run counts once with its outcome and adds what it published, in
// several batches or none; a run on a closed pool counts as an error.
func TestRunsAreCounted(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	tm := newTeam(t, db.Pool, db.OwnerURL)
	tm.scheduled(t, 5, "due")
	m := metrics.New()
	s := scheduler.New(db.Pool, scheduler.Config{Interval: time.Second, Batch: 2, Metrics: m}, quiet())
	for range 2 { // five in three batches, then nothing
		if _, err := s.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	db.Pool.Close()
	if _, err := s.RunOnce(context.Background()); err == nil {
		t.Fatal("a run on a closed pool succeeded")
	}
	ts := httptest.NewServer(m.Handler())
	defer ts.Close()
	got := metricstest.Scrape(t, ts.URL)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"masthead_scheduler_runs_total", map[string]string{"outcome": "ok"}, 2},
		{"masthead_scheduler_runs_total", map[string]string{"outcome": "error"}, 1},
		{"masthead_scheduler_published_total", nil, 5},
		{"masthead_scheduler_run_duration_seconds", nil, 3},
	} {
		if v, n := got.Value(c.name, c.labels); n == 0 || v != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, v, c.want)
		}
	}
}
