package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/client"
	"masthead/internal/mcp"
)

// call runs a tool and decodes its structured result into out (may be nil). It fails the test
// on a protocol error; a tool error is returned for the test to judge.
func call(t *testing.T, sess *sdk.ClientSession, name string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decode %s: %v", name, b, err)
		}
	}
	return res
}

// text is a result's text content, where tool errors put their message.
func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func mustOK(t *testing.T, name string, res *sdk.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: tool error: %s", name, text(res))
	}
}

// TestJourney connects with the go-sdk client as an editor, a reviewer and a lead of one
// project and uses every kind of tool: discovery, reads, workflow moves, promos.
func TestJourney(t *testing.T) {
	s := newStack(t)
	editor := s.connect(t, "editor")

	init := editor.InitializeResult()
	if init.ServerInfo.Name != "masthead" || init.Capabilities.Tools == nil || init.Instructions == "" {
		t.Fatalf("initialize: %+v", init)
	}
	tools, err := editor.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("%s: no description or schema", tool.Name)
		}
	}
	want := []string{"add_review", "approve", "archive", "compare_rounds", "create_draft", "get_changes_since_last_review", "get_publication",
		"list_projects", "list_schedule", "publish_now", "readiness", "reopen", "request_changes", "restore", "review_queue",
		"schedule", "search_publications", "submit_for_review", "unschedule", "update_draft", "upsert_promo", "withdraw"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v\nwant %v", names, want)
	}

	var projects mcp.ProjectsOut
	mustOK(t, "list_projects", call(t, editor, "list_projects", nil, &projects))
	if len(projects.Projects) != 1 || projects.Projects[0].Slug != "northwind" || projects.Projects[0].Role != "editor" ||
		len(projects.Projects[0].Collections) != 1 || projects.Projects[0].QueueURL != s.url+"/p/northwind/queue" {
		t.Fatalf("list_projects = %+v", projects)
	}

	var page mcp.PageOut
	mustOK(t, "search_publications", call(t, editor, "search_publications",
		map[string]any{"project": "northwind", "status": []string{"reviewing"}}, &page))
	if page.Total != 1 || page.Publications[0].Title != "Tide tables" {
		t.Fatalf("search reviewing = %+v", page)
	}
	// An offset past the last match (a client paging on after the list shrank) is an empty
	// page with the total, not an error.
	mustOK(t, "search_publications", call(t, editor, "search_publications",
		map[string]any{"project": "northwind", "status": []string{"reviewing"}, "offset": 5}, &page))
	if page.Total != 1 || len(page.Publications) != 0 || page.NextOffset != nil {
		t.Fatalf("search past the end = %+v", page)
	}
	mustOK(t, "search_publications", call(t, editor, "search_publications",
		map[string]any{"text": "harbour", "collection": "news", "date_field": "created", "from": time.Now().Add(-time.Hour).Format(time.DateOnly)}, &page))
	if page.Total != 1 || page.Publications[0].ID != s.pubs["Harbour reopens"] {
		t.Fatalf("search text = %+v", page)
	}
	if want := s.url + "/p/northwind/publications/" + s.pubs["Harbour reopens"]; page.Publications[0].URL != want {
		t.Errorf("url = %q, want %q", page.Publications[0].URL, want)
	}

	var queue mcp.QueueOut
	mustOK(t, "review_queue", call(t, editor, "review_queue", nil, &queue))
	if queue.Total != 1 || queue.Items[0].SubmittedBy != "editor" || queue.Items[0].Note != "ready" {
		t.Fatalf("review_queue = %+v", queue)
	}

	var sched mcp.ScheduleOut
	mustOK(t, "list_schedule", call(t, editor, "list_schedule", map[string]any{"project": "northwind"}, &sched))
	if len(sched.Scheduled) != 1 || sched.Scheduled[0].Title != "Lighthouse gala" ||
		len(sched.AwaitingDate) != 1 || sched.AwaitingDate[0].Title != "Ferry strike ends" {
		t.Fatalf("list_schedule = %+v", sched)
	}

	// A promo while it is a draft, then review, then a read that shows both.
	var promo mcp.PromoOut
	mustOK(t, "upsert_promo", call(t, editor, "upsert_promo", map[string]any{
		"publication_id": s.pubs["Harbour reopens"], "channel": "x", "body": "The harbour is open again.",
		"link": "https://northwind.example/harbour"}, &promo))
	if !promo.Created || promo.Promo.Length != "50 / 280 chars, 0 / 2 hashtags" || promo.Promo.Link == "" {
		t.Fatalf("upsert_promo create = %+v", promo)
	}
	mustOK(t, "upsert_promo", call(t, editor, "upsert_promo", map[string]any{
		"publication_id": s.pubs["Harbour reopens"], "channel": "x", "body": "Harbour open again #news"}, &promo))
	if promo.Created || promo.Promo.Link != "https://northwind.example/harbour" {
		t.Fatalf("upsert_promo update kept link? %+v", promo)
	}
	res := call(t, editor, "upsert_promo", map[string]any{
		"publication_id": s.pubs["Harbour reopens"], "channel": "x", "body": strings.Repeat("long ", 60)}, nil)
	if !res.IsError || !strings.Contains(text(res), "cut at least") {
		t.Fatalf("over-long promo: %v %s", res.IsError, text(res))
	}
	res = call(t, editor, "upsert_promo", map[string]any{
		"publication_id": s.pubs["Harbour reopens"], "channel": "myspace", "body": "hi"}, nil)
	if !res.IsError || !strings.Contains(text(res), "bluesky") {
		t.Fatalf("unknown channel: %v %s", res.IsError, text(res))
	}
	// Readiness wants a promo for every default channel before it goes live.
	mustOK(t, "upsert_promo", call(t, editor, "upsert_promo", map[string]any{
		"publication_id": s.pubs["Harbour reopens"], "channel": "bluesky", "body": "The harbour is open again."}, &promo))
	// Each saved promo raised the version, 1 → 5: a new one by one, a rewrite by two (an
	// upsert's insert attempt and its update, as the dashboard's save and supabase-js's upsert;
	// internal/pg's TestContentBumpsVersion). The refused ones did not.
	var moved mcp.TransitionOut
	mustOK(t, "submit_for_review", call(t, editor, "submit_for_review",
		map[string]any{"publication_id": s.pubs["Harbour reopens"], "note": "please check the dates", "expected_version": 5}, &moved))
	if moved.Publication.Status != "reviewing" || moved.Publication.Version != 6 || !strings.Contains(moved.Message, "in review") {
		t.Fatalf("submit_for_review = %+v", moved)
	}

	reviewer := s.connect(t, "reviewer")
	mustOK(t, "approve", call(t, reviewer, "approve",
		map[string]any{"publication_id": s.pubs["Harbour reopens"], "note": "dates check out"}, &moved))
	if moved.Publication.Status != "approved" {
		t.Fatalf("approve = %+v", moved)
	}
	var detail mcp.PublicationDetail
	mustOK(t, "get_publication", call(t, reviewer, "get_publication", map[string]any{"publication_id": s.pubs["Harbour reopens"]}, &detail))
	if detail.Status != "approved" || detail.Body != "# Harbour reopens" || len(detail.Promos) != 2 ||
		len(detail.Reviews) != 1 || detail.Reviews[0].Verdict != "approved" || len(detail.History) != 2 ||
		detail.History[0].To != "approved" || detail.History[0].Actor != "reviewer" || detail.History[1].Note != "please check the dates" {
		t.Fatalf("get_publication = %+v", detail)
	}

	lead := s.connect(t, "lead")
	when := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second)
	mustOK(t, "schedule", call(t, lead, "schedule",
		map[string]any{"publication_id": s.pubs["Harbour reopens"], "scheduled_for": when.Format(time.RFC3339)}, &moved))
	if moved.Publication.Status != "scheduled" || moved.Publication.ScheduledFor == nil || !moved.Publication.ScheduledFor.Equal(when) {
		t.Fatalf("schedule = %+v", moved)
	}
	mustOK(t, "publish_now", call(t, lead, "publish_now", map[string]any{"publication_id": s.pubs["Harbour reopens"]}, &moved))
	if moved.Publication.Status != "published" || moved.Publication.PublishedAt == nil {
		t.Fatalf("publish_now = %+v", moved)
	}
}

