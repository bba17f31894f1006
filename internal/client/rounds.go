package client

import (
	"context"
	"strconv"
	"time"

	"masthead/internal/rounds"
)

// Revision is one review round of a publication: what its submitter sent for review.
type Revision struct {
	Round       int             `json:"round"`
	Version     int             `json:"version"`
	Snapshot    rounds.Snapshot `json:"snapshot"`
	SubmittedBy *string         `json:"submitted_by"`
	CreatedAt   time.Time       `json:"created_at"`
	Submitter   *Profile        `json:"submitter,omitempty"`
}

// revisionSelect is a revision with its submitter's name.
const revisionSelect = "round,version,snapshot,submitted_by,created_at,submitter:profiles!submitted_by(display_name)"

// Revisions returns the rounds of a publication, oldest first: all of them, or only those
// named. A publication the caller cannot see has none.
func (c *Client) Revisions(ctx context.Context, accessToken, publicationID string, only ...int) ([]Revision, error) {
	q := From("publication_revisions").Select(revisionSelect).Eq("publication_id", publicationID).Order("round.asc")
	if len(only) > 0 {
		ns := make([]string, len(only))
		for i, n := range only {
			ns[i] = strconv.Itoa(n)
		}
		q.In("round", ns...)
	}
	var out []Revision
	_, err := c.Get(ctx, accessToken, q, &out)
	return out, err
}

// Check is one line of readiness(): what a publication needs before it may go live.
type Check struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Readiness asks the database, the one place readiness is defined, what publicationID still
// needs before it may be scheduled or published.
func (c *Client) Readiness(ctx context.Context, accessToken, publicationID string) ([]Check, error) {
	var out []Check
	err := c.RPC(ctx, accessToken, "readiness", map[string]any{"publication_id": publicationID}, &out)
	return out, err
}

// Ready reports whether every check passes.
func Ready(checks []Check) bool {
	for _, c := range checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// InboxEntry is one thing waiting on the caller (my_inbox()).
type InboxEntry struct {
	PublicationID string    `json:"publication_id"`
	ProjectID     string    `json:"project_id"`
	ProjectSlug   string    `json:"project_slug"`
	Title         string    `json:"title"`
	Status        string    `json:"status"`
	Reason        string    `json:"reason"` // review, changes_requested, stale_draft, needs_date, due_not_ready, overdue
	Detail        string    `json:"detail"`
	Since         time.Time `json:"since"`
	// ReasonTotal is how many wait for this reason in all; Inbox returns a few of each.
	ReasonTotal int `json:"reason_total"`
}

// Inbox lists what waits on the caller across their projects, oldest first, at most perReason
// entries for each reason (each entry says how many wait for its reason in all).
func (c *Client) Inbox(ctx context.Context, accessToken string, perReason int) ([]InboxEntry, error) {
	var out []InboxEntry
	err := c.RPC(ctx, accessToken, "my_inbox", map[string]any{"max_per_reason": perReason}, &out)
	return out, err
}

// InboxTotal is how many things wait in all, from the entries Inbox returned.
func InboxTotal(entries []InboxEntry) int {
	per := map[string]int{}
	for _, e := range entries {
		per[e.Reason] = e.ReasonTotal
	}
	n := 0
	for _, v := range per {
		n += v
	}
	return n
}

// Visit records that the caller is looking at a list (a project's queue, the inbox) and returns
// when they last looked at it before this sitting, or nil the first time: the dashboard marks
// what changed since as new. It is kept per person in the database, not in a cookie.
func (c *Client) Visit(ctx context.Context, accessToken, list string) (*time.Time, error) {
	var prev *time.Time
	err := c.RPC(ctx, accessToken, "visit", map[string]any{"list": list}, &prev)
	return prev, err
}

// SchedulerStatus is when the service's scheduler loop last ran and how often it runs.
type SchedulerStatus struct {
	LastRunAt  *time.Time `json:"last_run_at"`
	IntervalMS int        `json:"interval_ms"`
}

// Scheduler asks when the scheduler last ran (scheduler_status()).
func (c *Client) Scheduler(ctx context.Context, accessToken string) (SchedulerStatus, error) {
	var rows []SchedulerStatus
	if err := c.RPC(ctx, accessToken, "scheduler_status", map[string]any{}, &rows); err != nil {
		return SchedulerStatus{}, err
	}
	if len(rows) == 0 {
		return SchedulerStatus{}, nil
	}
	return rows[0], nil
}
