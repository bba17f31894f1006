package pg_test

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// TestCreateProject: any signed-in person may start a project and becomes its owner; anon may
// not, and unknown channels or a taken slug are refused with nothing created.
func TestCreateProject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var id string
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller("outsider"), pg.ReadWrite, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(),
			`select id from create_project('new-desk', 'New Desk', 'Europe/Berlin', '{x,bluesky}')`).Scan(&id)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := f.count("outsider", `select count(*) from project_members where project_id = $1 and user_id = $2 and role = 'owner'`,
		id, f.users["outsider"]); n != 1 {
		t.Fatalf("the creator is not the owner (%d rows)", n)
	}
	if n := f.count("ownerA", `select count(*) from projects where id = $1`, id); n != 0 {
		t.Error("another tenant sees the new project")
	}
	for _, tc := range []struct {
		name, who, sql, code string
	}{
		{"anon", "anon", `select create_project('anon-desk', 'Anon')`, "42501"},
		{"unknown channel", "outsider", `select create_project('other-desk', 'Other', 'UTC', '{x,myspace}')`, "PT400"},
		{"taken slug", "ownerA", `select create_project('proj-a', 'Again')`, "PT409"},
		{"bad timezone", "outsider", `select create_project('tz-desk', 'TZ', 'Mars/Olympus')`, "22023"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.try(tc.who, tc.sql)
			if got := sqlstate(err); got != tc.code {
				t.Errorf("got %q (%v), want %s", got, err, tc.code)
			}
		})
	}
	if _, err := f.try("ownerA", `update projects set default_channels = '{x,myspace}' where id = $1`, f.projA); sqlstate(err) != "PT400" {
		t.Errorf("an unknown default channel: %v", err)
	}
}

// TestTimezoneRefusedInWords: a time zone PostgreSQL does not know is refused, on a new project
// and on a project's update, as invalid_parameter_value naming the value and what would do
// (migration 035), not as the bare name of projects' check; the check still holds behind it.
func TestTimezoneRefusedInWords(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const want = `Unknown time zone "Mars/Olympus": use an IANA name such as Europe/Berlin or UTC`
	for _, c := range []struct{ who, sql string }{
		{"outsider", `select create_project('tz-desk', 'TZ', 'Mars/Olympus')`},
		{"ownerA", `update projects set timezone = 'Mars/Olympus' where slug = 'proj-a'`},
	} {
		_, err := f.try(c.who, c.sql)
		if fe, _ := pg.ErrorFields(err); fe.Code != "22023" || fe.Message != want {
			t.Errorf("%s: %q %q (%v), want 22023 %q", c.sql, fe.Code, fe.Message, err, want)
		}
	}
	// A name too long for any zone is quoted cut short, not echoed whole.
	_, err := f.try("ownerA", `update projects set timezone = $1 where slug = 'proj-a'`, strings.Repeat("z", 300))
	if fe, _ := pg.ErrorFields(err); fe.Code != "22023" || fe.Message != `Unknown time zone "`+strings.Repeat("z", 63)+`…": use an IANA name such as Europe/Berlin or UTC` {
		t.Errorf("a 300-character name: %q %q (%v)", fe.Code, fe.Message, err)
	}
	if n, err := f.try("ownerA", `update projects set timezone = 'Pacific/Chatham', name = 'A' where slug = 'proj-a'`); err != nil || n != 1 {
		t.Errorf("a known time zone: %d rows (%v)", n, err)
	}
	var check string
	if err := f.db.Owner(t).QueryRow(context.Background(), `select pg_get_constraintdef(oid) from pg_constraint
		where conname = 'projects_timezone_check'`).Scan(&check); err != nil || !strings.Contains(check, "valid_timezone") {
		t.Errorf("projects' time zone check: %q (%v)", check, err)
	}
}

// TestLastOwner: the last owner of a project can be neither demoted nor removed, by themselves
// or anyone; once there is a second owner, either may go.
func TestLastOwner(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const demote = `update project_members set role = 'lead' where project_id = $1 and user_id = $2`
	const remove = `delete from project_members where project_id = $1 and user_id = $2`
	for _, sql := range []string{demote, remove} {
		if _, err := f.try("ownerA", sql, f.projA, f.users["ownerA"]); sqlstate(err) != "PT409" {
			t.Errorf("%s of the last owner: %v, want PT409", sql, err)
		}
	}
	if _, err := f.exec("ownerA", `update project_members set role = 'owner' where project_id = $1 and user_id = $2`,
		f.projA, f.users["leadA"]); err != nil {
		t.Fatal(err)
	}
	if n, err := f.exec("ownerA", demote, f.projA, f.users["ownerA"]); err != nil || n != 1 {
		t.Fatalf("with a second owner, demoting oneself: %d %v", n, err)
	}
	if _, err := f.try("leadA", remove, f.projA, f.users["leadA"]); sqlstate(err) != "PT409" {
		t.Errorf("the new last owner left: %v", err)
	}
	// Deleting the whole project is not blocked by its owner (cascade).
	if _, err := f.db.Owner(t).Exec(context.Background(), `delete from projects where id = $1`, f.projB); err != nil {
		t.Errorf("delete a project: %v", err)
	}
}

