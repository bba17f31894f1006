package pg_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
	"masthead/internal/pgrun"
)

// everyone is every kind of caller the matrix checks against project A.
var everyone = []string{"ownerA", "leadA", "editorA", "reviewerA", "viewerA", "ownerB", "editorB", "outsider", "anon"}

// TestReadIsolation: members of A see A's rows in every table; another tenant, an outsider and
// anon see none of them (anon sees nothing at all, not even channels).
func TestReadIsolation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.dressedIn(t, "approved") // leaves events, a revision, a review, promos and a media link behind
	tables := map[string]string{
		"projects":          "select count(*) from projects where id = $1",
		"project_members":   "select count(*) from project_members where project_id = $1",
		"collections":       "select count(*) from collections where project_id = $1",
		"publications":      "select count(*) from publications where project_id = $1",
		"promos":            "select count(*) from promos where project_id = $1",
		"media":             "select count(*) from media where project_id = $1",
		"publication_media": "select count(*) from publication_media where project_id = $1",
		"reviews":           "select count(*) from reviews where project_id = $1",
		"status_events":     "select count(*) from status_events where project_id = $1",
		"revisions":         "select count(*) from publication_revisions where project_id = $1",
		"profiles":          "select count(*) from profiles where id in (select user_id from project_members where project_id = $1)",
	}
	members := map[string]bool{"ownerA": true, "leadA": true, "editorA": true, "reviewerA": true, "viewerA": true}
	for table, q := range tables {
		for _, who := range everyone {
			n := f.count(who, q, f.projA)
			if members[who] && n == 0 {
				t.Errorf("%s: member %s sees no rows of its project", table, who)
			}
			if !members[who] && n != 0 {
				t.Errorf("%s: %s sees %d rows of project A", table, who, n)
			}
		}
	}
	for _, table := range []string{"profiles", "projects", "project_members", "collections", "channels", "publications", "promos", "media", "publication_media", "reviews", "status_events", "publication_revisions"} {
		if n := f.count("anon", "select count(*) from "+table); n != 0 {
			t.Errorf("anon sees %d rows of %s", n, table)
		}
	}
	if n := f.count("outsider", "select count(*) from channels"); n == 0 {
		t.Error("channels are a global lookup: every signed-in user reads them")
	}
	if n := f.count("outsider", "select count(*) from profiles"); n != 1 {
		t.Errorf("an outsider sees %d profiles, want only their own", n)
	}
}

