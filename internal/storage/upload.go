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

// replaceMediaSQL describes a new version of the file in the row, under the caller's
// row-level security (media_update: editor+); the database holds it to the publications the
// item is attached to (migration 014).
const replaceMediaSQL = `update public.media set kind = $2, mime_type = $3, width = $4, height = $5, bytes = $6
where storage_path = $1 returning id`

// errProbe ends the probe transaction: it rolls back what the probe wrote.
var errProbe = errors.New("storage: probe done")

// writeMode says what a write of an object's bytes may do.
type writeMode int

const (
	modeCreate  writeMode = iota // a new object: the path must be free
	modeReplace                  // a new version of an existing object
	modeUpsert                   // a new version if the object exists, else a new object
)

// upload serves POST /object/media/<path> (upload): the body becomes the object at <path> and
// a public.media row, or, with x-upsert: true and an object already there, its new version
// (see update). See putObject.
func (h *Handler) upload(c echo.Context) error {
	key, aerr := objectKey(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	mode := modeCreate
	if strings.EqualFold(c.Request().Header.Get("x-upsert"), "true") {
		mode = modeUpsert
	}
	caller, aerr := h.caller(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	return h.putObject(c, caller, key, mode)
}

// putObject writes the request body (raw, or a multipart form as supabase-js sends from a
// browser) as the object at key, for caller, and answers {Id, Key}. In order:
//  1. the row write is tried, and rolled back, before a byte of the body is read, so a caller
//     who may not write there (not editor+, other tenant, anon, path taken or missing) costs
//     no spooling;
//  2. the body is spooled to a temporary file, capped, sniffed against the declared type and,
//     for images, decoded far enough to read the dimensions;
//  3. one transaction writes the row and stores the object, committing only if both worked
//     (see create and replace).
//
// The transaction stays open while the backend stores the bytes; that is the price of never
// having a committed row without its file, and the file is already local, so no slow client
// can stretch it.
func (h *Handler) putObject(c echo.Context, caller identity, key string, mode writeMode) error {
	ctx := c.Request().Context()
	if c.Request().ContentLength > h.opts.MaxUploadBytes+multipartOverhead {
		return writeError(c, h.tooLarge())
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
	mode, err := h.probe(ctx, caller, m, mode)
	if err != nil {
		return writeError(c, h.refusal(ctx, "storage: store upload", err))
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
	if mode == modeReplace {
		id, err = h.replace(ctx, caller, m, tmp)
	} else {
		id, err = h.create(ctx, caller, m, tmp)
	}
	if err != nil {
		return writeError(c, h.refusal(ctx, "storage: store upload", err))
	}
	return c.JSON(http.StatusOK, map[string]string{"Id": id, "Key": Bucket + "/" + key})
}

// probe tries the row write of m as caller and rolls it back, and returns the write that would
// be made: modeUpsert becomes modeReplace when the caller sees a row at the key, else
// modeCreate.
func (h *Handler) probe(ctx context.Context, caller identity, m newMedia, mode writeMode) (writeMode, error) {
	if mode != modeCreate {
		err := h.replaceMedia(ctx, caller, m, nil)
		switch {
		case errors.Is(err, errProbe):
			return modeReplace, nil
		case mode == modeReplace || !errors.Is(err, errNotFound):
			return mode, err
		}
	}
	if err := h.insertMedia(ctx, caller, m, nil); !errors.Is(err, errProbe) {
		return modeCreate, err
	}
	return modeCreate, nil
}

// create inserts m's row and stores tmp at m.key in one transaction as caller. If storing or
// the commit fails, the object is deleted again.
func (h *Handler) create(ctx context.Context, caller identity, m newMedia, tmp *os.File) (string, error) {
	var id string
	stored := false
	err := h.insertMedia(ctx, caller, m, func(rowID string) error {
		id = rowID
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if err := h.opts.Backend.Put(ctx, m.key, tmp, m.bytes, m.mime); err != nil {
			// A failed Put may still have stored the object (an S3 answer lost on the way
			// back). Undo it now, while our uncommitted row makes any other upload of this
			// key wait, so we cannot delete the object of an upload that follows.
			h.removeObject(ctx, m.key)
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
			h.removeObject(ctx, m.key)
		}
		return "", err
	}
	return id, nil
}

// replace writes a new version of the object at m.key: in one transaction as caller, the row
// takes the new file's description and the backend the new bytes. The previous bytes are set
// aside first and put back if storing or the commit fails, so the row and the file keep
// describing each other; they are deleted once the new version is committed. While the
// transaction is open, our row lock makes every other write of the key wait; the window in
// which another one could be undone by our putting back opens only on a failed COMMIT.
func (h *Handler) replace(ctx context.Context, caller identity, m newMedia, tmp *os.File) (string, error) {
	var id, aside string
	stored := false
	err := h.replaceMedia(ctx, caller, m, func(rowID string) error {
		id = rowID
		var err error
		if aside, err = h.setAside(ctx, m.key); err != nil {
			return err
		}
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if err := h.opts.Backend.Put(ctx, m.key, tmp, m.bytes, m.mime); err != nil {
			h.putBack(ctx, m.key, aside)
			return err
		}
		stored = true
		return nil
	})
	if err != nil && stored {
		h.putBack(ctx, m.key, aside)
	}
	if aside != "" {
		h.deleteObject(ctx, aside, "storage: remove the previous version of an object")
	}
	if err != nil {
		return "", err
	}
	return id, nil
}

// removeObject deletes an object whose row will not exist, even if the request was cancelled.
func (h *Handler) removeObject(ctx context.Context, key string) {
	h.deleteObject(ctx, key, "storage: remove object of failed upload")
}

// insertMedia inserts m as caller. With then == nil it is a probe: the insert is rolled back and
// the result is errProbe when it would have worked. Otherwise then runs inside the same
// transaction after the insert, and the transaction commits only if then returns nil.
func (h *Handler) insertMedia(ctx context.Context, caller identity, m newMedia, then func(rowID string) error) error {
	return h.withCaller(ctx, h.pool, asStorage(caller), pg.ReadWrite, func(tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, insertMediaSQL, m.key, m.kind, m.mime, m.width, m.height, m.bytes).Scan(&id)
		if err != nil {
			return dbRefusal(err)
		}
		if then == nil {
			return errProbe
		}
		return then(id)
	})
}

// replaceMedia updates the row at m.key to describe m, as caller; with then == nil it is a probe,
// as for insertMedia. A key whose row the caller cannot see is errNotFound, one they may see
// but not change errRLS.
func (h *Handler) replaceMedia(ctx context.Context, caller identity, m newMedia, then func(rowID string) error) error {
	return h.withCaller(ctx, h.pool, asStorage(caller), pg.ReadWrite, func(tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, replaceMediaSQL, m.key, m.kind, m.mime, m.width, m.height, m.bytes).Scan(&id)
		if pg.IsNoRows(err) {
			return notWritable(ctx, tx, m.key)
		}
		if err != nil {
			return dbRefusal(err)
		}
		if then == nil {
			return errProbe
		}
		return then(id)
	})
}

// refusal is the answer for an error of a write: its own refusal, or an internal error logged
// as msg.
func (h *Handler) refusal(ctx context.Context, msg string, err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return h.internal(ctx, msg, err)
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
				return nil, "", h.tooLarge()
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
		aerr = h.tooLarge()
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
