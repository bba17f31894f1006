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

// originKey carries, in a request's context, the request that calls made with it serve.
type originKey struct{}

// origin is that request: the address and User-Agent of the person who made it, and its id.
type origin struct{ ip, userAgent, requestID string }

// ForRequest records that calls made with ctx serve the request with id requestID, made by a
// person at ip (a browser's address, an assistant's) with userAgent. The service's rate limits
// and logs then see that person, not the dashboard or the MCP server; a session the call opens
// or refreshes records their address and browser (the account page names it, "Firefox on
// Linux", where every dashboard sign-in once read "A browser": the dashboard's own Go client);
// and each call carries the id as X-Request-Id, which the service keeps, so the request and
// every service request it made share one id in the access log. Any may be "".
func ForRequest(ctx context.Context, ip, userAgent, requestID string) context.Context {
	return context.WithValue(ctx, originKey{}, origin{ip: ip, userAgent: userAgent, requestID: requestID})
}

// UserAgent is the User-Agent ForRequest recorded, or "".
func UserAgent(ctx context.Context) string {
	o, _ := ctx.Value(originKey{}).(origin)
	return o.userAgent
}

// ClientIP is the address ForRequest recorded, or "".
func ClientIP(ctx context.Context) string {
	o, _ := ctx.Value(originKey{}).(origin)
	return o.ip
}

// RequestID is the request id ForRequest recorded, or "".
func RequestID(ctx context.Context) string {
	o, _ := ctx.Value(originKey{}).(origin)
	return o.requestID
}

// InProcess is an HTTP client that hands requests straight to h, the service mounted in this
// same process, without a socket. The person's address (ForRequest) becomes the request's
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
