package storage

import (
	"context"
	"errors"
	"image"
	_ "image/gif"  // register decoders: DecodeConfig reads the dimensions of uploads
	_ "image/jpeg" //
	_ "image/png"  //
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"
	_ "golang.org/x/image/webp" // WebP is on the allow-list, so its dimensions must be readable

	"masthead/internal/pg"
)

// multipartOverhead is what a multipart body may carry beyond the file itself (boundaries,
// part headers, supabase-js's cacheControl field).
const multipartOverhead = 64 << 10

// formats maps image.DecodeConfig's format names to the content types they must have been
// declared and sniffed as.
var formats = map[string]string{"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}

// newMedia is the row an upload writes.
type newMedia struct {
	key           string
	mime, kind    string
	width, height *int
	bytes         int64
}

// insertMediaSQL writes the row under the caller's row-level security: the project comes from
// the key's first segment, looked up as the caller, so a project they cannot see gives a null
// project_id and the insert fails like any other refusal.
const insertMediaSQL = `insert into public.media (project_id, storage_path, kind, mime_type, width, height, bytes)
values ((select id from public.projects where slug = split_part($1, '/', 1)), $1, $2, $3, $4, $5, $6)
returning id`

// errProbe ends the probe transaction: it rolls back what the probe wrote.
var errProbe = errors.New("storage: probe done")

// upload serves POST /object/media/<path>: the body (raw, or a multipart form as supabase-js
// sends from a browser) becomes the object at <path> and a public.media row. In order:
//  1. the row is tried, and rolled back, before a byte of the body is read, so a caller who may
//     not upload there (not editor+, other tenant, anon, path taken) costs no spooling;
//  2. the body is spooled to a temporary file, capped, sniffed against the declared type and,
//     for images, decoded far enough to read the dimensions;
//  3. one transaction inserts the row and stores the object, committing only if both worked;
//     if storing or the commit fails, the object is deleted again.
//
// The transaction stays open while the backend stores the bytes; that is the price of never
// having a committed row without its file, and the file is already local, so no slow client
// can stretch it.
func (h *Handler) upload(c echo.Context) error {
	ctx := c.Request().Context()
	key, aerr := objectKey(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	if strings.EqualFold(c.Request().Header.Get("x-upsert"), "true") {
		return writeError(c, errNoUpsert)
	}
	caller, aerr := h.caller(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	if c.Request().ContentLength > h.opts.MaxUploadBytes+multipartOverhead {
		return writeError(c, errTooLarge)
	}
	body, declared, aerr := h.uploadBody(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	kind, ok := safeTypes[declared]
	if !ok {
		return writeError(c, errMimeType)
	}
	m := newMedia{key: key, mime: declared, kind: kind}
	if err := h.insertMedia(ctx, caller, m, nil); !errors.Is(err, errProbe) {
		return writeError(c, h.refusal(ctx, err))
	}

	tmp, aerr := h.spool(body)
	if aerr != nil {
		return writeError(c, aerr)
	}
	defer func() { tmp.Close(); os.Remove(tmp.Name()) }()
	if aerr := inspect(tmp, &m); aerr != nil {
		return writeError(c, aerr)
	}

	var id string
	stored := false
	err := h.insertMedia(ctx, caller, m, func(rowID string) error {
		id = rowID
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if err := h.opts.Backend.Put(ctx, key, tmp, m.bytes, m.mime); err != nil {
			// A failed Put may still have stored the object (an S3 answer lost on the way
			// back). Undo it now, while our uncommitted row makes any other upload of this
			// key wait, so we cannot delete the object of an upload that follows.
			h.removeObject(ctx, key)
			return err
		}
		stored = true
		return nil
	})
	if err != nil {
		// The commit failed after the object was stored. Our row is gone, so another upload
		// of the key could slip in before this Delete and lose its object: a window that
		// opens only on a failed COMMIT and lasts one Delete.
		if stored {
			h.removeObject(ctx, key)
		}
		return writeError(c, h.refusal(ctx, err))
	}
	return c.JSON(http.StatusOK, map[string]string{"Id": id, "Key": Bucket + "/" + key})
}

// removeObject deletes an object whose row will not exist, even if the request was cancelled.
func (h *Handler) removeObject(ctx context.Context, key string) {
	if err := h.opts.Backend.Delete(context.WithoutCancel(ctx), key); err != nil {
		h.log.ErrorContext(ctx, "storage: remove object of failed upload", "key", key, "err", err)
	}
}

// insertMedia inserts m as caller. With then == nil it is a probe: the insert is rolled back and
// the result is errProbe when it would have worked. Otherwise then runs inside the same
// transaction after the insert, and the transaction commits only if then returns nil.
func (h *Handler) insertMedia(ctx context.Context, caller pg.Caller, m newMedia, then func(rowID string) error) error {
	return pg.WithCaller(ctx, h.pool, caller, pg.ReadWrite, func(tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, insertMediaSQL, m.key, m.kind, m.mime, m.width, m.height, m.bytes).Scan(&id)
		if err != nil {
			return insertRefusal(err)
		}
		if then == nil {
			return errProbe
		}
		return then(id)
	})
}

// refusal is the answer for an error of insertMedia: its own refusal, or an internal error.
func (h *Handler) refusal(ctx context.Context, err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return h.internal(ctx, "storage: store upload", err)
}

// storeRefusal names what the store itself refused: a key whose folder is an object (409), a
// full disk (507), a read-only one (503); nil for anything else.
func storeRefusal(err error) *apiError {
	var pe *fs.PathError
	switch {
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR),
		// creating the key's folder where an object of that name is (os.Root says EEXIST)
		errors.As(err, &pe) && strings.HasPrefix(pe.Op, "mkdir") && errors.Is(err, syscall.EEXIST):
		return errKeyUnderFile
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return errDiskFull
	case errors.Is(err, syscall.EROFS):
		return errReadOnly
	}
	return nil
}

// insertRefusal maps a failed media insert to this surface's answers. Not being allowed, the
// project not being visible (null project_id) and the path not belonging to the project are
// all the same 403, so an upload attempt says nothing about other tenants.
func insertRefusal(err error) error {
	f, ok := pg.ErrorFields(err)
	if !ok {
		return err
	}
	switch f.Code {
	case "42501", "23502", "23514":
		return errRLS
	case "23505":
		return errDuplicate
	}
	return err
}

// uploadBody returns the file's bytes and its declared content type: the request's own for a
// raw body, the file part's for multipart/form-data.
func (h *Handler) uploadBody(c echo.Context) (io.Reader, string, *apiError) {
	r := c.Request()
	ct, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, "", errMimeType
	}
	if ct != "multipart/form-data" {
		return r.Body, ct, nil
	}
	body := http.MaxBytesReader(c.Response(), r.Body, h.opts.MaxUploadBytes+multipartOverhead)
	mr := multipart.NewReader(body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return nil, "", errTooLarge
			}
			return nil, "", errBodyMultipart
		}
		if part.FileName() == "" {
			continue // a form field such as cacheControl
		}
		declared, _, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if err != nil {
			return nil, "", errMimeType
		}
		return part, declared, nil
	}
}

