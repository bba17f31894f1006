package seed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A bulk load writes hundreds of thousands of publication row versions: every workflow move
// is one, and so is every version bump (each media link and each statement's promos raise the
// version, through the real triggers). Each version that is not heap-only (HOT) enters every
// index of the table, the trigram search index with every trigram of the body. So, for the
// load only, setAside takes away from public.publications the indexes those updates would
// keep rewriting and lets its pages keep room for the next version of each row; settle puts
// everything back, from the definitions read here, once the rows are written. Keeping the
// search index through the load instead, so that its work would share the load's two cores
// rather than run alone on one in settle, cost more than it saved: in one 100,000-row seed
// its upkeep (every insert and every update that is not heap-only, about a quarter of them,
// through GIN's pending list) added 71 s of database CPU to the load, against 33–37 s for the
// build, and the vacuum after it took 20 s instead of 2 to clean the index.
//
// It also drops the bulk tables' foreign keys for the load, as pg_restore loads a database
// before adding its foreign keys: checked row by row, they cost about a quarter of the load's
// database time (some 1.7 million rows written, three checks each, every one a query of its
// own), while settle checks every row of a table against a foreign key in one query (VALIDATE
// CONSTRAINT: a join of the two tables). Every row is checked either way, and a row that
// breaks one fails the seed. Only indexes, foreign keys and storage parameters change: every
// other trigger, every policy and every check runs for every row exactly as for any other
// write. A read made meanwhile still answers, without those indexes (one of publications waits
// out settle's rewrite of it, a few seconds at 100,000 rows a project); a schema cache reloaded
// meanwhile (the service's, which reloads on NOTIFY after migrations or on a timer behind a
// pooler) would miss the dropped foreign keys until its next reload.

// bulkTables are the tables a bulk load writes. Autovacuum is paused on them during the load:
// settle vacuums and analyzes them once at the end, and a worker started meanwhile would
// vacuum publications with most of its rows still to be moved (and their dead versions still
// being made), again and again on a large project, for nothing.
var bulkTables = []string{"publications", "status_events", "reviews", "promos", "publication_media", "publication_revisions"}

// searchIndex begins the name of each half of the trigram search index (migration 038:
// publications_search_idx_0 and _1), which setAside takes away for the load and settle builds
// again, the halves side by side.
const searchIndex = "publications_search_idx"

// movingColumns are the publication columns a bulk load's updates change. An index whose
// definition names one of them is rebuilt rather than updated: with none left, every update
// that finds room on its page is heap-only.
const movingColumns = `\m(status|scheduled_for|published_at|version|updated_at)\M`

// bulkFillfactor is how full the load fills publication pages with new rows, leaving the rest
// for their next versions. One statement moves every row of a page at once, so a page needs
// room for as many new versions as it holds rows; the old ones are pruned once the statement's
// transaction is over and no other transaction still sees them.
const bulkFillfactor = 50

// settleMemory is maintenance_work_mem for settle's index builds (set for their own
// transactions only). One sample each of the trigram index's build over 300,000 rows took 75 s
// with the server's default (64 MB), 55 s with 256 MB and 75–77 s with 1 or 2 GB: most of the
// build is extracting trigrams, which memory does not speed up.
const settleMemory = "256MB"

// aside is what setAside changed, for settle to restore.
type aside struct {
	indexes     []index           // dropped, in name order
	foreignKeys []foreignKey      // dropped, in table and name order
	options     map[string]string // each bulk table's reloptions as they were ("" for none)
	log         *slog.Logger
}

// index is a dropped index's name and the CREATE INDEX statement that builds it again.
type index struct {
	Name string
	Def  string
}

// foreignKey is a dropped foreign key of a bulk table: its table, its name, its definition as
// pg_get_constraintdef writes it, and whether it was validated.
type foreignKey struct {
	Table, Name, Def string
	Valid            bool
}

