package storage

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
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
	// MaxUploadBytes caps one upload (MASTHEAD_STORAGE_MAX_UPLOAD_BYTES); 0 means
	// DefaultMaxUploadBytes.
	MaxUploadBytes int64
	// MaxListLimit caps the limit of one list request (MASTHEAD_STORAGE_MAX_LIST_LIMIT); 0
	// means DefaultMaxListLimit.
	MaxListLimit int64
	// MaxBatch caps the paths of one remove or createSignedUrls request
	// (MASTHEAD_STORAGE_MAX_BATCH); 0 means DefaultMaxBatch.
	MaxBatch int
	// MaxJSONBytes caps a JSON request body (list, remove, move, copy, signing)
	// (MASTHEAD_STORAGE_MAX_JSON_BYTES); 0 means DefaultMaxJSONBytes.
	MaxJSONBytes int64
	// MaxSignedURLTTL caps expiresIn of a signed download URL
	// (MASTHEAD_STORAGE_MAX_SIGNED_URL_TTL): such a URL is a bearer capability that cannot be
	// revoked short of deleting the object, so it must not live for ever. 0 means
	// DefaultMaxSignedURLTTL.
	MaxSignedURLTTL time.Duration
	// SignedUploadTTL is how long a signed upload URL stays valid
	// (MASTHEAD_STORAGE_SIGNED_UPLOAD_TTL); 0 means DefaultSignedUploadTTL.
	SignedUploadTTL time.Duration
	// SignedTokenCacheSize is how many verified signed-URL tokens are remembered, so that a URL
	// opened again skips the signature check and the claims' decoding; 0 means
	// DefaultSignedTokenCacheSize, a negative size none.
	SignedTokenCacheSize int
	// InvalidToken is the error a refused bearer token wraps (auth.ErrInvalidToken): those are
	// answered 401, any other Authenticator error is an outage (5xx).
	InvalidToken error
	// APIKey, when set, guards every route except the signed-URL download, which is opened by
	// an <img src> or a link and so can carry neither the apikey header nor a bearer token.
	APIKey echo.MiddlewareFunc
	// TempDir is where uploads are spooled while they are checked; "" means os.TempDir().
	TempDir string
	// ReadPool, when set, chooses the pool of every read-only operation: the row lookup in
	// front of a download, exists, info, list and signing (a read replica, or the primary for
	// a request that must see its own writes); nil uses the handler's pool. Every write
	// (upload, update, move, copy, remove, and the trial write of createSignedUploadUrl) uses
	// the handler's pool.
	ReadPool func(context.Context) *pgxpool.Pool
	// Shares are the callers' shares of the pool (MASTHEAD_POOL_SHARE): every connection a
	// request takes, on any pool, holds a slot of its caller's share while it is held. The
	// service passes the set its REST handler draws on, so one caller's REST and storage
	// requests count against one share. nil means a set of the handler's own, of
	// pg.FairShare(pool) and pg.DefaultShareWait.
	Shares *pg.Shares
	// LookupLanes is how many round trips of media-row lookups (the read in front of every
	// download) may be in flight on one pool at once; lookups that arrive while all are
	// busy share the next round trip (see pg.Lookups). 0 means DefaultLookupLanes.
	LookupLanes int
}

