package pg_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
)

// TestExecAsCaller pins the pipeline's transaction semantics that REST
// relies on: the role and settings reach the statement, read-only holds,
// a failure undoes everything before it, an explicit transaction waits
// for EndTx, and prepared statements survive between requests.
func TestExecAsCaller(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	own := db.Owner(t)
	if _, err := own.Exec(ctx, `create table public.batch_probe (n int); grant select, insert on public.batch_probe to authenticated`); err != nil {
		t.Fatal(err)
	}
	// exec runs stmts on a pooled connection, which the caller releases
	// with done.
	exec := func(c pg.Caller, readOnly, explicit bool, stmts ...pg.Stmt) (conn *pgconn.PgConn, done func(), rs []*pgconn.Result, err error) {
		pc, err := db.Pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rs, err = pg.ExecAsCaller(ctx, pc.Conn().PgConn(), c, readOnly, explicit, stmts...)
		return pc.Conn().PgConn(), pc.Release, rs, err
	}
	count := func() string {
		var n string
		if err := own.QueryRow(ctx, `select count(*)::text from public.batch_probe`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	user := pg.Caller{Role: pg.RoleAuthenticated, Claims: []byte(`{"sub":"00000000-0000-0000-0000-000000000001"}`),
		Settings: []pg.Setting{{Name: []byte("request.method"), Value: []byte("GET")}}}

	t.Run("role, claims and settings reach the statement", func(t *testing.T) {
		_, done, rs, err := exec(user, true, false, pg.Stmt{SQL: `select current_user || ' ' || auth.uid() || ' ' ||
			current_setting('request.method') || ' ' || current_setting('transaction_read_only')`, Prepare: true})
		defer done()
		if err != nil {
			t.Fatal(err)
		}
		if got := string(rs[0].Rows[0][0]); got != "authenticated 00000000-0000-0000-0000-000000000001 GET on" {
			t.Errorf("got %q", got)
		}
	})
	// A pool of one connection, so the checks below look at the very connection the request used.
	pinned := pinnedPool(t, db)
	onPinned := func(stmts ...pg.Stmt) ([]*pgconn.Result, error) {
		pc, err := pinned.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Release()
		return pg.ExecAsCaller(ctx, pc.Conn().PgConn(), user, true, false, stmts...)
	}
	t.Run("nothing leaks to the next user of the connection", func(t *testing.T) {
		if _, err := onPinned(pg.Stmt{SQL: `select current_setting('request.method')`}); err != nil {
			t.Fatal(err)
		}
		conn, err := pinned.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		var role, method, claims string
		if err := conn.QueryRow(ctx, `select current_user::text, coalesce(current_setting('request.method', true), ''),
			coalesce(current_setting('request.jwt.claims', true), '')`).Scan(&role, &method, &claims); err != nil {
			t.Fatal(err)
		}
		if role != pg.LoginRole || method != "" || claims != "" {
			t.Errorf("role %q, request.method %q, claims %q after the request", role, method, claims)
		}
	})
	t.Run("read-only refuses writes", func(t *testing.T) {
		_, done, _, err := exec(user, true, false, pg.Stmt{SQL: `insert into public.batch_probe values (1)`})
		defer done()
		if err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a failure undoes the statements before it", func(t *testing.T) {
		_, done, _, err := exec(user, false, false, pg.Stmt{SQL: `insert into public.batch_probe values (1)`}, pg.Stmt{SQL: `select 1/0`})
		defer done()
		if err == nil || count() != "0" {
			t.Errorf("err = %v, rows = %s", err, count())
		}
	})
	t.Run("explicit transaction waits for EndTx", func(t *testing.T) {
		conn, done, _, err := exec(user, false, true, pg.Stmt{SQL: `insert into public.batch_probe values (2)`})
		defer done()
		if err != nil {
			t.Fatal(err)
		}
		if err := pg.EndTx(ctx, conn, false); err != nil {
			t.Fatal(err)
		}
		if count() != "0" {
			t.Errorf("rolled back insert is visible")
		}
		conn2, done2, _, err := exec(user, false, true, pg.Stmt{SQL: `insert into public.batch_probe values (3)`})
		defer done2()
		if err != nil {
			t.Fatal(err)
		}
		if err := pg.EndTx(ctx, conn2, true); err != nil || count() != "1" {
			t.Errorf("commit: %v, rows = %s", err, count())
		}
	})
	t.Run("prepared statements are reused and survive errors", func(t *testing.T) {
		stmt := pg.Stmt{SQL: `select $1::int + 1 as reuse_probe`, Params: [][]byte{[]byte("41")}, Prepare: true}
		for range 3 {
			rs, err := onPinned(stmt)
			if err != nil || string(rs[0].Rows[0][0]) != "42" {
				t.Fatalf("%v %v", rs, err)
			}
			if _, err := onPinned(pg.Stmt{SQL: `select $1::int`, Params: [][]byte{[]byte("x")}, Prepare: true}); err == nil {
				t.Fatal("bad input accepted")
			}
		}
		conn, err := pinned.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		var n int
		if err := conn.QueryRow(ctx, `select count(*) from pg_prepared_statements where statement = $1`, stmt.SQL).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("the statement is prepared %d times on the connection after three requests, want once", n)
		}
	})
	t.Run("unknown role refused", func(t *testing.T) {
		_, done, _, err := exec(pg.Caller{Role: "postgres"}, true, false)
		defer done()
		if err == nil {
			t.Error("superuser role accepted")
		}
	})
}

// TestArrayLiteral: the text[] literal of a list (REST's in.() values) quotes every element
// and escapes quotes and backslashes only; multi-byte text passes whole, and invalid UTF-8
// becomes U+FFFD (PostgreSQL would refuse the raw bytes).
func TestArrayLiteral(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, `{}`},
		{[]string{""}, `{""}`},
		{[]string{"a", "b,c"}, `{"a","b,c"}`},
		{[]string{`say "hi"`, `C:\dir`}, `{"say \"hi\"","C:\\dir"}`},
		{[]string{"café ☕", "{NULL}"}, `{"café ☕","{NULL}"}`},
		{[]string{"bad \xff byte"}, "{\"bad \uFFFD byte\"}"},
	} {
		if got := pg.ArrayLiteral(tc.in); got != tc.want {
			t.Errorf("ArrayLiteral(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestPreparedStatementsRecover: a request's statements stay prepared on the connection; when
// the table under one changes shape, or someone deallocates them, the request that meets it
// fails with PostgreSQL's error and the next one prepares afresh and answers in the new shape.
func TestPreparedStatementsRecover(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	own := db.Owner(t)
	if _, err := own.Exec(ctx, `create table public.shape_probe (a int); insert into public.shape_probe values (1);
		grant select on public.shape_probe to authenticated`); err != nil {
		t.Fatal(err)
	}
	pinned := pinnedPool(t, db)
	user := pg.Caller{Role: pg.RoleAuthenticated, Claims: []byte(`{"sub":"00000000-0000-0000-0000-000000000001"}`)}
	probe := pg.Stmt{SQL: `select * from public.shape_probe`, Prepare: true}
	run := func() (string, error) {
		pc, err := pinned.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Release()
		rs, err := pg.ExecAsCaller(ctx, pc.Conn().PgConn(), user, true, false, probe,
			pg.Stmt{SQL: `select $1::int + 1`, Params: [][]byte{[]byte("41")}, Prepare: true})
		if err != nil {
			return "", err
		}
		var cols []string
		for _, f := range rs[0].FieldDescriptions {
			cols = append(cols, f.Name)
		}
		var vals []string
		for _, v := range rs[0].Rows[0] {
			vals = append(vals, string(v))
		}
		return strings.Join(cols, ",") + "=" + strings.Join(vals, ",") + " " + string(rs[1].Rows[0][0]), nil
	}
	for range 3 {
		if got, err := run(); err != nil || got != "a=1 42" {
			t.Fatalf("got %q, %v", got, err)
		}
	}
	if _, err := own.Exec(ctx, `alter table public.shape_probe add column b int not null default 2`); err != nil {
		t.Fatal(err)
	}
	_, err := run()
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "0A000" {
		t.Fatalf("the first request after the change: %v, want 0A000", err)
	}
	for range 2 {
		if got, err := run(); err != nil || got != "a,b=1,2 42" {
			t.Fatalf("after the change: got %q, %v", got, err)
		}
	}
	pc, err := pinned.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Exec(ctx, `deallocate all`); err != nil {
		t.Fatal(err)
	}
	pc.Release()
	_, err = run()
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "26000" {
		t.Fatalf("the first request after deallocate all: %v, want 26000", err)
	}
	for range 2 {
		if got, err := run(); err != nil || got != "a,b=1,2 42" {
			t.Fatalf("after deallocate all: got %q, %v", got, err)
		}
	}
}

// TestBatchedRequests: a connection's first request of a shape prepares its statements (a
// pipeline); the next ones bind them as a batch without asking PostgreSQL to describe them
// again. Both give the same results (values and columns, prepared and unnamed statements mixed),
// the batch is one transaction that a failure undoes, an ended session is still refused, and a
// row callback that stops a streamed answer closes the connection, after which the pool's next
// connection answers.
func TestBatchedRequests(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	own := db.Owner(t)
	if _, err := own.Exec(ctx, `create table public.batched_probe (n int);
		grant select, insert on public.batched_probe to authenticated`); err != nil {
		t.Fatal(err)
	}
	var uid, sid string
	if err := own.QueryRow(ctx, `insert into auth.users (email) values ('batched@example.test') returning id`).Scan(&uid); err != nil {
		t.Fatal(err)
	}
	if err := own.QueryRow(ctx, `insert into auth.sessions (user_id) values ($1) returning id`, uid).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	user := pg.VerifiedCaller([]byte(`{"sub":"`+uid+`","role":"authenticated","session_id":"`+sid+`"}`), uid, sid)
	pinned := pinnedPool(t, db)
	on := func(fn func(*pgconn.PgConn) error) error {
		pc, err := pinned.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Release()
		return fn(pc.Conn().PgConn())
	}
	count := func() string {
		var n string
		if err := own.QueryRow(ctx, `select count(*)::text from public.batched_probe`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	stmts := []pg.Stmt{
		{SQL: `select auth.uid()::text as who, $1::int * 2 as twice`, Params: [][]byte{[]byte("21")}, Prepare: true},
		{SQL: `select 'unnamed' as kind`},
		{SQL: `select n from public.batched_probe order by n`, Prepare: true},
	}
	for i := range 3 { // the first request prepares, the others are batched
		var got string
		if err := on(func(c *pgconn.PgConn) error {
			rs, err := pg.ExecAsCaller(ctx, c, user, true, false, stmts...)
			if err != nil {
				return err
			}
			for _, r := range rs {
				for _, f := range r.FieldDescriptions {
					got += f.Name + " "
				}
				for _, row := range r.Rows {
					for _, v := range row {
						got += string(v) + " "
					}
				}
				got += r.CommandTag.String() + "; "
			}
			return nil
		}); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if want := "who twice " + uid + " 42 SELECT 1; kind unnamed SELECT 1; SELECT 0; "; got != want {
			t.Fatalf("request %d: got %q, want %q", i, got, want)
		}
	}
	insert := pg.Stmt{SQL: `insert into public.batched_probe values ($1)`, Params: [][]byte{[]byte("7")}, Prepare: true}
	fail := pg.Stmt{SQL: `select 1 / $1::int`, Params: [][]byte{[]byte("0")}, Prepare: true}
	for i := range 3 {
		err := on(func(c *pgconn.PgConn) error {
			_, err := pg.ExecAsCaller(ctx, c, user, false, false, insert, fail)
			return err
		})
		if f, ok := pg.ErrorFields(err); !ok || f.Code != "22012" || count() != "0" {
			t.Fatalf("request %d: %v and %s rows, want division by zero and none", i, err, count())
		}
	}
	for i := range 2 {
		var rows []string
		stop := errors.New("enough")
		err := on(func(c *pgconn.PgConn) error {
			_, err := pg.StreamAsCaller(ctx, c, user, []pg.Stmt{{SQL: `select g::text from generate_series(1, 100000) g`, Prepare: true}},
				func(row [][]byte) error {
					rows = append(rows, string(row[0]))
					if len(rows) == 3 {
						return stop
					}
					return nil
				})
			return err
		})
		if err != stop || strings.Join(rows, ",") != "1,2,3" {
			t.Fatalf("stream %d: %v after %v", i, err, rows)
		}
	}
	if err := on(func(c *pgconn.PgConn) error {
		rs, err := pg.ExecAsCaller(ctx, c, user, true, false, stmts[0])
		if err == nil && string(rs[0].Rows[0][1]) != "42" {
			err = errors.New("wrong answer " + string(rs[0].Rows[0][1]))
		}
		return err
	}); err != nil {
		t.Fatalf("after a stopped stream: %v", err)
	}
	if _, err := own.Exec(ctx, `delete from auth.sessions where id = $1`, sid); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := on(func(c *pgconn.PgConn) error {
			_, err := pg.ExecAsCaller(ctx, c, user, true, false, stmts...)
			return err
		}); !errors.Is(err, pg.ErrSessionEnded) {
			t.Fatalf("request %d after sign-out: %v, want pg.ErrSessionEnded", i, err)
		}
	}
}

// pinnedPool is a pool of one connection on db, closed when t ends: successive requests on it
// use the very same connection.
func pinnedPool(t *testing.T, db *pgtest.DB) *pgxpool.Pool {
	t.Helper()
	pcfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns, pcfg.MinConns = 1, 1
	pinned, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pinned.Close)
	return pinned
}
