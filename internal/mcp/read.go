package mcp

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/channels"
	"masthead/internal/client"
)

// readOnly marks tools that change nothing, so clients may run them without asking.
var readOnly = &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}

func (s *Server) addReadTools() {
	addTool(s, &sdk.Tool{
		Name:  "list_projects",
		Title: "List projects",
		Description: "Lists the projects you belong to with your role in each (owner, lead, editor, reviewer, viewer), " +
			"their collections (sections and campaigns) and default promo channels. Call it first: other tools take a " +
			"project's slug, and your role says which workflow tools you may use there.",
		Annotations: readOnly,
	}, schema[struct{}](nil), s.listProjects)

	addTool(s, &sdk.Tool{
		Name:  "search_publications",
		Title: "Search publications",
		Description: "Finds publications in your projects by status, collection, words in the title, summary or body, and a " +
			"date range on when they were created, last updated, scheduled or published. Returns one page (newest " +
			"first; soonest first for scheduled) with the total and the next offset. Read one in full with get_publication.",
		Annotations: readOnly,
	}, schema[searchIn](func(p map[string]*jsonschema.Schema) {
		p["status"].Items.Enum = statuses
		p["date_field"].Enum = []any{"created", "updated", "scheduled", "published"}
		p["limit"].Minimum, p["limit"].Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(100.0)
		p["offset"].Minimum = jsonschema.Ptr(0.0)
	}), s.searchPublications)

	addTool(s, &sdk.Tool{
		Name:  "get_publication",
		Title: "Get a publication",
		Description: "Reads one publication in full: its markdown body, promos per channel with their length against the " +
			"channel's limit, attached media, reviews (newest first) and its status history (newest first, who did " +
			"what and why). Use the version it returns as expected_version when you act on it.",
		Annotations: readOnly,
	}, schema[getIn](func(p map[string]*jsonschema.Schema) {
		p["publication_id"].Pattern = uuidPattern
	}), s.getPublication)

	addTool(s, &sdk.Tool{
		Name:  "review_queue",
		Title: "Review queue",
		Description: "Lists publications waiting for review (status reviewing), longest waiting first, with who submitted " +
			"each, when and their note. Reviewers, leads and owners act on them with approve, request_changes or add_review.",
		Annotations: readOnly,
	}, schema[queueIn](func(p map[string]*jsonschema.Schema) {
		p["limit"].Minimum, p["limit"].Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(100.0)
	}), s.reviewQueue)

	addTool(s, &sdk.Tool{
		Name:  "list_schedule",
		Title: "Publishing schedule",
		Description: "Shows what will be published when: scheduled publications in date order (optionally within a date " +
			"range) and approved ones still waiting for a date. Leads and owners act with schedule, unschedule and publish_now.",
		Annotations: readOnly,
	}, schema[scheduleIn](func(p map[string]*jsonschema.Schema) {
		p["limit"].Minimum, p["limit"].Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(100.0)
	}), s.listSchedule)
}

// Project is one of the caller's projects.
type Project struct {
	ID              string       `json:"id"`
	Slug            string       `json:"slug"`
	Name            string       `json:"name"`
	Role            string       `json:"role" jsonschema:"your role here: owner, lead, editor, reviewer or viewer"`
	Timezone        string       `json:"timezone"`
	DefaultChannels []string     `json:"default_channels" jsonschema:"channel slugs promos are usually written for"`
	Collections     []Collection `json:"collections"`
	QueueURL        string       `json:"queue_url"`
	ScheduleURL     string       `json:"schedule_url"`
}

// Collection is a section or campaign of a project.
type Collection struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
	Kind string `json:"kind" jsonschema:"section or campaign"`
}

// ProjectsOut is list_projects' answer.
type ProjectsOut struct {
	Projects []Project `json:"projects"`
}