// spool copies at most MaxUploadBytes of body into a temporary file.
func (h *Handler) spool(body io.Reader) (*os.File, *apiError) {
	tmp, err := os.CreateTemp(h.opts.TempDir, "masthead-upload-*")
	if err != nil {
		return nil, h.internal(context.Background(), "storage: create spool file", err)
	}
	n, err := io.Copy(tmp, io.LimitReader(body, h.opts.MaxUploadBytes+1))
	var aerr *apiError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig) || n > h.opts.MaxUploadBytes:
		aerr = errTooLarge
	case err != nil:
		aerr = errBadBody
	case n == 0:
		aerr = errEmptyBody
	}
	if aerr != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, aerr
	}
	return tmp, nil
}

// inspect checks the spooled file against m.mime and fills in its size and, for images, its
// dimensions. Sniffing uses the same rules as browsers (http.DetectContentType), so what we
// accept is what a browser would take the bytes for.
func inspect(f *os.File, m *newMedia) *apiError {
	st, err := f.Stat()
	if err != nil {
		return errBadBody
	}
	m.bytes = st.Size()
	head := make([]byte, 512)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return errBadBody
	}
	if sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(head[:n])); sniffed != m.mime {
		return errMimeMismatch
	}
	if m.kind != "image" {
		return nil
	}
	cfg, format, err := image.DecodeConfig(io.NewSectionReader(f, 0, m.bytes))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return errBadImage
	}
	if formats[format] != m.mime {
		return errMimeMismatch
	}
	m.width, m.height = &cfg.Width, &cfg.Height
	return nil
}
