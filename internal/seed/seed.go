// Package seed makes Masthead's demo data: three projects with their people, sections,
// publications in every status, promos, generated images and reviews, plus large generated sets
// for benchmarks. It also creates and lists accounts for `masthead users`.
//
// The history must tell the truth, so the seed never writes workflow state by hand: every
// transition is made by the user it is attributed to, through the same RPCs (demo set) or the
// same guarded UPDATE (bulk set) that clients use, and the database's own trigger writes the
// audit. Only what no user may do (projects, memberships, accounts) is written as the owner.
// It imports internal/pg and nothing else from masthead.
package seed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultPassword is every demo account's password unless Options.Password says otherwise.
const DefaultPassword = "masthead-demo"

// Options tune a seed run.
type Options struct {
	// Publications is how many publications each project gets. The hand-made demo set (36 per
	// project) is always made; anything above it is generated in bulk. 0 means the demo set only.
	Publications int
	// Password is every demo account's password; empty means DefaultPassword.
	Password string
	// BcryptCost is the cost of the demo accounts' password hash, the service's
	// MASTHEAD_BCRYPT_COST; 0 means bcrypt's default, 10. The accounts share one hash, so a
	// higher cost costs one hash's time, not one per account.
	BcryptCost int
	// MediaDir is the folder the storage surface serves bucket `media` from: each image is
	// written to <MediaDir>/<storage_path>. Required.
	MediaDir string
	// Log receives progress lines; nil discards them.
	Log *slog.Logger
}

// Summary says what a run made, counted in the database afterwards.
type Summary struct {
	// Skipped is true when the demo projects already existed and nothing was written.
	Skipped      bool
	Projects     int
	Users        int
	Publications int
	Media        int
	Promos       int
	Reviews      int
	StatusEvents int
	ByStatus     map[string]int // publications per status, over all demo projects
	MediaBytes   int64          // bytes of image files written
	Duration     time.Duration
	BulkDuration time.Duration // the part of Duration spent on generated publications
	// LoadDuration is the part of BulkDuration spent writing the generated rows (every project
	// at once); the rest settles them (SettleDuration: foreign keys validated, indexes built,
	// vacuum and statistics), whose longest step is usually SearchIndexDuration, the builds of
	// the trigram search index's two halves, side by side.
	LoadDuration        time.Duration
	SettleDuration      time.Duration
	SearchIndexDuration time.Duration
	DemoDuration        time.Duration // the part spent on the hand-made set, transitions included
	SetupDuration       time.Duration // accounts, projects, memberships and sections
}