// The defaults of Options' limits.
const (
	// DefaultMaxUploadBytes is Supabase's default per-file limit (50 MB).
	DefaultMaxUploadBytes = 50 << 20
	// DefaultMaxListLimit bounds one page of a listing.
	DefaultMaxListLimit = 1000
	// DefaultMaxBatch is Supabase's limit on the objects one delete may name.
	DefaultMaxBatch = 1000
	// DefaultLookupLanes is two lanes: in BenchmarkFloorDownload (16 clients, 2 cores) one
	// lane left PostgreSQL's second core idle (0.43x ServeFile's throughput) and four made
	// batches too small to pay (CPU 1.54-1.56x ServeFile's); two gave 0.48-0.49x and 1.46-1.49x.
	DefaultLookupLanes = 2
	// DefaultMaxJSONBytes leaves room for DefaultMaxBatch keys of the longest length.
	DefaultMaxJSONBytes = 2 << 20
	// DefaultSignedUploadTTL is Supabase's: a signed upload URL is valid for two hours.
	DefaultSignedUploadTTL = 2 * time.Hour
	// DefaultMaxSignedURLTTL lets a signed download URL live a week at most.
	DefaultMaxSignedURLTTL = 7 * 24 * time.Hour
	// DefaultSignedTokenCacheSize remembers 10,000 verified signed-URL tokens: about 2 MB.
	DefaultSignedTokenCacheSize = 10000
)

