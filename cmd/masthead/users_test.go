package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"masthead/internal/pg/pgtest"
)

// TestUsersAdmin: add, role, password, disable and enable as an operator types them, with
// errors in plain words (no package prefixes, no SQLSTATEs).
func TestUsersAdmin(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	own := db.Owner(t)
	log := slog.New(slog.DiscardHandler)
	var out bytes.Buffer
	run := func(args ...string) error {
		out.Reset()
		return commands["users"].run(ctx, append(args, "--owner-url", db.OwnerURL), &out, log)
	}
	if _, err := own.Exec(ctx, `insert into projects (slug, name) values ('gazette', 'Gazette'), ('herald', 'Herald')`); err != nil {
		t.Fatal(err)
	}
	if err := run("create", "--email", "ed@gazette.test", "--password", "long-enough", "--project", "gazette", "--role", "owner"); err != nil {
		t.Fatal(err)
	}
	if err := run("add", "--email", "ED@gazette.test", "--project", "herald", "--role", "reviewer"); err != nil || !strings.Contains(out.String(), "joined herald as reviewer") {
		t.Fatalf("add: %v %q", err, out.String())
	}
	if err := run("role", "--email", "ed@gazette.test", "--project", "herald", "--role", "lead"); err != nil {
		t.Fatalf("role: %v", err)
	}
	var role, via string
	if err := own.QueryRow(ctx, `select m.role, (select via from member_events e where e.project_id = m.project_id order by id desc limit 1)
		from project_members m join projects p on p.id = m.project_id where p.slug = 'herald'`).Scan(&role, &via); err != nil || role != "lead" || via != "admin" {
		t.Errorf("herald role %q via %q (%v)", role, via, err)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"already a member", []string{"add", "--email", "ed@gazette.test", "--project", "herald", "--role", "viewer"}, "already a member of herald"},
		{"unknown email", []string{"add", "--email", "nobody@gazette.test", "--project", "herald", "--role", "viewer"}, "no account has the email nobody@gazette.test"},
		{"unknown project", []string{"add", "--email", "ed@gazette.test", "--project", "nowhere", "--role", "viewer"}, `no project has the slug "nowhere"`},
		{"unknown role", []string{"role", "--email", "ed@gazette.test", "--project", "herald", "--role", "boss"}, `role "boss" is not one of`},
		{"not a member", []string{"role", "--email", "ed@gazette.test", "--project", "nowhere", "--role", "viewer"}, "is not a member"},
		{"last owner", []string{"role", "--email", "ed@gazette.test", "--project", "gazette", "--role", "editor"}, "a project needs at least one owner: this is its last owner (Make another member an owner first.)"},
		{"short password", []string{"password", "--email", "ed@gazette.test", "--password", "short"}, "at least 8 characters"},
		{"a longer minimum", []string{"password", "--email", "ed@gazette.test", "--password", "eleven char", "--password-min-length", "12"}, "the password must be at least 12 characters (MASTHEAD_PASSWORD_MIN_LENGTH)"},
		{"a longer minimum at create", []string{"create", "--email", "new@gazette.test", "--password", "eleven char", "--password-min-length", "12"}, "the password must be at least 12 characters"},
		{"a minimum out of bounds", []string{"password", "--email", "ed@gazette.test", "--password", "long-enough", "--password-min-length", "5"}, `--password-min-length (MASTHEAD_PASSWORD_MIN_LENGTH) must be a number from 6 to 72, not "5"`},
		{"past bcrypt's 72 bytes", []string{"password", "--email", "ed@gazette.test", "--password", strings.Repeat("x", 73)}, "the password must be at most 72 bytes"},
		{"disable nobody", []string{"disable", "--email", "nobody@gazette.test"}, "no account has the email"},
		{"create taken", []string{"create", "--email", "ed@gazette.test", "--password", "long-enough"}, "a user with email ed@gazette.test already exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args...)
			if err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			for _, bad := range []string{"seed:", "SQLSTATE", "ERROR:"} {
				if strings.Contains(err.Error(), bad) {
					t.Errorf("%q shows an internal prefix %q", err, bad)
				}
			}
		})
	}

	var id string
	if err := own.QueryRow(ctx, `select id from auth.users where email = 'ed@gazette.test'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Exec(ctx, `insert into auth.sessions (user_id) values ($1), ($1)`, id); err != nil {
		t.Fatal(err)
	}
	if err := run("password", "--email", "ed@gazette.test", "--password", "a fresh secret"); err != nil {
		t.Fatal(err)
	}
	var hash string
	var sessions int
	if err := own.QueryRow(ctx, `select encrypted_password, (select count(*) from auth.sessions where user_id = u.id) from auth.users u where id = $1`, id).Scan(&hash, &sessions); err != nil {
		t.Fatal(err)
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte("a fresh secret")) != nil || sessions != 0 {
		t.Errorf("password reset: hash matches %v, %d sessions left", bcrypt.CompareHashAndPassword([]byte(hash), []byte("a fresh secret")) == nil, sessions)
	}
	// The hashes are at MASTHEAD_BCRYPT_COST, the service's own setting, or --bcrypt-cost;
	// unset, at its default, 10.
	costOf := func(email string) int {
		t.Helper()
		var h string
		if err := own.QueryRow(ctx, `select encrypted_password from auth.users where email = $1`, email).Scan(&h); err != nil {
			t.Fatal(err)
		}
		cost, err := bcrypt.Cost([]byte(h))
		if err != nil {
			t.Fatal(err)
		}
		return cost
	}
	if got := costOf("ed@gazette.test"); got != 10 {
		t.Errorf("password without MASTHEAD_BCRYPT_COST: hash at cost %d, want 10", got)
	}
	t.Setenv("MASTHEAD_BCRYPT_COST", "5")
	if err := run("password", "--email", "ed@gazette.test", "--password", "a fresh secret"); err != nil || costOf("ed@gazette.test") != 5 {
		t.Errorf("password with MASTHEAD_BCRYPT_COST=5: %v, hash at cost %d", err, costOf("ed@gazette.test"))
	}
	if err := run("create", "--email", "cost@gazette.test", "--password", "long-enough"); err != nil || costOf("cost@gazette.test") != 5 {
		t.Errorf("create with MASTHEAD_BCRYPT_COST=5: %v, hash at cost %d", err, costOf("cost@gazette.test"))
	}
	if err := run("password", "--email", "ed@gazette.test", "--password", "a fresh secret", "--bcrypt-cost", "6"); err != nil || costOf("ed@gazette.test") != 6 {
		t.Errorf("password --bcrypt-cost 6: %v, hash at cost %d", err, costOf("ed@gazette.test"))
	}
	for _, bad := range []string{"3", "32", "ten"} {
		want := `--bcrypt-cost (MASTHEAD_BCRYPT_COST) must be a number from 4 to 31, not "` + bad + `"`
		if err := run("create", "--email", "bad@gazette.test", "--password", "long-enough", "--bcrypt-cost", bad); err == nil || err.Error() != want {
			t.Errorf("create --bcrypt-cost %s: %v, want %q", bad, err, want)
		}
	}
	t.Setenv("MASTHEAD_BCRYPT_COST", "")
	// MASTHEAD_PASSWORD_MIN_LENGTH, the service's own setting, is the default minimum.
	t.Setenv("MASTHEAD_PASSWORD_MIN_LENGTH", "20")
	if err := run("password", "--email", "ed@gazette.test", "--password", "nineteen characters"); err == nil || !strings.Contains(err.Error(), "at least 20 characters") {
		t.Errorf("with MASTHEAD_PASSWORD_MIN_LENGTH=20, a 19-character password: %v", err)
	}
	// --password-stdin reads the first line, without its line ending.
	out.Reset()
	if err := usersPassword(ctx, []string{"--email", "ed@gazette.test", "--password-stdin", "--owner-url", db.OwnerURL},
		strings.NewReader("twenty characters ok\r\nsecond line\n"), &out); err != nil {
		t.Fatalf("--password-stdin: %v", err)
	}
	if err := own.QueryRow(ctx, `select encrypted_password from auth.users where id = $1`, id).Scan(&hash); err != nil ||
		bcrypt.CompareHashAndPassword([]byte(hash), []byte("twenty characters ok")) != nil {
		t.Errorf("--password-stdin did not set the first line as the password (%v)", err)
	}
	if _, err := own.Exec(ctx, `insert into auth.sessions (user_id) values ($1)`, id); err != nil {
		t.Fatal(err)
	}
	// Their work: a publication they wrote.
	if _, err := own.Exec(ctx, `insert into publications (project_id, title, slug, summary, body, author_id)
		select id, 'Ed''s piece', 'eds-piece', 's', 'b', $1 from projects where slug = 'gazette'`, id); err != nil {
		t.Fatal(err)
	}
	// kept is what a disabled account keeps: its memberships (project and role) and its work.
	kept := func() string {
		var s string
		if err := own.QueryRow(ctx, `select (select string_agg(p.slug || ':' || m.role, ',' order by p.slug)
			  from project_members m join projects p on p.id = m.project_id where m.user_id = $1)
			|| ' ' || (select string_agg(title, ',') from publications where author_id = $1)`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := kept()
	if before != "gazette:owner,herald:lead Ed's piece" {
		t.Fatalf("before disable: %q", before)
	}
	if err := run("disable", "--email", "ed@gazette.test"); err != nil {
		t.Fatal(err)
	}
	var banned bool
	if err := own.QueryRow(ctx, `select banned_until > now() + interval '100 years', (select count(*) from auth.sessions where user_id = u.id) from auth.users u where id = $1`, id).Scan(&banned, &sessions); err != nil || !banned || sessions != 0 {
		t.Errorf("disable: banned %v, %d sessions (%v)", banned, sessions, err)
	}
	if after := kept(); after != before {
		t.Errorf("disable changed the account's memberships or work: %q, was %q", after, before)
	}
	if err := run("enable", "--email", "ed@gazette.test"); err != nil {
		t.Fatal(err)
	}
	if err := own.QueryRow(ctx, `select banned_until is not null from auth.users where id = $1`, id).Scan(&banned); err != nil || banned {
		t.Errorf("enable: still banned (%v)", err)
	}
}