// setAside prepares the bulk tables for a load: it drops the publications indexes that the
// load's updates would rewrite (the trigram search index, and those naming a movingColumns
// column) and the other bulk tables' indexes that the load only writes (those not leading with
// publication_id), keeping the unique ones and those of constraints, drops every foreign key of
// bulkTables (those of other tables that reference them stay: they check nothing on insert,
// nor on an update that leaves the referenced key alone), lowers the publications fillfactor
// and pauses autovacuum on bulkTables. A failure leaves nothing changed (one transaction).
func setAside(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) (*aside, error) {
	a := &aside{options: map[string]string{}, log: log}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// Of publications, the indexes named above; of the other bulk tables, those that lead
		// with anything but publication_id: the triggers the load runs find those tables' rows
		// by their publication, never by project, reviewer or media item, so the load only
		// writes these.
		rows, err := tx.Query(ctx, `
			select c.relname, pg_get_indexdef(i.indexrelid)
			  from pg_index i join pg_class c on c.oid = i.indexrelid join pg_class t on t.oid = i.indrelid
			 where t.relnamespace = 'public'::regnamespace and t.relname = any ($3) and not i.indisunique
			   and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
			   and case when t.relname = 'publications'
			            then starts_with(c.relname, $2) or pg_get_indexdef(i.indexrelid) ~ $1
			            else pg_get_indexdef(i.indexrelid, 1, false) <> 'publication_id' end
			 order by t.relname <> 'publications', c.relname`, movingColumns, searchIndex, bulkTables)
		if err != nil {
			return err
		}
		if a.indexes, err = pgx.CollectRows(rows, pgx.RowToStructByPos[index]); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `
			select c.relname, coalesce(array_to_string(c.reloptions, ', '), '')
			  from pg_class c where c.relnamespace = 'public'::regnamespace and c.relname = any ($1)`, bulkTables)
		if err != nil {
			return err
		}
		var name, opts string
		if _, err := pgx.ForEachRow(rows, []any{&name, &opts}, func() error {
			a.options[name] = opts
			return nil
		}); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `
			select r.relname, k.conname, pg_get_constraintdef(k.oid), k.convalidated
			  from pg_constraint k join pg_class r on r.oid = k.conrelid
			 where k.contype = 'f' and r.relnamespace = 'public'::regnamespace and r.relname = any ($1)
			 order by r.relname, k.conname`, bulkTables)
		if err != nil {
			return err
		}
		if a.foreignKeys, err = pgx.CollectRows(rows, pgx.RowToStructByPos[foreignKey]); err != nil {
			return err
		}
		for _, ix := range a.indexes {
			if _, err := tx.Exec(ctx, `drop index `+pgx.Identifier{"public", ix.Name}.Sanitize()); err != nil {
				return err
			}
		}
		for _, fk := range a.foreignKeys {
			if _, err := tx.Exec(ctx, `alter table `+pgx.Identifier{"public", fk.Table}.Sanitize()+
				` drop constraint `+pgx.Identifier{fk.Name}.Sanitize()); err != nil {
				return err
			}
		}
		for name := range a.options {
			set := "autovacuum_enabled = false"
			if name == "publications" {
				set += fmt.Sprintf(", fillfactor = %d", bulkFillfactor)
			}
			if _, err := tx.Exec(ctx, `alter table `+pgx.Identifier{"public", name}.Sanitize()+` set (`+set+`)`); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("seed: set the bulk tables' indexes and foreign keys aside for the load: %w", err)
	}
	return a, nil
}

// restoreOptions puts every bulk table's storage parameters back as they were.
func (a *aside) restoreOptions(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for name := range a.options {
			if err := a.restoreOptionsOf(ctx, tx, name); err != nil {
				return err
			}
		}
		return nil
	})
}

