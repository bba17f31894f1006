package rest

import (
	"context"
	"testing"

	"masthead/internal/pg/pgtest"
	"masthead/internal/seed"
)

// newSeeded is a fixture on the demo data (`masthead seed`), optionally
// with generated publications per project for benchmarks.
func newSeeded(t testing.TB, publications int) *fixture {
	t.Helper()
	ctx := context.Background()
	db := pgtest.New(t)
	if _, err := seed.Run(ctx, db.OwnerURL, seed.Options{Publications: publications, MediaDir: t.TempDir()}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	f := &fixture{db: db, users: map[string]string{}, pubs: map[string]string{}}
	rows, err := db.Owner(t).Query(ctx, `select email, id::text from auth.users`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var email, id string
		if err := rows.Scan(&email, &id); err != nil {
			t.Fatal(err)
		}
		f.users[email] = id
	}
	f.serve(t, Config{})
	return f
}

// firstID returns the id of one publication the user can see in status.
func (f *fixture) firstID(t testing.TB, user, status string) string {
	t.Helper()
	r := f.do(t, call{user: user, path: "/publications?select=id&limit=1&order=created_at&status=eq." + status})
	rows := r.rows(t)
	if len(rows) != 1 {
		t.Fatalf("no %s publication for %s: %s", status, user, r.body)
	}
	return rows[0]["id"].(string)
}

// TestSeedReads runs the seed's example reads as demo users and checks
// that no embed ever shows another project's rows.
func TestSeedReads(t *testing.T) {
	t.Parallel()
	f := newSeeded(t, 0)
	editor := "editor@northwind.test"
	id := f.firstID(t, editor, "published")
	r := f.do(t, call{user: editor, path: "/publications?select=*,promos(*),publication_media(position,media(*))&id=eq." + id,
		header: map[string]string{"Accept": mediaObject}})
	if r.status != 200 {
		t.Fatalf("publication with embeds: %d %s", r.status, r.body)
	}
	p := r.object(t)
	if len(p["promos"].([]any)) == 0 || len(p["publication_media"].([]any)) == 0 {
		t.Errorf("expected promos and media on a published demo publication: %s", r.body)
	}
	for _, pm := range p["publication_media"].([]any) {
		m := pm.(map[string]any)["media"].(map[string]any)
		if m["project_id"] != p["project_id"] {
			t.Errorf("media of another project: %v", m)
		}
	}
	r = f.do(t, call{user: editor, path: "/publications?status=eq.reviewing&order=created_at.desc&select=id,title,status,scheduled_for"})
	if r.status != 200 || len(r.rows(t)) == 0 {
		t.Fatalf("queue: %d %s", r.status, r.body)
	}
	// multi@ is in northwind and acme-travel: embeds from the shared
	// channels table carry promos of both, never of lumen-health.
	r = f.do(t, call{user: "multi@masthead.test", path: "/channels?select=slug,promos(project_id)"})
	projects := map[string]bool{}
	for _, ch := range r.rows(t) {
		for _, pr := range ch["promos"].([]any) {
			projects[pr.(map[string]any)["project_id"].(string)] = true
		}
	}
	if len(projects) != 2 {
		t.Errorf("multi@ sees promos of %d projects, want 2", len(projects))
	}
	r = f.do(t, call{user: "editor@lumen.test", path: "/projects?select=slug,publications(id)"})
	if rows := r.rows(t); len(rows) != 1 || rows[0]["slug"] != "lumen-health" {
		t.Errorf("lumen editor projects: %s", r.body)
	}
}
