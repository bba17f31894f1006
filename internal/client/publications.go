package client

import (
	"context"
	"strings"
	"time"
)

// Projects lists the caller's projects (RLS shows only theirs) with members, their display
// names and the collections, ordered by name: enough to switch projects, know the caller's
// role and fill the queue's filters in one call.
func (c *Client) Projects(ctx context.Context, accessToken string) ([]Project, error) {
	var out []Project
	q := From("projects").
		Select("id,slug,name,timezone,default_channels,site_url,"+
			"collections(id,slug,name,kind),"+
			"project_members(user_id,role,profile:profiles(display_name))").
		Order("name.asc").
		Param("collections.order", "name.asc")
	_, err := c.Get(ctx, accessToken, q, &out)
	return out, err
}

// QueueFilter selects publications of one project for the review queue.
type QueueFilter struct {
	ProjectID    string
	Statuses     []string // empty means every status
	CollectionID string
	AuthorID     string
	// NotAuthorID leaves out what this user wrote ("what others wrote", a reviewer's start).
	NotAuthorID string
	// ScheduledFrom and ScheduledTo bound scheduled_for (inclusive, exclusive) when set.
	ScheduledFrom, ScheduledTo time.Time
	// Text is matched, case-insensitively, against title, summary and body, through
	// search_publications (an index serves it under row-level security).
	Text   string
	Offset int
	Limit  int
}

// SearchCap is how far the queue counts the matches of a rare phrase (one served by the trigram
// index): past it the count is SearchCap+1, meaning "more than SearchCap".
const SearchCap = 1000

// SearchExact is how many matches a text search in the queue walks at least, for an exact
// count where it is cheap: a phrase with fewer matches than this, or than the end of the page
// asked for, is counted exactly by the page's own statement.
const SearchExact = 100

// QueueCount is how many publications match a queue's filters.
type QueueCount struct {
	N int
	// Exact is false when N is an estimate (a common phrase: search_estimate), to be shown as
	// about N. An exact N past SearchCap means "more than SearchCap".
	Exact bool
}

// Queue returns one page of publications matching f, newest first (created_at, then id: pages
// never share or skip a row), with their count. Each row embeds its author, collection, promos,
// the database's readiness checks (readiness_checks: the one judge of going live, asked with
// the rows) and its latest status event (to say how long it has been in its status).
//
// A text search goes through search_publications with the filters as its arguments (applied
// before its cap) and asks for no more matches than the end of the page or SearchExact, so a
// common phrase costs a walk to the page, not through the project. When that many match there
// are more, and search_estimate counts them: exactly up to SearchCap+1 for a rare phrase, about
// for a common one (an estimate is kept for EstimateTTL, so the next pages do not ask again).
func (c *Client) Queue(ctx context.Context, accessToken string, f QueueFilter) ([]Publication, QueueCount, error) {
	t := strings.TrimSpace(f.Text)
	var args map[string]any
	walk := max(f.Offset+f.Limit, SearchExact) + 1 // a text search's max_rows
	q := From("publications")
	if t != "" {
		args = searchArgs(t, f)
		args["max_rows"] = walk
		q = FromRPC("search_publications", args)
	}
	q.Select("id,project_id,title,slug,status,version,created_at,updated_at,scheduled_for,"+
		"author:profiles!author_id(display_name),collection:collections(id,name),"+
		"promos(id),readiness_checks,"+
		"status_events(id,to_status,created_at)").
		Eq("project_id", f.ProjectID).
		Order("created_at.desc,id.desc").
		Param("status_events.order", "id.desc").
		Param("status_events.limit", "1").
		Range(f.Offset, f.Limit).
		Count()
	if t == "" {
		f.filter(q)
	}
	var out []Publication
	res, err := c.Get(ctx, accessToken, q, &out)
	if err != nil {
		return nil, QueueCount{}, err
	}
	n := QueueCount{N: res.Total, Exact: true}
	if t == "" || n.N < walk {
		return out, n, nil
	}
	delete(args, "max_rows")
	est, err := c.searchEstimate(ctx, accessToken, args)
	if err != nil {
		return nil, QueueCount{}, err
	}
	if est.Exact {
		return out, QueueCount{N: est.Total, Exact: true}, nil
	}
	// An estimate below what the walk found is wrong by at least the difference.
	return out, QueueCount{N: max(est.Total, n.N), Exact: false}, nil
}

