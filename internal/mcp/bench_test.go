package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/client"
	"masthead/internal/seed"
	"masthead/internal/server/servertest"
)

// BenchmarkFloorMCPRead compares read tool calls over MCP with the REST request behind each, made
// with the same token through internal/client, on the demo data (plus bulk publications, so
// counts and filters have rows to work through): list_projects and search_publications against
// the identical query, get_publication against the dashboard's read of the same publication
// (the same embeds less the project's slug). The difference is what MCP adds: the /mcp hop,
// its token check, JSON-RPC and shaping the result. The two are timed alternately in each
// iteration and compared by their medians, so load from other processes on a shared machine
// hits all alike. sdk/rest is the ratio with the go-sdk client; post/rest with a plain HTTP
// POST of the JSON-RPC message, which leaves out the client library's own cost. Figures follow
// the convention of internal/benchreport (`make bench-report`): ours_/floor_/ratio_ of
// post-µs and sdk-µs, the floor being the REST request's median.
//
// sdk-bound-µs says how much of the sdk ratio is the client library's: ours is the floor plus
// the median of each iteration's sdk time less its POST time (the same tool call on the same
// server, through the go-sdk client and as a plain POST), so its ratio is what the sdk ratio
// would be if our /mcp cost nothing beyond the REST request it makes.
//
//	go test ./internal/mcp -run '^$' -bench FloorMCPRead
func BenchmarkFloorMCPRead(b *testing.B) {
	ctx := context.Background()
	f := newReadFixture(b)
	env, api, token, pub := f.env, f.api, f.sess.AccessToken, f.pub
	mcpSess := (&stack{url: env.URL, api: api, env: env}).connectWith(b, token)

	for _, tc := range []struct {
		tool string
		args map[string]any
		rest func() error
	}{
		{"list_projects", nil, f.listProjectsREST},
		{"search_publications", map[string]any{"project": "northwind", "status": []string{"draft", "reviewing"}}, func() error {
			var out []client.Publication
			_, err := api.Get(ctx, token, client.From("publications").
				Select("id,project_id,title,slug,summary,status,version,scheduled_for,published_at,created_at,updated_at,"+
					"author:profiles!author_id(display_name),project:projects!inner(slug,name),collection:collections(id,slug,name)").
				Eq("project.slug", "northwind").
				In("status", "draft", "reviewing").
				Order("updated_at.desc.nullslast,id.desc").
				Range(0, 20).
				Count(), &out)
			return err
		}},
		{"get_publication", map[string]any{"publication_id": pub}, func() error {
			_, err := api.Publication(ctx, token, f.project.ID, pub)
			return err
		}},
	} {
		params := &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args}
		raw := rawCall(b, env.URL, token, tc.tool, tc.args)
		b.Run(tc.tool, func(b *testing.B) {
			var rest, sdkCall, post, client []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if err := tc.rest(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if res, err := mcpSess.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatalf("%v %v", err, res)
				}
				t2 := time.Now()
				raw()
				p := time.Since(t2)
				rest, sdkCall, post = append(rest, t1.Sub(t0)), append(sdkCall, t2.Sub(t1)), append(post, p)
				client = append(client, t2.Sub(t1)-p)
			}
			r, m, p := median(rest), median(sdkCall), median(post)
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
			b.ReportMetric(us(p), "ours_post-µs")
			b.ReportMetric(us(r), "floor_post-µs")
			b.ReportMetric(float64(p)/float64(r), "ratio_post-µs")
			b.ReportMetric(us(m), "ours_sdk-µs")
			b.ReportMetric(us(r), "floor_sdk-µs")
			b.ReportMetric(float64(m)/float64(r), "ratio_sdk-µs")
			bound := r + median(client)
			b.ReportMetric(us(bound), "ours_sdk-bound-µs")
			b.ReportMetric(us(r), "floor_sdk-bound-µs")
			b.ReportMetric(float64(bound)/float64(r), "ratio_sdk-bound-µs")
		})
	}
}

// readFixture is what the read benchmarks work on: the service with the demo data plus 300 bulk
// publications, signed in as northwind's editor, with their one project and a publication in
// review.
type readFixture struct {
	env     *servertest.Env
	api     *client.Client
	sess    *client.Session
	project client.Project
	pub     string
}

// listProjectsREST makes the REST request behind list_projects, as the signed-in editor.
func (f *readFixture) listProjectsREST() error {
	var out []client.Project
	_, err := f.api.Get(context.Background(), f.sess.AccessToken, client.From("projects").
		Select("id,slug,name,timezone,default_channels,collections(id,slug,name,kind),project_members(user_id,role)").
		Eq("project_members.user_id", f.sess.User.ID).
		Param("collections.order", "name.asc").
		Order("name.asc"), &out)
	return err
}

func newReadFixture(b *testing.B) *readFixture {
	ctx := context.Background()
	env := servertest.New(b, nil)
	if _, err := seed.Run(ctx, env.DB.OwnerURL, seed.Options{Publications: 300, MediaDir: b.TempDir()}); err != nil {
		b.Fatal(err)
	}
	api, err := client.New(env.URL, env.Key, nil)
	if err != nil {
		b.Fatal(err)
	}
	sess, err := api.SignInWithPassword(ctx, "editor@northwind.test", seed.DefaultPassword)
	if err != nil {
		b.Fatal(err)
	}
	projects, err := api.Projects(ctx, sess.AccessToken)
	if err != nil || len(projects) != 1 {
		b.Fatalf("projects: %v %v", projects, err)
	}
	queue, _, err := api.Queue(ctx, sess.AccessToken, client.QueueFilter{ProjectID: projects[0].ID, Statuses: []string{"reviewing"}, Limit: 1})
	if err != nil || len(queue) != 1 {
		b.Fatalf("queue: %v %v", queue, err)
	}
	return &readFixture{env: env, api: api, sess: sess, project: projects[0], pub: queue[0].ID}
}

// rawCall returns a function that POSTs one tools/call to /mcp the way any client does once
// connected (no go-sdk client in the way), checking the answer is a successful result.
func rawCall(b *testing.B, base, token, tool string, args map[string]any) func() {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || bytes.Contains(out, []byte(`"isError":true`)) {
			b.Fatalf("raw %s: %d %s %v", tool, res.StatusCode, out, err)
		}
	}
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
