package pg_test

import (
	"context"
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
		Settings: map[string]string{"request.method": "GET", "request.path": `/a,"b"\c`}}
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
