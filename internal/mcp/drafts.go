package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/client"
)

// The drafting tools call the database's create_draft and update_draft, as the dashboard's
// editor does, so an agent drafts and revises under the same rules as a person: editors, leads
// and owners; only drafts and publications sent back with changes requested; a save against a
// newer version is refused with the version it is at.
func (s *Server) addDraftTools() {
	change := &sdk.ToolAnnotations{DestructiveHint: new(bool), OpenWorldHint: new(bool)}
	addTool(s, &sdk.Tool{
		Name:  "create_draft",
		Title: "Create a draft",
		Description: "Creates a new publication as a draft in a project, written by you: a title, a summary and a body " +
			"in markdown, optionally in a collection. Its slug is derived from the title. Editors, leads and owners. " +
			"Revise it with update_draft and send it to review with submit_for_review.",
		Annotations: change,
	}, schema[createDraftIn](func(p map[string]*jsonschema.Schema) {
		p["title"].MinLength = jsonschema.Ptr(1)
		p["title"].MaxLength = jsonschema.Ptr(500)
	}), s.createDraft)
	addTool(s, &sdk.Tool{
		Name:  "update_draft",
		Title: "Revise a draft",
		Description: "Changes the title, summary, body or collection of a draft, or of a publication sent back with " +
			"changes requested; fields you leave out keep their value. Pass the version you read as expected_version: " +
			"if someone saved meanwhile nothing changes and you are told the current version, so read it again " +
			"(get_publication) and bring your changes over. Editors, leads and owners.",
		Annotations: change,
	}, schema[updateDraftIn](func(p map[string]*jsonschema.Schema) {
		p["publication_id"].Pattern = uuidPattern
		p["publication_id"].Description = descPublicationID
		p["expected_version"].Minimum = jsonschema.Ptr(1.0)
	}), s.updateDraft)
}

type createDraftIn struct {
	Project    string `json:"project" jsonschema:"the project's slug (from list_projects)"`
	Title      string `json:"title"`
	Summary    string `json:"summary,omitempty" jsonschema:"one or two sentences shown in lists and used by promos"`
	Body       string `json:"body,omitempty" jsonschema:"the article in markdown"`
	Collection string `json:"collection,omitempty" jsonschema:"slug of a collection of the project (from list_projects)"`
}

type updateDraftIn struct {
	PublicationID   string  `json:"publication_id"`
	ExpectedVersion int     `json:"expected_version" jsonschema:"the version you last read; a save against a newer one is refused"`
	Title           *string `json:"title,omitempty"`
	Summary         *string `json:"summary,omitempty"`
	Body            *string `json:"body,omitempty" jsonschema:"the whole article in markdown (it replaces the current body)"`
	Collection      *string `json:"collection,omitempty" jsonschema:"slug of a collection of the project, or an empty string for none"`
}

func (s *Server) createDraft(ctx context.Context, id identity, in createDraftIn) (TransitionOut, error) {
	project, err := s.projectBySlug(ctx, id, in.Project)
	if err != nil {
		return TransitionOut{}, err
	}
	d := client.Draft{Title: in.Title, Summary: in.Summary, Body: in.Body}
	if in.Collection != "" {
		if d.CollectionID, err = s.collectionID(ctx, id, project, in.Collection); err != nil {
			return TransitionOut{}, err
		}
	}
	p, err := s.api.CreateDraft(ctx, id.token, project.ID, d)
	if err != nil {
		return TransitionOut{}, err
	}
	return s.drafted(ctx, id, "Created", p), nil
}

func (s *Server) updateDraft(ctx context.Context, id identity, in updateDraftIn) (TransitionOut, error) {
	args := map[string]any{"publication_id": in.PublicationID, "expected_version": in.ExpectedVersion}
	for name, v := range map[string]*string{"title": in.Title, "summary": in.Summary, "body": in.Body} {
		if v != nil {
			args[name] = *v
		}
	}
	if in.Collection != nil {
		if *in.Collection == "" {
			args["clear_collection"] = true
		} else {
			var row pubRow
			q := client.From("publications").Select("id,project_id,project:projects(slug,name)").Eq("id", in.PublicationID).Single()
			if _, err := s.api.Get(ctx, id.token, q, &row); err != nil {
				return TransitionOut{}, err
			}
			cid, err := s.collectionID(ctx, id, client.Project{ID: row.ProjectID, Slug: row.Project.Slug}, *in.Collection)
			if err != nil {
				return TransitionOut{}, err
			}
			args["collection_id"] = cid
		}
	}
	var p client.Publication
	if err := s.api.RPC(ctx, id.token, "update_draft", args, &p); err != nil {
		return TransitionOut{}, err
	}
	return s.drafted(ctx, id, "Saved", &p), nil
}

// drafted describes a written draft as the workflow tools describe a move.
func (s *Server) drafted(ctx context.Context, id identity, verb string, p *client.Publication) TransitionOut {
	pub := s.summary(pubRow{Publication: *p})
	if full, err := s.readSummary(ctx, id, p.ID); err == nil {
		pub = full
	}
	return TransitionOut{
		Message:     fmt.Sprintf("%s %q, %s (version %d).", verb, pub.Title, statusWords(pub.Status, nil), pub.Version),
		Publication: pub,
	}
}

// projectBySlug finds one of the caller's projects.
func (s *Server) projectBySlug(ctx context.Context, id identity, slug string) (client.Project, error) {
	var rows []client.Project
	if _, err := s.api.Get(ctx, id.token, client.From("projects").Select("id,slug,name").Eq("slug", slug), &rows); err != nil {
		return client.Project{}, err
	}
	if len(rows) == 0 {
		return client.Project{}, refuse("There is no project %q among yours; list_projects lists them.", slug)
	}
	return rows[0], nil
}

// collectionID finds a collection of project by slug, naming the project's collections if none matches.
func (s *Server) collectionID(ctx context.Context, id identity, project client.Project, slug string) (string, error) {
	var rows []client.Collection
	q := client.From("collections").Select("id,slug,name").Eq("project_id", project.ID).Order("slug.asc")
	if _, err := s.api.Get(ctx, id.token, q, &rows); err != nil {
		return "", err
	}
	names := make([]string, 0, len(rows))
	for _, c := range rows {
		if c.Slug == slug {
			return c.ID, nil
		}
		names = append(names, c.Slug)
	}
	if len(names) == 0 {
		return "", refuse("Project %q has no collections; leave collection out.", project.Slug)
	}
	return "", refuse("Project %q has no collection %q; use one of: %s.", project.Slug, slug, strings.Join(names, ", "))
}