func (s *Server) listProjects(ctx context.Context, id identity, _ struct{}) (ProjectsOut, error) {
	// Only the caller's own membership is embedded: the role is for display, RLS already
	// limited the projects to theirs.
	q := client.From("projects").
		Select("id,slug,name,timezone,default_channels,collections(id,slug,name,kind),project_members(user_id,role)").
		Eq("project_members.user_id", id.userID).
		Param("collections.order", "name.asc").
		Order("name.asc")
	var rows []client.Project
	if _, err := s.get(ctx, id.token, q, &rows); err != nil {
		return ProjectsOut{}, err
	}
	out := ProjectsOut{Projects: make([]Project, 0, len(rows))}
	for _, p := range rows {
		cols := make([]Collection, 0, len(p.Collections))
		for _, c := range p.Collections {
			cols = append(cols, Collection{ID: c.ID, Slug: c.Slug, Name: c.Name, Kind: c.Kind})
		}
		out.Projects = append(out.Projects, Project{
			ID: p.ID, Slug: p.Slug, Name: p.Name, Role: p.RoleOf(id.userID), Timezone: p.Timezone,
			DefaultChannels: p.DefaultChannels, Collections: cols,
			QueueURL: s.projectURL(p.Slug, "queue"), ScheduleURL: s.projectURL(p.Slug, "schedule"),
		})
	}
	return out, nil
}

type searchIn struct {
	Project    string   `json:"project,omitempty" jsonschema:"project slug (e.g. northwind) or id; omit to search all your projects"`
	Status     []string `json:"status,omitempty" jsonschema:"only these statuses; omit for all"`
	Collection string   `json:"collection,omitempty" jsonschema:"collection slug or id (see list_projects)"`
	Text       string   `json:"text,omitempty" jsonschema:"words to find in the title, summary or body, case-insensitive"`
	DateField  string   `json:"date_field,omitempty" jsonschema:"which date from and to bound: created, updated (default), scheduled or published"`
	From       string   `json:"from,omitempty" jsonschema:"inclusive start: a date (2026-05-01) or RFC 3339 time, UTC unless an offset is given"`
	To         string   `json:"to,omitempty" jsonschema:"end: a date includes that whole day; an RFC 3339 time is exclusive"`
	Limit      int      `json:"limit,omitempty" jsonschema:"page size, 1-100 (default 20)"`
	Offset     int      `json:"offset,omitempty" jsonschema:"rows to skip, from next_offset of the previous page"`
}

// PageOut is a page of publications.
type PageOut struct {
	Total        int           `json:"total" jsonschema:"how many publications match in all"`
	Publications []Publication `json:"publications"`
	NextOffset   *int          `json:"next_offset,omitempty" jsonschema:"pass as offset for the next page; absent on the last page"`
}

// dateColumns maps date_field to its column.
var dateColumns = map[string]string{"created": "created_at", "updated": "updated_at", "scheduled": "scheduled_for", "published": "published_at"}

func (s *Server) searchPublications(ctx context.Context, id identity, in searchIn) (PageOut, error) {
	col := dateColumns[in.DateField]
	if col == "" {
		col = "updated_at"
	}
	order := col + ".desc.nullslast,id.desc"
	if col == "scheduled_for" {
		order = "scheduled_for.asc.nullslast,id.asc"
	}
	q := client.From("publications")
	if t := strings.TrimSpace(in.Text); t != "" {
		// search_publications narrows to the caller's projects itself and matches through
		// an index, which a filter under row-level security cannot.
		args := map[string]any{"phrase": t}
		if isUUID(in.Project) {
			args["project"] = in.Project
		}
		q = client.FromRPC("search_publications", args)
	}
	q.Order(order).Count()
	sel := pubColumns + "," + authorEmbed
	sel += "," + scope(q, "project", in.Project, "project_id", "project:projects", "slug,name")
	sel += "," + scope(q, "collection", in.Collection, "collection_id", "collection:collections", "id,slug,name")
	q.Select(sel)
	switch len(in.Status) {
	case 0:
	case 1:
		q.Eq("status", in.Status[0])
	default:
		q.In("status", in.Status...)
	}
	if err := timeRange(q, col, in.From, in.To); err != nil {
		return PageOut{}, err
	}
	limit := pageSize(in.Limit)
	q.Range(max(in.Offset, 0), limit)
	var rows []pubRow
	res, err := s.get(ctx, id.token, q, &rows)
	if err != nil {
		return PageOut{}, err
	}
	out := PageOut{Total: res.Total, Publications: s.summaries(rows)}
	if next := max(in.Offset, 0) + len(rows); len(rows) == limit && next < res.Total {
		out.NextOffset = &next
	}
	return out, nil
}

