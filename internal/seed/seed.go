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
	// MediaDir is the folder the storage surface serves bucket `media` from: each image is
	// written to <MediaDir>/<storage_path>. Required.
	MediaDir string
	// Log receives progress lines; nil discards them.
	Log *slog.Logger
}

// Summary says what a run made, counted in the database afterwards.
type Summary struct {
	// Skipped is true when the demo projects already existed and nothing was written.
	Skipped       bool
	Projects      int
	Users         int
	Publications  int
	Media         int
	Promos        int
	Reviews       int
	StatusEvents  int
	ByStatus      map[string]int // publications per status, over all demo projects
	MediaBytes    int64          // bytes of image files written
	Duration      time.Duration
	BulkDuration  time.Duration // the part of Duration spent on generated publications
	DemoDuration  time.Duration // the part spent on the hand-made set, transitions included
	SetupDuration time.Duration // accounts, projects, memberships and sections
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
		rebuild, err := setAsideSearchIndex(ctx, pool)
		if err != nil {
			return Summary{}, err
		}
		_, err = forEachTeam(teams, func(t *team) (int64, error) {
			return 0, seedBulk(ctx, pool, t, extra, opts.Log)
		})
		if err != nil {
			if rerr := rebuild(); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return Summary{}, err
		}
		if err := settle(ctx, pool, rebuild); err != nil {
			return Summary{}, err
		}
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

// setAsideSearchIndex drops the trigram index search_publications matches through and returns
// the function that builds it again, from its own definition read here. A bulk load builds it
// once at the end instead of updating it on every one of the hundreds of thousands of row
// versions the workflow's moves write (each move is a new version, and each version of a
// publication enters the index with every trigram of its body): most of the bulk time at 100k
// rows. Only the index is set aside; every trigger and check still runs, and a search made
// meanwhile still answers, without the index. A database without the index is left as is.
func setAsideSearchIndex(ctx context.Context, pool *pgxpool.Pool) (func() error, error) {
	var def string
	err := pool.QueryRow(ctx, `select indexdef from pg_indexes
		where schemaname = 'public' and indexname = 'publications_search_idx'`).Scan(&def)
	if errors.Is(err, pgx.ErrNoRows) {
		return func() error { return nil }, nil
	}
	if err != nil {
		return nil, fmt.Errorf("seed: read the search index: %w", err)
	}
	if _, err := pool.Exec(ctx, `drop index public.publications_search_idx`); err != nil {
		return nil, fmt.Errorf("seed: set the search index aside: %w", err)
	}
	return func() error {
		// Detached from ctx: a seed cut short must not leave the index missing.
		if _, err := pool.Exec(context.WithoutCancel(ctx), def); err != nil {
			return fmt.Errorf("seed: rebuild the search index: %w", err)
		}
		return nil
	}, nil
}

// settle leaves the bulk-loaded tables as production would have them: the search index back,
// fresh statistics and visibility maps, so benchmarks on the new rows measure the plans
// production would choose rather than guesses about an empty table. Each step is one
// statement on one core, so it works in two lanes: publications is vacuumed before its
// search index is built again (so the vacuum has no trigram index to clean) and analyzed
// after (the statistics include the index's expression), while the other tables are vacuumed
// meanwhile. The index is rebuilt whatever else fails.
func settle(ctx context.Context, pool *pgxpool.Pool, rebuild func() error) error {
	var wg sync.WaitGroup
	var publications, others error
	wg.Go(func() {
		if _, err := pool.Exec(ctx, `vacuum public.publications`); err != nil {
			publications = fmt.Errorf("seed: vacuum publications: %w", err)
		}
		if err := rebuild(); err != nil {
			publications = errors.Join(publications, err)
			return
		}
		if publications == nil {
			if _, err := pool.Exec(ctx, `analyze public.publications`); err != nil {
				publications = fmt.Errorf("seed: analyze publications: %w", err)
			}
		}
	})
	wg.Go(func() {
		if _, err := pool.Exec(ctx, `vacuum (analyze) public.status_events, public.reviews, public.promos,
			public.publication_media`); err != nil {
			others = fmt.Errorf("seed: vacuum: %w", err)
		}
	})
	wg.Wait()
	return errors.Join(publications, others)
}

// openPool connects as the owner. Each project is seeded on its own connection, so the pool
// holds one per project plus one for the surrounding work.
//
// Two session settings suit a seed and nothing else: JIT is off because the bulk statements
// are large enough to trigger compilation yet spend their time in per-row triggers it cannot
// speed up, and commits do not wait for the disk, because a seed cut short by a crash is
// redone on a fresh database anyway.
func openPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("seed: parse database url: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["jit"] = "off"
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
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
