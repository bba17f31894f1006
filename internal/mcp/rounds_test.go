package mcp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"masthead/internal/mcp"
	"masthead/internal/rounds"
)

// patch edits a publication over REST as user, as any client would.
func (s *stack) patch(t *testing.T, user, pub, body string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPatch, s.url+"/rest/v1/publications?id=eq."+pub, strings.NewReader(body))
	req.Header.Set("apikey", s.env.Key)
	req.Header.Set("Authorization", "Bearer "+s.token(t, user))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("patch %s: %d", body, res.StatusCode)
	}
}

// TestRoundTools: an agent sees what changed between rounds with the reviewer's notes, can
// compare any two rounds (and is told which rounds there are when it names one the publication
// has not had), and asks readiness what is missing before scheduling.
func TestRoundTools(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	editor, reviewer, viewer := s.connect(t, "editor"), s.connect(t, "reviewer"), s.connect(t, "viewer")
	pub := s.pubs["Harbour reopens"]
	args := map[string]any{"publication_id": pub}

	var ch mcp.ChangesOut
	mustOK(t, "changes before any round", call(t, viewer, "get_changes_since_last_review", args, &ch))
	if ch.Rounds != 0 || !strings.Contains(ch.Message, "not been submitted") {
		t.Fatalf("before any round: %+v", ch)
	}
	compare := map[string]any{"publication_id": pub, "from_round": 1, "to_round": 2}
	if res := call(t, viewer, "compare_rounds", compare, nil); !res.IsError ||
		!strings.Contains(text(res), "This publication has not been submitted for review yet, so it has no rounds to compare.") {
		t.Errorf("compare before any round: %v %s", res.IsError, text(res))
	}
	mustOK(t, "submit", call(t, editor, "submit_for_review", map[string]any{"publication_id": pub, "note": "first go"}, nil))
	mustOK(t, "changes in round one", call(t, viewer, "get_changes_since_last_review", args, &ch))
	if ch.Rounds != 1 || !strings.Contains(ch.Message, "first review round") {
		t.Fatalf("round one: %+v", ch)
	}
	if res := call(t, viewer, "compare_rounds", compare, nil); !res.IsError ||
		!strings.Contains(text(res), "This publication has 1 review round; there is no other round to compare it with.") {
		t.Errorf("compare in round one: %v %s", res.IsError, text(res))
	}
	mustOK(t, "request_changes", call(t, reviewer, "request_changes", map[string]any{"publication_id": pub, "note": "Say which day it reopened."}, nil))
	s.patch(t, "editor", pub, `{"body":"# Harbour reopens\n\nIt reopened on Tuesday.","summary":"Open since Tuesday."}`)
	mustOK(t, "resubmit", call(t, editor, "submit_for_review", map[string]any{"publication_id": pub, "note": "added the day"}, nil))

	mustOK(t, "changes in round two", call(t, viewer, "get_changes_since_last_review", args, &ch))
	want := rounds.BodyEdit{Before: "# Harbour reopens", Inserted: "\n\nIt reopened on Tuesday."}
	if ch.Rounds != 2 || ch.FromRound != 1 || ch.ToRound != 2 || ch.Title != nil || ch.Summary == nil || ch.Summary.New != "Open since Tuesday." ||
		len(ch.Body) != 1 || ch.Body[0] != want || len(ch.EarlierReview) != 1 || ch.EarlierReview[0].Notes != "Say which day it reopened." {
		t.Fatalf("round two: %+v", ch)
	}

	var cmp mcp.ChangesOut
	mustOK(t, "compare_rounds", call(t, viewer, "compare_rounds", map[string]any{"publication_id": pub, "from_round": 2, "to_round": 1}, &cmp))
	if cmp.FromRound != 2 || cmp.ToRound != 1 || len(cmp.Body) != 1 || cmp.Body[0].Deleted != want.Inserted {
		t.Fatalf("compare 2..1: %+v", cmp)
	}
	if res := call(t, viewer, "compare_rounds", map[string]any{"publication_id": pub, "from_round": 1, "to_round": 5}, nil); !res.IsError || !strings.Contains(text(res), "This publication has 2 review rounds; compare rounds between 1 and 2.") {
		t.Errorf("compare with a missing round: %v %s", res.IsError, text(res))
	}

	var rd mcp.ReadinessOut
	mustOK(t, "readiness", call(t, viewer, "readiness", args, &rd))
	failing := map[string]bool{}
	for _, c := range rd.Checks {
		if !c.OK {
			failing[c.Check] = true
		}
	}
	if rd.Ready || len(failing) != 2 || !failing["promo:x"] || !failing["promo:bluesky"] {
		t.Errorf("readiness: %+v", rd)
	}

	// Another tenant learns nothing, not even that the publication exists.
	other := s.connect(t, "editorB")
	for _, tool := range []string{"readiness", "get_changes_since_last_review"} {
		if res := call(t, other, tool, args, nil); !res.IsError || !strings.HasPrefix(text(res), "Not found") {
			t.Errorf("%s from another tenant: %v %s", tool, res.IsError, text(res))
		}
	}
}