// restoreOptionsOf puts the bulk table name's storage parameters back as they were.
func (a *aside) restoreOptionsOf(ctx context.Context, tx pgx.Tx, name string) error {
	table := pgx.Identifier{"public", name}.Sanitize()
	if _, err := tx.Exec(ctx, `alter table `+table+` reset (autovacuum_enabled, fillfactor)`); err != nil {
		return err
	}
	if opts := a.options[name]; opts != "" {
		// As pg_class holds them, so they are read back the same.
		if _, err := tx.Exec(ctx, `alter table `+table+` set (`+opts+`)`); err != nil {
			return err
		}
	}
	return nil
}

// restoreForeignKeys adds every dropped foreign key back, NOT VALID (as it was, for one that
// was not validated): from then on every row written is checked, and validate checks the rows
// already there. Adding one locks its table and the one it references against writes, briefly
// (no row is read), so it is done before any index build or vacuum holds them.
func (a *aside) restoreForeignKeys(ctx context.Context, pool *pgxpool.Pool) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, fk := range a.foreignKeys {
			def := fk.Def
			if fk.Valid {
				def += " NOT VALID"
			}
			if _, err := tx.Exec(ctx, `alter table `+pgx.Identifier{"public", fk.Table}.Sanitize()+
				` add constraint `+pgx.Identifier{fk.Name}.Sanitize()+` `+def); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("seed: restore the bulk tables' foreign keys: %w", err)
	}
	return nil
}