// TestMemberChangesNeedAnOwner: a lead (or any non-owner) cannot add members, change roles or
// remove anyone; another tenant's owner cannot either. Every change an owner makes is in the
// trail, which nobody can write.
func TestMemberChangesNeedAnOwner(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, who := range []string{"leadA", "editorA", "viewerA", "ownerB", "outsider"} {
		if n, err := f.try(who, `update project_members set role = 'owner' where project_id = $1 and user_id = $2`,
			f.projA, f.users["viewerA"]); err != nil || n != 0 {
			t.Errorf("%s changed a role: %d %v", who, n, err)
		}
		if n, err := f.try(who, `delete from project_members where project_id = $1 and user_id = $2`,
			f.projA, f.users["viewerA"]); err != nil || n != 0 {
			t.Errorf("%s removed a member: %d %v", who, n, err)
		}
		if _, err := f.try(who, `insert into project_members (project_id, user_id, role) values ($1, $2, 'viewer')`,
			f.projA, f.users["editorB"]); sqlstate(err) != "42501" {
			t.Errorf("%s added a member: %v", who, err)
		}
	}
	if _, err := f.exec("ownerA", `update project_members set role = 'editor' where project_id = $1 and user_id = $2`,
		f.projA, f.users["viewerA"]); err != nil {
		t.Fatal(err)
	}
	if n := f.count("ownerA", `select count(*) from member_events where project_id = $1 and user_id = $2
		and from_role = 'viewer' and to_role = 'editor' and actor_id = $3 and via = 'rest'`,
		f.projA, f.users["viewerA"], f.users["ownerA"]); n != 1 {
		t.Errorf("the role change is not in the trail (%d rows)", n)
	}
	if n := f.count("leadA", `select count(*) from member_events`); n != 0 {
		t.Errorf("a lead reads %d trail rows; only owners do", n)
	}
	if _, err := f.db.Owner(t).Exec(context.Background(), `delete from member_events`); sqlstate(err) != "42501" {
		t.Errorf("the trail can be deleted, even by its owner: %v", err)
	}
}

// invite makes an invitation as who and returns its token.
func (f *fixture) invite(t *testing.T, who, project, email, role string) (string, error) {
	t.Helper()
	var token string
	err := pg.WithCaller(context.Background(), f.db.Pool, f.caller(who), pg.ReadWrite, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `select token from invite_member($1, $2, $3)`, project, email, role).Scan(&token)
	})
	return token, err
}

// accept accepts the invitation of token for user, as the identity service does.
func (f *fixture) accept(token, user string) (slug, role string, err error) {
	h := sha256.Sum256([]byte(token))
	err = pg.WithCaller(context.Background(), f.db.Pool, pg.Caller{Role: pg.RoleAuth}, pg.ReadWrite, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `select project_slug, role from app.accept_invitation($1, $2)`, h[:], user).Scan(&slug, &role)
	})
	return
}