// filter adds f's filters other than the project and the text to q (a read of publications).
func (f QueueFilter) filter(q *Query) {
	switch len(f.Statuses) {
	case 0:
	case 1:
		q.Eq("status", f.Statuses[0])
	default:
		q.In("status", f.Statuses...)
	}
	if f.CollectionID != "" {
		q.Eq("collection_id", f.CollectionID)
	}
	if f.AuthorID != "" {
		q.Eq("author_id", f.AuthorID)
	}
	if f.NotAuthorID != "" {
		q.Filter("author_id", "neq", f.NotAuthorID)
	}
	if !f.ScheduledFrom.IsZero() {
		q.Filter("scheduled_for", "gte", f.ScheduledFrom.UTC().Format(time.RFC3339))
	}
	if !f.ScheduledTo.IsZero() {
		q.Filter("scheduled_for", "lt", f.ScheduledTo.UTC().Format(time.RFC3339))
	}
}

// searchArgs are the arguments of search_publications and search_estimate for text and f's
// filters (migration 026): only those set, the others default to "any".
func searchArgs(text string, f QueueFilter) map[string]any {
	args := map[string]any{"phrase": text, "project": f.ProjectID}
	if len(f.Statuses) > 0 {
		args["statuses"] = f.Statuses
	}
	for k, v := range map[string]string{"collection": f.CollectionID, "author": f.AuthorID, "not_author": f.NotAuthorID} {
		if v != "" {
			args[k] = v
		}
	}
	if !f.ScheduledFrom.IsZero() {
		args["scheduled_from"] = f.ScheduledFrom.UTC().Format(time.RFC3339)
	}
	if !f.ScheduledTo.IsZero() {
		args["scheduled_to"] = f.ScheduledTo.UTC().Format(time.RFC3339)
	}
	return args
}

// likePattern turns search text into an ilike pattern that matches it anywhere: LIKE's own
// wildcards in the text are escaped, and PostgREST's * (its spelling of %) is dropped.
func likePattern(text string) string {
	text = strings.TrimSpace(strings.ReplaceAll(text, "*", ""))
	if text == "" {
		return ""
	}
	return "*" + likeEscapes.Replace(text) + "*"
}

// likeEscapes escapes LIKE's wildcards and its escape character; built once, like structural.
var likeEscapes = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// detailSelect is everything the publication page shows, in one request.
const detailSelect = "*," +
	"author:profiles!author_id(display_name)," +
	"collection:collections(id,slug,name)," +
	"promos(id,channel,body,link,updated_at,channels(slug,name,limits))," +
	"publication_media(position,media(id,storage_path,kind,mime_type,alt_text,width,height,bytes))," +
	"reviews(id,reviewer_id,verdict,notes,round,created_at,reviewer:profiles!reviewer_id(display_name))," +
	"status_events(id,from_status,to_status,actor_id,intent,note,via,created_at,actor:profiles!actor_id(display_name))," +
	"publication_revisions(" + revisionSelect + ")"