// Run seeds the demo data into the database at ownerURL, which must name a superuser (it
// creates accounts and projects, which no user may). It is idempotent: when the demo projects
// exist it does nothing and reports Skipped. They are created together, first, so a run cut
// short after that is not completed by running again, and cannot be undone either (its audit
// is append-only): seed a fresh database instead. Some but not all of them existing means
// someone made one by hand, and is refused.
func Run(ctx context.Context, ownerURL string, opts Options) (Summary, error) {
	start := time.Now()
	if opts.MediaDir == "" {
		return Summary{}, errors.New("seed: MediaDir is required: generated images are written there")
	}
	if opts.Password == "" {
		opts.Password = DefaultPassword
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	pool, err := openPool(ctx, ownerURL)
	if err != nil {
		return Summary{}, err
	}
	defer pool.Close()

	slugs := make([]string, len(projects))
	for i, p := range projects {
		slugs[i] = p.Slug
	}
	var existing int
	if err := pool.QueryRow(ctx, `select count(*) from public.projects where slug = any ($1)`, slugs).Scan(&existing); err != nil {
		return Summary{}, fmt.Errorf("seed: look for demo projects: %w", err)
	}
	switch {
	case existing == len(projects):
		opts.Log.Info("seed skipped: demo projects exist")
		return Summary{Skipped: true, Duration: time.Since(start)}, nil
	case existing > 0:
		return Summary{}, fmt.Errorf("seed: %d of the %d demo projects already exist, made by something other than the seed; seed a fresh database", existing, len(projects))
	}

	teams, err := setup(ctx, pool, opts)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{SetupDuration: time.Since(start)}
	opts.Log.Info("seed accounts and projects ready", "duration", sum.SetupDuration)

	demoStart := time.Now()
	mediaBytes, err := forEachTeam(teams, func(t *team) (int64, error) {
		return seedDemo(ctx, pool, t, opts)
	})
	if err != nil {
		return Summary{}, err
	}
	sum.MediaBytes = mediaBytes
	sum.DemoDuration = time.Since(demoStart)
	opts.Log.Info("seed demo publications ready", "duration", sum.DemoDuration)

	if extra := opts.Publications - len(demoScripts); extra > 0 {
		bulkStart := time.Now()
		aside, err := setAside(ctx, pool, opts.Log)
		if err != nil {
			return Summary{}, err
		}
		_, err = forEachTeam(teams, func(t *team) (int64, error) {
			return 0, seedBulk(ctx, pool, t, extra, opts.Log)
		})
		sum.LoadDuration = time.Since(bulkStart)
		opts.Log.Info("seed bulk rows written", "per_project", extra, "duration", sum.LoadDuration)
		times, serr := aside.settle(ctx, pool, err == nil)
		if err = errors.Join(err, serr); err != nil {
			return Summary{}, err
		}
		sum.SettleDuration, sum.SearchIndexDuration = times.total, times.search
		sum.BulkDuration = time.Since(bulkStart)
		opts.Log.Info("seed bulk publications ready", "per_project", extra, "duration", sum.BulkDuration)
	}

	if err := count(ctx, pool, slugs, &sum); err != nil {
		return Summary{}, err
	}
	sum.Duration = time.Since(start)
	opts.Log.Info("seed done", "publications", sum.Publications, "status_events", sum.StatusEvents,
		"media", sum.Media, "duration", sum.Duration)
	return sum, nil
}

// seedWorkMem holds a bulk batch's transition tables (bulkBatch rows of publications, old and
// new) in memory, on each of the len(projects)+1 connections.
const seedWorkMem = "64MB"

// openPool connects as the owner. Each project is seeded on its own connection, so the pool
// holds one per project plus one for the surrounding work.
//
// Three session settings suit a seed and nothing else: JIT is off because the bulk statements
// are large enough to trigger compilation yet spend their time in per-row triggers it cannot
// speed up; commits do not wait for the disk, because a seed cut short by a crash is redone on
// a fresh database anyway; and work_mem is seedWorkMem, because every bulk UPDATE of
// publications keeps its old and new rows for the statement-level audit and version triggers
// (transition tables), some 14 MB each for a batch, which with the server's default spilled
// about 1 GB to temporary files over a 100,000-publication seed, written and read back.
func openPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("seed: parse database url: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["jit"] = "off"
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	cfg.ConnConfig.RuntimeParams["work_mem"] = seedWorkMem
	cfg.MaxConns = int32(len(projects) + 1)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("seed: connect: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("seed: connect: %w", err)
	}
	return pool, nil
}

// forEachTeam runs fn for every project at once: projects share nothing, and a 2-core machine
// needs more than one busy connection to seed large sets in time.
func forEachTeam(teams []*team, fn func(*team) (int64, error)) (int64, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int64
		errs  []error
	)
	for _, t := range teams {
		wg.Go(func() {
			n, err := fn(t)
			mu.Lock()
			defer mu.Unlock()
			total += n
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", t.spec.Slug, err))
			}
		})
	}
	wg.Wait()
	return total, errors.Join(errs...)
}

func count(ctx context.Context, pool *pgxpool.Pool, slugs []string, sum *Summary) error {
	err := pool.QueryRow(ctx, `
		with p as (select id from public.projects where slug = any ($1))
		select (select count(*) from p),
		       (select count(distinct user_id) from public.project_members where project_id in (select id from p)),
		       (select count(*) from public.publications where project_id in (select id from p)),
		       (select count(*) from public.media where project_id in (select id from p)),
		       (select count(*) from public.promos where project_id in (select id from p)),
		       (select count(*) from public.reviews where project_id in (select id from p)),
		       (select count(*) from public.status_events where project_id in (select id from p))`, slugs).
		Scan(&sum.Projects, &sum.Users, &sum.Publications, &sum.Media, &sum.Promos, &sum.Reviews, &sum.StatusEvents)
	if err != nil {
		return fmt.Errorf("seed: count: %w", err)
	}
	rows, err := pool.Query(ctx, `
		select status, count(*)::int from public.publications
		where project_id in (select id from public.projects where slug = any ($1))
		group by status`, slugs)
	if err != nil {
		return fmt.Errorf("seed: count statuses: %w", err)
	}
	sum.ByStatus = map[string]int{}
	var (
		status string
		n      int
	)
	_, err = pgx.ForEachRow(rows, []any{&status, &n}, func() error {
		sum.ByStatus[status] = n
		return nil
	})
	if err != nil {
		return fmt.Errorf("seed: count statuses: %w", err)
	}
	return nil
}
