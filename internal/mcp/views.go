package mcp

import (
	"net/url"
	"time"
	"unicode/utf8"

	"masthead/internal/client"
)

// pubRow is a publication as this package selects it: the client's row plus the project's
// slug, which every dashboard link needs.
type pubRow struct {
	client.Publication
	Project *struct {
		Slug string `json:"slug"`
		Name string `json:"name"`
	} `json:"project,omitempty"`
}

// Selects shared by the read tools. Embeds are aliased as client.Publication names them.
const (
	authorEmbed     = "author:profiles!author_id(display_name)"
	collectionEmbed = "collection:collections(id,slug,name)"
	pubColumns      = "id,project_id,title,slug,summary,status,version,scheduled_for,published_at,created_at,updated_at"
	summarySelect   = pubColumns + ",project:projects(slug,name)," + authorEmbed + "," + collectionEmbed
)

// Publication is one publication in a list: enough to choose it and act on it.
type Publication struct {
	ID           string     `json:"id"`
	Project      string     `json:"project" jsonschema:"slug of the project it belongs to"`
	Title        string     `json:"title"`
	Status       string     `json:"status" jsonschema:"draft, reviewing, changes_requested, approved, scheduled, published or archived"`
	Version      int        `json:"version" jsonschema:"current version; pass it as expected_version to workflow tools"`
	Collection   string     `json:"collection,omitempty" jsonschema:"name of its collection (section or campaign)"`
	Author       string     `json:"author,omitempty"`
	Summary      string     `json:"summary,omitempty"`
	ScheduledFor *time.Time `json:"scheduled_for,omitempty"`
	PublishedAt  *time.Time `json:"published_at,omitempty"`
	UpdatedAt    time.Time  `json:"updated_at"`
	URL          string     `json:"url" jsonschema:"the publication's page in the dashboard"`
}

// summary turns a row into its list form.
func (s *Server) summary(p pubRow) Publication {
	out := Publication{
		ID: p.ID, Title: p.Title, Status: p.Status, Version: p.Version, Summary: clip(p.Summary, 280),
		ScheduledFor: p.ScheduledFor, PublishedAt: p.PublishedAt, UpdatedAt: p.UpdatedAt,
	}
	if p.Project != nil {
		out.Project = p.Project.Slug
		out.URL = s.pubURL(p.Project.Slug, p.ID)
	}
	if p.Collection != nil {
		out.Collection = p.Collection.Name
	}
	if p.Author != nil {
		out.Author = p.Author.DisplayName
	}
	return out
}

// pubURL is the dashboard page of a publication.
func (s *Server) pubURL(project, id string) string {
	return s.base + "/p/" + url.PathEscape(project) + "/publications/" + url.PathEscape(id)
}

// projectURL is a page of a project in the dashboard, e.g. "queue" or "schedule".
func (s *Server) projectURL(project, page string) string {
	return s.base + "/p/" + url.PathEscape(project) + "/" + page
}

// clip shortens s to at most n runes, marking the cut, so list results stay small.
func clip(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s // most summaries: no copy to runes
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
