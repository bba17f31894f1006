package rest

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
)

// Authenticator tells who a request comes from: the verified user
// (pg.RoleAuthenticated with their claims) or anon when only the
// publishable key was given. It is implemented by the identity service.
// A returned *Error is answered as is. An error matching
// Config.InvalidToken (errors.Is) is a bad token: 401 PGRST301, or
// PGRST303 when it says the token expired, with the error's message,
// which must therefore be safe to show. Any other error is an outage
// (503), unless Config.InvalidToken is nil, when every error is a 401.
type Authenticator interface {
	Caller(r *http.Request) (pg.Caller, error)
}

// Config holds the limits that protect the database.
type Config struct {
	MaxRows          int64         // db-max-rows: cap on rows of one response (default 1000)
	StatementTimeout time.Duration // per request (default 10s)
	MaxBodyBytes     int64         // request body cap (default 1 MiB)
	AcquireTimeout   time.Duration // wait for a pooled connection before 503 (default 5s)
	// MaxEmbeddedRows caps the rows all embedded to-many resources of one response add
	// (MASTHEAD_MAX_EMBEDDED_ROWS, default 20000); more is 400 MH001.
	MaxEmbeddedRows int64
	// MaxResponseBytes caps one response body (MASTHEAD_MAX_RESPONSE_BYTES, default 10 MiB);
	// more is 400 MH002, and a read is stopped in PostgreSQL as soon as it passes the cap.
	MaxResponseBytes int
	// PoolShare is how many requests one caller may run against the database at once
	// (MASTHEAD_POOL_SHARE; default pg.FairShare of the pool); one more waits up to
	// PoolShareWait (MASTHEAD_POOL_SHARE_WAIT, default 2s) and is then 503 PGRST003. The
	// handler's Shares may be handed to the other surfaces, so the limit spans them too.
	PoolShare     int
	PoolShareWait time.Duration
	// InvalidToken is the Authenticator's sentinel for a bad, expired or
	// revoked token (auth.ErrInvalidToken), so outages are told apart.
	InvalidToken error
	// Aggregates allows aggregate functions (count(), sum(), …) and to-many spread embeds in
	// select, as PostgREST's db-aggregates-enabled (MASTHEAD_DB_AGGREGATES_ENABLED, default
	// off: an aggregate over a large table is expensive). Off, they are 400 PGRST123.
	Aggregates bool
	// ReadPool, when set, chooses the pool of a GET or HEAD (a read replica, or the primary
	// when the request must see its own writes); nil reads from the handler's pool. Writes
	// and RPCs called with POST always use the handler's pool.
	ReadPool func(context.Context) *pgxpool.Pool
}

