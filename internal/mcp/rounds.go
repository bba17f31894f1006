package mcp

import (
	"context"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/client"
	"masthead/internal/rounds"
)

// addRoundTools registers what an agent needs to revise or re-review: readiness, and what
// changed between review rounds (internal/rounds, the same comparison the dashboard shows).
func (s *Server) addRoundTools() {
	addTool(s, &sdk.Tool{
		Name:  "readiness",
		Title: "Readiness to go live",
		Description: "Lists what a publication needs before it may be scheduled or published, as the database " +
			"judges it: title, summary and body present; a promo within its channel's limits for every default " +
			"channel of the project; alt text on every attached image. schedule and publish_now refuse it while any " +
			"check fails.",
		Annotations: readOnly,
	}, schema[getIn](func(p map[string]*jsonschema.Schema) {
		p["publication_id"].Pattern = uuidPattern
	}), s.readiness)

	addTool(s, &sdk.Tool{
		Name:  "get_changes_since_last_review",
		Title: "Changes since the last review",
		Description: "Says what changed in a publication between its previous review round and the latest one " +
			"(each submit_for_review starts a round): title and summary old and new, body edits with a few words of " +
			"context, promos per channel, media added, removed, re-captioned or moved; with the reviews written in " +
			"the previous round, so you can check each request was met.",
		Annotations: readOnly,
	}, schema[getIn](func(p map[string]*jsonschema.Schema) {
		p["publication_id"].Pattern = uuidPattern
	}), s.changesSinceLastReview)

	addTool(s, &sdk.Tool{
		Name:  "compare_rounds",
		Title: "Compare two review rounds",
		Description: "Says what changed in a publication from one review round to another, in the same form as " +
			"get_changes_since_last_review.",
		Annotations: readOnly,
	}, schema[compareIn](func(p map[string]*jsonschema.Schema) {
		p["publication_id"].Pattern = uuidPattern
		p["from_round"].Minimum, p["to_round"].Minimum = jsonschema.Ptr(1.0), jsonschema.Ptr(1.0)
	}), s.compareRounds)
}

// ReadinessOut is readiness' answer.
type ReadinessOut struct {
	Ready  bool           `json:"ready" jsonschema:"true when every check passes"`
	Checks []client.Check `json:"checks"`
}

func (s *Server) readiness(ctx context.Context, id identity, in getIn) (ReadinessOut, error) {
	checks, err := s.api.Readiness(ctx, id.token, in.PublicationID)
	if err != nil {
		return ReadinessOut{}, err
	}
	return ReadinessOut{Ready: client.Ready(checks), Checks: checks}, nil
}

type compareIn struct {
	PublicationID string `json:"publication_id" jsonschema:"the publication's id"`
	FromRound     int    `json:"from_round" jsonschema:"the earlier round, from 1"`
	ToRound       int    `json:"to_round" jsonschema:"the later round"`
}

// ChangesOut is what changed between two rounds, with the reviews of the earlier one.
type ChangesOut struct {
	rounds.Compact
	Rounds        int      `json:"rounds" jsonschema:"how many review rounds the publication has had"`
	Message       string   `json:"message,omitempty"`
	EarlierReview []Review `json:"reviews_of_from_round,omitempty" jsonschema:"what reviewers said in the earlier round"`
}

func (s *Server) changesSinceLastReview(ctx context.Context, id identity, in getIn) (ChangesOut, error) {
	revs, err := s.api.Revisions(ctx, id.token, in.PublicationID)
	if err != nil {
		return ChangesOut{}, err
	}
	switch n := len(revs); n {
	case 0:
		if err := s.visible(ctx, id, in.PublicationID); err != nil {
			return ChangesOut{}, err
		}
		return ChangesOut{Message: "This publication has not been submitted for review yet."}, nil
	case 1:
		return ChangesOut{Rounds: 1, Message: "This is the first review round; there is no earlier round to compare with."}, nil
	default:
		return s.changes(ctx, id, in.PublicationID, revs[n-2], revs[n-1], n)
	}
}

func (s *Server) compareRounds(ctx context.Context, id identity, in compareIn) (ChangesOut, error) {
	if in.FromRound < 1 || in.ToRound < 1 || in.FromRound == in.ToRound {
		return ChangesOut{}, refuse("from_round and to_round must be two different rounds, from 1.")
	}
	revs, err := s.api.Revisions(ctx, id.token, in.PublicationID)
	if err != nil {
		return ChangesOut{}, err
	}
	if len(revs) == 0 {
		if err := s.visible(ctx, id, in.PublicationID); err != nil {
			return ChangesOut{}, err
		}
	}
	var from, to *client.Revision
	for i := range revs {
		switch revs[i].Round {
		case in.FromRound:
			from = &revs[i]
		case in.ToRound:
			to = &revs[i]
		}
	}
	if from == nil || to == nil {
		return ChangesOut{}, noSuchRound(len(revs))
	}
	return s.changes(ctx, id, in.PublicationID, *from, *to, len(revs))
}

// noSuchRound refuses a comparison that names a round the publication has not had, saying
// which rounds it has: none before its first submit, and with one, no pair to compare.
func noSuchRound(n int) error {
	switch n {
	case 0:
		return refuse("This publication has not been submitted for review yet, so it has no rounds to compare.")
	case 1:
		return refuse("This publication has 1 review round; there is no other round to compare it with.")
	}
	return refuse("This publication has %d review rounds; compare rounds between 1 and %d.", n, n)
}

// changes compares two rounds and adds the reviews written in the earlier one.
func (s *Server) changes(ctx context.Context, id identity, pub string, from, to client.Revision, n int) (ChangesOut, error) {
	out := ChangesOut{Compact: rounds.Compare(from.Snapshot, to.Snapshot).ToCompact(from.Round, to.Round), Rounds: n}
	q := client.From("reviews").
		Select("id,verdict,notes,round,created_at,reviewer:profiles!reviewer_id(display_name)").
		Eq("publication_id", pub).
		Eq("round", strconv.Itoa(from.Round)).
		Order("created_at.asc")
	var rows []client.Review
	if _, err := s.api.Get(ctx, id.token, q, &rows); err != nil {
		return ChangesOut{}, err
	}
	for _, r := range rows {
		out.EarlierReview = append(out.EarlierReview, Review{ID: r.ID, Verdict: r.Verdict, Notes: r.Notes, Reviewer: name(r.Reviewer), At: r.CreatedAt})
	}
	return out, nil
}

// visible answers "not found" for a publication the caller cannot see, as every other tool
// does, rather than "no rounds".
func (s *Server) visible(ctx context.Context, id identity, pub string) error {
	var row struct {
		ID string `json:"id"`
	}
	_, err := s.api.Get(ctx, id.token, client.From("publications").Select("id").Eq("id", pub).Single(), &row)
	return err
}
