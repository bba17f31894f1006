package pg_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
)

// TestSetupSettings: role, claims and further settings (quotes, commas and backslashes
// included) are in force inside the transaction and gone after it, on the same connection.
func TestSetupSettings(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	c := pg.Caller{Role: pg.RoleAnon, Claims: []byte(`{"role":"anon"}`),
		Settings: []pg.Setting{
			{Name: []byte("request.method"), Value: []byte("GET")}, {Name: []byte("request.path"), Value: []byte(`/a,"b"\c`)}}}
	var role, method, path, claims string
	err = pgx.BeginTxFunc(ctx, conn, pg.ReadOnly, func(tx pgx.Tx) error {
		if err := pg.Setup(ctx, tx, c); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `select current_user, current_setting('request.method'), current_setting('request.path'),
			auth.jwt() ->> 'role'`).Scan(&role, &method, &path, &claims)
	})
	if err != nil {
		t.Fatal(err)
	}
	if role != "anon" || method != "GET" || path != `/a,"b"\c` || claims != "anon" {
		t.Fatalf("inside: role %q method %q path %q claims role %q", role, method, path, claims)
	}
	if err := conn.QueryRow(ctx, `select current_user, coalesce(current_setting('request.method', true), '')`).Scan(&role, &method); err != nil {
		t.Fatal(err)
	}
	if role != pg.LoginRole || method != "" {
		t.Fatalf("after the transaction: role %q, request.method %q leaked", role, method)
	}
}

// TestSetupManySettings: every further setting is in force, however many a caller sets: up to
// the setup texts made in advance and past them, read-only or not, and from many settings to
// few on the same connection, so a request's setup parameters (kept between requests) never
// carry the previous one's. A name given twice holds its later value.
func TestSetupManySettings(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, n := range []int{1, 2, 8, 9, 12, 3} {
		for _, readOnly := range []bool{false, true} {
			c := pg.Caller{Role: pg.RoleAnon, Claims: []byte(`{"role":"anon"}`)}
			var probe strings.Builder
			probe.WriteString(`select concat_ws(' ', current_setting('transaction_read_only')`)
			want := map[bool]string{false: "off", true: "on"}[readOnly]
			for i := range n {
				k := fmt.Sprintf("masthead.test_%d", i)
				v := fmt.Sprintf("v%d'%d", i, n)
				c.Settings = append(c.Settings, pg.Setting{Name: []byte(k), Value: []byte(v)})
				probe.WriteString(", current_setting('" + k + "')")
				want += " " + v
			}
			probe.WriteString(")")
			rs, err := pg.ExecAsCaller(ctx, conn.Conn().PgConn(), c, readOnly, false, pg.Stmt{SQL: probe.String()})
			if err != nil {
				t.Fatalf("%d settings, read-only %v: %v", n, readOnly, err)
			}
			if got := string(rs[0].Rows[0][0]); got != want {
				t.Errorf("%d settings, read-only %v: got %q, want %q", n, readOnly, got, want)
			}
		}
	}
	// A name given twice: the settings apply in order, so the later value is the one that holds.
	c := pg.Caller{Role: pg.RoleAnon, Claims: []byte(`{"role":"anon"}`), Settings: []pg.Setting{
		{Name: []byte("masthead.test_0"), Value: []byte("first")}, {Name: []byte("masthead.test_0"), Value: []byte("later")}}}
	rs, err := pg.ExecAsCaller(ctx, conn.Conn().PgConn(), c, true, false, pg.Stmt{SQL: `select current_setting('masthead.test_0')`})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(rs[0].Rows[0][0]); got != "later" {
		t.Errorf("a setting given twice: got %q, want the later value", got)
	}
}