func (c Config) withDefaults() Config {
	if c.MaxRows <= 0 {
		c.MaxRows = 1000
	}
	if c.StatementTimeout <= 0 {
		c.StatementTimeout = 10 * time.Second
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.AcquireTimeout <= 0 {
		c.AcquireTimeout = 5 * time.Second
	}
	if c.MaxEmbeddedRows <= 0 {
		c.MaxEmbeddedRows = 20000
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = 10 << 20
	}
	if c.PoolShareWait <= 0 {
		c.PoolShareWait = pg.DefaultShareWait
	}
	return c
}

// Handler serves /rest/v1.
type Handler struct {
	pool   *pgxpool.Pool
	schema *SchemaCache
	auth   Authenticator
	cfg    Config
	log    *slog.Logger
	shares *pg.Shares
	plans  planCache
	// acquirer takes pooled connections waiting at most AcquireTimeout.
	acquirer *pg.Acquirer
	// timeoutMS and maxEmbedded are StatementTimeout and MaxEmbeddedRows as the settings
	// every request sends, formatted once.
	timeoutMS, maxEmbedded []byte
}

// NewHandler builds the handler; schema must already be loaded.
func NewHandler(pool *pgxpool.Pool, schema *SchemaCache, auth Authenticator, cfg Config, log *slog.Logger) *Handler {
	cfg = cfg.withDefaults()
	if cfg.PoolShare <= 0 {
		cfg.PoolShare = pg.FairShare(pool)
	}
	return &Handler{pool: pool, schema: schema, auth: auth, cfg: cfg, log: log, shares: pg.NewShares(cfg.PoolShare, cfg.PoolShareWait),
		acquirer:    pg.NewAcquirer(cfg.AcquireTimeout),
		timeoutMS:   strconv.AppendInt(nil, cfg.StatementTimeout.Milliseconds(), 10),
		maxEmbedded: strconv.AppendInt(nil, cfg.MaxEmbeddedRows, 10)}
}

// Shares is the callers' shares of the pool the handler draws on (PoolShare, PoolShareWait),
// for the instance's other surfaces to draw on too, so that one caller's limit counts all of
// their requests, not each surface's apart.
func (h *Handler) Shares() *pg.Shares { return h.shares }

// Mount registers the routes on a group mounted at /rest/v1.
func (h *Handler) Mount(g *echo.Group) {
	for _, root := range []string{"", "/"} {
		g.GET(root, h.openapi)
		g.HEAD(root, h.openapi)
	}
	g.GET("/rpc/:fn", h.rpc)
	g.HEAD("/rpc/:fn", h.rpc)
	g.POST("/rpc/:fn", h.rpc)
	g.PUT("/rpc/:fn", h.rpc)
	g.PATCH("/rpc/:fn", h.rpc)
	g.DELETE("/rpc/:fn", h.rpc)
	g.GET("/:table", h.read)
	g.HEAD("/:table", h.read)
	g.POST("/:table", h.insert)
	g.PUT("/:table", h.put)
	g.PATCH("/:table", h.update)
	g.DELETE("/:table", h.delete)
	// Anything else under /rest/v1 names no resource.
	g.Any("/*", h.invalidPath)
}

// invalidPath answers a URL that names no table, view or function: PGRST125.
func (h *Handler) invalidPath(c echo.Context) error {
	return h.fail(c, errInvalidPath())
}

func (h *Handler) planOpts() planOpts { return planOpts{aggregates: h.cfg.Aggregates} }

// request is what every route needs before planning: the caller, the
// parsed query, the schema snapshot and the negotiated response shape.
type request struct {
	c      echo.Context
	caller pg.Caller
	query  *Query
	schema *Schema
	single bool // Accept: application/vnd.pgrst.object+json
	csv    bool // Accept: text/csv (reads of tables and views only)
	object bool // answer the one row as an object, in application/json (a function's one row)
	prefer Prefer
	path   string // request.path as PostgREST sets it, relative to /rest/v1
	// settings are PostgREST's per-request settings, made by callerFor.
	settings [5]pg.Setting
}

const (
	mediaJSON   = "application/json"
	mediaObject = "application/vnd.pgrst.object+json"
	mediaCSV    = "text/csv"
)

// errProfile is PGRST106: a profile (schema) header names a schema that is not exposed.
func errProfile(p string) *Error {
	return &Error{Status: http.StatusNotAcceptable, Code: "PGRST106",
		Message: "Invalid schema: " + p, Hint: "Only the following schemas are exposed: " + exposedSchema}
}

// begin authenticates, checks profiles and Accept, and parses the query (unless
// skipParse: a read whose plan may be cached parses only when it is not).
func (h *Handler) begin(c echo.Context, rpcRead bool, skipParse ...bool) (*request, error) {
	r := c.Request()
	caller, err := h.auth.Caller(r)
	if err != nil {
		return nil, h.authError(err)
	}
	for _, hdr := range []string{"Accept-Profile", "Content-Profile"} {
		if p := r.Header.Get(hdr); p != "" && p != exposedSchema {
			return nil, errProfile(p)
		}
	}
	media, err := negotiate(r.Header.Get("Accept"))
	if err != nil {
		return nil, err
	}
	var q *Query
	if len(skipParse) == 0 || !skipParse[0] {
		if q, err = ParseQuery(r.URL.RawQuery, rpcRead); err != nil {
			return nil, err
		}
	}
	path := strings.TrimPrefix(r.URL.Path, "/rest/v1")
	return &request{c: c, caller: caller, query: q, schema: h.schema.Schema(), single: media == mediaObject, csv: media == mediaCSV,
		prefer: ParsePrefer(r.Header), path: path}, nil
}

// authError answers an Authenticator failure (see Authenticator).
func (h *Handler) authError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case h.cfg.InvalidToken != nil && !errors.Is(err, h.cfg.InvalidToken):
		return &Error{Status: http.StatusServiceUnavailable, Code: "PGRST000",
			Message: "Could not verify the caller. Retrying the connection.", cause: err}
	case strings.Contains(err.Error(), "expired"):
		return &Error{Status: http.StatusUnauthorized, Code: "PGRST303", Message: "JWT expired", cause: err}
	}
	return &Error{Status: http.StatusUnauthorized, Code: "PGRST301", Message: err.Error(), cause: err}
}

