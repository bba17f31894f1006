package pg_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is two tenants with one member per role in A, an owner in B, and an outsider.
type fixture struct {
	db     *pgtest.DB
	users  map[string]string // name → user id
	projA  string
	projB  string
	collA  string
	collB  string
	mediaA string
	mediaB string       // a second media item of A, never attached by the fixture
	seq    atomic.Int64 // unique titles
}

// memberships of the fixture: user name → (project, role).
var fixtureMembers = []struct{ user, project, role string }{
	{"ownerA", "A", "owner"}, {"leadA", "A", "lead"}, {"editorA", "A", "editor"},
	{"editor2A", "A", "editor"}, {"reviewerA", "A", "reviewer"}, {"reviewer2A", "A", "reviewer"},
	{"viewerA", "A", "viewer"}, {"ownerB", "B", "owner"}, {"editorB", "B", "editor"},
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	db := pgtest.New(t)
	ctx := context.Background()
	own := db.Owner(t)
	f := &fixture{db: db, users: map[string]string{}}
	for _, name := range []string{"ownerA", "leadA", "editorA", "editor2A", "reviewerA", "reviewer2A", "viewerA", "ownerB", "editorB", "outsider"} {
		var id string
		if err := own.QueryRow(ctx, `insert into auth.users (email) values ($1) returning id`, name+"@example.test").Scan(&id); err != nil {
			t.Fatal(err)
		}
		f.users[name] = id
	}
	mustScan(t, own.QueryRow(ctx, `insert into projects (slug, name, default_channels) values ('proj-a', 'A', '{x,bluesky}') returning id`), &f.projA)
	mustScan(t, own.QueryRow(ctx, `insert into projects (slug, name) values ('proj-b', 'B') returning id`), &f.projB)
	proj := map[string]string{"A": f.projA, "B": f.projB}
	for _, m := range fixtureMembers {
		if _, err := own.Exec(ctx, `insert into project_members (project_id, user_id, role) values ($1, $2, $3)`,
			proj[m.project], f.users[m.user], m.role); err != nil {
			t.Fatal(err)
		}
	}
	mustScan(t, own.QueryRow(ctx, `insert into collections (project_id, slug, name) values ($1, 'news', 'News') returning id`, f.projA), &f.collA)
	mustScan(t, own.QueryRow(ctx, `insert into collections (project_id, slug, name) values ($1, 'news', 'News') returning id`, f.projB), &f.collB)
	mustScan(t, own.QueryRow(ctx, `insert into media (project_id, storage_path, mime_type) values ($1, 'proj-a/a.png', 'image/png') returning id`, f.projA), &f.mediaA)
	mustScan(t, own.QueryRow(ctx, `insert into media (project_id, storage_path, mime_type) values ($1, 'proj-a/b2.png', 'image/png') returning id`, f.projA), &f.mediaB)
	return f
}

func mustScan(t testing.TB, row pgx.Row, dst ...any) {
	t.Helper()
	if err := row.Scan(dst...); err != nil {
		t.Fatal(err)
	}
}

// caller is the pg.Caller for a fixture user, or anon for "anon".
func (f *fixture) caller(name string) pg.Caller {
	if name == "anon" {
		return pg.Anon
	}
	claims, _ := json.Marshal(map[string]any{"sub": f.users[name], "role": "authenticated", "email": name + "@example.test"})
	return pg.UserCaller(claims)
}

// errRollback ends a transaction without keeping its effects.
var errRollback = errors.New("rollback")

// exec runs sql as a user and keeps the effect. It returns the rows affected.
func (f *fixture) exec(name, sql string, args ...any) (int64, error) {
	var n int64
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller(name), pg.ReadWrite, func(tx pgx.Tx) error {
		tag, err := tx.Exec(context.Background(), sql, args...)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// try runs sql as a user, reports rows affected, and rolls back.
func (f *fixture) try(name, sql string, args ...any) (int64, error) {
	var n int64
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller(name), pg.ReadWrite, func(tx pgx.Tx) error {
		tag, err := tx.Exec(context.Background(), sql, args...)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		return errRollback
	})
	if errors.Is(err, errRollback) {
		err = nil
	}
	return n, err
}

// count runs a count query as a user.
func (f *fixture) count(name, sql string, args ...any) int {
	var n int
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller(name), pg.ReadOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), sql, args...).Scan(&n)
	})
	if err != nil {
		panic(fmt.Sprintf("count as %s: %v", name, err))
	}
	return n
}