// Handler serves /storage/v1. It is safe for concurrent use.
type Handler struct {
	pool   *pgxpool.Pool
	auth   Authenticator
	log    *slog.Logger
	opts   Options
	signer signer
	// lookups are the media-row reads in front of downloads, one pg.Lookups per pool read
	// from (the primary, replicas).
	lookups sync.Map
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
	if opts.MaxListLimit <= 0 {
		opts.MaxListLimit = DefaultMaxListLimit
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.LookupLanes <= 0 {
		opts.LookupLanes = DefaultLookupLanes
	}
	if opts.MaxJSONBytes <= 0 {
		opts.MaxJSONBytes = DefaultMaxJSONBytes
	}
	if opts.SignedUploadTTL <= 0 {
		opts.SignedUploadTTL = DefaultSignedUploadTTL
	}
	if opts.MaxSignedURLTTL < time.Second {
		opts.MaxSignedURLTTL = DefaultMaxSignedURLTTL
	}
	switch {
	case opts.SignedTokenCacheSize == 0:
		opts.SignedTokenCacheSize = DefaultSignedTokenCacheSize
	case opts.SignedTokenCacheSize < 0:
		opts.SignedTokenCacheSize = 0
	}
	if opts.Shares == nil {
		opts.Shares = pg.NewShares(pg.FairShare(pool), pg.DefaultShareWait)
	}
	return &Handler{pool: pool, auth: auth, log: log, opts: opts,
		signer: newSigner(opts.SigningKey, time.Now, opts.SignedTokenCacheSize)}, nil
}

// Mount adds the routes to g, which should be the group for /storage/v1: the object routes
// supabase-js's storage client calls, under Supabase Storage's paths. Each download route
// exists under both names Supabase clients use: /object/<bucket>/<path> (supabase-js download
// and exists) and /object/authenticated/<bucket>/<path>. The static segments (info, list, sign,
// upload, move, copy) win over a bucket of that name, as in Supabase Storage. Options.APIKey
// guards every route but the signed download and the upload to a signed upload URL, whose
// tokens are their credentials.
func (h *Handler) Mount(g *echo.Group) {
	var keyed []echo.MiddlewareFunc
	if h.opts.APIKey != nil {
		keyed = append(keyed, h.opts.APIKey)
	}
	for _, p := range []string{"/object/authenticated/:bucket/*", "/object/:bucket/*"} {
		g.GET(p, h.download, keyed...)
		g.HEAD(p, h.download, keyed...)
	}
	g.GET("/object/info/authenticated/:bucket/*", h.info, keyed...)
	g.GET("/object/info/:bucket/*", h.info, keyed...)
	g.POST("/object/list/:bucket", h.list, keyed...)
	g.POST("/object/:bucket/*", h.upload, keyed...)
	g.PUT("/object/:bucket/*", h.update, keyed...)
	g.DELETE("/object/:bucket", h.remove, keyed...)
	g.POST("/object/move", h.move, keyed...)
	g.POST("/object/copy", h.copy, keyed...)
	g.POST("/object/sign/:bucket", h.signMany, keyed...)
	g.POST("/object/sign/:bucket/*", h.sign, keyed...)
	g.POST("/object/upload/sign/:bucket/*", h.signUpload, keyed...)
	// Opened by whoever holds the URL: the token is the credential, as for signed downloads.
	g.PUT("/object/upload/sign/:bucket/*", h.signedUpload)
	g.GET("/object/sign/:bucket/*", h.signedDownload)
	g.HEAD("/object/sign/:bucket/*", h.signedDownload)
}

// objectKey reads the bucket and the key from the request path, refusing any other bucket and
// every key that validKey would not store; a key that is only too long is told so, with the
// limit.
func objectKey(c echo.Context) (string, *apiError) {
	if c.Param("bucket") != Bucket {
		return "", errNoBucket
	}
	n := strings.Count(strings.TrimSuffix(c.Path(), "*"), "/")
	key, ok := keyFromEscaped(tailAfter(c.Request().URL.EscapedPath(), n))
	switch {
	case ok:
		return key, nil
	case len(key) > maxKeyLen:
		return "", keyTooLong("the key", key)
	}
	return "", errInvalidKey
}

// identity is who a request runs as: the pg.Caller its transactions switch to, and the key of
// the caller's share of the pool (pg.ShareKey), which every connection it takes draws on.
type identity struct {
	pg.Caller
	share string
}

// identityOf is caller's identity for a request from c.
func identityOf(c echo.Context, caller pg.Caller) identity {
	return identity{Caller: caller, share: pg.ShareKey(caller, c.RealIP())}
}

// caller asks the Authenticator who is calling.
func (h *Handler) caller(c echo.Context) (identity, *apiError) {
	caller, err := h.auth.Caller(c.Request())
	if err == nil {
		return identityOf(c, caller), nil
	}
	if h.opts.InvalidToken != nil && errors.Is(err, h.opts.InvalidToken) {
		return identity{}, errUnauthorized
	}
	h.log.ErrorContext(c.Request().Context(), "storage: identify caller", "err", err)
	return identity{}, errUnavailable
}

// withCaller is pg.WithCaller holding a slot of caller's share of the pool while it runs: the
// one way this surface runs a transaction.
func (h *Handler) withCaller(ctx context.Context, pool *pgxpool.Pool, caller identity, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	sh, err := h.opts.Shares.Take(ctx, caller.share)
	if err != nil {
		return err
	}
	defer h.opts.Shares.Give(sh)
	return pg.WithCaller(ctx, pool, caller.Caller, opts, fn)
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
// the same 404 whether the object is someone else's or missing. It reads from the read pool
// (see readPool); a replica's word that the caller's session has ended is asked again of the
// primary (see replicaMissedSession).
func (h *Handler) visibleMime(ctx context.Context, caller identity, key string) (string, *apiError) {
	pool := h.readPool(ctx)
	ct, found, err := h.lookupMime(ctx, pool, caller, key)
	if h.replicaMissedSession(pool, err) {
		ct, found, err = h.lookupMime(pg.ReadPrimary(ctx), h.pool, caller, key)
	}
	if err != nil {
		return "", h.internal(ctx, "storage: read media row", err)
	}
	if !found {
		return "", errNotFound
	}
	return ct, nil
}

// mediaMimeSQL reads the mime type of the media row at $1, under the caller's row-level security.
const mediaMimeSQL = `select mime_type from public.media where storage_path = $1`

// lookupMime reads the mime type of the row at key on pool; found is false when the caller sees
// none. Role switch and query are one implicit transaction, because this query sits in front of
// every download; it is prepared once per connection, which saved PostgreSQL about 45 µs of
// parsing and planning (under its policy) per download in BenchmarkFloorDownload. Lookups that
// arrive together share a round trip (pg.Lookups, Options.LookupLanes): with 16 clients that
// took this process's CPU per download from 137 to 118-127 µs and PostgreSQL's from 80-83 to
// 51-56 µs. The row is read in place rather than copied into a result, and a type of the
// upload allow-list comes back as the list's own string (contentTypeOf).
func (h *Handler) lookupMime(ctx context.Context, pool *pgxpool.Pool, caller identity, key string) (ct string, found bool, err error) {
	sh, err := h.opts.Shares.Take(ctx, caller.share)
	if err != nil {
		return "", false, err
	}
	defer h.opts.Shares.Give(sh)
	err = h.lookupsOn(pool).Read(ctx, caller.Caller,
		pg.Stmt{SQL: mediaMimeSQL, Params: [][]byte{[]byte(key)}},
		func(row [][]byte) error {
			ct, found = contentTypeOf(row[0]), true
			return nil
		})
	if err != nil {
		return "", false, err
	}
	return ct, found, nil
}

// lookupsOn returns the handler's pg.Lookups on pool, made on first use.
func (h *Handler) lookupsOn(pool *pgxpool.Pool) *pg.Lookups {
	if l, ok := h.lookups.Load(pool); ok {
		return l.(*pg.Lookups)
	}
	l, _ := h.lookups.LoadOrStore(pool, pg.NewLookups(pool, h.opts.LookupLanes, 0))
	return l.(*pg.Lookups)
}

// contentTypeOf is b as a string, without copying it when it is one of safeTypes.
func contentTypeOf(b []byte) string {
	if v, ok := safeTypeHeader[string(b)]; ok {
		return v[0]
	}
	return string(b)
}

// readPool is the pool of a read-only operation (download, exists, info, list, signing): a read
// replica when Options.ReadPool chooses one, else the handler's pool (the primary). Every write,
// and the trial write in front of a signed upload URL, uses the handler's pool.
func (h *Handler) readPool(ctx context.Context) *pgxpool.Pool {
	if h.opts.ReadPool != nil {
		return h.opts.ReadPool(ctx)
	}
	return h.pool
}

// replicaMissedSession says whether err, met on pool, must be asked of the primary again: a
// session begun a moment ago may not have reached a replica yet, so only the primary can say
// it has ended.
func (h *Handler) replicaMissedSession(pool *pgxpool.Pool, err error) bool {
	return pool != h.pool && errors.Is(err, pg.ErrSessionEnded)
}

// readAsCaller runs fn in a read-only transaction as caller on the read pool, and once more on
// the primary when the replica did not know the caller's session. fn may run twice, so it must
// start its results afresh.
func (h *Handler) readAsCaller(ctx context.Context, caller identity, fn func(pgx.Tx) error) error {
	pool := h.readPool(ctx)
	err := h.withCaller(ctx, pool, caller, pg.ReadOnly, fn)
	if h.replicaMissedSession(pool, err) {
		err = h.withCaller(pg.ReadPrimary(ctx), h.pool, caller, pg.ReadOnly, fn)
	}
	return err
}

// internal logs a failure that is not the client's doing and chooses 503 for an unreachable
// database, 500 for the rest; a token whose session has ended is the client's, a 401, and so
// is a request over the caller's share of the pool, a 503 naming the limit (overShare).
func (h *Handler) internal(ctx context.Context, msg string, err error) *apiError {
	if errors.Is(err, pg.ErrSessionEnded) {
		return errUnauthorized // a valid signature of a signed-out session
	}
	var over *pg.OverShareError
	if errors.As(err, &over) {
		return overShare(over)
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

// The header values every download sends, each a slice of capacity one, so that an Add
// elsewhere copies it instead of writing into it.
var (
	safeTypeHeader = func() map[string][]string {
		m := make(map[string][]string, len(safeTypes))
		for t := range safeTypes {
			m[t] = []string{t}
		}
		return m
	}()
	octetStream    = []string{"application/octet-stream"}
	nosniff        = []string{"nosniff"}
	sandbox        = []string{"default-src 'none'; sandbox"}
	privateNoCache = []string{"private, no-cache"}
)

// serve streams the object with http.ServeContent, which implements RFC 9110's conditional
// requests (If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, If-Range) and
// byte ranges from the validators set here. ?download asks for an attachment (see
// attachment).
func (h *Handler) serve(c echo.Context, key, contentType string) error {
	ctx := c.Request().Context()
	disposition, aerr := attachment(c, key)
	if aerr != nil {
		return writeError(c, aerr)
	}
	obj, err := h.opts.Backend.Open(ctx, key)
	if err != nil {
		if errors.Is(err, ErrObjectNotFound) {
			h.log.WarnContext(ctx, "storage: media row without object", "key", key)
			return writeError(c, errNotFound)
		}
		return writeError(c, h.internal(ctx, "storage: open object", err))
	}
	defer obj.Body.Close()
	// The fixed values are shared, read-only slices assigned under their canonical names, as
	// Header.Set would store them, without a slice allocated per header per download.
	hdr := c.Response().Header()
	if v, ok := safeTypeHeader[contentType]; ok {
		hdr["Content-Type"] = v
	} else {
		hdr["Content-Type"] = octetStream
		if disposition == "" {
			disposition = "attachment"
		}
	}
	if disposition != "" {
		hdr.Set("Content-Disposition", disposition)
	}
	hdr["X-Content-Type-Options"] = nosniff
	// Should anything still be rendered as a document, it runs no script and loads nothing.
	hdr["Content-Security-Policy"] = sandbox
	// private: only the caller's own browser may keep it; no-cache: every reuse is revalidated,
	// which repeats the access check and costs a 304 when nothing changed.
	hdr["Cache-Control"] = privateNoCache
	hdr.Set("ETag", obj.ETag)
	skipEmptySuffixes(c.Request().Header)
	http.ServeContent(sendfileWriter{c.Response()}, c.Request(), "", obj.ModTime, obj.Body)
	return nil
}

// skipEmptySuffixes rewrites each suffix range of length 0 ("bytes=-0") in a Range header as a
// range that starts past any end. RFC 9110 §14.1.1 makes such a range unsatisfiable, but
// http.ServeContent answers it with a 206 of nothing whose Content-Range ends before it starts
// ("bytes 100-99/100"); a range past the end it skips, as the RFC asks, and a header of
// nothing else gets its 416.
func skipEmptySuffixes(h http.Header) {
	v := h.Get("Range")
	set, ok := strings.CutPrefix(v, "bytes=")
	if !ok || !strings.Contains(set, "-0") {
		return
	}
	specs := strings.Split(set, ",")
	changed := false
	for i, spec := range specs {
		start, end, _ := strings.Cut(spec, "-")
		end = strings.TrimSpace(end)
		if strings.TrimSpace(start) == "" && end != "" && strings.Trim(end, "0") == "" {
			specs[i], changed = pastAnyEnd, true
		}
	}
	if changed {
		h.Set("Range", "bytes="+strings.Join(specs, ","))
	}
}

// pastAnyEnd is a byte range that begins after the end of any object.
const pastAnyEnd = "9223372036854775807-"

// attachment reads the download query parameter, as Supabase Storage does and as supabase-js
// appends it to signed URLs (createSignedUrl(s) with {download}): absent, the object is served
// inline (""); present, as an attachment named by its value or, when empty, by the key's last
// segment. A name longer than a file name may be, or with control characters, is refused.
func attachment(c echo.Context, key string) (string, *apiError) {
	vals, ok := c.QueryParams()["download"]
	if !ok {
		return "", nil
	}
	name := vals[0]
	if name == "" {
		name = path.Base(key)
	}
	bad := func(r rune) bool { return unicode.IsControl(r) || isBidiControl(r) }
	if len(name) > maxSegmentLen || !utf8.ValidString(name) || strings.IndexFunc(name, bad) >= 0 {
		return "", errDownloadName
	}
	d := mime.FormatMediaType("attachment", map[string]string{"filename": name})
	if d == "" {
		return "", errDownloadName
	}
	return d, nil
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