// TestInvitations: only owners invite and see their invitations (never the token hash); an
// invitation joins its addressee once, before it expires, with its role.
func TestInvitations(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	ctx := context.Background()
	var newcomer string
	mustScan(t, own.QueryRow(ctx, `insert into auth.users (email) values ('new@example.test') returning id`), &newcomer)

	token, err := f.invite(t, "ownerA", f.projA, "New@Example.test", "editor")
	if err != nil {
		t.Fatal(err)
	}
	if len(token) != 43 {
		t.Errorf("token %q: want 43 base64url characters (256 bits)", token)
	}
	for _, who := range []string{"leadA", "editorA", "viewerA", "ownerB", "outsider", "anon"} {
		if _, err := f.invite(t, who, f.projA, "x@example.test", "viewer"); sqlstate(err) != "42501" {
			t.Errorf("%s invited to A: %v", who, err)
		}
		if n := f.count(who, `select count(*) from invitations`); n != 0 {
			t.Errorf("%s sees %d invitations of A", who, n)
		}
	}
	if n := f.count("ownerA", `select count(*) from invitations where project_id = $1`, f.projA); n != 1 {
		t.Errorf("the owner sees %d invitations", n)
	}
	if _, err := f.try("ownerA", `select token_hash from invitations`); sqlstate(err) != "42501" {
		t.Errorf("the token hash is readable: %v", err)
	}
	if _, err := f.invite(t, "ownerA", f.projA, "editorA@example.test", "viewer"); sqlstate(err) != "PT409" {
		t.Errorf("inviting a member: %v", err)
	}
	if _, err := f.invite(t, "ownerA", f.projA, "x@example.test", "admin"); sqlstate(err) != "23514" {
		t.Errorf("an unknown role: %v", err)
	}

	if _, _, err := f.accept(token, f.users["outsider"]); sqlstate(err) != "42501" {
		t.Errorf("accepted by someone else: %v", err)
	}
	slug, role, err := f.accept(token, newcomer)
	if err != nil || slug != "proj-a" || role != "editor" {
		t.Fatalf("accept: %q %q %v", slug, role, err)
	}
	if _, _, err := f.accept(token, newcomer); sqlstate(err) != "PT409" {
		t.Errorf("a second use: %v", err)
	}
	if _, _, err := f.accept("not-a-token", newcomer); sqlstate(err) != "PT404" {
		t.Errorf("an unknown token: %v", err)
	}
	var via string
	mustScan(t, own.QueryRow(ctx, `select via from member_events where user_id = $1`, newcomer), &via)
	if via != "invitation" {
		t.Errorf("the trail says via %q", via)
	}

	late, err := f.invite(t, "ownerA", f.projA, "late@example.test", "viewer")
	if err != nil {
		t.Fatal(err)
	}
	var lateUser string
	mustScan(t, own.QueryRow(ctx, `insert into auth.users (email) values ('late@example.test') returning id`), &lateUser)
	if _, err := own.Exec(ctx, `update invitations set expires_at = now() - interval '1 second' where email = 'late@example.test'`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.accept(late, lateUser); sqlstate(err) != "PT410" {
		t.Errorf("an expired invitation: %v", err)
	}
	var expires, created any
	mustScan(t, own.QueryRow(ctx, `select expires_at - created_at, null from invitations where email = 'New@Example.test'`), &expires, &created)
	if n := f.count("ownerA", `select count(*) from invitations where email = 'New@Example.test' and expires_at - created_at = interval '7 days'`); n != 1 {
		t.Errorf("an invitation is valid for 7 days; got %v", expires)
	}
	// Anyone but masthead_auth is refused the acceptance function outright.
	if _, err := f.try("ownerA", `select * from app.accept_invitation('\x00'::bytea, $1)`, f.users["ownerA"]); sqlstate(err) != "42501" {
		t.Errorf("an owner called accept_invitation: %v", err)
	}
}

// TestInviteAgainReplaces: inviting an address again (in any case) revokes its open invitation
// to the project, so only the newest link works, with the role it names (migration 036); an
// accepted invitation stays, and another project's invitation to the same address is not
// touched.
func TestInviteAgainReplaces(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := f.db.Owner(t)
	ctx := context.Background()
	var person string
	mustScan(t, own.QueryRow(ctx, `insert into auth.users (email) values ('twice@example.test') returning id`), &person)

	elsewhere, err := f.invite(t, "ownerB", f.projB, "twice@example.test", "viewer")
	if err != nil {
		t.Fatal(err)
	}
	first, err := f.invite(t, "ownerA", f.projA, "twice@example.test", "viewer")
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.invite(t, "ownerA", f.projA, "TWICE@example.test", "editor")
	if err != nil {
		t.Fatal(err)
	}
	if n := f.count("ownerA", `select count(*) from invitations where project_id = $1 and lower(email) = 'twice@example.test'`, f.projA); n != 1 {
		t.Errorf("%d open invitations to the address after inviting it twice, want 1", n)
	}
	if _, _, err := f.accept(first, person); sqlstate(err) != "PT404" {
		t.Errorf("the replaced link: %v, want PT404 (not valid)", err)
	}
	if _, role, err := f.accept(second, person); err != nil || role != "editor" {
		t.Fatalf("the newest link: %q %v", role, err)
	}
	// Now a member: inviting them again is refused, and the accepted invitation stays.
	if _, err := f.invite(t, "ownerA", f.projA, "twice@example.test", "lead"); sqlstate(err) != "PT409" {
		t.Errorf("inviting the member they became: %v", err)
	}
	if n := f.count("ownerA", `select count(*) from invitations where project_id = $1 and accepted_at is not null`, f.projA); n != 1 {
		t.Errorf("%d accepted invitations kept, want 1", n)
	}
	if _, role, err := f.accept(elsewhere, person); err != nil || role != "viewer" {
		t.Errorf("the other project's invitation: %q %v", role, err)
	}
	// A caller who may not invite revokes nothing on the way to being refused.
	if _, err := f.invite(t, "ownerA", f.projA, "third@example.test", "viewer"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.invite(t, "leadA", f.projA, "third@example.test", "viewer"); sqlstate(err) != "42501" {
		t.Errorf("a lead invited: %v", err)
	}
	if n := f.count("ownerA", `select count(*) from invitations where email = 'third@example.test'`); n != 1 {
		t.Errorf("%d invitations to third@ after a lead's refused call, want the owner's 1", n)
	}
}
