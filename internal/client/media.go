package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// UploadMedia stores an object in bucket media at key ("<project slug>/…") as the caller,
// which also writes its public.media row, and returns the row's id. The storage's refusals
// (type, size, a path taken, a role that may not upload) come back as an *Error in its words.
func (c *Client) UploadMedia(ctx context.Context, accessToken, key, contentType string, body io.Reader, size int64) (string, error) {
	h := http.Header{"Content-Type": {contentType}}
	if size > 0 {
		h.Set("Content-Length", strconv.FormatInt(size, 10))
	}
	path := "/storage/v1/object/media/" + key // keys are made of URL-safe characters by their makers
	res, err := c.do(ctx, request{method: http.MethodPost, path: path, token: accessToken, raw: body, header: h})
	if err != nil {
		return "", err
	}
	var out struct {
		ID string `json:"Id"`
	}
	if err := json.Unmarshal(res.body, &out); err != nil || out.ID == "" {
		return "", fmt.Errorf("client: decode upload answer: %v", err)
	}
	return out.ID, nil
}

// AttachMedia places a media item last in a publication with its alt text, in one write.
func (c *Client) AttachMedia(ctx context.Context, accessToken, publicationID, mediaID, altText string) error {
	return c.RPC(ctx, accessToken, "attach_media", map[string]any{"publication_id": publicationID, "media_id": mediaID, "alt_text": altText}, nil)
}

// ReorderMedia puts the publication's images in the order of mediaIDs, which must name exactly
// those attached (else an *Error with status 409: they changed meanwhile).
func (c *Client) ReorderMedia(ctx context.Context, accessToken, publicationID string, mediaIDs []string) error {
	return c.RPC(ctx, accessToken, "reorder_media", map[string]any{"publication_id": publicationID, "media_ids": mediaIDs}, nil)
}

// DetachMedia takes a media item out of a publication (the item stays in the project).
func (c *Client) DetachMedia(ctx context.Context, accessToken, publicationID, mediaID string) error {
	q := From("publication_media").Eq("publication_id", publicationID).Eq("media_id", mediaID)
	_, err := c.do(ctx, request{method: http.MethodDelete, path: "/rest/v1/publication_media", query: q.params, token: accessToken})
	return err
}