// scope filters q to one project or collection given by id or slug and returns the embed to
// select for it. A slug is matched through an inner embed (rows without a match drop out),
// so no extra request is needed to resolve it.
func scope(q *client.Query, alias, value, idColumn, embed, columns string) string {
	switch {
	case value == "":
		return embed + "(" + columns + ")"
	case isUUID(value):
		q.Eq(idColumn, value)
		return embed + "(" + columns + ")"
	default:
		q.Eq(alias+".slug", value)
		return embed + "!inner(" + columns + ")"
	}
}

// timeRange bounds column by from (inclusive) and to (exclusive; a date includes its day).
func timeRange(q *client.Query, column, from, to string) error {
	if from != "" {
		t, err := parseTime("from", from, false)
		if err != nil {
			return err
		}
		q.Filter(column, "gte", t.UTC().Format(time.RFC3339))
	}
	if to != "" {
		t, err := parseTime("to", to, true)
		if err != nil {
			return err
		}
		q.Filter(column, "lt", t.UTC().Format(time.RFC3339))
	}
	return nil
}

// pageSize is limit within 1..100, 20 when unset.
func pageSize(limit int) int {
	switch {
	case limit <= 0:
		return 20
	case limit > 100:
		return 100
	default:
		return limit
	}
}

func (s *Server) summaries(rows []pubRow) []Publication {
	out := make([]Publication, 0, len(rows))
	for _, r := range rows {
		out = append(out, s.summary(r))
	}
	return out
}

type getIn struct {
	PublicationID string `json:"publication_id" jsonschema:"the publication's id"`
}

// PublicationDetail is get_publication's answer.
type PublicationDetail struct {
	Publication
	Body          string   `json:"body" jsonschema:"markdown"`
	BodyTruncated bool     `json:"body_truncated,omitempty" jsonschema:"the body was cut to keep the answer small; the dashboard shows all of it"`
	Promos        []Promo  `json:"promos"`
	Media         []Media  `json:"media"`
	Reviews       []Review `json:"reviews" jsonschema:"newest first"`
	History       []Event  `json:"history" jsonschema:"status changes, newest first"`
}

// Promo is a publication's text for one channel, measured as that network counts.
type Promo struct {
	ID        string `json:"id"`
	Channel   string `json:"channel"`
	Body      string `json:"body"`
	Link      string `json:"link,omitempty"`
	Length    string `json:"length" jsonschema:"used / allowed, in the channel's unit"`
	OverLimit bool   `json:"over_limit,omitempty" jsonschema:"the network would refuse or cut it; shorten it with upsert_promo"`
}

// Media is an image or video attached to a publication.
type Media struct {
	ID       string `json:"id"`
	Position int    `json:"position"`
	Kind     string `json:"kind"`
	MimeType string `json:"mime_type"`
	AltText  string `json:"alt_text,omitempty"`
	Path     string `json:"path" jsonschema:"object path in the media bucket"`
	Width    *int   `json:"width,omitempty"`
	Height   *int   `json:"height,omitempty"`
}

// Review is a verdict or comment on a publication.
type Review struct {
	ID       string    `json:"id"`
	Verdict  string    `json:"verdict" jsonschema:"approved, changes_requested or comment"`
	Notes    string    `json:"notes,omitempty"`
	Reviewer string    `json:"reviewer,omitempty"`
	At       time.Time `json:"at"`
}

// Event is one status change in the audit.
type Event struct {
	From   string    `json:"from"`
	To     string    `json:"to"`
	Intent string    `json:"intent"`
	Note   string    `json:"note,omitempty"`
	Actor  string    `json:"actor,omitempty" jsonschema:"who made it; absent when the scheduler published"`
	Via    string    `json:"via" jsonschema:"rpc (a workflow action), direct (an edit) or scheduler"`
	At     time.Time `json:"at"`
}

// maxBody caps the body in get_publication: long enough for any article a promo is written
// from, short enough not to flood a model's context.
const maxBody = 20000

