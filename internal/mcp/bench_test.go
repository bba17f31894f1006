package mcp_test

import (
	"context"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/client"
)

// BenchmarkReadTool compares read tool calls over MCP with the REST request behind them, made
// with the same token through internal/client: list_projects against the identical query, and
// get_publication against the dashboard's read of the same publication (the same embeds less
// the project's slug). The difference is what MCP adds: the /mcp hop, its token check,
// JSON-RPC and shaping the result. The two are timed alternately in each iteration and
// compared by their medians, so load from other processes hits both alike; mcp/rest is the
// ratio.
func BenchmarkReadTool(b *testing.B) {
	s := newStack(b)
	sess := s.connect(b, "editor")
	token := s.token(b, "editor")
	ctx := context.Background()
	for _, tc := range []struct {
		tool string
		args map[string]any
		rest func() error
	}{
		{"list_projects", nil, func() error {
			var out []client.Project
			_, err := s.api.Get(ctx, token, client.From("projects").
				Select("id,slug,name,timezone,default_channels,collections(id,slug,name,kind),project_members(user_id,role)").
				Eq("project_members.user_id", s.users["editor"]).
				Param("collections.order", "name.asc").
				Order("name.asc"), &out)
			return err
		}},
		{"get_publication", map[string]any{"publication_id": s.pubs["Tide tables"]}, func() error {
			_, err := s.api.Publication(ctx, token, s.projA, s.pubs["Tide tables"])
			return err
		}},
	} {
		params := &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args}
		b.Run(tc.tool, func(b *testing.B) {
			var rest, mcp []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if err := tc.rest(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if res, err := sess.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatalf("%v %v", err, res)
				}
				rest, mcp = append(rest, t1.Sub(t0)), append(mcp, time.Since(t1))
			}
			r, m := median(rest), median(mcp)
			b.ReportMetric(float64(r.Microseconds()), "rest-µs")
			b.ReportMetric(float64(m.Microseconds()), "mcp-µs")
			b.ReportMetric(float64(m)/float64(r), "mcp/rest")
		})
	}
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
