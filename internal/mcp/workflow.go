package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/client"
)

// Argument descriptions shared by the workflow tools. The names are the RPCs' own, so a model
// that learnt the REST API and one that learnt these tools say the same thing.
const (
	descPublicationID   = "the publication's id"
	descExpectedVersion = "the version you last saw (from get_publication or a list); if it changed meanwhile the move is refused, so you never act on a stale view"
	descNote            = "why, in a sentence or two; recorded in the publication's history"
)

// rpcArgs is implemented by each workflow tool's input: the named arguments of its RPC. Only
// the arguments the RPC declares are sent, since PostgREST refuses unknown names.
type rpcArgs interface {
	args() (map[string]any, error)
}

type noteArgs struct {
	PublicationID   string `json:"publication_id"`
	Note            string `json:"note,omitempty"`
	ExpectedVersion *int   `json:"expected_version,omitempty"`
}

func (a noteArgs) args() (map[string]any, error) {
	m := map[string]any{"publication_id": a.PublicationID}
	if a.Note != "" {
		m["note"] = a.Note
	}
	withVersion(m, a.ExpectedVersion)
	return m, nil
}

// requiredNoteArgs is noteArgs where the note is the point (request_changes, add_review).
type requiredNoteArgs struct {
	PublicationID   string `json:"publication_id"`
	Note            string `json:"note"`
	ExpectedVersion *int   `json:"expected_version,omitempty"`
}

func (a requiredNoteArgs) args() (map[string]any, error) {
	if strings.TrimSpace(a.Note) == "" {
		return nil, refuse("Invalid request: note is required; say why.")
	}
	m := map[string]any{"publication_id": a.PublicationID, "note": a.Note}
	withVersion(m, a.ExpectedVersion)
	return m, nil
}

type scheduleArgs struct {
	PublicationID   string `json:"publication_id"`
	ScheduledFor    string `json:"scheduled_for" jsonschema:"when to publish: an RFC 3339 time in the future with its offset, e.g. 2026-05-01T09:00:00+02:00"`
	ExpectedVersion *int   `json:"expected_version,omitempty"`
}

func (a scheduleArgs) args() (map[string]any, error) {
	t, err := time.Parse(time.RFC3339, a.ScheduledFor)
	if err != nil {
		return nil, refuse("Invalid request: scheduled_for must be an RFC 3339 time with a date, time and offset, e.g. 2026-05-01T09:00:00Z; got %q", a.ScheduledFor)
	}
	m := map[string]any{"publication_id": a.PublicationID, "scheduled_for": t.Format(time.RFC3339)}
	withVersion(m, a.ExpectedVersion)
	return m, nil
}

type idArgs struct {
	PublicationID   string `json:"publication_id"`
	ExpectedVersion *int   `json:"expected_version,omitempty"`
}

func (a idArgs) args() (map[string]any, error) {
	m := map[string]any{"publication_id": a.PublicationID}
	withVersion(m, a.ExpectedVersion)
	return m, nil
}

func withVersion(m map[string]any, v *int) {
	if v != nil {
		m["expected_version"] = *v
	}
}

// TransitionOut is a workflow tool's answer: the publication as it now stands.
type TransitionOut struct {
	Message     string      `json:"message"`
	Publication Publication `json:"publication"`
}

func (s *Server) addWorkflowTools() {
	change := &sdk.ToolAnnotations{DestructiveHint: new(bool), OpenWorldHint: new(bool)}
	irreversible := &sdk.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(bool)}
	addTransition[noteArgs](s, client.RPCSubmit, "Submit for review", change,
		"Sends a draft, or a publication whose changes were requested, to review (status reviewing). "+
			"Editors, leads and owners. It can no longer be edited until it is withdrawn or sent back.")
	addTransition[noteArgs](s, client.RPCWithdraw, "Withdraw to draft", change,
		"Takes a publication that is in review or has changes requested back to draft, so it can be edited again. "+
			"Editors, leads and owners.")
	addTransition[noteArgs](s, client.RPCApprove, "Approve", change,
		"Approves a publication that is in review (status approved) and records an approving review with your note. "+
			"Reviewers, leads and owners; nobody may approve a publication they wrote.")
	addTransition[requiredNoteArgs](s, client.RPCRequestChanges, "Request changes", change,
		"Sends a publication in review back to its author (status changes_requested) with a required note saying what "+
			"must change; the note is recorded as a review. Reviewers, leads and owners.")
	addTransition[scheduleArgs](s, client.RPCSchedule, "Schedule", change,
		"Schedules an approved publication to be published automatically at scheduled_for, which must be in the future. "+
			"Leads and owners. To move the date of a scheduled one, unschedule it first.")
	addTransition[idArgs](s, client.RPCUnschedule, "Unschedule", change,
		"Removes the publication date of a scheduled publication; it returns to approved. Leads and owners.")
	addTransition[idArgs](s, client.RPCPublishNow, "Publish now", irreversible,
		"Publishes an approved or scheduled publication immediately; it goes live at once. Leads and owners. "+
			"Confirm with the person first.")
	addTransition[noteArgs](s, client.RPCArchive, "Archive", change,
		"Archives a draft, approved or published publication, taking it out of circulation. Leads and owners; "+
			"restore brings it back as a draft.")
	addTransition[idArgs](s, client.RPCRestore, "Restore from archive", change,
		"Brings an archived publication back as a draft. Leads and owners.")
	addTransition[requiredNoteArgs](s, client.RPCReopen, "Reopen to draft", change,
		"Takes an approved or scheduled publication back to draft (clearing its date) so its text, promos and media "+
			"can change again; it must then be submitted and approved anew. Leads and owners; the note, saying why, is required.")

	addTool(s, &sdk.Tool{
		Name:  client.RPCAddReview,
		Title: "Add a review comment",
		Description: "Leaves a review comment on a publication without changing its status, e.g. a question or a " +
			"suggestion. Reviewers, leads and owners. To approve or send back, use approve or request_changes.",
		Annotations: change,
	}, schema[reviewArgs](func(p map[string]*jsonschema.Schema) {
		p["publication_id"].Pattern = uuidPattern
		p["publication_id"].Description = descPublicationID
		p["note"].Description = "the comment (markdown)"
		p["note"].MinLength = jsonschema.Ptr(1)
	}), s.addReview)
}

