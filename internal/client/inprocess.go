package client

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// clientIPKey carries, in a request's context, the address of the person a call is made for.
type clientIPKey struct{}

// WithClientIP records that calls made with ctx act for a person at ip (the browser's
// address), so the service's rate limits and logs see that person, not the dashboard.
func WithClientIP(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, clientIPKey{}, ip)
}

// ClientIP is the address WithClientIP recorded, or "".
func ClientIP(ctx context.Context) string {
	ip, _ := ctx.Value(clientIPKey{}).(string)
	return ip
}

// requestIDKey carries, in a request's context, the id of the request a call is made for.
type requestIDKey struct{}

// WithRequestID records that calls made with ctx serve the request with this id (a dashboard
// page, an MCP tool call). Each call carries it as X-Request-Id, which the service keeps, so
// the request and every service request it made share one id in the access log.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the id WithRequestID recorded, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// InProcess is an HTTP client that hands requests straight to h, the service mounted in this
// same process, without a socket. The person's address (WithClientIP) becomes the request's
// peer address: the service believes it because no outside request can arrive this way, and a
// browser that sends X-Forwarded-For to the dashboard gains nothing (the header is dropped).
//
// timeout, when positive, bounds each request as a deadline on the context h sees. It is not
// http.Client.Timeout: for a transport other than net/http's, that arms a timer and a goroutine
// per request to close Request.Cancel, which an in-process handler never reads; it was a
// scheduling hop and a few µs of CPU on every MCP tool call's REST request.
func InProcess(h http.Handler, timeout time.Duration) *http.Client {
	return &http.Client{Transport: inProcess{h: h, timeout: timeout}}
}

type inProcess struct {
	h       http.Handler
	timeout time.Duration
}

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	if t.timeout > 0 {
		// The handler has answered in full when ServeHTTP returns, so the deadline ends there.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.timeout)
		defer cancel()
	}
	in := r.Clone(ctx)
	ip := ClientIP(r.Context())
	if net.ParseIP(ip) == nil {
		ip = "127.0.0.1"
	}
	in.RemoteAddr = net.JoinHostPort(ip, "0")
	in.Header.Del("X-Forwarded-For")
	in.RequestURI = in.URL.RequestURI()
	in.Host = r.URL.Host
	if in.Body == nil {
		in.Body = http.NoBody
	}
	w := &recorder{header: http.Header{}}
	t.h.ServeHTTP(w, in)
	if r.Body != nil {
		r.Body.Close()
	}
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	return &http.Response{
		Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(&w.body), ContentLength: int64(w.body.Len()), Request: r,
	}, nil
}

// recorder keeps what the service answered.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }
func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
func (w *recorder) Flush() {}
