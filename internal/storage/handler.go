package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// Bucket is the one bucket this service has; its objects are the files of public.media.
const Bucket = "media"

// Authenticator says who a request is calling as: pg.Anon for the publishable key alone, the
// signed-in user for a valid access token, or an error (see Options.InvalidToken).
type Authenticator interface {
	Caller(r *http.Request) (pg.Caller, error)
}

// Options configure the storage surface.
type Options struct {
	// Backend holds the bytes.
	Backend Backend
	// SigningKey signs signed URLs; every instance must share it (see DeriveSigningKey).
	SigningKey []byte
	// MaxUploadBytes caps one upload; 0 means DefaultMaxUploadBytes.
	MaxUploadBytes int64
	// InvalidToken is the error a refused bearer token wraps (auth.ErrInvalidToken): those are
	// answered 401, any other Authenticator error is an outage (5xx).
	InvalidToken error
	// APIKey, when set, guards every route except the signed-URL download, which is opened by
	// an <img src> or a link and so can carry neither the apikey header nor a bearer token.
	APIKey echo.MiddlewareFunc
	// TempDir is where uploads are spooled while they are checked; "" means os.TempDir().
	TempDir string
	// ReadPool, when set, chooses the pool of the row lookup in front of a download or a
	// signature (a read replica, or the primary for a request that must see its own writes);
	// nil uses the handler's pool. Uploads always use the handler's pool.
	ReadPool func(context.Context) *pgxpool.Pool
}

// DefaultMaxUploadBytes is Supabase's default per-file limit (50 MB).
const DefaultMaxUploadBytes = 50 << 20

// maxSignedTTL bounds expiresIn to a week: a signed URL is a bearer capability that cannot be
// revoked short of deleting the object, so it must not live for ever.
const maxSignedTTL = 7 * 24 * time.Hour

// Handler serves /storage/v1. It is safe for concurrent use.
type Handler struct {
	pool   *pgxpool.Pool
	auth   Authenticator
	log    *slog.Logger
	opts   Options
	signer signer
}

// New builds the handler on pool, which must log in as the authenticator role.
func New(pool *pgxpool.Pool, auth Authenticator, opts Options, log *slog.Logger) (*Handler, error) {
	if opts.Backend == nil || auth == nil || pool == nil || log == nil {
		return nil, errors.New("storage: pool, authenticator, backend and logger are required")
	}
	if len(opts.SigningKey) < 32 {
		return nil, errors.New("storage: signing key must be at least 32 bytes")
	}
	if opts.MaxUploadBytes <= 0 {
		opts.MaxUploadBytes = DefaultMaxUploadBytes
	}
	return &Handler{pool: pool, auth: auth, log: log, opts: opts,
		signer: signer{key: opts.SigningKey, now: time.Now}}, nil
}

// Mount adds the routes to g, which should be the group for /storage/v1. Each object route
// exists under both names Supabase clients use: /object/<bucket>/<path> (supabase-js download)
// and /object/authenticated/<bucket>/<path>.
func (h *Handler) Mount(g *echo.Group) {
	var keyed []echo.MiddlewareFunc
	if h.opts.APIKey != nil {
		keyed = append(keyed, h.opts.APIKey)
	}
	for _, p := range []string{"/object/authenticated/:bucket/*", "/object/:bucket/*"} {
		g.GET(p, h.download, keyed...)
		g.HEAD(p, h.download, keyed...)
	}
	g.POST("/object/:bucket/*", h.upload, keyed...)
	g.POST("/object/sign/:bucket/*", h.sign, keyed...)
	g.GET("/object/sign/:bucket/*", h.signedDownload)
	g.HEAD("/object/sign/:bucket/*", h.signedDownload)
}

// objectKey reads the bucket and the key from the request path, refusing any other bucket and
// every key that validKey would not store.
func objectKey(c echo.Context) (string, *apiError) {
	if c.Param("bucket") != Bucket {
		return "", errNoBucket
	}
	n := strings.Count(strings.TrimSuffix(c.Path(), "*"), "/")
	key, ok := keyFromEscaped(tailAfter(c.Request().URL.EscapedPath(), n))
	if !ok {
		return "", errInvalidKey
	}
	return key, nil
}