// TestWriteMatrix: for every table and write, exactly the roles DESIGN.md names succeed; every
// other caller (another tenant, an outsider, anon, and roles lacking the capability) changes nothing.
func TestWriteMatrix(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	draft := f.draft(t, "Matrix draft")
	approved := f.dressedIn(t, "approved")
	reviewing := f.inStatus(t, "reviewing")
	f.dress(t, draft)
	editors := "ownerA leadA editorA"
	reviewers := "ownerA leadA reviewerA"
	leads := "ownerA leadA"
	cases := []struct {
		name    string
		sql     string
		args    []any
		allowed string // space-separated callers that may; everyone else must change nothing
	}{
		{"projects insert", `insert into projects (slug, name) values ('new-one', 'New')`, nil, ""},
		{"projects update", `update projects set name = 'Renamed' where id = $1`, []any{f.projA}, "ownerA"},
		{"projects delete", `delete from projects where id = $1`, []any{f.projA}, ""},
		{"members insert", `insert into project_members (project_id, user_id, role) values ($1, $2, 'viewer')`, []any{f.projA, f.users["outsider"]}, "ownerA"},
		{"members update", `update project_members set role = 'lead' where project_id = $1 and user_id = $2`, []any{f.projA, f.users["viewerA"]}, "ownerA"},
		{"members delete", `delete from project_members where project_id = $1 and user_id = $2`, []any{f.projA, f.users["viewerA"]}, "ownerA"},
		{"collections insert", `insert into collections (project_id, slug, name) values ($1, 'features', 'Features')`, []any{f.projA}, leads},
		{"collections update", `update collections set name = 'Renamed' where id = $1`, []any{f.collA}, leads},
		{"collections delete", `delete from collections where id = $1`, []any{f.collA}, leads},
		{"channels insert", `insert into channels (slug, name, upload_post_platform) values ('new', 'New', 'x')`, nil, ""},
		{"channels update", `update channels set name = 'Twitter' where slug = 'x'`, nil, ""},
		{"channels delete", `delete from channels where slug = 'threads'`, nil, ""},
		{"profiles update other", `update profiles set display_name = 'Mallory' where id = $1`, []any{f.users["editorA"]}, "editorA"},
		{"profiles delete", `delete from profiles where id = $1`, []any{f.users["editorA"]}, ""},
		{"publications insert", `insert into publications (project_id, title, slug) values ($1, 'New', 'new-pub')`, []any{f.projA}, editors},
		{"publications update draft", `update publications set title = 'Edited' where id = $1`, []any{draft}, editors},
		{"publications update approved", `update publications set title = 'Edited' where id = $1`, []any{approved}, ""},
		{"publications delete draft", `delete from publications where id = $1`, []any{draft}, editors},
		{"promos insert", `insert into promos (publication_id, channel, body) values ($1, 'bluesky', 'hey')`, []any{draft}, editors},
		{"promos update", `update promos set body = 'changed' where publication_id = $1`, []any{draft}, editors},
		{"promos delete", `delete from promos where publication_id = $1`, []any{draft}, editors},
		{"media insert", `insert into media (project_id, storage_path, mime_type) values ($1, 'proj-a/b.png', 'image/png')`, []any{f.projA}, editors},
		{"media update", `update media set alt_text = 'A cat' where id = $1`, []any{f.mediaA}, editors},
		{"media delete", `delete from media where id = $1`, []any{f.mediaB}, editors},
		{"media delete attached to approved", `delete from media where id = $1`, []any{f.mediaA}, ""},
		{"publication_media insert", `insert into publication_media (publication_id, media_id, position) values ($1, $2, 1)`, []any{draft, f.mediaB}, editors},
		// Content is frozen once the publication leaves the editor's hands.
		{"promos insert approved", `insert into promos (publication_id, channel, body) values ($1, 'bluesky', 'hey')`, []any{approved}, ""},
		{"promos update approved", `update promos set body = 'changed' where publication_id = $1`, []any{approved}, ""},
		{"promos delete approved", `delete from promos where publication_id = $1`, []any{approved}, ""},
		{"publication_media insert approved", `insert into publication_media (publication_id, media_id, position) values ($1, $2, 1)`, []any{approved, f.mediaB}, ""},
		{"publication_media update approved", `update publication_media set position = 3 where publication_id = $1`, []any{approved}, ""},
		{"publication_media delete approved", `delete from publication_media where publication_id = $1`, []any{approved}, ""},
		{"publications status to changes_requested", `update publications set status = 'changes_requested' where id = $1`, []any{reviewing}, ""},
		{"publications status to approved", `update publications set status = 'approved' where id = $1`, []any{reviewing}, reviewers},
		{"publications reopen directly", `update publications set status = 'draft' where id = $1`, []any{approved}, ""},
		{"publications insert own author_id", `insert into publications (project_id, title, slug, author_id) values ($1, 'Mine', 'mine', auth.uid())`, []any{f.projA}, editors},
		{"publications insert other author_id", `insert into publications (project_id, title, slug, author_id) values ($1, 'Forged', 'forged', $2)`, []any{f.projA, f.users["reviewerA"]}, ""},
		{"publication_media update", `update publication_media set position = 3 where publication_id = $1`, []any{draft}, editors},
		{"publication_media delete", `delete from publication_media where publication_id = $1`, []any{draft}, editors},
		{"reviews insert comment", `insert into reviews (publication_id, verdict, notes) values ($1, 'comment', 'nice')`, []any{approved}, reviewers},
		{"reviews insert forged verdict", `insert into reviews (publication_id, verdict, notes) values ($1, 'approved', 'lgtm')`, []any{approved}, ""},
		{"reviews update", `update reviews set notes = 'rewritten' where publication_id = $1`, []any{approved}, ""},
		{"reviews delete", `delete from reviews where publication_id = $1`, []any{approved}, ""},
		{"status_events insert", `insert into status_events (project_id, publication_id, from_status, to_status, intent, via) values ($1, $2, 'draft', 'published', 'publish', 'rpc')`, []any{f.projA, draft}, ""},
		{"status_events update", `update status_events set note = 'forged' where publication_id = $1`, []any{approved}, ""},
		{"status_events delete", `delete from status_events where publication_id = $1`, []any{approved}, ""},
		{"revisions insert", `insert into publication_revisions (project_id, publication_id, round, version, snapshot) values ($1, $2, 9, 1, '{}')`, []any{f.projA, approved}, ""},
		{"revisions update", `update publication_revisions set snapshot = '{}' where publication_id = $1`, []any{approved}, ""},
		{"revisions delete", `delete from publication_revisions where publication_id = $1`, []any{approved}, ""},
	}
	for _, c := range cases {
		allowed := map[string]bool{}
		for _, u := range strings.Fields(c.allowed) {
			allowed[u] = true
		}
		for _, who := range everyone {
			n, err := f.try(who, c.sql, c.args...)
			did := err == nil && n > 0
			if allowed[who] && !did {
				t.Errorf("%s: %s should succeed, got %d rows, err %v", c.name, who, n, err)
			}
			if !allowed[who] && did {
				t.Errorf("%s: %s changed %d rows but must not", c.name, who, n)
			}
		}
	}
}