const detailSelect = "*,project:projects(slug,name)," + authorEmbed + "," + collectionEmbed + "," +
	"promos(id,channel,body,link,updated_at,channels(slug,name,limits))," +
	"publication_media(position,media(id,storage_path,kind,mime_type,alt_text,width,height,bytes))," +
	"reviews(id,reviewer_id,verdict,notes,created_at,reviewer:profiles!reviewer_id(display_name))," +
	"status_events(id,from_status,to_status,actor_id,intent,note,via,created_at,actor:profiles!actor_id(display_name))"

func (s *Server) getPublication(ctx context.Context, id identity, in getIn) (PublicationDetail, error) {
	q := client.From("publications").
		Select(detailSelect).
		Eq("id", in.PublicationID).
		Param("promos.order", "channel.asc").
		Param("publication_media.order", "position.asc").
		Param("reviews.order", "created_at.desc").
		Param("status_events.order", "id.desc").
		Single()
	var p pubRow
	if _, err := s.get(ctx, id.token, q, &p); err != nil {
		return PublicationDetail{}, err
	}
	out := PublicationDetail{
		Publication: s.summary(p),
		Body:        clip(p.Body, maxBody),
		Promos:      make([]Promo, 0, len(p.Promos)),
		Media:       make([]Media, 0, len(p.Media)),
		Reviews:     make([]Review, 0, len(p.Reviews)),
		History:     make([]Event, 0, len(p.Events)),
	}
	out.Summary = p.Summary
	out.BodyTruncated = out.Body != p.Body
	for _, pr := range p.Promos {
		out.Promos = append(out.Promos, promoOut(pr.ID, pr.Channel, pr.Body, deref(pr.Link), pr.ChannelInfo))
	}
	for _, m := range p.Media {
		out.Media = append(out.Media, Media{
			ID: m.Media.ID, Position: m.Position, Kind: m.Media.Kind, MimeType: m.Media.MimeType,
			AltText: m.Media.AltText, Path: m.Media.StoragePath, Width: m.Media.Width, Height: m.Media.Height,
		})
	}
	for _, r := range p.Reviews {
		out.Reviews = append(out.Reviews, Review{ID: r.ID, Verdict: r.Verdict, Notes: r.Notes, Reviewer: name(r.Reviewer), At: r.CreatedAt})
	}
	for _, e := range p.Events {
		out.History = append(out.History, Event{
			From: e.FromStatus, To: e.ToStatus, Intent: e.Intent, Note: e.Note, Actor: name(e.Actor), Via: e.Via, At: e.CreatedAt,
		})
	}
	return out, nil
}

// promoOut measures a promo against its channel, when the channel row is known.
func promoOut(id, channel, body, link string, ch *client.Channel) Promo {
	p := Promo{ID: id, Channel: channel, Body: body, Link: link}
	if ch != nil {
		m := channels.Of(body, link, limits(ch.Limits))
		p.Length, p.OverLimit = describe(m), m.Over()
	}
	return p
}

// limits converts the client's view of channels.limits to the measuring package's.
func limits(l client.ChannelLimits) channels.Limits {
	return channels.Limits{MaxChars: l.MaxChars, Count: l.Count, URLChars: l.URLChars, MaxHashtags: l.MaxHashtags}
}

// describe words a measure as "212 / 280 chars" (plus hashtags when capped). The unit agrees
// with the number it follows: the limit when there is one, else the count.
func describe(m channels.Measure) string {
	s := counted(m.Used, m.Unit)
	if m.Max > 0 {
		s = strconv.Itoa(m.Used) + " / " + counted(m.Max, m.Unit)
	}
	if m.MaxTags > 0 {
		s += ", " + strconv.Itoa(m.Hashtags) + " / " + counted(m.MaxTags, "hashtags")
	}
	return s
}

// counted is n of a plural noun, made singular for one: "280 chars", "1 byte".
func counted(n int, plural string) string {
	if n == 1 {
		return "1 " + strings.TrimSuffix(plural, "s")
	}
	return strconv.Itoa(n) + " " + plural
}