// TestLifecycleTools calls each workflow tool TestJourney does not (withdraw, unschedule,
// reopen, archive, restore) as the role DESIGN gives it, and wants the move made, its side
// effect on the schedule, and the audit's entry with the tool's note and the caller as actor.
func TestLifecycleTools(t *testing.T) {
	s := newStack(t)
	editor, lead := s.connect(t, "editor"), s.connect(t, "lead")
	for _, tc := range []struct {
		sess         *sdk.ClientSession
		actor        string
		tool, intent string
		title        string
		note         string
		from, want   string
	}{
		{editor, "editor", "withdraw", "withdraw", "Tide tables", "needs a tide chart", "reviewing", "draft"},
		{lead, "lead", "unschedule", "unschedule", "Lighthouse gala", "", "scheduled", "approved"},
		{lead, "lead", "reopen", "reopen", "Ferry strike ends", "the fares changed", "approved", "draft"},
		{lead, "lead", "publish_now", "publish", "Lighthouse gala", "", "approved", "published"},
		{lead, "lead", "archive", "archive", "Lighthouse gala", "the gala is over", "published", "archived"},
		{lead, "lead", "restore", "restore", "Lighthouse gala", "", "archived", "draft"},
	} {
		args := map[string]any{"publication_id": s.pubs[tc.title]}
		if tc.note != "" {
			args["note"] = tc.note
		}
		var moved mcp.TransitionOut
		mustOK(t, tc.tool, call(t, tc.sess, tc.tool, args, &moved))
		if moved.Publication.Status != tc.want || moved.Publication.ScheduledFor != nil {
			t.Fatalf("%s %s = %+v, want %s without a date", tc.tool, tc.title, moved.Publication, tc.want)
		}
		var detail mcp.PublicationDetail
		mustOK(t, "get_publication", call(t, tc.sess, "get_publication", map[string]any{"publication_id": s.pubs[tc.title]}, &detail))
		if e := detail.History[0]; e.From != tc.from || e.To != tc.want || e.Intent != tc.intent || e.Note != tc.note ||
			e.Actor != tc.actor || e.Via != "rpc" {
			t.Fatalf("%s %s: newest history entry %+v", tc.tool, tc.title, e)
		}
	}
}