// addTransition registers the tool of one workflow RPC, named as the RPC.
func addTransition[In rpcArgs](s *Server, rpc, title string, ann *sdk.ToolAnnotations, desc string) {
	sch := schema[In](func(p map[string]*jsonschema.Schema) {
		p["publication_id"].Pattern = uuidPattern
		p["publication_id"].Description = descPublicationID
		if v := p["expected_version"]; v != nil {
			v.Description = descExpectedVersion
			v.Minimum = jsonschema.Ptr(1.0)
		}
		if n := p["note"]; n != nil {
			n.Description = descNote
			switch rpc {
			case client.RPCRequestChanges:
				n.Description = "what must change before it can be approved; the author reads this"
				n.MinLength = jsonschema.Ptr(1)
			case client.RPCReopen:
				n.Description = "why it goes back to draft; recorded in the publication's history"
				n.MinLength = jsonschema.Ptr(1)
			}
		}
		if t := p["scheduled_for"]; t != nil {
			t.Format = "date-time"
		}
	})
	addTool(s, &sdk.Tool{Name: rpc, Title: title, Description: desc, Annotations: ann}, sch,
		func(ctx context.Context, id identity, in In) (TransitionOut, error) {
			return s.transition(ctx, id, rpc, in)
		})
}

// transition calls the RPC as the caller and describes the result. The RPC's own answer is
// the truth about the move; the publication is then read again only to add its project and
// names for the answer, and a failure of that read does not turn a done move into an error
// (the model would retry and be refused).
func (s *Server) transition(ctx context.Context, id identity, rpc string, in rpcArgs) (TransitionOut, error) {
	args, err := in.args()
	if err != nil {
		return TransitionOut{}, err
	}
	var row pubRow
	if err := s.api.RPC(ctx, id.token, rpc, args, &row); err != nil {
		return TransitionOut{}, err
	}
	pub := s.summary(row)
	if full, err := s.readSummary(ctx, id, row.ID); err == nil {
		pub = full
	} else {
		s.log.WarnContext(ctx, "mcp: reread after transition", "tool", rpc, "err", err)
	}
	return TransitionOut{
		Message:     fmt.Sprintf("%q is now %s (version %d).", pub.Title, statusWords(pub.Status, pub.ScheduledFor), pub.Version),
		Publication: pub,
	}, nil
}

// readSummary reads one publication in its list form.
func (s *Server) readSummary(ctx context.Context, id identity, publicationID string) (Publication, error) {
	var row pubRow
	q := client.From("publications").Select(summarySelect).Eq("id", publicationID).Single()
	if _, err := s.api.Get(ctx, id.token, q, &row); err != nil {
		return Publication{}, err
	}
	return s.summary(row), nil
}

// statusWords says a status as the dashboard does.
func statusWords(status string, at *time.Time) string {
	switch status {
	case "draft":
		return "a draft"
	case "reviewing":
		return "in review"
	case "changes_requested":
		return "back with its author (changes requested)"
	case "scheduled":
		if at != nil {
			return "scheduled for " + at.UTC().Format("2006-01-02 15:04 UTC")
		}
		return "scheduled"
	default:
		return status
	}
}

type reviewArgs struct {
	PublicationID string `json:"publication_id"`
	Note          string `json:"note"`
}

// ReviewOut is add_review's answer.
type ReviewOut struct {
	Review Review `json:"review"`
	URL    string `json:"url" jsonschema:"the publication's page, where the review now shows"`
}

func (s *Server) addReview(ctx context.Context, id identity, in reviewArgs) (ReviewOut, error) {
	if strings.TrimSpace(in.Note) == "" {
		return ReviewOut{}, refuse("Invalid request: note is required; write the comment.")
	}
	r, err := s.api.AddReview(ctx, id.token, in.PublicationID, in.Note)
	if err != nil {
		return ReviewOut{}, err
	}
	out := ReviewOut{Review: Review{ID: r.ID, Verdict: r.Verdict, Notes: r.Notes, At: r.CreatedAt}}
	if pub, err := s.readSummary(ctx, id, in.PublicationID); err == nil {
		out.URL = pub.URL
	}
	return out, nil
}
