package server

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"masthead/handlers"
	"masthead/internal/mcp"
	"masthead/internal/metrics"
)

// requestID gives every request an id, in the X-Request-Id response header and the access log.
// A well-formed id sent by a proxy is kept, so one request can be followed across hops.
func requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if !validRequestID(id) {
			b := make([]byte, 16)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// accessLog writes one line per request and counts it in the request metrics. It logs the
// route pattern, never the query string, headers or body, so tokens, keys and passwords cannot
// reach the log; the project a request is about is added when the request names it (projectOf).
// Metrics carry the route template and never the project, so their series stay few.
func (s *Server) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err) // write the error response now, so the status below is final
		}
		took := time.Since(start)
		req, res := c.Request(), c.Response()
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		s.metrics.Request(surfaceOf(req.URL.Path), req.Method, route, res.Status, took)
		attrs := make([]slog.Attr, 0, 9)
		attrs = append(attrs,
			slog.String("request_id", res.Header().Get(echo.HeaderXRequestID)),
			slog.String("method", req.Method),
			slog.String("route", route))
		if p := projectOf(c, route); p != "" {
			attrs = append(attrs, slog.String("project", p))
		}
		attrs = append(attrs,
			slog.Int("status", res.Status),
			slog.Float64("duration_ms", float64(took.Microseconds())/1000),
			slog.Int64("bytes", res.Size),
			slog.String("client_ip", c.RealIP()))
		s.log.LogAttrs(req.Context(), slog.LevelInfo, "request", attrs...)
		return nil
	}
}

// surfaceOf is the part of the service a request path belongs to, for the request metrics.
// Paths outside every API prefix are the dashboard's (its pages and assets), unknown ones
// included, so the label has a fixed set of values.
func surfaceOf(path string) string {
	switch {
	case under(path, "/auth/v1/oauth"), strings.Contains(path, "/.well-known/oauth-authorization-server"),
		strings.Contains(path, "/.well-known/openid-configuration"):
		return metrics.SurfaceOAuth
	case under(path, "/auth/v1"):
		return metrics.SurfaceAuth
	case under(path, "/rest/v1"):
		return metrics.SurfaceREST
	case under(path, "/storage/v1"):
		return metrics.SurfaceStorage
	case under(path, mcp.Path), under(path, mcp.MetadataPath):
		return metrics.SurfaceMCP
	case path == "/healthz", path == "/readyz":
		return metrics.SurfaceHealth
	}
	return metrics.SurfaceDashboard
}

// under reports whether path is prefix or lies below it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// projectOf names the project a request is about, for the access log, when the request says so
// itself, without a database lookup:
//   - a dashboard page under /p/<slug>/: the slug;
//   - a /storage/v1 object: the first segment of its path, which is the project's slug
//     (bucket media keeps <project-slug>/…);
//   - a /rest/v1 table request filtered to one project: project_id=eq.<uuid>, or on
//     /rest/v1/projects id=eq.<uuid> or slug=eq.<slug>.
//
// Other requests (an RPC naming a publication, an MCP tool call, the sign-in) would need the
// database to say, and get no project. Only values shaped like a slug or a uuid are logged, so
// a request cannot write arbitrary text into the log through this field.
func projectOf(c echo.Context, route string) string {
	switch {
	case route == "/p/:slug" || strings.HasPrefix(route, "/p/:slug/"):
		return slugOnly(c.Param("slug"))
	case strings.HasPrefix(route, "/storage/v1/object/") && strings.HasSuffix(route, "/*"):
		first, _, _ := strings.Cut(c.Param("*"), "/")
		return slugOnly(first)
	case route == "/rest/v1/:table":
		q := c.Request().URL.Query()
		if id, ok := strings.CutPrefix(q.Get("project_id"), "eq."); ok && isUUID(id) {
			return id
		}
		if c.Param("table") == "projects" {
			if id, ok := strings.CutPrefix(q.Get("id"), "eq."); ok && isUUID(id) {
				return id
			}
			if slug, ok := strings.CutPrefix(q.Get("slug"), "eq."); ok {
				return slugOnly(slug)
			}
		}
	}
	return ""
}

// slugOnly is s when it is shaped like a project slug (lower-case letters, digits and dashes,
// at most 64), else "".
func slugOnly(s string) string {
	if s == "" || len(s) > 64 || s[0] == '-' {
		return ""
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return ""
		}
	}
	return s
}

// isUUID reports whether s is a uuid in its canonical text form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
				return false
			}
		}
	}
	return true
}

// recover turns a panic into a 500 and logs it with its stack, keeping the process alive.
func (s *Server) recover(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				s.log.ErrorContext(c.Request().Context(), "server: panic",
					"request_id", c.Response().Header().Get(echo.HeaderXRequestID),
					"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = errors.New("panic")
			}
		}()
		return next(c)
	}
}