// TestAddReview leaves a comment through the tool and finds it on the publication.
func TestAddReview(t *testing.T) {
	s := newStack(t)
	reviewer := s.connect(t, "reviewer")
	var out mcp.ReviewOut
	mustOK(t, "add_review", call(t, reviewer, "add_review",
		map[string]any{"publication_id": s.pubs["Tide tables"], "note": "nice photo"}, &out))
	if out.Review.Verdict != "comment" || out.Review.Notes != "nice photo" || out.URL == "" {
		t.Fatalf("add_review = %+v", out)
	}
	var detail mcp.PublicationDetail
	mustOK(t, "get_publication", call(t, reviewer, "get_publication", map[string]any{"publication_id": s.pubs["Tide tables"]}, &detail))
	if len(detail.Reviews) != 1 || detail.Reviews[0].Reviewer != "reviewer" || detail.Status != "reviewing" {
		t.Fatalf("get_publication after add_review = %+v", detail)
	}
}

// TestRefusals checks that what the workflow refuses comes back as a tool error with the
// database's own explanation, and that nothing changed.
func TestRefusals(t *testing.T) {
	s := newStack(t)
	editor := s.connect(t, "editor")
	viewer := s.connect(t, "viewer")
	for _, tc := range []struct {
		name string
		sess *sdk.ClientSession
		tool string
		args map[string]any
		want string
	}{
		{"illegal transition", editor, "submit_for_review", map[string]any{"publication_id": s.pubs["Tide tables"]},
			"Refused: Cannot submit: the publication is in review. Reload it to see its current state."},
		{"stale version", editor, "withdraw", map[string]any{"publication_id": s.pubs["Tide tables"], "expected_version": 1},
			"Refused: The publication changed since you loaded it (you had version 1, it is now version 2, in review)."},
		{"role may not", editor, "approve", map[string]any{"publication_id": s.pubs["Tide tables"]},
			"Not allowed: An editor cannot approve publications."},
		{"viewer cannot write promos", viewer, "upsert_promo", map[string]any{"publication_id": s.pubs["Tide tables"], "channel": "x", "body": "hi"},
			"Not allowed: your role cannot write promos in this project"},
		// Lighthouse gala has a promo on x: rewriting it is refused alike.
		{"viewer cannot rewrite a promo", viewer, "upsert_promo", map[string]any{"publication_id": s.pubs["Lighthouse gala"], "channel": "x", "body": "hi"},
			"Not allowed: your role cannot write promos in this project"},
		{"note required", s.connect(t, "reviewer"), "request_changes", map[string]any{"publication_id": s.pubs["Tide tables"], "note": " "},
			"note is required"},
		{"past date", s.connect(t, "lead"), "schedule", map[string]any{"publication_id": s.pubs["Ferry strike ends"], "scheduled_for": "2020-01-01T00:00:00Z"},
			"Invalid request: Scheduled_for must be a time in the future."},
		{"bad id", editor, "get_publication", map[string]any{"publication_id": "nope"}, "publication_id"},
		{"bad date", editor, "search_publications", map[string]any{"from": "last tuesday"}, "from must be a date"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, tc.sess, tc.tool, tc.args, nil)
			if !res.IsError || !strings.Contains(text(res), tc.want) {
				t.Fatalf("IsError=%v text=%q, want it to contain %q", res.IsError, text(res), tc.want)
			}
		})
	}
	var detail mcp.PublicationDetail
	mustOK(t, "get_publication", call(t, editor, "get_publication", map[string]any{"publication_id": s.pubs["Tide tables"]}, &detail))
	if detail.Status != "reviewing" || detail.Version != 2 || len(detail.Promos) != 0 || len(detail.Reviews) != 0 {
		t.Fatalf("a refusal changed something: %+v", detail)
	}
}

