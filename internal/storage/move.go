package storage

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// relocateRequest is the body of POST /object/move and POST /object/copy, as supabase-js
// sends it. destinationBucket, when given, must be this bucket too.
type relocateRequest struct {
	BucketID          *string `json:"bucketId"`
	SourceKey         *string `json:"sourceKey"`
	DestinationKey    *string `json:"destinationKey"`
	DestinationBucket *string `json:"destinationBucket"`
}

// relocation reads and checks a move or copy request: the bucket, two valid keys that differ.
func (h *Handler) relocation(c echo.Context) (src, dst string, aerr *apiError) {
	var body relocateRequest
	if aerr := h.readJSON(c, &body); aerr != nil {
		return "", "", aerr
	}
	switch {
	case body.BucketID == nil:
		return "", "", invalid("bucketId is required")
	case *body.BucketID != Bucket, body.DestinationBucket != nil && *body.DestinationBucket != Bucket:
		return "", "", errNoBucket
	case body.SourceKey == nil || body.DestinationKey == nil:
		return "", "", invalid("sourceKey and destinationKey are required")
	}
	if aerr := cmp.Or(keyRefusal("sourceKey", *body.SourceKey), keyRefusal("destinationKey", *body.DestinationKey)); aerr != nil {
		return "", "", aerr
	}
	if *body.SourceKey == *body.DestinationKey {
		return "", "", errSameKey
	}
	return *body.SourceKey, *body.DestinationKey, nil
}

// moveSQL gives the row its new path, as the caller: row-level security (media_update: editor+)
// decides, the path must stay in the project's folder, and an item attached to a publication
// whose media are frozen cannot move (migration 014). The row keeps its id, so every
// publication that shows it follows.
const moveSQL = `update public.media set storage_path = $2 where storage_path = $1 returning mime_type`

// move serves POST /object/move (move): in one transaction as the caller, the row takes the new
// path and the file is copied there and deleted from the old one; if anything fails before the
// commit the transaction rolls back and the file is where it was, and if the commit itself
// fails it is put back. Moving to another project's folder is refused (the row belongs to its
// project): copy the object there instead.
func (h *Handler) move(c echo.Context) error {
	ctx := c.Request().Context()
	src, dst, aerr := h.relocation(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	caller, aerr := h.caller(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	// Decided from the paths, not from the database's 23514: that code also answers a path
	// past media.storage_path's length bound, which dbRefusal words like any other refusal.
	if srcFolder, _, _ := strings.Cut(src, "/"); !strings.HasPrefix(dst, srcFolder+"/") {
		return writeError(c, errCrossProject)
	}
	var ct string
	removed := false
	err := h.withCaller(ctx, h.pool, asStorage(caller), pg.ReadWrite, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, moveSQL, src, dst).Scan(&ct)
		if pg.IsNoRows(err) {
			return notWritable(ctx, tx, src)
		}
		if err != nil {
			return dbRefusal(err)
		}
		if err := h.copyObject(ctx, src, dst, ct); err != nil {
			h.deleteObject(ctx, dst, "storage: remove a partial copy")
			if errors.Is(err, ErrObjectNotFound) {
				h.log.WarnContext(ctx, "storage: media row without object", "key", src)
				return errNotFound
			}
			return err
		}
		if err := h.opts.Backend.Delete(ctx, src); err != nil {
			h.deleteObject(ctx, dst, "storage: remove the copy of a failed move")
			return err
		}
		removed = true
		return nil
	})
	if err != nil {
		if removed {
			// Only the commit failed: the row is still at src, so the file goes back there.
			h.undoMove(ctx, src, dst, ct)
		}
		return writeError(c, h.refusal(ctx, "storage: move object", err))
	}
	return c.JSON(http.StatusOK, map[string]string{"message": "Successfully moved"})
}

// undoMove puts the file of a move whose commit failed back at src.
func (h *Handler) undoMove(ctx context.Context, src, dst, contentType string) {
	ctx = context.WithoutCancel(ctx)
	if err := h.copyObject(ctx, dst, src, contentType); err != nil {
		h.log.ErrorContext(ctx, "storage: put back the file of a failed move", "key", src, "err", err)
		return
	}
	h.deleteObject(ctx, dst, "storage: remove the copy of a failed move")
}

// copySQL writes the copy's row as the caller, from the source row as they see it: row-level
// security decides both that they may read the source (no row otherwise: 404) and that they may
// create media in the destination's project (media_insert: editor+), which may be another of
// their projects. The copy has its own id and the source's description and alt text.
const copySQL = `insert into public.media (project_id, storage_path, kind, mime_type, alt_text, width, height, bytes)
select (select p.id from public.projects p where p.slug = split_part($2, '/', 1)), $2,
       m.kind, m.mime_type, m.alt_text, m.width, m.height, m.bytes
  from public.media m where m.storage_path = $1
returning id::text, mime_type`

// copy serves POST /object/copy (copy): a new object at the destination with the source's bytes,
// its row and file written in one transaction as the caller; if storing or the commit fails,
// the copied file is deleted again. It answers {Id, Key} (supabase-js returns Key as the path).
func (h *Handler) copy(c echo.Context) error {
	ctx := c.Request().Context()
	src, dst, aerr := h.relocation(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	caller, aerr := h.caller(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	var id string
	stored := false
	err := h.withCaller(ctx, h.pool, asStorage(caller), pg.ReadWrite, func(tx pgx.Tx) error {
		var ct string
		err := tx.QueryRow(ctx, copySQL, src, dst).Scan(&id, &ct)
		if pg.IsNoRows(err) {
			return errNotFound
		}
		if err != nil {
			return dbRefusal(err)
		}
		if err := h.copyObject(ctx, src, dst, ct); err != nil {
			h.deleteObject(ctx, dst, "storage: remove a partial copy")
			if errors.Is(err, ErrObjectNotFound) {
				h.log.WarnContext(ctx, "storage: media row without object", "key", src)
				return errNotFound
			}
			return err
		}
		stored = true
		return nil
	})
	if err != nil {
		if stored {
			h.deleteObject(ctx, dst, "storage: remove the copy of a failed copy")
		}
		return writeError(c, h.refusal(ctx, "storage: copy object", err))
	}
	return c.JSON(http.StatusOK, map[string]string{"Id": id, "Key": Bucket + "/" + dst})
}
