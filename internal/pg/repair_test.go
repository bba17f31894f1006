package pg_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
)

// migratedTo makes a database of its own for t, migrated up to and including version, and
// returns its URL and a connection to it as the cluster's superuser.
func migratedTo(t *testing.T, version int32) (string, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.New(t)
	admin := db.Owner(t)
	name := fmt.Sprintf("repair_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, `create database `+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), db.OwnerURL)
		if err == nil {
			_, _ = c.Exec(context.Background(), `drop database if exists `+pgx.Identifier{name}.Sanitize()+` with (force)`)
			_ = c.Close(context.Background())
		}
	})
	u, err := url.Parse(db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	if err := pg.MigrateTo(ctx, u.String(), version); err != nil {
		t.Fatal(err)
	}
	own, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Close(context.Background()) })
	return u.String(), own
}

// TestUnreadableDatesRepaired: a publication scheduled at infinity or past year 9999 before
// migration 008 comes out of it approved, without a date, one version on, and the audit says
// why; a sane date is left alone.
func TestUnreadableDatesRepaired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL, own := migratedTo(t, 7)
	// What an attack left behind, written with the triggers off as no caller could.
	if _, err := own.Exec(ctx, `
		set session_replication_role = replica;
		insert into auth.users (id, email) values ('00000000-0000-4000-8000-0000000000aa', 'a@example.test');
		insert into public.profiles (id, email, display_name) values ('00000000-0000-4000-8000-0000000000aa', 'a@example.test', 'a');
		insert into public.projects (id, slug, name) values ('00000000-0000-4000-8000-0000000000bb', 'proj', 'P');
		insert into public.publications (project_id, title, slug, status, scheduled_for, author_id, version) values
		  ('00000000-0000-4000-8000-0000000000bb', 'Forever', 'forever', 'scheduled', 'infinity', '00000000-0000-4000-8000-0000000000aa', 4),
		  ('00000000-0000-4000-8000-0000000000bb', 'Far', 'far', 'scheduled', '12345-01-01', '00000000-0000-4000-8000-0000000000aa', 4),
		  ('00000000-0000-4000-8000-0000000000bb', 'Soon', 'soon', 'scheduled', now() + interval '1 day', '00000000-0000-4000-8000-0000000000aa', 4);
		set session_replication_role = origin;`); err != nil {
		t.Fatal(err)
	}
	if err := pg.Migrate(ctx, dbURL); err != nil {
		t.Fatalf("migrate over unreadable dates: %v", err)
	}
	rows, err := own.Query(ctx, `
		select p.slug, p.status, p.scheduled_for is null, p.version,
		       (select count(*) from status_events e where e.publication_id = p.id and e.via = 'direct'
		          and e.intent = 'unschedule' and e.note like '%migration 008%')
		from publications p order by p.slug`)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		slug, status string
		noDate       bool
		version      int
		events       int
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		return x, r.Scan(&x.slug, &x.status, &x.noDate, &x.version, &x.events)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []row{{"far", "approved", true, 5, 1}, {"forever", "approved", true, 5, 1}, {"soon", "scheduled", false, 4, 0}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after 008: %v, want %v", got, want)
	}
}

// TestLongDefaultChannelsCut: a project whose default channels repeat past 50 entries before
// migration 030 keeps each channel once, in the order it first came; a shorter list is left
// alone; a media path over 1024 bytes written before it stays as it was.
func TestLongDefaultChannelsCut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL, own := migratedTo(t, 29)
	ownerDoes(t, own, `insert into public.projects (slug, name, default_channels) values
		('long', 'Long', array['bluesky'] || array_fill('x'::text, array[60]) || array['linkedin', 'bluesky']),
		('short', 'Short', '{x,x,bluesky}')`)
	ownerDoes(t, own, `insert into public.media (project_id, storage_path, mime_type)
		select id, 'long/' || repeat('é', 900), 'image/png' from public.projects where slug = 'long'`)
	if err := pg.Migrate(ctx, dbURL); err != nil {
		t.Fatalf("migrate over long default channels: %v", err)
	}
	rows, err := own.Query(ctx, `select slug || ' ' || array_to_string(default_channels, ',') from public.projects order by slug`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"long bluesky,x,linkedin", "short x,x,bluesky"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after 030: %q, want %q", got, want)
	}
	var path string
	mustScan(t, own.QueryRow(ctx, `select storage_path from public.media`), &path)
	if path != "long/"+strings.Repeat("é", 900) {
		t.Errorf("after 030 the media path is %d bytes, want it kept", len(path))
	}
}