// TestTenantIsolation acts as a member of acme through every tool and checks nothing of
// northwind is ever visible or changeable.
func TestTenantIsolation(t *testing.T) {
	s := newStack(t)
	for _, user := range []string{"editorB", "leadB"} {
		sess := s.connect(t, user)
		var projects mcp.ProjectsOut
		mustOK(t, "list_projects", call(t, sess, "list_projects", nil, &projects))
		if len(projects.Projects) != 1 || projects.Projects[0].Slug != "acme" {
			t.Fatalf("%s list_projects = %+v", user, projects)
		}
		for _, args := range []map[string]any{nil, {"project": "northwind"}, {"project": s.projA}, {"text": "harbour"}, {"collection": "news"}} {
			var page mcp.PageOut
			mustOK(t, "search_publications", call(t, sess, "search_publications", args, &page))
			for _, p := range page.Publications {
				if p.Project != "acme" {
					t.Errorf("%s search %v saw %+v", user, args, p)
				}
			}
		}
		var queue mcp.QueueOut
		mustOK(t, "review_queue", call(t, sess, "review_queue", nil, &queue))
		if queue.Total != 1 || queue.Items[0].Title != "Island hopping" {
			t.Errorf("%s review_queue = %+v", user, queue)
		}
		var sched mcp.ScheduleOut
		mustOK(t, "list_schedule", call(t, sess, "list_schedule", nil, &sched))
		if len(sched.Scheduled)+len(sched.AwaitingDate) != 0 {
			t.Errorf("%s list_schedule = %+v", user, sched)
		}
		for _, title := range []string{"Harbour reopens", "Tide tables", "Ferry strike ends", "Lighthouse gala"} {
			id := s.pubs[title]
			for _, tc := range []struct {
				tool string
				args map[string]any
			}{
				{"get_publication", map[string]any{"publication_id": id}},
				{"submit_for_review", map[string]any{"publication_id": id}},
				{"withdraw", map[string]any{"publication_id": id}},
				{"approve", map[string]any{"publication_id": id}},
				{"request_changes", map[string]any{"publication_id": id, "note": "x"}},
				{"schedule", map[string]any{"publication_id": id, "scheduled_for": time.Now().Add(time.Hour).Format(time.RFC3339)}},
				{"unschedule", map[string]any{"publication_id": id}},
				{"publish_now", map[string]any{"publication_id": id}},
				{"archive", map[string]any{"publication_id": id}},
				{"restore", map[string]any{"publication_id": id}},
				{"add_review", map[string]any{"publication_id": id, "note": "x"}},
				{"upsert_promo", map[string]any{"publication_id": id, "channel": "x", "body": "x"}},
			} {
				res := call(t, sess, tc.tool, tc.args, nil)
				if !res.IsError || !strings.HasPrefix(text(res), "Not found") || strings.Contains(text(res), title) {
					t.Errorf("%s %s on %s: IsError=%v %q", user, tc.tool, title, res.IsError, text(res))
				}
			}
		}
	}
	// Nothing in northwind moved or gained a review or promo.
	var n int
	if err := s.env.DB.Owner(t).QueryRow(context.Background(), `select (select count(*) from status_events where project_id = $1)
		+ (select count(*) from reviews where project_id = $1 and verdict = 'comment') + (select count(*) from promos where project_id = $1)`,
		s.projA).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 8 { // the fixtures' own: 3 submits, 2 approvals, 1 schedule, 2 promos
		t.Errorf("northwind changed: %d events, comments and promos, want 8", n)
	}
}