// caller asks the Authenticator who is calling.
func (h *Handler) caller(c echo.Context) (pg.Caller, *apiError) {
	caller, err := h.auth.Caller(c.Request())
	if err == nil {
		return caller, nil
	}
	if h.opts.InvalidToken != nil && errors.Is(err, h.opts.InvalidToken) {
		return pg.Caller{}, errUnauthorized
	}
	h.log.ErrorContext(c.Request().Context(), "storage: identify caller", "err", err)
	return pg.Caller{}, errUnavailable
}

// callerSees identifies the caller and returns the mime type of the media row at key as they
// see it: the start of every read and of signing a URL.
func (h *Handler) callerSees(c echo.Context, key string) (string, *apiError) {
	caller, aerr := h.caller(c)
	if aerr != nil {
		return "", aerr
	}
	return h.visibleMime(c.Request().Context(), caller, key)
}

// visibleMime returns the mime type of the media row stored at key, read as caller under
// row-level security: a row the caller may not read does not exist for them, so the answer is
// the same 404 whether the object is someone else's or missing. Role switch and query go to
// the database as one pipelined round trip (an implicit transaction), because this query sits
// in front of every download; it is prepared once per connection, which saved PostgreSQL about
// 45 µs of parsing and planning (under its policy) per download in BenchmarkFloorDownload.
func (h *Handler) visibleMime(ctx context.Context, caller pg.Caller, key string) (string, *apiError) {
	pool := h.pool
	if h.opts.ReadPool != nil {
		pool = h.opts.ReadPool(ctx)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return "", h.internal(ctx, "storage: acquire connection", err)
	}
	rs, err := pg.ExecAsCaller(ctx, conn.Conn().PgConn(), caller, true, false,
		pg.Stmt{SQL: `select mime_type from public.media where storage_path = $1`, Params: [][]byte{[]byte(key)}, Prepare: true})
	conn.Release()
	if pool != h.pool && errors.Is(err, pg.ErrSessionEnded) {
		// A session begun a moment ago may not have reached the replica yet: only the primary
		// can say it has ended.
		return h.visibleMime(pg.ReadPrimary(ctx), caller, key)
	}
	if err != nil {
		return "", h.internal(ctx, "storage: read media row", err)
	}
	if len(rs[0].Rows) == 0 {
		return "", errNotFound
	}
	return string(rs[0].Rows[0][0]), nil
}

// internal logs a failure that is not the client's doing and chooses 503 for an unreachable
// database, 500 for the rest; a token whose session has ended is the client's, a 401.
func (h *Handler) internal(ctx context.Context, msg string, err error) *apiError {
	if errors.Is(err, pg.ErrSessionEnded) {
		return errUnauthorized // a valid signature of a signed-out session
	}
	se := storeRefusal(err)
	if se != nil && se.status < 500 {
		return se
	}
	h.log.ErrorContext(ctx, msg, "err", err)
	if se != nil {
		return se
	}
	if pg.Unavailable(err) || errors.Is(err, context.Canceled) {
		return errUnavailable
	}
	return errInternal
}