// Publication returns one publication of a project with its author, collection, promos (and
// their channels), media in position order, reviews newest first, the status history newest
// first and its latest two review rounds (newest first), so the page can say what changed. A publication the caller cannot see is an *Error with status 404.
func (c *Client) Publication(ctx context.Context, accessToken, projectID, id string) (*Publication, error) {
	q := From("publications").
		Select(detailSelect).
		Eq("id", id).
		Eq("project_id", projectID).
		Param("promos.order", "channel.asc").
		Param("publication_media.order", "position.asc").
		Param("reviews.order", "created_at.desc").
		Param("status_events.order", "id.desc").
		Param("publication_revisions.order", "round.desc").
		Param("publication_revisions.limit", "2").
		Single()
	var p Publication
	if _, err := c.Get(ctx, accessToken, q, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ScheduleFilter selects what the schedule shows: approved publications waiting for a date and
// those scheduled in [From, To), in the given projects (all of the caller's when empty).
type ScheduleFilter struct {
	ProjectIDs []string
	From, To   time.Time
	// Now, when set, adds every scheduled publication due before it (overdue: not yet
	// published), whatever the range.
	Now   time.Time
	Limit int
}

// Schedule returns scheduled publications by date, then approved ones (no date yet), most
// recently approved first.
func (c *Client) Schedule(ctx context.Context, accessToken string, f ScheduleFilter) ([]Publication, error) {
	overdue := ""
	if !f.Now.IsZero() {
		overdue = ",and(status.eq.scheduled,scheduled_for.lt." + Quote(f.Now.UTC().Format(time.RFC3339)) + ")"
	}
	q := From("publications").
		Select("id,project_id,title,slug,status,version,created_at,updated_at,scheduled_for,"+
			"author:profiles!author_id(display_name),collection:collections(id,name)").
		Or("status.eq.approved,and(status.eq.scheduled,scheduled_for.gte."+Quote(f.From.UTC().Format(time.RFC3339))+
			",scheduled_for.lt."+Quote(f.To.UTC().Format(time.RFC3339))+")"+overdue).
		Order("scheduled_for.asc.nullslast,updated_at.desc").
		Range(0, f.Limit)
	if len(f.ProjectIDs) > 0 {
		q.In("project_id", f.ProjectIDs...)
	}
	var out []Publication
	_, err := c.Get(ctx, accessToken, q, &out)
	return out, err
}

// Workflow RPC names, as DESIGN.md's workflow table fixes them.
const (
	RPCSubmit         = "submit_for_review"
	RPCWithdraw       = "withdraw"
	RPCApprove        = "approve"
	RPCRequestChanges = "request_changes"
	RPCSchedule       = "schedule"
	RPCUnschedule     = "unschedule"
	RPCPublishNow     = "publish_now"
	RPCArchive        = "archive"
	RPCRestore        = "restore"
	RPCReopen         = "reopen"
	RPCAddReview      = "add_review"
)

// TransitionArgs are the arguments of a workflow RPC. Only those the RPC declares are sent,
// since PostgREST refuses unknown argument names.
type TransitionArgs struct {
	PublicationID   string
	Note            string
	ScheduledFor    time.Time
	ExpectedVersion int // 0 means "do not check"
}

// Transition calls one workflow RPC (not add_review) and returns the updated publication. A
// stale ExpectedVersion or a status that does not allow the move is an *Error with status 409
// whose message says what happened.
func (c *Client) Transition(ctx context.Context, accessToken, rpc string, a TransitionArgs) (*Publication, error) {
	args := map[string]any{"publication_id": a.PublicationID}
	switch rpc {
	case RPCSubmit, RPCWithdraw, RPCApprove, RPCRequestChanges, RPCArchive, RPCReopen:
		args["note"] = a.Note
	case RPCSchedule:
		args["scheduled_for"] = a.ScheduledFor.UTC().Format(time.RFC3339)
	}
	if a.ExpectedVersion > 0 {
		args["expected_version"] = a.ExpectedVersion
	}
	var p Publication
	if err := c.RPC(ctx, accessToken, rpc, args, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// AddReview leaves a comment review without changing the publication's status.
func (c *Client) AddReview(ctx context.Context, accessToken, publicationID, note string) (*Review, error) {
	var r Review
	err := c.RPC(ctx, accessToken, RPCAddReview, map[string]any{"publication_id": publicationID, "note": note}, &r)
	if err != nil {
		return nil, err
	}
	return &r, nil
}