func name(p *client.Profile) string {
	if p == nil {
		return ""
	}
	return p.DisplayName
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

type queueIn struct {
	Project string `json:"project,omitempty" jsonschema:"project slug or id; omit for all your projects"`
	Limit   int    `json:"limit,omitempty" jsonschema:"how many, 1-100 (default 20)"`
}

// QueueItem is a publication waiting for review.
type QueueItem struct {
	Publication
	SubmittedBy string     `json:"submitted_by,omitempty"`
	SubmittedAt *time.Time `json:"submitted_at,omitempty"`
	Note        string     `json:"note,omitempty" jsonschema:"what the submitter said"`
}

// QueueOut is review_queue's answer.
type QueueOut struct {
	Total int         `json:"total"`
	Items []QueueItem `json:"items"`
}

func (s *Server) reviewQueue(ctx context.Context, id identity, in queueIn) (QueueOut, error) {
	q := client.From("publications").
		Eq("status", "reviewing").
		// Submitted publications cannot be edited, so updated_at is when they were submitted.
		Order("updated_at.asc,id.asc").
		Param("status_events.order", "id.desc").
		Param("status_events.limit", "1").
		Range(0, pageSize(in.Limit)).
		Count()
	q.Select(pubColumns + "," + authorEmbed + "," + collectionEmbed + "," +
		scope(q, "project", in.Project, "project_id", "project:projects", "slug,name") + "," +
		"status_events(to_status,note,created_at,actor:profiles!actor_id(display_name))")
	var rows []pubRow
	res, err := s.get(ctx, id.token, q, &rows)
	if err != nil {
		return QueueOut{}, err
	}
	out := QueueOut{Total: res.Total, Items: make([]QueueItem, 0, len(rows))}
	for _, r := range rows {
		it := QueueItem{Publication: s.summary(r)}
		if len(r.Events) > 0 && r.Events[0].ToStatus == "reviewing" {
			e := r.Events[0]
			it.SubmittedBy, it.SubmittedAt, it.Note = name(e.Actor), &e.CreatedAt, e.Note
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

type scheduleIn struct {
	Project       string `json:"project,omitempty" jsonschema:"project slug or id; omit for all your projects"`
	From          string `json:"from,omitempty" jsonschema:"only scheduled for this date or time onwards (default: everything scheduled)"`
	To            string `json:"to,omitempty" jsonschema:"only scheduled before this; a date includes that whole day"`
	ScheduledOnly bool   `json:"scheduled_only,omitempty" jsonschema:"leave out approved publications that have no date yet"`
	Limit         int    `json:"limit,omitempty" jsonschema:"how many of each list, 1-100 (default 20)"`
}

// ScheduleOut is list_schedule's answer.
type ScheduleOut struct {
	Scheduled    []Publication `json:"scheduled" jsonschema:"by publication time, soonest first"`
	AwaitingDate []Publication `json:"awaiting_date,omitempty" jsonschema:"approved, not yet scheduled; most recently approved first"`
}

func (s *Server) listSchedule(ctx context.Context, id identity, in scheduleIn) (ScheduleOut, error) {
	limit := pageSize(in.Limit)
	q := client.From("publications").Eq("status", "scheduled").Order("scheduled_for.asc,id.asc").Range(0, limit)
	q.Select(pubColumns + "," + authorEmbed + "," + collectionEmbed + "," +
		scope(q, "project", in.Project, "project_id", "project:projects", "slug,name"))
	if err := timeRange(q, "scheduled_for", in.From, in.To); err != nil {
		return ScheduleOut{}, err
	}
	var rows []pubRow
	if _, err := s.get(ctx, id.token, q, &rows); err != nil {
		return ScheduleOut{}, err
	}
	out := ScheduleOut{Scheduled: s.summaries(rows)}
	if in.ScheduledOnly {
		return out, nil
	}
	q = client.From("publications").Eq("status", "approved").Order("updated_at.desc,id.desc").Range(0, limit)
	q.Select(pubColumns + "," + authorEmbed + "," + collectionEmbed + "," +
		scope(q, "project", in.Project, "project_id", "project:projects", "slug,name"))
	var approved []pubRow
	if _, err := s.get(ctx, id.token, q, &approved); err != nil {
		return ScheduleOut{}, err
	}
	out.AwaitingDate = s.summaries(approved)
	return out, nil
}
