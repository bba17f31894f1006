package mcp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/client"
	"masthead/internal/pg/pgtest"
	"masthead/internal/server/servertest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const password = "correct horse battery"

// stack is the real service from internal/server (identity, /rest/v1, /mcp, …) on a loopback
// port over a fresh database, with two projects of fixtures.
type stack struct {
	url   string
	api   *client.Client
	env   *servertest.Env
	users map[string]string // name → id
	projA string            // northwind: lead, editor, reviewer, viewer
	projB string            // acme: editorB, leadB
	pubs  map[string]string // title → id
}

func newStack(t testing.TB) *stack {
	t.Helper()
	env := servertest.New(t, nil)
	api, err := client.New(env.URL, env.Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{url: env.URL, api: api, env: env, users: map[string]string{}, pubs: map[string]string{}}
	s.fixtures(t)
	return s
}

// fixtures creates the users and projects as the cluster owner, drafts as their authors, and
// then moves publications through the workflow over REST as the people allowed to.
func (s *stack) fixtures(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	own := s.env.DB.Owner(t)
	for _, name := range []string{"lead", "editor", "reviewer", "viewer", "editorB", "leadB"} {
		s.users[name] = s.env.CreateUser(t, name+"@mcp.test", password).ID
	}
	if err := own.QueryRow(ctx, `insert into projects (slug, name, default_channels) values ('northwind', 'Northwind Daily', '{x,bluesky}') returning id`).Scan(&s.projA); err != nil {
		t.Fatal(err)
	}
	if err := own.QueryRow(ctx, `insert into projects (slug, name) values ('acme', 'Acme Travel') returning id`).Scan(&s.projB); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ user, proj, role string }{
		{"lead", s.projA, "lead"}, {"editor", s.projA, "editor"}, {"reviewer", s.projA, "reviewer"},
		{"viewer", s.projA, "viewer"}, {"editorB", s.projB, "editor"}, {"leadB", s.projB, "lead"},
	} {
		if _, err := own.Exec(ctx, `insert into project_members (project_id, user_id, role) values ($1, $2, $3)`, m.proj, s.users[m.user], m.role); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := own.Exec(ctx, `insert into collections (project_id, slug, name) values ($1, 'news', 'News'), ($2, 'deals', 'Deals')`, s.projA, s.projB); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ title, proj, author string }{
		{"Harbour reopens", s.projA, "editor"}, {"Tide tables", s.projA, "editor"},
		{"Ferry strike ends", s.projA, "editor"}, {"Lighthouse gala", s.projA, "editor"},
		{"Secret fares", s.projB, "editorB"}, {"Island hopping", s.projB, "editorB"},
	} {
		var id string
		if err := own.QueryRow(ctx, `insert into publications (project_id, collection_id, title, slug, summary, body, author_id)
			values ($1, (select id from collections where project_id = $1), $2, lower(replace($2, ' ', '-')), 'About '||$2, '# '||$2, $3)
			returning id`, p.proj, p.title, s.users[p.author]).Scan(&id); err != nil {
			t.Fatal(err)
		}
		s.pubs[p.title] = id
	}
	// Lighthouse gala goes live, so it has what readiness asks for: a promo per default channel.
	if _, err := own.Exec(ctx, `insert into promos (project_id, publication_id, channel, body)
		select $1, $2, ch, 'Lighthouse gala tonight' from unnest('{x,bluesky}'::text[]) ch`, s.projA, s.pubs["Lighthouse gala"]); err != nil {
		t.Fatal(err)
	}
	// Tide tables, Ferry strike ends, Lighthouse gala and Island hopping wait for review; Ferry
	// strike ends is approved and Lighthouse gala scheduled.
	for _, title := range []string{"Tide tables", "Ferry strike ends", "Lighthouse gala"} {
		s.move(t, "editor", client.RPCSubmit, title, client.TransitionArgs{Note: "ready"})
	}
	s.move(t, "editorB", client.RPCSubmit, "Island hopping", client.TransitionArgs{Note: "ready"})
	s.move(t, "reviewer", client.RPCApprove, "Ferry strike ends", client.TransitionArgs{Note: "good"})
	s.move(t, "reviewer", client.RPCApprove, "Lighthouse gala", client.TransitionArgs{Note: "good"})
	s.move(t, "lead", client.RPCSchedule, "Lighthouse gala", client.TransitionArgs{ScheduledFor: time.Now().Add(48 * time.Hour)})
}

func (s *stack) move(t testing.TB, user, rpc, title string, a client.TransitionArgs) {
	t.Helper()
	a.PublicationID = s.pubs[title]
	if _, err := s.api.Transition(context.Background(), s.token(t, user), rpc, a); err != nil {
		t.Fatalf("fixture %s %s by %s: %v", rpc, title, user, err)
	}
}

// token signs user in with the password grant, as the dashboard does.
func (s *stack) token(t testing.TB, user string) string {
	t.Helper()
	sess, err := s.api.SignInWithPassword(context.Background(), user+"@mcp.test", password)
	if err != nil {
		t.Fatalf("sign in %s: %v", user, err)
	}
	return sess.AccessToken
}

// connect opens an MCP session as user with the go-sdk's own client; the bearer token rides
// on every HTTP request, as an OAuth-configured client would send it.
func (s *stack) connect(t testing.TB, user string) *sdk.ClientSession {
	t.Helper()
	return s.connectWith(t, s.token(t, user))
}

func (s *stack) connectWith(t testing.TB, token string) *sdk.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	c := sdk.NewClient(&sdk.Implementation{Name: "mcp-test", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