// compact rewrites publications packed to its own fillfactor, without the room the load left
// on every page and without the load's dead versions (VACUUM FULL, which also rebuilds the
// indexes kept through the load), then vacuums it, which sets the visibility map a rewrite
// leaves empty. Autovacuum stays paused on publications until settle is over.
//
// Besides shrinking the table the seed leaves behind (a 5,000-row seed's from 48 to 17 MB),
// the rewrite puts every row back at a line pointer of its own, in order: the load's heap-only
// updates had left most rows at the end of a redirect chain, so the trigram index's build met
// the rows' addresses out of order and sorted every key's list of them before writing it.
// Measured over a 100,000-row seed: the build took 32-34 s after the rewrite against 38-39 s
// without, for a rewrite of 2.6 s; perf put 4.0 s of the difference in that sort (qsort and
// GIN's item-pointer comparison), the rest spread thinly over the build.
func (a *aside) compact(ctx context.Context, pool *pgxpool.Pool) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := a.restoreOptionsOf(ctx, tx, "publications"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `alter table public.publications set (autovacuum_enabled = false)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("seed: restore publications' storage parameters for its rewrite: %w", err)
	}
	// VACUUM FULL keeps every old version a snapshot may still see, and its own snapshot's
	// xmin is the oldest transaction running anywhere in the cluster: while another database
	// runs a transaction begun during the load (another seed's, say), the load's last updates
	// would leave their old versions in the rewritten table, and their pages out of the
	// visibility map. So it waits for those transactions first, a bounded while.
	if err := a.waitForOlderTransactions(ctx, pool, horizonWait); err != nil {
		return fmt.Errorf("seed: wait for the transactions begun during the load: %w", err)
	}
	// VACUUM cannot run in a transaction block, so not through settle's run.
	for _, sql := range []string{`vacuum full public.publications`, `vacuum public.publications`} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("seed: %s: %w", sql, err)
		}
	}
	return nil
}

// horizonWait is how long compact waits for the transactions that began during the load to
// end (see waitForOlderTransactions): a seed's own, and those of other databases of the cluster,
// usually done in a moment. Past it, compact goes on; the table is then rewritten and vacuumed as
// well as the cluster allows, and autovacuum finishes the visibility map later.
const horizonWait = 30 * time.Second

// waitForOlderTransactions waits, at most limit, until every transaction of the cluster that
// was running when it was called has ended: a new transaction id is taken, and the oldest
// running one (the xmin of a fresh snapshot) is polled until it is past it.
func (a *aside) waitForOlderTransactions(ctx context.Context, pool *pgxpool.Pool, limit time.Duration) error {
	var mark int64
	if err := pool.QueryRow(ctx, `select txid_current()`).Scan(&mark); err != nil {
		return err
	}
	deadline := time.Now().Add(limit)
	for {
		var oldest int64
		if err := pool.QueryRow(ctx, `select txid_snapshot_xmin(txid_current_snapshot())`).Scan(&oldest); err != nil {
			return err
		}
		if oldest > mark {
			return nil
		}
		if time.Now().After(deadline) {
			a.log.Warn("seed: transactions begun during the load still run; compacting anyway", "waited", limit)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond): // the next look
		}
	}
}

// settleTimes are how long settle's steps took.
type settleTimes struct {
	search time.Duration // building the trigram search index, both halves
	total  time.Duration
}

// settle leaves the bulk tables as production would have them: the foreign keys back and
// validated, the indexes back, the storage parameters as they were, fresh statistics and
// visibility maps (so benchmarks on the new rows measure the plans production would choose
// rather than guesses about an empty table). The foreign keys come back first, NOT VALID
// (restoreForeignKeys); each is then validated, a single query over all its table's rows (a
// join with the table it references) that takes the place of the per-row checks the load
// skipped, and fails settle, naming the constraint, if any row breaks it (the constraint then
// stays NOT VALID, still checking every row written after it). The longest step is the
// trigram index, whose each half is one statement on one core (PostgreSQL 15 builds no GIN
// index in parallel; 038 split the index so that its halves build at once), so the work goes
// in two lanes, one half of the search index in each:
//
//   - lane 1: compact publications (compact: rewritten and vacuumed, so no build meets its
//     dead versions or out-of-order rows, and no vacuum has a trigram index to clean), validate
//     publications' own foreign keys, then the search index's first half, then the other bulk
//     tables' foreign keys (which only read the tables they reference, so they run beside
//     lane 2's builds);
//   - lane 2: vacuum the other bulk tables beside the compaction, analyze them once it is
//     done, then, once lane 1 is through with publications' validation, build the search
//     index's other half and the other publications indexes (CREATE INDEX share-locks the
//     table, so several builds run at once, but not alongside a vacuum or a validation of it);
//   - then analyze publications (its statistics include the index's expression).
//
// Lane 2's analyze and every validation wait for the compaction because they take snapshots,
// and a snapshot's xmin is the oldest transaction running anywhere in the cluster: taken while
// another database's long transaction runs (another seed's, say), it holds publications'
// VACUUM below the load's last updates, which then keeps their old versions (VACUUM FULL must
// keep what such a snapshot may still see) and leaves their pages out of the visibility map.
// With nothing else of this database open during compact but a plain VACUUM, which every
// other vacuum leaves out of its horizon, its result does not depend on what the rest of the
// cluster does. So the halves start within a moment of each other, and what is short comes
// before or after them: measured over BenchmarkFloorSeed100k's rows, compact 2.7 s, the other
// tables' vacuum 1.0 s and their validations 1.3 s, each half 16.6 s.
//
// Everything is restored even when the load failed (vacuum false: nothing is vacuumed) or ctx
// is cancelled: a seed cut short must not leave indexes or foreign keys missing or autovacuum
// paused.
func (a *aside) settle(ctx context.Context, pool *pgxpool.Pool, vacuum bool) (settleTimes, error) {
	ctx = context.WithoutCancel(ctx)
	start := time.Now()
	var times settleTimes
	run := func(what, sql string) error {
		st := time.Now()
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `set local maintenance_work_mem = '`+settleMemory+`'`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, sql)
			return err
		})
		if err != nil {
			return fmt.Errorf("seed: %s: %w", what, err)
		}
		a.log.Info("seed bulk settle", "step", what, "duration", time.Since(st))
		return nil
	}
	fkErr := a.restoreForeignKeys(ctx, pool)
	// validate validates the foreign keys of the bulk tables for which mine is true (those
	// that were validated before the load; none if they could not be added back).
	validate := func(mine func(table string) bool) error {
		var errs []error
		for _, fk := range a.foreignKeys {
			if fkErr == nil && fk.Valid && mine(fk.Table) {
				errs = append(errs, run("validate "+fk.Table+"."+fk.Name, `alter table `+
					pgx.Identifier{"public", fk.Table}.Sanitize()+` validate constraint `+pgx.Identifier{fk.Name}.Sanitize()))
			}
		}
		return errors.Join(errs...)
	}
	isPublications := func(table string) bool { return table == "publications" }
	var searches, others []index
	for _, ix := range a.indexes {
		if strings.HasPrefix(ix.Name, searchIndex) {
			searches = append(searches, ix)
		} else {
			others = append(others, ix)
		}
	}
	// build builds the indexes in order; searching spans the builds of the search index's
	// halves, from the first one's start to the last one's end.
	var (
		mu        sync.Mutex
		searching struct{ from, to time.Time }
	)
	build := func(ixs []index) error {
		var errs []error
		for _, ix := range ixs {
			st := time.Now()
			errs = append(errs, run("build "+ix.Name, ix.Def))
			if strings.HasPrefix(ix.Name, searchIndex) {
				mu.Lock()
				if searching.from.IsZero() || st.Before(searching.from) {
					searching.from = st
				}
				searching.to = time.Now()
				mu.Unlock()
			}
		}
		return errors.Join(errs...)
	}
	// Lane 1 builds the search index's first half, lane 2 the other half and then the rest.
	var first []index
	rest := others
	if len(searches) > 0 {
		first, rest = searches[:1], append(slices.Clone(searches[1:]), others...)
	}
	var (
		wg         sync.WaitGroup
		compacted  = make(chan struct{}) // publications is rewritten and vacuumed
		shared     = make(chan struct{}) // lane 1 no longer needs publications to itself
		lane1      error
		lane2, opt error
	)
	wg.Go(func() {
		if vacuum {
			st := time.Now()
			lane1 = a.compact(ctx, pool)
			a.log.Info("seed bulk settle", "step", "compact and vacuum publications", "duration", time.Since(st))
		}
		close(compacted)
		lane1 = errors.Join(lane1, validate(isPublications))
		close(shared)
		lane1 = errors.Join(lane1, build(first))
		lane1 = errors.Join(lane1, validate(func(table string) bool { return !isPublications(table) }))
	})
	wg.Go(func() {
		others := make([]string, 0, len(bulkTables)-1)
		for _, t := range bulkTables[1:] {
			others = append(others, pgx.Identifier{"public", t}.Sanitize())
		}
		// Not through run: VACUUM cannot run in a transaction block.
		step := func(what, sql string) {
			if !vacuum {
				return
			}
			st := time.Now()
			if _, err := pool.Exec(ctx, sql+` `+strings.Join(others, ", ")); err != nil {
				lane2 = errors.Join(lane2, fmt.Errorf("seed: %s: %w", what, err))
			}
			a.log.Info("seed bulk settle", "step", what, "duration", time.Since(st))
		}
		step("vacuum the other bulk tables", `vacuum`)
		<-compacted
		step("analyze the other bulk tables", `analyze`)
		<-shared
		lane2 = errors.Join(lane2, build(rest))
	})
	wg.Wait()
	times.search = searching.to.Sub(searching.from)
	opt = a.restoreOptions(ctx, pool)
	if opt != nil {
		opt = fmt.Errorf("seed: restore the bulk tables' storage parameters: %w", opt)
	}
	err := errors.Join(fkErr, lane1, lane2, opt)
	if err == nil && vacuum {
		err = run("analyze publications", `analyze public.publications`)
	}
	times.total = time.Since(start)
	return times, err
}