// TestSignedOut checks the two ways a connection loses its user: no token at all is refused
// at /mcp with the challenge that starts OAuth discovery, and a token whose session ended
// (sign-out, revocation) gets a tool error telling the person to reconnect, because REST
// checks the session on every call.
func TestSignedOut(t *testing.T) {
	s := newStack(t)
	req, _ := http.NewRequest(http.MethodPost, s.url+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	want := `Bearer resource_metadata="` + s.url + `/.well-known/oauth-protected-resource"`
	if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") != want {
		t.Fatalf("no token: %d %q, want 401 %q", res.StatusCode, res.Header.Get("WWW-Authenticate"), want)
	}
	res, err = http.Get(s.url + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	err = json.NewDecoder(res.Body).Decode(&doc)
	res.Body.Close()
	if err != nil || doc.Resource != s.url+"/mcp" || len(doc.AuthorizationServers) != 1 || doc.AuthorizationServers[0] != s.url+"/auth/v1" {
		t.Fatalf("metadata: %+v %v", doc, err)
	}

	token := s.token(t, "editor")
	sess := s.connectWith(t, token)
	mustOK(t, "list_projects", call(t, sess, "list_projects", nil, nil))
	if err := s.api.Logout(context.Background(), token, client.LogoutGlobal); err != nil {
		t.Fatal(err)
	}
	r := call(t, sess, "list_projects", nil, nil)
	if !r.IsError || !strings.Contains(text(r), "Reconnect Masthead to sign in again") {
		t.Fatalf("after sign-out: IsError=%v %q", r.IsError, text(r))
	}
}

// TestTwoProjects acts as someone who is a reviewer in one project and a lead in the other:
// they see both, with the role each grants, and may schedule only where they lead.
func TestTwoProjects(t *testing.T) {
	s := newStack(t)
	multi := s.env.CreateUser(t, "multi@mcp.test", password).ID
	if _, err := s.env.DB.Owner(t).Exec(context.Background(), `insert into project_members (project_id, user_id, role)
		values ($1, $3, 'reviewer'), ($2, $3, 'lead')`, s.projA, s.projB, multi); err != nil {
		t.Fatal(err)
	}
	sess := s.connect(t, "multi")
	var projects mcp.ProjectsOut
	mustOK(t, "list_projects", call(t, sess, "list_projects", nil, &projects))
	roles := map[string]string{}
	for _, p := range projects.Projects {
		roles[p.Slug] = p.Role
	}
	if len(roles) != 2 || roles["northwind"] != "reviewer" || roles["acme"] != "lead" {
		t.Fatalf("roles = %v", roles)
	}
	var page mcp.PageOut
	mustOK(t, "search_publications", call(t, sess, "search_publications", nil, &page))
	if page.Total != 6 {
		t.Errorf("search sees %d publications, want all 6 of both projects", page.Total)
	}
	res := call(t, sess, "schedule", map[string]any{"publication_id": s.pubs["Ferry strike ends"],
		"scheduled_for": time.Now().Add(time.Hour).Format(time.RFC3339)}, nil)
	if !res.IsError || !strings.HasPrefix(text(res), "Not allowed") {
		t.Errorf("reviewer scheduled in northwind: %v %q", res.IsError, text(res))
	}
}

// TestFrozenAndReopen: upsert_promo is refused once a publication left the editor's hands,
// with nothing saved; reopen (lead+, note required) hands it back, and the promo then saves.
// Dates beyond the schedule horizon are refused as invalid.
func TestFrozenAndReopen(t *testing.T) {
	s := newStack(t)
	editor := s.connect(t, "editor")
	lead := s.connect(t, "lead")
	promo := map[string]any{"publication_id": s.pubs["Ferry strike ends"], "channel": "x", "body": "Ferries run again."}
	for _, title := range []string{"Tide tables", "Ferry strike ends", "Lighthouse gala"} { // in review, approved, scheduled
		args := map[string]any{"publication_id": s.pubs[title], "channel": "x", "body": "Sneaky edit."}
		res := call(t, editor, "upsert_promo", args, nil)
		if !res.IsError || !strings.Contains(text(res), "romos can only change while the publication is a draft") {
			t.Fatalf("upsert_promo on %s: %v %s", title, res.IsError, text(res))
		}
	}
	for _, tc := range []struct {
		sess *sdk.ClientSession
		args map[string]any
		want string
	}{
		{editor, map[string]any{"publication_id": s.pubs["Ferry strike ends"], "note": "typo"}, "Not allowed: An editor cannot reopen publications."},
		{lead, map[string]any{"publication_id": s.pubs["Ferry strike ends"], "note": " "}, "note is required"},
		{lead, map[string]any{"publication_id": s.pubs["Tide tables"], "note": "typo"}, "Cannot reopen: the publication is in review."},
	} {
		if res := call(t, tc.sess, "reopen", tc.args, nil); !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("reopen %v: %v %q, want %q", tc.args, res.IsError, text(res), tc.want)
		}
	}
	res := call(t, lead, "schedule", map[string]any{"publication_id": s.pubs["Ferry strike ends"],
		"scheduled_for": time.Now().AddDate(10, 0, 0).UTC().Format(time.RFC3339)}, nil)
	if !res.IsError || !strings.Contains(text(res), "within 5 years") {
		t.Errorf("schedule 10 years ahead: %v %q", res.IsError, text(res))
	}
	var detail mcp.PublicationDetail
	mustOK(t, "get_publication", call(t, editor, "get_publication", map[string]any{"publication_id": s.pubs["Ferry strike ends"]}, &detail))
	if detail.Status != "approved" || len(detail.Promos) != 0 {
		t.Fatalf("a refusal changed something: %+v", detail)
	}

	var moved mcp.TransitionOut
	mustOK(t, "reopen", call(t, lead, "reopen", map[string]any{"publication_id": s.pubs["Lighthouse gala"],
		"note": "the venue changed", "expected_version": 4}, &moved))
	if moved.Publication.Status != "draft" || moved.Publication.ScheduledFor != nil || moved.Publication.Version != 5 {
		t.Fatalf("reopen = %+v", moved)
	}
	promo["publication_id"] = s.pubs["Lighthouse gala"]
	var out mcp.PromoOut
	mustOK(t, "upsert_promo", call(t, editor, "upsert_promo", promo, &out))
	mustOK(t, "get_publication", call(t, editor, "get_publication", map[string]any{"publication_id": s.pubs["Lighthouse gala"]}, &detail))
	saved := slices.ContainsFunc(detail.Promos, func(p mcp.Promo) bool { return p.Channel == "x" && p.Body == "Ferries run again." })
	// The promo on x was rewritten: an upsert's two (see above).
	if detail.Version != 7 || !saved || detail.History[0].To != "draft" || detail.History[0].Note != "the venue changed" {
		t.Fatalf("after reopen and a promo: %+v", detail)
	}
}