// rpc calls a workflow function as a user and returns the resulting status and version.
func (f *fixture) rpc(name, fn, id string, args ...any) (status string, version int, err error) {
	err = pg.WithCaller(context.Background(), f.db.Pool, f.caller(name), pg.ReadWrite, func(tx pgx.Tx) error {
		q, all := rpcSQL(fn, id, args)
		return tx.QueryRow(context.Background(), q, all...).Scan(&status, &version)
	})
	return
}

func rpcSQL(fn, id string, args []any) (string, []any) {
	all := append([]any{id}, args...)
	ph := "$1"
	for i := range args {
		ph += fmt.Sprintf(", $%d", i+2)
	}
	return fmt.Sprintf("select status, version from %s(%s)", pgx.Identifier{fn}.Sanitize(), ph), all
}

// draft creates a draft in project A as editorA and returns its id.
func (f *fixture) draft(t *testing.T, title string) string {
	t.Helper()
	return f.draftBy(t, "editorA", f.projA, title)
}

func (f *fixture) draftBy(t *testing.T, user, project, title string) string {
	t.Helper()
	var id string
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller(user), pg.ReadWrite, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(),
			`insert into publications (project_id, title, slug, summary, body) values ($1, $2, $3, 'In short', '# Hello') returning id`,
			project, title, slugify(title)).Scan(&id)
	})
	if err != nil {
		t.Fatalf("draft %q as %s: %v", title, user, err)
	}
	return id
}

func slugify(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			out = append(out, r)
		case r >= 'A' && r <= 'Z':
			out = append(out, r+'a'-'A')
		default:
			out = append(out, '-')
		}
	}
	return string(out)
}

// paths walks a fresh draft to each status through real transitions.
var paths = map[string][]step{
	"draft":             nil,
	"reviewing":         {{"editorA", "submit_for_review", ""}},
	"changes_requested": {{"editorA", "submit_for_review", ""}, {"reviewerA", "request_changes", "tighten the intro"}},
	"approved":          {{"editorA", "submit_for_review", ""}, {"reviewerA", "approve", "good"}},
	"scheduled":         {{"editorA", "submit_for_review", ""}, {"reviewerA", "approve", "good"}, {"leadA", "schedule", "1 day"}},
	"published":         {{"editorA", "submit_for_review", ""}, {"reviewerA", "approve", "good"}, {"leadA", "publish_now", ""}},
	"archived":          {{"leadA", "archive", "stale"}},
}

type step struct {
	user, fn string
	arg      string
}

func (s step) args() []any {
	if s.arg != "" {
		return []any{s.arg}
	}
	return nil
}

// inStatus creates a publication and moves it to status.
func (f *fixture) inStatus(t *testing.T, status string) string {
	t.Helper()
	id := f.draft(t, fmt.Sprintf("In %s %d", status, f.seq.Add(1)))
	if status == "approved" || status == "scheduled" || status == "published" {
		f.makeReady(t, id)
	}
	f.walk(t, id, status)
	return id
}

// makeReady writes a promo for every default channel of a draft's project, so that once
// approved it may be scheduled and published (readiness() passes).
func (f *fixture) makeReady(t *testing.T, id string) {
	t.Helper()
	if _, err := f.exec("editorA", `insert into promos (project_id, publication_id, channel, body)
		select p.project_id, p.id, ch, 'Read it' from publications p join projects j on j.id = p.project_id,
		       unnest(j.default_channels) ch where p.id = $1`, id); err != nil {
		t.Fatalf("make %s ready: %v", id, err)
	}
}

// rpcSchedule schedules id at now() + interval.
func (f *fixture) rpcSchedule(user, id, interval string, expected ...any) (string, int, error) {
	var status string
	var version int
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller(user), pg.ReadWrite, func(tx pgx.Tx) error {
		var ev any
		if len(expected) > 0 {
			ev = expected[0]
		}
		return tx.QueryRow(context.Background(),
			`select status, version from schedule($1, now() + $2::interval, $3)`, id, interval, ev).Scan(&status, &version)
	})
	return status, version, err
}

// sqlstate returns the SQLSTATE of err, or "".
func sqlstate(err error) string {
	if fe, ok := pg.ErrorFields(err); ok {
		return fe.Code
	}
	return ""
}
