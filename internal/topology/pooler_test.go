package topology_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/client"
	"masthead/internal/config"
	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
	"masthead/internal/pgrun"
	"masthead/internal/testwait"
)

// TestThroughPgBouncer runs every surface through Debian's PgBouncer in pool_mode=transaction
// with three server connections, so consecutive transactions of one service connection land
// on different server connections, as they do behind Supavisor or RDS Proxy. It is the
// representative subset named in the README: sign-in, refresh and sign-out (auth); reads with
// embeds, counts, writes through the workflow's RPCs and a refused stale write (REST); an
// authenticated and a signed download (storage); MCP tool calls through the official SDK
// client; many requests at once; a schema change picked up by polling; and the scheduler
// publishing a due item.
func TestThroughPgBouncer(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	media := demo(t, db)
	bouncer := pgtest.PgBouncer(t, pgrun.BouncerOptions{PoolSize: 3})
	env, api := service(t, bouncer.URL(pg.LoginRole, db.Name), media, func(c *config.Config) {
		c.DatabasePooler = "transaction"
		c.SchemaPollInterval = 200 * time.Millisecond
		c.SchedulerInterval = 200 * time.Millisecond
	})
	ctx := context.Background()
	own := db.Owner(t)
	serveLoops(t, env)

	editor := signIn(t, api, "editor@northwind.test")
	lead := signIn(t, api, "lead@northwind.test")

	t.Run("auth", func(t *testing.T) {
		s := signIn(t, api, "viewer@northwind.test")
		next, err := api.Refresh(ctx, s.RefreshToken)
		if err != nil || next.AccessToken == "" {
			t.Fatalf("refresh: %v", err)
		}
		if status, body := call(t, env, next.AccessToken, http.MethodGet, "/auth/v1/user", "", nil); status != http.StatusOK {
			t.Fatalf("user: %d %s", status, body)
		}
		if err := api.Logout(ctx, next.AccessToken, client.LogoutLocal); err != nil {
			t.Fatal(err)
		}
		if status, body := call(t, env, next.AccessToken, http.MethodGet, "/rest/v1/projects?select=slug", "", nil); status != http.StatusUnauthorized {
			t.Fatalf("a signed-out session's token read: %d %s", status, body)
		}
	})

	var projectID string
	t.Run("rest", func(t *testing.T) {
		status, body := call(t, env, editor.AccessToken, http.MethodGet,
			"/rest/v1/publications?select=id,title,promos(channel,body),publication_media(position,media(storage_path))&order=created_at.desc&limit=5",
			"", map[string]string{"Prefer": "count=exact"})
		var rows []map[string]any
		mustJSON(t, body, &rows)
		if status != http.StatusPartialContent || len(rows) != 5 {
			t.Fatalf("read with embeds and an exact count: %d %s", status, body)
		}
		projects, err := api.Projects(ctx, editor.AccessToken)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range projects {
			if p.Slug == "northwind" {
				projectID = p.ID
			}
		}
		d, err := api.CreateDraft(ctx, editor.AccessToken, projectID, client.Draft{Title: "Through the pooler", Summary: "s", Body: "b"})
		if err != nil {
			t.Fatalf("create_draft: %v", err)
		}
		status, body = call(t, env, editor.AccessToken, http.MethodPost, "/rest/v1/rpc/update_draft",
			fmt.Sprintf(`{"publication_id":%q,"expected_version":%d,"title":"Renamed through the pooler"}`, d.ID, d.Version), nil)
		if status != http.StatusOK {
			t.Fatalf("update_draft: %d %s", status, body)
		}
		status, body = call(t, env, editor.AccessToken, http.MethodPost, "/rest/v1/rpc/update_draft",
			fmt.Sprintf(`{"publication_id":%q,"expected_version":%d,"title":"A stale edit"}`, d.ID, d.Version), nil)
		if status != http.StatusConflict || !strings.Contains(body, "PT409") {
			t.Fatalf("stale update_draft: %d %s", status, body)
		}
		var title string
		if err := own.QueryRow(ctx, `select title from publications where id = $1`, d.ID).Scan(&title); err != nil || title != "Renamed through the pooler" {
			t.Fatalf("stored title %q, %v", title, err)
		}
	})

	t.Run("storage", func(t *testing.T) {
		var path string
		if err := own.QueryRow(ctx, `select m.storage_path from media m join projects p on p.id = m.project_id
			where p.slug = 'northwind' order by m.storage_path limit 1`).Scan(&path); err != nil {
			t.Fatal(err)
		}
		if status, body := call(t, env, editor.AccessToken, http.MethodGet, "/storage/v1/object/authenticated/media/"+path, "", nil); status != http.StatusOK || len(body) < 100 {
			t.Fatalf("download: %d, %d bytes", status, len(body))
		}
		status, body := call(t, env, editor.AccessToken, http.MethodPost, "/storage/v1/object/sign/media/"+path, `{"expiresIn":60}`, nil)
		var signed struct{ SignedURL string }
		mustJSON(t, body, &signed)
		if status != http.StatusOK || signed.SignedURL == "" {
			t.Fatalf("sign: %d %s", status, body)
		}
		res, err := http.Get(env.URL + "/storage/v1" + signed.SignedURL)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("signed download: %d", res.StatusCode)
		}
	})

	t.Run("mcp", func(t *testing.T) {
		hc := &http.Client{Transport: bearer{token: editor.AccessToken}}
		c := sdk.NewClient(&sdk.Implementation{Name: "topology-test", Version: "1"}, nil)
		sess, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: env.URL + "/mcp", HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer sess.Close()
		for _, tool := range []struct {
			name string
			args map[string]any
		}{{"list_projects", map[string]any{}}, {"search_publications", map[string]any{"project": "northwind", "text": "harbour"}}} {
			res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: tool.name, Arguments: tool.args})
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %+v", tool.name, err, res)
			}
		}
	})

	t.Run("many at once", func(t *testing.T) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failed []string
		for g := range 16 {
			wg.Go(func() {
				token := editor.AccessToken
				if g%2 == 1 {
					token = lead.AccessToken
				}
				for i := range 15 {
					path := fmt.Sprintf("/rest/v1/publications?select=id,title&status=eq.reviewing&order=created_at.desc&limit=20&offset=%d", i)
					if status, body := call(t, env, token, http.MethodGet, path, "", nil); status != http.StatusOK {
						mu.Lock()
						failed = append(failed, fmt.Sprintf("%d %s", status, body))
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		if len(failed) > 0 {
			t.Fatalf("%d of 240 requests failed, first: %s", len(failed), failed[0])
		}
	})

	t.Run("schema change by polling", func(t *testing.T) {
		if _, err := own.Exec(ctx, `create view public.pooler_probe with (security_invoker = true) as select slug from public.projects;
			grant select on public.pooler_probe to authenticated`); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, 15*time.Second, "the new view served", func() (bool, string) {
			status, body := call(t, env, editor.AccessToken, http.MethodGet, "/rest/v1/pooler_probe?select=slug", "", nil)
			return status == http.StatusOK && strings.Contains(body, "northwind"), fmt.Sprintf("%d %s", status, body)
		})
	})

	t.Run("scheduler", func(t *testing.T) {
		var id string
		if err := own.QueryRow(ctx, `select p.id from publications p join projects j on j.id = p.project_id
			where j.slug = 'northwind' and p.status = 'approved' and app.is_ready(p.id) limit 1`).Scan(&id); err != nil {
			t.Fatalf("an approved, ready item: %v", err)
		}
		due := time.Now().Add(500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
		if status, body := call(t, env, lead.AccessToken, http.MethodPost, "/rest/v1/rpc/schedule",
			fmt.Sprintf(`{"publication_id":%q,"scheduled_for":%q}`, id, due), nil); status != http.StatusOK {
			t.Fatalf("schedule: %d %s", status, body)
		}
		testwait.Until(t, 20*time.Second, "the scheduler publishes it", func() (bool, string) {
			var status string
			if err := own.QueryRow(ctx, `select status from publications where id = $1`, id).Scan(&status); err != nil {
				return false, err.Error()
			}
			return status == "published", status
		})
	})
}

// bearer adds a bearer token to every request, as an OAuth-configured MCP client does.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestListenDirectBehindPgBouncer: behind a transaction-mode pooler, with DATABASE_DIRECT_URL
// set, the schema cache follows NOTIFY masthead on a direct connection of its own: a new view
// is served as soon as the reload is announced, with polling set far beyond the test.
func TestListenDirectBehindPgBouncer(t *testing.T) {
	// Not in parallel: its seed and writes would load the cluster on which TestReadReplica needs
	// a replica's lag under 500 ms.
	db := pgtest.New(t)
	media := demo(t, db)
	bouncer := pgtest.PgBouncer(t, pgrun.BouncerOptions{PoolSize: 3})
	env, api := service(t, bouncer.URL(pg.LoginRole, db.Name), media, func(c *config.Config) {
		c.DatabasePooler = "transaction"
		c.DatabaseDirectURL = db.URL
		c.SchemaPollInterval = time.Hour
	})
	ctx := context.Background()
	own := db.Owner(t)
	serveLoops(t, env)
	editor := signIn(t, api, "editor@northwind.test")
	// The listener is subscribed once its connection has said LISTEN.
	testwait.Until(t, 15*time.Second, "the schema listener on a direct connection", func() (bool, string) {
		var n int
		err := own.QueryRow(ctx, `select count(*) from pg_stat_activity
			where datname = current_database() and usename = $1 and query ilike 'listen %'`, pg.LoginRole).Scan(&n)
		return err == nil && n == 1, fmt.Sprint(n, " ", err)
	})
	if _, err := own.Exec(ctx, `create view public.listen_probe with (security_invoker = true) as select slug from public.projects;
		grant select on public.listen_probe to authenticated;
		notify masthead, 'reload schema'`); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 15*time.Second, "the new view served", func() (bool, string) {
		status, body := call(t, env, editor.AccessToken, http.MethodGet, "/rest/v1/listen_probe?select=slug", "", nil)
		return status == http.StatusOK && strings.Contains(body, "northwind"), fmt.Sprintf("%d %s", status, body)
	})
}
