package pg_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
)

// TestAuditReadsTransitionTablesOnce: the audit trigger reads each of a statement's
// transition tables once, whatever statement its connection planned it for first. Before
// migration 025 it joined old_rows to new_rows, and a connection whose first publications
// update was one row (any RPC) kept a nested-loop plan: one scan of old_rows per row of every
// later statement, n² for n rows. The plans are read with auto_explain (as notices, on a
// superuser connection that then acts as the editor, as the service's connections do).
func TestAuditReadsTransitionTablesOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const n = 300
	if _, err := f.exec("editorA", `insert into publications (project_id, title, slug, summary, body)
		select $1, 'Plan ' || g, 'plan-' || g, 's', 'b' from generate_series(1, $2) g`, f.projA, n); err != nil {
		t.Fatal(err)
	}

	var (
		mu    sync.Mutex
		plans []string
	)
	cfg, err := pgxpool.ParseConfig(f.db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns, cfg.MinConns = 1, 1 // one connection: the plan the first statement leaves is the one the second meets
	cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		plans = append(plans, n.Message)
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, `load 'auto_explain';
			set auto_explain.log_min_duration = 0; set auto_explain.log_analyze = on;
			set auto_explain.log_nested_statements = on; set auto_explain.log_level = notice`)
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	update := func(where string) {
		t.Helper()
		err := pg.WithCaller(ctx, pool, f.caller("editorA"), pg.ReadWrite, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `update publications set status = 'reviewing' where `+where)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	update(`slug = 'plan-1'`)
	mu.Lock()
	plans = nil
	mu.Unlock()
	update(`slug like 'plan-%' and status = 'draft'`)

	mu.Lock()
	defer mu.Unlock()
	loops := regexp.MustCompile(`Named Tuplestore Scan[^\n]*loops=(\d+)`)
	var scans int
	for _, p := range plans {
		for _, m := range loops.FindAllStringSubmatch(p, -1) {
			scans++
			if l, _ := strconv.Atoi(m[1]); l != 1 {
				t.Errorf("a transition table scanned %d times in one statement of %d rows:\n%s", l, n-1, p)
			}
		}
	}
	if scans == 0 {
		t.Fatalf("no scan of a transition table in the %d plans logged:\n%s", len(plans), strings.Join(plans, "\n---\n"))
	}
	// The statement was audited: one event per row moved.
	if got := f.count("editorA", `select count(*) from status_events e join publications p on p.id = e.publication_id where p.slug like 'plan-%'`); got != n {
		t.Errorf("%d audit rows, want %d", got, n)
	}
}
