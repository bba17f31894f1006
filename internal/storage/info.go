package storage

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// objectInfo is the answer of GET /object/info/media/<path> (info), in Supabase Storage's shape
// (FileObjectV2; supabase-js turns the names into camelCase). version is the stored file's
// validator, which changes with every new version; metadata holds what the media row says of
// the file besides (kind, dimensions, alt text).
type objectInfo struct {
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Version      string       `json:"version"`
	BucketID     string       `json:"bucket_id"`
	Size         int64        `json:"size"`
	ContentType  string       `json:"content_type"`
	CacheControl string       `json:"cache_control"`
	ETag         string       `json:"etag"`
	Metadata     infoMetadata `json:"metadata"`
	LastModified time.Time    `json:"last_modified"`
	CreatedAt    time.Time    `json:"created_at"`
	UpdatedAt    time.Time    `json:"updated_at"`
}

type infoMetadata struct {
	Kind    string `json:"kind"`
	Width   *int   `json:"width"`
	Height  *int   `json:"height"`
	AltText string `json:"alt_text"`
}

// cacheControl is what downloads send (see serve), reported by info and list.
const cacheControl = "private, no-cache"

// info serves GET /object/info/[authenticated/]media/<path> (info): the media row, read as the
// caller under row-level security (so someone else's object is the same 404 as a missing one),
// with the stored file's validator and size (the file's, which is what a download sends).
func (h *Handler) info(c echo.Context) error {
	ctx := c.Request().Context()
	key, aerr := objectKey(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	caller, aerr := h.caller(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	out := objectInfo{Name: key, BucketID: Bucket, CacheControl: cacheControl}
	err := h.readAsCaller(ctx, caller, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `select id::text, mime_type, kind, alt_text, width, height, created_at, updated_at
			from public.media where storage_path = $1`, key).
			Scan(&out.ID, &out.ContentType, &out.Metadata.Kind, &out.Metadata.AltText, &out.Metadata.Width,
				&out.Metadata.Height, &out.CreatedAt, &out.UpdatedAt)
	})
	if pg.IsNoRows(err) {
		return writeError(c, errNotFound)
	}
	if err != nil {
		return writeError(c, h.internal(ctx, "storage: read media row", err))
	}
	obj, err := h.opts.Backend.Open(ctx, key)
	if errors.Is(err, ErrObjectNotFound) {
		h.log.WarnContext(ctx, "storage: media row without object", "key", key)
		return writeError(c, errNotFound)
	}
	if err != nil {
		return writeError(c, h.internal(ctx, "storage: open object", err))
	}
	obj.Body.Close()
	out.ETag, out.LastModified, out.Size = obj.ETag, obj.ModTime.UTC(), obj.Size
	out.Version = strings.Trim(obj.ETag, `"`)
	return c.JSON(http.StatusOK, out)
}
