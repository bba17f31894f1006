package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"masthead/internal/pg"
)

// storageAPISetting marks a transaction of this surface to the database: only in one may the
// columns that describe a media item's file change (migration 014), because only this surface
// changes the file with them. It is transaction-local, set with the caller's identity.
var storageAPISetting = pg.Setting{Name: []byte("masthead.storage_api"), Value: []byte("on")}

// asStorage is caller, writing through the storage API.
func asStorage(caller identity) identity {
	caller.Settings = append(slices.Clip(caller.Settings), storageAPISetting)
	return caller
}

// notWritable explains a write of the row at key that touched nothing: a row the caller can
// see but may not change is a 403, one they cannot see (missing, or someone else's) the same
// 404 as for a key that does not exist.
func notWritable(ctx context.Context, tx pgx.Tx, key string) error {
	var seen bool
	if err := tx.QueryRow(ctx, `select exists (select 1 from public.media where storage_path = $1)`, key).Scan(&seen); err != nil {
		return err
	}
	if seen {
		return errRLS
	}
	return errNotFound
}

// Copier is a Backend that copies an object within itself (S3: a server-side copy). Other
// backends' objects are copied by reading them and writing them back.
type Copier interface {
	// Copy stores a copy of src at dst, whole or not at all; a missing src is an error
	// wrapping ErrObjectNotFound.
	Copy(ctx context.Context, src, dst string) error
}

// copyObject stores a copy of src at dst; contentType is dst's, for backends that keep one.
func (h *Handler) copyObject(ctx context.Context, src, dst, contentType string) error {
	if cp, ok := h.opts.Backend.(Copier); ok {
		return cp.Copy(ctx, src, dst)
	}
	obj, err := h.opts.Backend.Open(ctx, src)
	if err != nil {
		return err
	}
	defer obj.Body.Close()
	return h.opts.Backend.Put(ctx, dst, obj.Body, obj.Size, contentType)
}

// setAside copies the object at key to a fresh hidden key in its project's folder (no row names
// it, so no request can reach it) and returns that key, or "" when there was no object to keep.
// Not beside the object: a key of up to 1024 bytes (maxKeyLen) may end in a short name, and its
// folder and a hidden name were longer than S3 stores.
func (h *Handler) setAside(ctx context.Context, key string) (string, error) {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	project, _, _ := strings.Cut(key, "/")
	aside := project + "/.previous-" + hex.EncodeToString(rnd[:])
	err := h.copyObject(ctx, key, aside, "application/octet-stream")
	switch {
	case errors.Is(err, ErrObjectNotFound):
		h.log.WarnContext(ctx, "storage: media row without object", "key", key)
		return "", nil
	case err != nil:
		h.deleteObject(ctx, aside, "storage: remove a partial copy")
		return "", err
	}
	return aside, nil
}

// putBack restores the object at key from aside, as setAside left it; with no aside there was
// no object before, so whatever is at key now goes.
func (h *Handler) putBack(ctx context.Context, key, aside string) {
	ctx = context.WithoutCancel(ctx)
	if aside == "" {
		h.deleteObject(ctx, key, "storage: remove the object of a failed write")
		return
	}
	if err := h.copyObject(ctx, aside, key, "application/octet-stream"); err != nil {
		h.log.ErrorContext(ctx, "storage: put back the previous version of an object", "key", key, "aside", aside, "err", err)
	}
}

// deleteObject deletes key, even if the request was cancelled, and logs a failure as msg: what
// is left behind is a file no row names, which nobody can reach.
func (h *Handler) deleteObject(ctx context.Context, key, msg string) {
	if err := h.opts.Backend.Delete(context.WithoutCancel(ctx), key); err != nil {
		h.log.ErrorContext(ctx, msg, "key", key, "err", err)
	}
}
