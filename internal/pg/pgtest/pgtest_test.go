package pgtest

import (
	"context"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

func TestNewIsMigratedAndNotSuperuser(t *testing.T) {
	t.Parallel()
	db := New(t)
	var super bool
	var user string
	if err := db.Pool.QueryRow(context.Background(),
		`select rolsuper, current_user from pg_roles where rolname = current_user`).Scan(&super, &user); err != nil {
		t.Fatal(err)
	}
	if super || user != "authenticator" {
		t.Fatalf("tests must run as the non-superuser login role; got %s (superuser=%v)", user, super)
	}
	var n int
	if err := db.Owner(t).QueryRow(context.Background(), `select count(*) from public.channels`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("migrations did not run: no channels")
	}
}

func TestDatabasesAreIsolated(t *testing.T) {
	t.Parallel()
	a, b := New(t), New(t)
	ctx := context.Background()
	if _, err := a.Owner(t).Exec(ctx, `delete from public.channels`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.Owner(t).QueryRow(ctx, `select count(*) from public.channels`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("a change in one test's database reached another's")
	}
}
