package storage

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// removeRequest is the body of DELETE /object/media (remove). Despite the name, prefixes are
// whole object paths, as in Supabase Storage.
type removeRequest struct {
	Prefixes *[]string `json:"prefixes"`
}

// removeSQL deletes the rows, as the caller: row-level security (media_delete: editor+) skips
// the ones they may not delete, and the database refuses the whole removal if one of the items
// is attached to a publication whose media are frozen (409).
const removeSQL = `delete from public.media where storage_path = any($1)
returning storage_path, false, id::text, created_at, updated_at, mime_type, bytes`

// remove serves DELETE /object/media (remove): it deletes the objects the caller may delete
// among those named, in one transaction, and answers with them (Supabase Storage's shape); the
// others (missing, someone else's, or only readable by the caller) are left alone and not
// mentioned. Files are deleted inside the transaction, while the rows are locked, so a new
// upload to a freed path cannot lose its file to this removal; a file that cannot be deleted
// is logged and left behind, unreachable, rather than keep a row whose removal was asked for.
func (h *Handler) remove(c echo.Context) error {
	ctx := c.Request().Context()
	if c.Param("bucket") != Bucket {
		return writeError(c, errNoBucket)
	}
	var body removeRequest
	if aerr := h.readJSON(c, &body); aerr != nil {
		return writeError(c, aerr)
	}
	if aerr := h.checkBatch("prefixes", body.Prefixes); aerr != nil {
		return writeError(c, aerr)
	}
	for i, p := range *body.Prefixes {
		if aerr := keyRefusal(fmt.Sprintf("prefixes[%d]", i), p); aerr != nil {
			return writeError(c, aerr)
		}
	}
	caller, aerr := h.caller(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	out := []removedEntry{}
	err := h.withCaller(ctx, h.pool, asStorage(caller), pg.ReadWrite, func(tx pgx.Tx) error {
		out = out[:0]
		rows, err := tx.Query(ctx, removeSQL, *body.Prefixes)
		if err != nil {
			return dbRefusal(err)
		}
		var r listRow
		_, err = pgx.ForEachRow(rows, []any{&r.name, &r.folder, &r.id, &r.created, &r.updated, &r.mime, &r.bytes}, func() error {
			out = append(out, removedEntry{listEntry: r.entry(r.name), BucketID: Bucket})
			return nil
		})
		if err != nil {
			return dbRefusal(err)
		}
		for _, e := range out {
			h.deleteObject(ctx, e.Name, "storage: object of a removed row left behind")
		}
		return nil
	})
	if err != nil {
		return writeError(c, h.refusal(ctx, "storage: remove objects", err))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return c.JSON(http.StatusOK, out)
}
