package topology_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"masthead/internal/client"
	"masthead/internal/config"
	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
)

// TestReadReplica runs the service with a real streaming replica of its database: reads are
// served by the replica (the database that answers says which it is: pg_is_in_recovery), writes
// and POSTed RPCs by the primary, a client that asks for the primary after its own write gets
// it, and a replica further behind than MASTHEAD_READ_MAX_LAG is passed over until it catches up.
func TestReadReplica(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	media := demo(t, db)
	ctx := context.Background()
	own := db.Owner(t)
	// Which server answered: a function every member may call, on both servers by replication.
	if _, err := own.Exec(ctx, `create function public.served_by() returns text language sql stable
		as $$ select case when pg_is_in_recovery() then 'replica' else 'primary' end $$;
		grant execute on function public.served_by() to authenticated`); err != nil {
		t.Fatal(err)
	}
	replica := pgtest.Replica(t)
	env, api := service(t, db.URL, media, func(c *config.Config) {
		c.DatabaseReadURL = replica.URL(pg.LoginRole, db.Name)
		c.ReadMaxLag = 500 * time.Millisecond
	})
	serveLoops(t, env)
	editor := signIn(t, api, "editor@northwind.test")
	servedBy := func(method string, header map[string]string) string {
		status, body := call(t, env, editor.AccessToken, method, "/rest/v1/rpc/served_by", map[bool]string{true: "{}"}[method == http.MethodPost], header)
		if status != http.StatusOK {
			t.Fatalf("%s served_by: %d %s", method, status, body)
		}
		return strings.Trim(body, `"`)
	}
	waitFor(t, 20*time.Second, "reads served by the replica", func() (bool, string) {
		got := servedBy(http.MethodGet, nil)
		return got == "replica", got
	})
	// Every read of a page goes to the replica while it keeps up; calls that may write, and
	// reads that ask for the primary, do not.
	var replicaReads int
	for range 50 {
		if servedBy(http.MethodGet, nil) == "replica" {
			replicaReads++
		}
	}
	t.Logf("%d of 50 reads served by the replica", replicaReads)
	if replicaReads < 45 {
		t.Errorf("only %d of 50 reads went to the replica", replicaReads)
	}
	if got := servedBy(http.MethodPost, nil); got != "primary" {
		t.Errorf("POST rpc served by %s", got)
	}
	if got := servedBy(http.MethodGet, map[string]string{client.ReadHeader: client.ReadPrimary}); got != "primary" {
		t.Errorf("a read asking for the primary was served by %s", got)
	}

	// The replica stops replaying: a write is then on the primary only.
	rep, err := pgxConnect(ctx, replica.URL("postgres", db.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close(ctx)
	if _, err := rep.Exec(ctx, `select pg_wal_replay_pause()`); err != nil {
		t.Fatal(err)
	}
	projects, err := api.Projects(ctx, editor.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	d, err := api.CreateDraft(ctx, editor.AccessToken, projects[0].ID, client.Draft{Title: "Written while the replica waits", Summary: "s", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	path := "/rest/v1/publications?select=title&id=eq." + d.ID
	// Asking for the primary, the writer sees their write at once.
	if status, body := call(t, env, editor.AccessToken, http.MethodGet, path, "", map[string]string{client.ReadHeader: client.ReadPrimary}); status != http.StatusOK || !strings.Contains(body, "Written while") {
		t.Fatalf("read-your-writes from the primary: %d %s", status, body)
	}
	// Everyone else sees it too once the replica is past the allowed lag and passed over.
	waitFor(t, 20*time.Second, "the lagging replica passed over", func() (bool, string) {
		status, body := call(t, env, editor.AccessToken, http.MethodGet, path, "", nil)
		return status == http.StatusOK && strings.Contains(body, "Written while") && servedBy(http.MethodGet, nil) == "primary",
			fmt.Sprintf("%d %s, lags %v", status, body, env.Server.ReplicaLags())
	})
	// Replaying again, it catches up and serves reads again.
	if _, err := rep.Exec(ctx, `select pg_wal_replay_resume()`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the replica serving again", func() (bool, string) {
		got := servedBy(http.MethodGet, nil)
		return got == "replica", got
	})
	if status, body := call(t, env, editor.AccessToken, http.MethodGet, path, "", nil); status != http.StatusOK || !strings.Contains(body, "Written while") {
		t.Fatalf("the replica after catching up: %d %s", status, body)
	}

	// Storage's row lookup reads from the replica too: a download works while it serves.
	var stored string
	if err := own.QueryRow(ctx, `select m.storage_path from media m join projects p on p.id = m.project_id
		where p.slug = 'northwind' order by 1 limit 1`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if status, _ := call(t, env, editor.AccessToken, http.MethodGet, "/storage/v1/object/authenticated/media/"+stored, "", nil); status != http.StatusOK {
		t.Fatalf("download with the replica serving: %d", status)
	}
}