// httpError answers errors no surface handled itself (unknown routes, wrong methods, panics).
// Internal causes are logged, never shown.
func (s *Server) httpError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, message := http.StatusInternalServerError, ""
	var he *echo.HTTPError
	if errors.As(err, &he) {
		status = he.Code
		if m, ok := he.Message.(string); ok && status == http.StatusRequestTimeout {
			message = m // guardBody's, naming the limits
		}
	} else {
		s.log.ErrorContext(c.Request().Context(), "server: unhandled error",
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID), "err", err)
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	body, err := json.Marshal(errorBody(c.Request().URL.Path, status, message))
	if err != nil {
		_ = c.NoContent(status)
		return
	}
	h := c.Response().Header()
	if code := gotrueCode(c.Request().URL.Path, status); code != "" {
		h.Set("x-sb-error-code", code) // as GoTrue does
	}
	// With its length, the answer is complete without the end of a chunked body, which a
	// connection hijacked after it (guardBody's lingering close) would never send.
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	_ = c.Blob(status, echo.MIMEApplicationJSON, body)
}

// errorBody is an error the router or the shared middleware gives (an unknown path, a method a
// route lacks, a body over the limit or arriving too slowly) in the shape of the surface the
// path belongs to, so a client's error handling sees what it expects: PostgREST's under
// /rest/v1, GoTrue's under /auth/v1, Supabase Storage's under /storage/v1. message, when not
// empty, says more than the status's text.
func errorBody(path string, status int, message string) any {
	text := cmp.Or(message, http.StatusText(status))
	switch {
	case strings.HasPrefix(path, "/rest/v1/") || path == "/rest/v1":
		code, msg, hint := "PGRST000", text, any(nil)
		switch status {
		case http.StatusNotFound:
			code, msg = "PGRST125", "Invalid path specified in request URL"
		case http.StatusMethodNotAllowed:
			code, msg = "PGRST117", "Unsupported HTTP method"
		case http.StatusRequestEntityTooLarge:
			code, msg, hint = "PGRST102", "The request body is larger than this service accepts", "Send fewer rows per request."
		case http.StatusRequestTimeout:
			code, hint = "MH003", "Send the body without pauses."
		}
		return map[string]any{"code": code, "message": msg, "details": nil, "hint": hint}
	case strings.HasPrefix(path, "/auth/v1/") || path == "/auth/v1":
		return map[string]any{"code": status, "error_code": gotrueCode(path, status), "msg": text}
	case strings.HasPrefix(path, "/storage/v1/") || path == "/storage/v1":
		return map[string]string{"statusCode": strconv.Itoa(status), "error": http.StatusText(status), "message": text}
	}
	return map[string]string{"message": text}
}

// gotrueCode is GoTrue's error_code for status under /auth/v1, "" elsewhere.
func gotrueCode(path string, status int) string {
	if !strings.HasPrefix(path, "/auth/v1/") && path != "/auth/v1" {
		return ""
	}
	switch status {
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusRequestTimeout:
		return "request_timeout"
	}
	return "unexpected_failure"
}

// apiPrefixes are the client-facing APIs; browsers call them cross-origin with the publishable
// key and a bearer token (never cookies), so any origin may, as on Supabase.
var apiPrefixes = []string{"/auth/v1/", "/rest/v1/", "/storage/v1/"}

func cors() echo.MiddlewareFunc {
	return middleware.CORSWithConfig(middleware.CORSConfig{
		Skipper: func(c echo.Context) bool {
			p := c.Request().URL.Path
			for _, prefix := range apiPrefixes {
				if strings.HasPrefix(p, prefix) {
					return false
				}
			}
			return true
		},
		AllowOrigins: []string{"*"},
		// What supabase-js sends: its client headers, PostgREST's, and storage's (x-upsert,
		// cache-control and x-metadata on uploads).
		AllowHeaders: []string{"apikey", "authorization", "content-type", "x-client-info", "x-supabase-api-version",
			"accept-profile", "content-profile", "prefer", "range", "x-upsert", "cache-control", "x-metadata", "masthead-read"},
		ExposeHeaders: []string{"content-range", "x-sb-error-code", "x-supabase-api-version", "x-request-id", "retry-after"},
		MaxAge:        86400,
	})
}

// bodyLimit caps request bodies at 1 MB, except uploads (to /storage/v1 and the dashboard's
// image upload), which limit themselves.
var bodyLimit = middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{
	Limit: "1M",
	Skipper: func(c echo.Context) bool {
		return strings.HasPrefix(c.Request().URL.Path, "/storage/v1/") || handlers.IsUpload(c.Request())
	},
})

// IPExtractor decides the client IP for rate limits and logs: the TCP peer, unless the peer is
// one of the trusted proxies, whose X-Forwarded-For is then believed. Nothing is trusted by
// default (echo's own default would trust every private network, and without an extractor
// echo believes any X-Forwarded-For). `masthead web` uses it too, since the address it decides
// is the one the dashboard hands the service for a person's sign-in.
func IPExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Masked().Addr().AsSlice(),
			Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
