package pg_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"masthead/internal/pg"
)

// TestCallerProjects: app.caller_projects (migration 022) is exactly the caller's own
// memberships, for every kind of caller; anon may not read it at all; and it is a security
// barrier, so no condition a query adds runs before its own filter on the caller.
func TestCallerProjects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	proj := map[string]string{"A": f.projA, "B": f.projB}
	for _, who := range everyone {
		if who == "anon" {
			continue
		}
		var want []string
		for _, m := range fixtureMembers {
			if m.user == who {
				want = append(want, proj[m.project]+" "+m.role)
			}
		}
		var got []string
		err := pg.WithCaller(ctx, f.db.Pool, f.caller(who), pg.ReadOnly, func(tx pgx.Tx) error {
			rows, _ := tx.Query(ctx, `select project_id::text || ' ' || role from app.caller_projects`)
			var err error
			got, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: caller_projects %v, want %v", who, got, want)
		}
	}
	err := pg.WithCaller(ctx, f.db.Pool, pg.Anon, pg.ReadOnly, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `select * from app.caller_projects`)
		return err
	})
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "42501" {
		t.Errorf("anon reads app.caller_projects: %v, want permission denied", err)
	}
	var options []string
	if err := f.db.Owner(t).QueryRow(ctx, `select reloptions from pg_class where oid = 'app.caller_projects'::regclass`).Scan(&options); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(options, "security_barrier=true") {
		t.Errorf("app.caller_projects options %v: not a security barrier", options)
	}
}

// TestMediaReadFollowsMembership: media_read, now through app.caller_projects, answers as
// app.project_ids() did (the media of every project the caller belongs to, in any role, and no
// other) and follows membership from one statement to the next: removed, the member sees none
// of the project's media; added back, in another role, they see it again; and a membership
// added inside a transaction counts for that transaction's next statement.
func TestMediaReadFollowsMembership(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	own := f.db.Owner(t)
	const q = `select count(*) from media where project_id = $1`
	for _, who := range everyone {
		member := who != "anon" && who != "outsider" && who != "ownerB" && who != "editorB"
		if n := f.count(who, q, f.projA); (n == 2) != member || (!member && n != 0) {
			t.Errorf("%s sees %d of A's 2 media", who, n)
		}
	}
	if n := f.count("editorB", `select count(*) from media`); n != 0 {
		t.Errorf("editorB sees %d media; B has none", n)
	}
	if _, err := own.Exec(ctx, `delete from project_members where project_id = $1 and user_id = $2`, f.projA, f.users["viewerA"]); err != nil {
		t.Fatal(err)
	}
	if n := f.count("viewerA", q, f.projA); n != 0 {
		t.Errorf("a removed member still sees %d media", n)
	}
	if n := f.count("viewerA", `select count(*) from media where storage_path = 'proj-a/a.png'`); n != 0 {
		t.Errorf("a removed member still reads a media row by its path (%d)", n)
	}
	if _, err := own.Exec(ctx, `insert into project_members (project_id, user_id, role) values ($1, $2, 'reviewer')`, f.projA, f.users["viewerA"]); err != nil {
		t.Fatal(err)
	}
	if n := f.count("viewerA", q, f.projA); n != 2 {
		t.Errorf("a member added back sees %d of 2 media", n)
	}
	// Inside one transaction: the outsider starts a project (becoming its owner) and, in the
	// next statement, reads a media row written there by the project's owner role.
	err := pg.WithCaller(ctx, f.db.Pool, f.caller("outsider"), pg.ReadWrite, func(tx pgx.Tx) error {
		var id string
		if err := tx.QueryRow(ctx, `select id from create_project('new-desk', 'New Desk')`).Scan(&id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `insert into media (project_id, storage_path, mime_type) values ($1, 'new-desk/x.png', 'image/png')`, id); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, q, id).Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			t.Errorf("the new project's owner sees %d of its 1 media in the same transaction", n)
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
}