// download serves GET and HEAD of /object/[authenticated/]media/<path>.
func (h *Handler) download(c echo.Context) error {
	key, aerr := objectKey(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	mime, aerr := h.callerSees(c, key)
	if aerr != nil {
		return writeError(c, aerr)
	}
	return h.serve(c, key, mime)
}

// safeTypes are the content types an object is ever served as: the upload allow-list. A row
// written some other way (REST, seed) with another type is served as an attachment of unknown
// type, so no stored file can become a page on this origin.
var safeTypes = map[string]string{
	"image/png": "image", "image/jpeg": "image", "image/gif": "image", "image/webp": "image",
	"video/mp4": "video", "video/webm": "video",
}

// serve streams the object with http.ServeContent, which implements RFC 9110's conditional
// requests (If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, If-Range) and
// byte ranges from the validators set here.
func (h *Handler) serve(c echo.Context, key, mime string) error {
	ctx := c.Request().Context()
	obj, err := h.opts.Backend.Open(ctx, key)
	if err != nil {
		if errors.Is(err, ErrObjectNotFound) {
			h.log.WarnContext(ctx, "storage: media row without object", "key", key)
			return writeError(c, errNotFound)
		}
		return writeError(c, h.internal(ctx, "storage: open object", err))
	}
	defer obj.Body.Close()
	hdr := c.Response().Header()
	if _, ok := safeTypes[mime]; ok {
		hdr.Set("Content-Type", mime)
	} else {
		hdr.Set("Content-Type", "application/octet-stream")
		hdr.Set("Content-Disposition", "attachment")
	}
	hdr.Set("X-Content-Type-Options", "nosniff")
	// Should anything still be rendered as a document, it runs no script and loads nothing.
	hdr.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	// private: only the caller's own browser may keep it; no-cache: every reuse is revalidated,
	// which repeats the access check and costs a 304 when nothing changed.
	hdr.Set("Cache-Control", "private, no-cache")
	hdr.Set("ETag", obj.ETag)
	http.ServeContent(sendfileWriter{c.Response()}, c.Request(), "", obj.ModTime, obj.Body)
	return nil
}

// sendfileWriter lets http.ServeContent hand a disk file to the connection with sendfile(2):
// echo.Response does not implement io.ReaderFrom, so without this every byte would be copied
// through user space in 32 kB pieces. Echo's bookkeeping (size, committed) is kept.
type sendfileWriter struct{ *echo.Response }

func (w sendfileWriter) ReadFrom(r io.Reader) (int64, error) {
	if !w.Committed {
		w.WriteHeader(http.StatusOK)
	}
	rf, ok := w.Writer.(io.ReaderFrom)
	if !ok {
		return io.Copy(struct{ io.Writer }{w.Response}, r)
	}
	n, err := rf.ReadFrom(r)
	w.Size += n
	return n, err
}

// signRequest is the body of POST /object/sign/media/<path>.
type signRequest struct {
	ExpiresIn *int64 `json:"expiresIn"`
}

// sign answers POST /object/sign/media/<path> with a URL that opens that object, and only it,
// without credentials until expiresIn seconds have passed. Only a caller who may read the row
// can have one, and the row's content type travels in the token, since the URL's user will
// have no identity the database could check.
func (h *Handler) sign(c echo.Context) error {
	key, aerr := objectKey(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	var body signRequest
	if err := c.Bind(&body); err != nil {
		return writeError(c, errBadBody)
	}
	// Compared in seconds: multiplying first would wrap for huge values and let them through.
	if body.ExpiresIn == nil || *body.ExpiresIn < 1 || *body.ExpiresIn > int64(maxSignedTTL/time.Second) {
		return writeError(c, errBadExpiresIn)
	}
	mime, aerr := h.callerSees(c, key)
	if aerr != nil {
		return writeError(c, aerr)
	}
	token := h.signer.sign(Bucket+"/"+key, mime, time.Duration(*body.ExpiresIn)*time.Second)
	// Raw key, as Supabase Storage answers: supabase-js encodeURI()s the whole URL itself.
	return c.JSON(http.StatusOK, map[string]string{
		"signedURL": fmt.Sprintf("/object/sign/%s/%s?token=%s", Bucket, key, token),
	})
}

// signedDownload serves GET /object/sign/media/<path>?token=… to whoever holds the token.
func (h *Handler) signedDownload(c echo.Context) error {
	key, aerr := objectKey(c)
	if aerr != nil {
		return writeError(c, aerr)
	}
	mime, aerr := h.signer.verify(c.QueryParam("token"), Bucket+"/"+key)
	if aerr != nil {
		return writeError(c, aerr)
	}
	return h.serve(c, key, mime)
}
