package pg_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// BenchmarkQueue measures the review queue under RLS with 100,000 publications in each of two
// projects, against the same query run as the owner (no RLS): the floor.
//
//	go test ./internal/pg -run '^$' -bench Queue -benchtime 2000x
func BenchmarkQueue(b *testing.B) {
	f := newFixture(b)
	f.bulk(b, 100000)
	ctx := context.Background()
	const q = `select id, title, status, scheduled_for from publications
	           where project_id = $1 and status = 'reviewing' order by created_at desc limit 20`
	const qAll = `select id, title, status, scheduled_for from publications
	              where status = 'reviewing' order by created_at desc limit 20`
	run := func(b *testing.B, c pg.Caller, q string, args ...any) {
		for b.Loop() {
			err := pg.WithCaller(ctx, f.db.Pool, c, pg.ReadOnly, func(tx pgx.Tx) error {
				rows, err := tx.Query(ctx, q, args...)
				if err != nil {
					return err
				}
				n := 0
				for rows.Next() {
					n++
				}
				if n != 20 {
					b.Fatalf("queue has %d rows", n)
				}
				return rows.Err()
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("rls/one-project", func(b *testing.B) { run(b, f.caller("reviewerA"), q, f.projA) })
	b.Run("rls/all-my-projects", func(b *testing.B) { run(b, f.caller("reviewerA"), qAll) })
	owner, err := pg.Open(ctx, f.db.OwnerURL)
	if err != nil {
		b.Fatal(err)
	}
	defer owner.Close()
	b.Run("floor/owner-no-rls", func(b *testing.B) {
		for b.Loop() {
			rows, err := owner.Query(ctx, q, f.projA)
			if err != nil {
				b.Fatal(err)
			}
			rows.Close()
		}
	})
	// The same transaction shape as WithCaller (begin, query, commit) without RLS: the
	// difference to rls/one-project is what row-level security itself costs.
	b.Run("floor/owner-no-rls-in-tx", func(b *testing.B) {
		for b.Loop() {
			err := pgx.BeginTxFunc(ctx, owner, pg.ReadOnly, func(tx pgx.Tx) error {
				rows, err := tx.Query(ctx, q, f.projA)
				rows.Close()
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMembershipCheck measures a point read under RLS (the membership probe plus the
// primary key) against the owner's read of the same row.
func BenchmarkMembershipCheck(b *testing.B) {
	f := newFixture(b)
	f.bulk(b, 100000)
	ctx := context.Background()
	var id string
	mustScan(b, f.db.Owner(b).QueryRow(ctx, `select id from publications where project_id = $1 offset 5000 limit 1`, f.projA), &id)
	b.Run("rls", func(b *testing.B) {
		for b.Loop() {
			err := pg.WithCaller(ctx, f.db.Pool, f.caller("viewerA"), pg.ReadOnly, func(tx pgx.Tx) error {
				var title string
				return tx.QueryRow(ctx, `select title from publications where id = $1`, id).Scan(&title)
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rls/project_ids-only", func(b *testing.B) {
		for b.Loop() {
			err := pg.WithCaller(ctx, f.db.Pool, f.caller("viewerA"), pg.ReadOnly, func(tx pgx.Tx) error {
				var ids []string
				return tx.QueryRow(ctx, `select app.project_ids()::text[]`).Scan(&ids)
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	owner, err := pg.Open(ctx, f.db.OwnerURL)
	if err != nil {
		b.Fatal(err)
	}
	defer owner.Close()
	b.Run("floor/owner-no-rls", func(b *testing.B) {
		for b.Loop() {
			var title string
			if err := owner.QueryRow(ctx, `select title from publications where id = $1`, id).Scan(&title); err != nil {
				b.Fatal(err)
			}
		}
	})
}
