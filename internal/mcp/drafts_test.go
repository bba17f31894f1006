package mcp_test

import (
	"strings"
	"testing"

	"masthead/internal/mcp"
)

// TestDraftTools: through the official SDK client, an editor creates a draft in a collection,
// revises it at the version read, and is refused (nothing changed) when saving against an old
// version; a reviewer may not draft, another tenant's project is unknown, and a publication in
// review cannot be revised.
func TestDraftTools(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	editor := s.connect(t, "editor")

	var made mcp.TransitionOut
	mustOK(t, "create_draft", call(t, editor, "create_draft", map[string]any{
		"project": "northwind", "title": "Storm warning", "summary": "Gales tonight.", "body": "# Storm\n\nStay in.",
		"collection": "news"}, &made))
	p := made.Publication
	if p.Status != "draft" || p.Version != 1 || p.Collection != "News" || p.Author != "editor" || p.Project != "northwind" ||
		!strings.Contains(p.URL, "/p/northwind/publications/") {
		t.Fatalf("create_draft = %+v", made)
	}

	var saved mcp.TransitionOut
	mustOK(t, "update_draft", call(t, editor, "update_draft", map[string]any{
		"publication_id": p.ID, "expected_version": 1, "body": "# Storm\n\nStay in; ferries are cancelled.", "collection": ""}, &saved))
	if saved.Publication.Version != 2 || saved.Publication.Collection != "" || saved.Publication.Title != "Storm warning" {
		t.Fatalf("update_draft = %+v", saved)
	}
	res := call(t, editor, "update_draft", map[string]any{"publication_id": p.ID, "expected_version": 1, "title": "Old view"}, nil)
	if !res.IsError || !strings.Contains(text(res), "it is at version 2, you read version 1") {
		t.Fatalf("a stale save: %v %s", res.IsError, text(res))
	}

	for _, tt := range []struct {
		name, user, tool string
		args             map[string]any
		words            string
	}{
		{"a reviewer drafts", "reviewer", "create_draft", map[string]any{"project": "northwind", "title": "Mine"}, "A reviewer cannot create publications"},
		{"another tenant's project", "editor", "create_draft", map[string]any{"project": "acme", "title": "Mine"}, `no project "acme"`},
		{"an unknown collection", "editor", "create_draft", map[string]any{"project": "northwind", "title": "Mine", "collection": "sport"}, "use one of: news"},
		{"revising in review", "editor", "update_draft", map[string]any{"publication_id": s.pubs["Tide tables"], "expected_version": 2, "body": "x"}, "Only drafts can be edited"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, s.connect(t, tt.user), tt.tool, tt.args, nil)
			if !res.IsError || !strings.Contains(text(res), tt.words) {
				t.Errorf("%v %s", res.IsError, text(res))
			}
		})
	}
}
