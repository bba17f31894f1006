package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"masthead/handlers"
)

// Slow clients. The header has ReadHeaderTimeout; a body must keep arriving. Without this, a
// body trickled a byte every few seconds holds its connection, its file descriptor and often a
// database connection forever, on routes that need no sign-in.
//
// Every body read extends the connection's read deadline by the idle gap, never past the
// request's ceiling for its route class; after a grace period the body must also average a
// minimum rate. Writes get a deadline per route class too, long enough for a large download.
// The dashboard's in-process calls (client.InProcess) have no connection, so there is nothing
// to guard and the deadlines are skipped.

// errSlowBody is what a handler's body read returns once the client is cut off.
var errSlowBody = errors.New("server: the request body arrived too slowly")

// guardBody applies the limits to every request with a body.
func (s *Server) guardBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		rc := http.NewResponseController(c.Response().Writer)
		ceiling, write, setting := s.cfg.RequestTimeout, s.cfg.RequestTimeout, "MASTHEAD_REQUEST_TIMEOUT"
		if isTransfer(r) {
			ceiling, write, setting = s.cfg.UploadTimeout, s.cfg.UploadTimeout, "MASTHEAD_UPLOAD_TIMEOUT"
		}
		start := time.Now()
		// A response must be written within the class's ceiling (a download of a large image
		// at a modest speed fits; a reader that stops reading does not hold the connection).
		// Event streams (MCP's) are meant to stay open and get none.
		if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			_ = rc.SetWriteDeadline(start.Add(write))
		}
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			return next(c)
		}
		g := &guardedBody{body: r.Body, rc: rc, start: start, end: start.Add(ceiling),
			idle: s.cfg.BodyIdleTimeout, minRate: s.cfg.BodyMinRate, grace: s.cfg.BodyIdleTimeout}
		if err := g.extend(); errors.Is(err, http.ErrNotSupported) {
			return next(c) // in process: no connection, nothing trickles
		}
		r.Body = g
		res := c.Response()
		w := &slowBodyWriter{ResponseWriter: res.Writer, g: g}
		res.Writer = w
		err := next(c)
		res.Writer = w.ResponseWriter
		if !g.tripped() {
			// Whatever of the body the handler left unread is discarded by net/http within
			// one more idle gap; the next request's header has ReadHeaderTimeout.
			_ = rc.SetReadDeadline(time.Now().Add(s.cfg.BodyIdleTimeout))
			return err
		}
		// Never read the rest of the body, which net/http would otherwise try before answering;
		// and leave one more idle gap to write the answer, since a body cut at the request's
		// ceiling meets the write deadline there too.
		_ = rc.SetReadDeadline(time.Now())
		_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.BodyIdleTimeout))
		if res.Committed && !w.dropped {
			return err // the handler answered before the body was cut (it streams)
		}
		// The handler met a failed read and answered as for a broken body (GoTrue's bad_json,
		// say); that answer was dropped, and the client learns what happened instead, in its
		// surface's shape, with the limits named.
		res.Committed, res.Status, res.Size = false, http.StatusOK, 0
		res.Header().Set("Connection", "close")
		msg := fmt.Sprintf("the request body arrived too slowly: each part must follow the last within %s "+
			"(MASTHEAD_BODY_IDLE_TIMEOUT) and the body must average %d bytes a second (MASTHEAD_BODY_MIN_RATE)",
			s.cfg.BodyIdleTimeout, s.cfg.BodyMinRate)
		if !time.Now().Before(g.end) {
			msg = fmt.Sprintf("the request took longer than this service allows, %s (%s)", ceiling, setting)
		}
		c.Error(echo.NewHTTPError(http.StatusRequestTimeout, msg))
		return nil
	}
}

// slowBodyWriter is the response writer of a request whose body is guarded: once the body has
// been cut, whatever the handler answers is dropped (it answers a failed read, not the
// reason), so that guardBody can answer in its place.
type slowBodyWriter struct {
	http.ResponseWriter
	g       *guardedBody
	decided bool // the handler's first WriteHeader has come
	dropped bool // and went nowhere, as everything after it
	scratch http.Header
}

func (w *slowBodyWriter) Header() http.Header {
	if w.dropped || !w.decided && w.g.tripped() {
		// Headers set for a dropped answer must not reach the real one.
		if w.scratch == nil {
			w.scratch = http.Header{}
		}
		return w.scratch
	}
	return w.ResponseWriter.Header()
}

func (w *slowBodyWriter) WriteHeader(code int) {
	if !w.decided {
		w.decided, w.dropped = true, w.g.tripped()
	}
	if !w.dropped {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *slowBodyWriter) Write(b []byte) (int, error) {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.dropped {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (its deadlines, flushing).
func (w *slowBodyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// isTransfer says whether r moves an object (upload or download, the dashboard's image upload
// included), which may take minutes.
func isTransfer(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/storage/v1/object/") || handlers.IsUpload(r)
}

// guardedBody is a request body whose every read must come within idle of the last and
// before end, and which must average minRate bytes a second once grace has passed.
type guardedBody struct {
	body    io.ReadCloser
	rc      *http.ResponseController
	start   time.Time
	end     time.Time
	idle    time.Duration
	minRate int
	grace   time.Duration
	mu      sync.Mutex
	n       int64
	cut     bool
}

func (g *guardedBody) extend() error {
	d := time.Now().Add(g.idle)
	if d.After(g.end) {
		d = g.end
	}
	return g.rc.SetReadDeadline(d)
}

func (g *guardedBody) Read(p []byte) (int, error) {
	if g.tripped() {
		return 0, errSlowBody
	}
	if err := g.extend(); err != nil {
		return 0, err
	}
	n, err := g.body.Read(p)
	g.mu.Lock()
	g.n += int64(n)
	elapsed := time.Since(g.start)
	slow := g.minRate > 0 && elapsed > g.grace && float64(g.n) < float64(g.minRate)*elapsed.Seconds()
	if err != nil && !errors.Is(err, io.EOF) && isTimeout(err) {
		slow = true
	}
	if slow {
		g.cut = true
	}
	g.mu.Unlock()
	if slow && !errors.Is(err, io.EOF) {
		return n, errSlowBody
	}
	return n, err
}

func (g *guardedBody) tripped() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cut
}

func (g *guardedBody) Close() error { return g.body.Close() }

func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}
