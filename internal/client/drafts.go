package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// Draft is what a person writes: the fields create_draft and update_draft take.
type Draft struct {
	Title, Summary, Body string
	// CollectionID is the collection's id; "" means none.
	CollectionID string
	// Slug is the publication's slug; "" derives one from the title (create) or keeps it (update).
	Slug string
}

// CreateDraft creates a draft in a project as the caller, its author, and returns it.
func (c *Client) CreateDraft(ctx context.Context, accessToken, projectID string, d Draft) (*Publication, error) {
	args := map[string]any{"project_id": projectID, "title": d.Title, "summary": d.Summary, "body": d.Body}
	if d.CollectionID != "" {
		args["collection_id"] = d.CollectionID
	}
	if d.Slug != "" {
		args["slug"] = d.Slug
	}
	var p Publication
	if err := c.RPC(ctx, accessToken, "create_draft", args, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// UpdateDraft saves every field of d on a draft, if it is still at expectedVersion; otherwise
// it is an *Error with status 409 saying which version it is at, and nothing changed.
func (c *Client) UpdateDraft(ctx context.Context, accessToken, publicationID string, expectedVersion int, d Draft) (*Publication, error) {
	args := map[string]any{"publication_id": publicationID, "expected_version": expectedVersion,
		"title": d.Title, "summary": d.Summary, "body": d.Body}
	if d.CollectionID != "" {
		args["collection_id"] = d.CollectionID
	} else {
		args["clear_collection"] = true
	}
	if d.Slug != "" {
		args["slug"] = d.Slug
	}
	var p Publication
	if err := c.RPC(ctx, accessToken, "update_draft", args, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// DeleteDraft deletes a draft that was never submitted. One with a history is an *Error with
// status 409 (archive it instead); one the caller may not delete, or cannot see, is a 404.
func (c *Client) DeleteDraft(ctx context.Context, accessToken, publicationID string) error {
	ok, err := c.changed(ctx, accessToken, From("publications").Select("id").Eq("id", publicationID), nil)
	if err == nil && !ok {
		return &Error{Status: http.StatusNotFound, Message: "that draft cannot be deleted: it is not a draft, or not yours to delete"}
	}
	return err
}

// SavePromo writes the publication's promo for channel: created if it has none, else its body
// and link replaced (one upsert on publications' unique (publication_id, channel)). link ""
// means none.
func (c *Client) SavePromo(ctx context.Context, accessToken, publicationID, channel, body, link string) (*Promo, error) {
	row := map[string]any{"publication_id": publicationID, "channel": channel, "body": body, "link": nil}
	if link != "" {
		row["link"] = link
	}
	q := url.Values{"on_conflict": {"publication_id,channel"}, "select": {"id,channel,body,link,updated_at"}}
	res, err := c.do(ctx, request{method: http.MethodPost, path: "/rest/v1/promos", query: q, token: accessToken, body: row,
		header: http.Header{"Prefer": {"resolution=merge-duplicates,return=representation"}}})
	if err != nil {
		return nil, err
	}
	var rows []Promo
	if err := json.Unmarshal(res.body, &rows); err != nil || len(rows) != 1 {
		return nil, fmt.Errorf("client: decode saved promo: %v (%d rows)", err, len(rows))
	}
	return &rows[0], nil
}

// DeletePromo removes the publication's promo for channel and says whether there was one to
// remove: removing one that is not there (or that the caller cannot see) is not an error.
func (c *Client) DeletePromo(ctx context.Context, accessToken, publicationID, channel string) (removed bool, err error) {
	return c.changed(ctx, accessToken, From("promos").Select("channel").Eq("publication_id", publicationID).Eq("channel", channel), nil)
}

// Channels lists every channel with its limits, by name.
func (c *Client) Channels(ctx context.Context, accessToken string) ([]Channel, error) {
	var out []Channel
	_, err := c.Get(ctx, accessToken, From("channels").Select("slug,name,limits").Order("name.asc"), &out)
	return out, err
}