// negotiate picks the response's media type from Accept: a JSON array (for */*, application/*,
// application/json and an absent header), the single object, or CSV.
func negotiate(accept string) (string, error) {
	if strings.TrimSpace(accept) == "" {
		return mediaJSON, nil
	}
	for _, part := range strings.Split(accept, ",") {
		mt, _, perr := mime.ParseMediaType(strings.TrimSpace(part))
		if perr != nil {
			continue
		}
		switch mt {
		case mediaObject, "application/vnd.pgrst.object":
			return mediaObject, nil
		case mediaCSV:
			return mediaCSV, nil
		case mediaJSON, "*/*", "application/*":
			return mediaJSON, nil
		}
	}
	return "", errMedia(accept)
}

// errMedia is PGRST107 for an Accept nothing here can answer.
func errMedia(accept string) *Error {
	return &Error{Status: http.StatusNotAcceptable, Code: "PGRST107",
		Message: "None of these media types are available: " + accept}
}

// fail answers an error in PostgREST's shape; internal causes are logged.
func (h *Handler) fail(c echo.Context, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		h.log.Error("rest request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
		e = &Error{Status: http.StatusInternalServerError, Code: "PGRST000", Message: "Internal server error"}
		if pg.Unavailable(err) {
			e = unavailable(err)
		}
	} else if e.cause != nil && e.Status >= 500 {
		h.log.Error("rest request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "code", e.Code, "err", e.cause)
	}
	if e.Status == http.StatusUnauthorized {
		// Token problems (PGRST30x) say so; a permission refusal for anon
		// only asks for credentials, as PostgREST does.
		www := "Bearer"
		if strings.HasPrefix(e.Code, "PGRST30") {
			www = `Bearer error="invalid_token"`
		}
		c.Response().Header().Set("WWW-Authenticate", www)
	}
	if e.Status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", pg.RetryAfter)
	}
	body, _ := e.MarshalJSON()
	return blob(c, e.Status, mediaJSON+"; charset=utf-8", body)
}

// blob writes a body with its length, so a response is sent in one piece
// rather than chunked. As echo's Blob, it keeps a Content-Type set before.
func blob(c echo.Context, status int, ctype string, body []byte) error {
	r := c.Response()
	hdr := r.Header()
	if hdr.Get(echo.HeaderContentType) == "" {
		if v, ok := contentTypes[ctype]; ok {
			hdr[echo.HeaderContentType] = v
		} else {
			hdr.Set(echo.HeaderContentType, ctype)
		}
	}
	hdr[echo.HeaderContentLength] = []string{strconv.Itoa(len(body))}
	r.WriteHeader(status)
	_, err := r.Write(body)
	return err
}

// contentTypes are the usual Content-Type values as header values: shared slices of capacity
// one (an Add elsewhere copies rather than writes into them), assigned under the canonical name
// as Header.Set would store them, without a slice allocated per response.
var contentTypes = func() map[string][]string {
	m := map[string][]string{}
	for _, t := range []string{mediaJSON, mediaObject, mediaCSV} {
		m[t+"; charset=utf-8"] = []string{t + "; charset=utf-8"}
	}
	return m
}()