// TestSetupTexts runs every form of the caller setup (claims checked from the JSON or from the
// sub and session_id beside them; no settings, read-only alone, further settings) through both
// ExecAsCaller and WithCaller on one connection: each sees the caller's role, auth.uid(), claims,
// settings and read-only mode, leaves nothing behind for the next transaction, and refuses the
// claims of a session that has ended (pg.ErrSessionEnded) — the check the forms without the
// JSON parse must keep.
func TestSetupTexts(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	own := db.Owner(t)
	var uid, sid string
	if err := own.QueryRow(ctx, `insert into auth.users (email) values ('setup@example.test') returning id`).Scan(&uid); err != nil {
		t.Fatal(err)
	}
	if err := own.QueryRow(ctx, `insert into auth.sessions (user_id) values ($1) returning id`, uid).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	claims := []byte(`{"sub":"` + uid + `","role":"authenticated","session_id":"` + sid + `","email":"setup@example.test"}`)
	callers := map[string]pg.Caller{
		"claims only": pg.UserCaller(claims),
		"verified":    pg.VerifiedCaller(claims, uid, sid),
	}
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	const probe = `select current_user || ' ' || coalesce(auth.uid()::text, '-') || ' ' || (auth.jwt() ->> 'email') || ' ' ||
		coalesce(nullif(current_setting('request.method', true), ''), '-') || ' ' || current_setting('transaction_read_only')`
	for name, c := range callers {
		for _, settings := range [][]pg.Setting{nil, {{Name: []byte("request.method"), Value: []byte("GET")}}} {
			c := c
			c.Settings = settings
			method := "-"
			if settings != nil {
				method = "GET"
			}
			for _, readOnly := range []bool{false, true} {
				want := "authenticated " + uid + " setup@example.test " + method + map[bool]string{false: " off", true: " on"}[readOnly]
				rs, err := pg.ExecAsCaller(ctx, conn.Conn().PgConn(), c, readOnly, false, pg.Stmt{SQL: probe, Prepare: true})
				if err != nil {
					t.Fatalf("%s, settings %v, read-only %v: %v", name, settings, readOnly, err)
				}
				if got := string(rs[0].Rows[0][0]); got != want {
					t.Errorf("%s, settings %v, read-only %v: got %q, want %q", name, settings, readOnly, got, want)
				}
			}
			var got string
			err := pg.WithCaller(ctx, db.Pool, c, pg.ReadOnly, func(tx pgx.Tx) error {
				return tx.QueryRow(ctx, probe).Scan(&got)
			})
			if want := "authenticated " + uid + " setup@example.test " + method + " on"; err != nil || got != want {
				t.Errorf("%s, settings %v, WithCaller: got %q, %v; want %q", name, settings, got, err, want)
			}
		}
	}
	var left string
	if err := conn.QueryRow(ctx, `select current_user || ' ' || coalesce(current_setting('request.jwt.claim.sub', true), '') ||
		coalesce(current_setting('request.jwt.claims', true), '')`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != pg.LoginRole+" " {
		t.Fatalf("after the transactions the connection holds %q", left)
	}
	if _, err := own.Exec(ctx, `delete from auth.sessions where id = $1`, sid); err != nil {
		t.Fatal(err)
	}
	for name, c := range callers {
		for _, settings := range [][]pg.Setting{nil, {{Name: []byte("request.method"), Value: []byte("GET")}}} {
			c.Settings = settings
			for _, readOnly := range []bool{false, true} {
				if _, err := pg.ExecAsCaller(ctx, conn.Conn().PgConn(), c, readOnly, false, pg.Stmt{SQL: `select 1`}); !errors.Is(err, pg.ErrSessionEnded) {
					t.Errorf("%s, settings %v, read-only %v, ended session: %v, want pg.ErrSessionEnded", name, settings, readOnly, err)
				}
			}
			if err := pg.WithCaller(ctx, db.Pool, c, pg.ReadOnly, func(pgx.Tx) error { return nil }); !errors.Is(err, pg.ErrSessionEnded) {
				t.Errorf("%s, settings %v, WithCaller, ended session: %v, want pg.ErrSessionEnded", name, settings, err)
			}
		}
	}
	// A session of another user is no session of this one.
	var otherSid string
	if err := own.QueryRow(ctx, `insert into auth.sessions (user_id) select id from auth.users where email = 'setup@example.test' returning id`).Scan(&otherSid); err != nil {
		t.Fatal(err)
	}
	stranger := pg.VerifiedCaller(claims, "00000000-0000-4000-8000-000000000009", otherSid)
	if _, err := pg.ExecAsCaller(ctx, conn.Conn().PgConn(), stranger, true, false, pg.Stmt{SQL: `select 1`}); !errors.Is(err, pg.ErrSessionEnded) {
		t.Errorf("a session checked against another sub: %v, want pg.ErrSessionEnded", err)
	}
}
