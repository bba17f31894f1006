// Package scheduler is the loop inside the service that publishes what is due: every interval
// (with jitter, so instances started together do not run in step) it runs app.publish_due as the
// role masthead_scheduler, batch after batch until nothing due and ready is left, then records
// the run for the dashboard. FOR UPDATE SKIP LOCKED in publish_due makes any number of instances
// safe: each due item is published once, audited via='scheduler'. A database outage is logged and
// retried on the next tick; the loop never ends the process.
//
// It imports internal/pg and internal/metrics (runs and items published are counted there) and
// nothing else of masthead.
package scheduler

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/metrics"
	"masthead/internal/pg"
)

// Config tunes the loop.
type Config struct {
	// Interval is the pause between runs (MASTHEAD_SCHEDULER_INTERVAL); each pause is drawn
	// from [0.8, 1.2] × Interval.
	Interval time.Duration
	// Batch is how many items one transaction publishes at most.
	Batch int
	// Metrics counts runs and the items they published; nil counts nothing.
	Metrics *metrics.Metrics
}

// Scheduler publishes due publications.
type Scheduler struct {
	pool *pgxpool.Pool
	cfg  Config
	log  *slog.Logger

	mu       sync.Mutex
	notReady map[string]bool // due items already logged as not ready
}

// New returns a scheduler on pool; Run starts it.
func New(pool *pgxpool.Pool, cfg Config, log *slog.Logger) *Scheduler {
	if cfg.Interval <= 0 {
		cfg.Interval = 5 * time.Second
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 100
	}
	return &Scheduler{pool: pool, cfg: cfg, log: log, notReady: map[string]bool{}}
}

// Run runs until ctx ends: a run at once, then one per interval.
func (s *Scheduler) Run(ctx context.Context) {
	for {
		if _, err := s.RunOnce(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("scheduler: run failed; retrying next interval", "err", err, "interval", s.cfg.Interval.String())
		}
		t := time.NewTimer(s.pause())
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// pause is the interval with ±20 % jitter.
func (s *Scheduler) pause() time.Duration {
	return time.Duration(float64(s.cfg.Interval) * (0.8 + 0.4*rand.Float64()))
}

// RunOnce publishes everything due and ready, a batch per transaction, and records the run.
// It returns how many it published.
func (s *Scheduler) RunOnce(ctx context.Context) (int, error) {
	start := time.Now()
	total := 0
	for {
		n, err := s.batch(ctx)
		total += n
		if err != nil {
			s.cfg.Metrics.SchedulerRun(total, time.Since(start), err)
			return total, err
		}
		if n < s.cfg.Batch {
			break
		}
	}
	err := pg.WithCaller(ctx, s.pool, pg.Caller{Role: pg.RoleScheduler}, pg.ReadWrite, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `select app.scheduler_ran($1, $2)`, total, s.cfg.Interval.Milliseconds()); err != nil {
			return err
		}
		return s.logNotReady(ctx, tx)
	})
	took := time.Since(start)
	s.cfg.Metrics.SchedulerRun(total, took, err)
	if total > 0 {
		s.log.Info("scheduler: published", "count", total, "duration", took.String())
	}
	// Every run, at debug level: when it began and how long it took is what tells a late item
	// from a stalled loop.
	s.log.Debug("scheduler: ran", "started", start, "published", total, "duration_ms", float64(took.Microseconds())/1000)
	return total, err
}

// batch publishes at most one batch in one transaction.
func (s *Scheduler) batch(ctx context.Context) (int, error) {
	n := 0
	err := pg.WithCaller(ctx, s.pool, pg.Caller{Role: pg.RoleScheduler}, pg.ReadWrite, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `select id from app.publish_due($1)`, s.cfg.Batch)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			n++
		}
		return rows.Err()
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// logNotReady warns once per item about due items it leaves scheduled because they are not
// ready (the dashboard flags them too).
func (s *Scheduler) logNotReady(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `select id::text, failing from app.due_not_ready(20)`)
	if err != nil {
		return err
	}
	defer rows.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for rows.Next() {
		var id, failing string
		if err := rows.Scan(&id, &failing); err != nil {
			return err
		}
		seen[id] = true
		if !s.notReady[id] {
			s.log.Warn("scheduler: due but not ready; left scheduled", "publication_id", id, "failing", failing)
		}
	}
	s.notReady = seen
	return rows.Err()
}