// TestCrossTenantReferences: a member of B cannot attach its rows to A's, even through the
// composite foreign keys, and a media path must live under its own project's folder.
func TestCrossTenantReferences(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pubA := f.draft(t, "A draft")
	pubB := f.draftBy(t, "editorB", f.projB, "B draft")
	cases := []struct {
		name string
		sql  string
		args []any
	}{
		{"promo on A's publication", `insert into promos (project_id, publication_id, channel) values ($1, $2, 'x')`, []any{f.projB, pubA}},
		{"A's media on B's publication", `insert into publication_media (project_id, publication_id, media_id) values ($1, $2, $3)`, []any{f.projB, pubB, f.mediaA}},
		{"media under A's folder", `insert into media (project_id, storage_path, mime_type) values ($1, 'proj-a/x.png', 'image/png')`, []any{f.projB}},
		{"publication in A's collection", `insert into publications (project_id, collection_id, title, slug) values ($1, $2, 'T', 't')`, []any{f.projB, f.collA}},
	}
	for _, c := range cases {
		if n, err := f.try("ownerB", c.sql, c.args...); err == nil && n > 0 {
			t.Errorf("%s: accepted", c.name)
		}
	}
	// The owner superuser cannot rewrite history either. The audit must hold rows, or an
	// UPDATE or DELETE would touch none and never reach the refusing trigger.
	f.inStatus(t, "approved")
	own := f.db.Owner(t)
	for _, q := range []string{`update status_events set note = 'x'`, `delete from status_events`, `truncate status_events`} {
		if _, err := own.Exec(t.Context(), q); err == nil {
			t.Errorf("table owner ran %q on the append-only audit", q)
		}
	}
}

// TestLoginRoleHoldsNothing: the service's login role, connected as itself with no SET ROLE,
// may not read or write tenant data or identities; it only switches into the request roles.
// NOINHERIT is what makes that true although it is a member of them, so it is checked too, as
// is the catalog: no table, view or sequence outside PostgreSQL's own schemas grants it anything.
func TestLoginRoleHoldsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.inStatus(t, "approved") // rows to read, update and delete, had the login role the rights
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, f.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var user string
	var inherits bool
	mustScan(t, conn.QueryRow(ctx, `select current_user, rolinherit from pg_roles where rolname = session_user`), &user, &inherits)
	if user != pg.LoginRole || inherits {
		t.Fatalf("connected as %s (inherits %v), want %s with NOINHERIT", user, inherits, pg.LoginRole)
	}
	for _, table := range []string{"public.publications", "public.projects", "auth.users", "auth.sessions"} {
		for _, q := range []string{
			`select * from %s limit 1`,
			`insert into %s default values`,
			`update %s set id = id`,
			`delete from %s`,
		} {
			q = fmt.Sprintf(q, table)
			// Refused for want of a right on the table (or its schema) itself, not on
			// something a row policy calls.
			schema, name, _ := strings.Cut(table, ".")
			_, err := conn.Exec(ctx, q)
			fe, _ := pg.ErrorFields(err)
			if fe.Code != "42501" || (fe.Message != "permission denied for table "+name && fe.Message != "permission denied for schema "+schema) {
				t.Errorf("%s as %s: %v, want 42501 on the table or its schema", q, pg.LoginRole, err)
			}
		}
	}
	rows, err := conn.Query(ctx, `
		select format('%s.%s', n.nspname, c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace
		 where c.relkind in ('r', 'p', 'v', 'm', 'f', 'S')
		   and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname !~ '^pg_toast'
		   and has_table_privilege(c.oid, 'select, insert, update, delete, truncate, references, trigger')`)
	if err != nil {
		t.Fatal(err)
	}
	granted, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(granted) > 0 {
		t.Errorf("%s holds privileges on %v", pg.LoginRole, granted)
	}
	for _, role := range []string{pg.RoleAnon, pg.RoleAuthenticated} {
		if _, err := conn.Exec(ctx, `set role `+role); err != nil {
			t.Fatalf("set role %s: %v", role, err)
		}
		mustScan(t, conn.QueryRow(ctx, `select current_user`), &user)
		if user != role {
			t.Errorf("after set role %s: current_user %s", role, user)
		}
		if _, err := conn.Exec(ctx, `reset role`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `set role `+pgrun.Superuser); sqlstate(err) != "42501" {
		t.Errorf("set role %s: %v, want 42501", pgrun.Superuser, err)
	}
}
