package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to one service. It is safe for concurrent use and holds no user state: the
// caller's token is passed to every method, so one Client serves every signed-in user. (It
// keeps search estimates for a few seconds, by token: see EstimateTTL.)
type Client struct {
	base      *url.URL
	key       string
	hc        *http.Client
	estimates *estimates
}

// New returns a Client for the service at baseURL (e.g. http://127.0.0.1:8080) that sends
// publishableKey as apikey. hc may be nil for a client with a 15 s timeout.
func New(baseURL, publishableKey string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: service URL %q must be an absolute http(s) URL", baseURL)
	}
	if publishableKey == "" {
		return nil, errors.New("client: a publishable key is required")
	}
	if hc == nil {
		hc = &http.Client{Timeout: 15 * time.Second}
	}
	return &Client{base: u, key: publishableKey, hc: hc, estimates: newEstimates()}, nil
}

// Error is a refusal from the service: the HTTP status with the code and message of its body
// (PostgREST's code/message/details/hint or GoTrue's error_code/msg). Message is written for
// people by the service (e.g. the workflow's 409 explanations), so it may be shown as is.
type Error struct {
	Status  int
	Code    string
	Message string
	Details string
	Hint    string
	// RetryAfter is the service's Retry-After (on 429 and 503), or 0.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("client: %d %s: %s", e.Status, e.Code, e.Message)
	}
	return fmt.Sprintf("client: %d: %s", e.Status, e.Message)
}

// StatusOf is the HTTP status of a service refusal in err's chain, or 0 when err is not one
// (a network failure, a decoding bug).
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// ErrorOf returns the service refusal in err's chain, if there is one.
func ErrorOf(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// request describes one HTTP call; the zero value of each field means "not sent".
type request struct {
	method string
	path   string // below base, e.g. /rest/v1/publications
	query  url.Values
	token  string // access token; empty sends the publishable key as bearer (anon)
	body   any
	// raw, when set, is sent as the body instead of body's JSON, with the header's Content-Type.
	raw    io.Reader
	header http.Header
	// pastEndEmpty answers a 416 as an empty page (see GetRaw).
	pastEndEmpty bool
}

// response is the raw answer of a successful call.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends r and returns the body of a 2xx answer or an *Error.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	u := *c.base
	u.Path += r.path
	if len(r.query) > 0 {
		// PostgREST reads parentheses, commas, colons and stars literally, so the query string keeps
		// them unescaped (url.Values.Encode would escape them, which works but reads badly in logs).
		u.RawQuery = encodeQuery(r.query)
	}
	var body io.Reader = r.raw
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, fmt.Errorf("client: encode %s body: %w", r.path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if ip := ClientIP(ctx); ip != "" {
		// Over the network (masthead web), the service believes this only from the peers in
		// its MASTHEAD_TRUSTED_PROXIES; in process (InProcess), the address is the peer itself.
		req.Header.Set("X-Forwarded-For", ip)
	}
	if ua := UserAgent(ctx); ua != "" {
		req.Header.Set("User-Agent", ua)
	}
	if id := RequestID(ctx); id != "" {
		req.Header.Set("X-Request-Id", id)
	}
	if ctx.Value(readPrimaryKey{}) != nil {
		req.Header.Set(ReadHeader, ReadPrimary)
	}
	req.Header.Set("apikey", c.key)
	bearer := r.token
	if bearer == "" {
		bearer = c.key
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
	}
	defer res.Body.Close()
	b, err := readBody(res)
	if err != nil {
		return nil, fmt.Errorf("client: read %s %s: %w", r.method, r.path, err)
	}
	if res.StatusCode == http.StatusRequestedRangeNotSatisfiable && r.pastEndEmpty {
		return &response{status: res.StatusCode, header: res.Header, body: []byte("[]")}, nil
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		e := decodeError(res.StatusCode, b)
		if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && secs > 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
		return nil, e
	}
	return &response{status: res.StatusCode, header: res.Header, body: b}, nil
}

// maxBody bounds what one answer may hold in memory.
const maxBody = 32 << 20

// readBody reads res's body, in one allocation of its size when the service announced it (the
// service's JSON answers do; so does InProcess): io.ReadAll grows from 512 bytes, which was
// six allocations and twice the copying for a page of 20 publications.
func readBody(res *http.Response) ([]byte, error) {
	if n := res.ContentLength; n >= 0 && n <= maxBody {
		b := make([]byte, n)
		if _, err := io.ReadFull(res.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(io.LimitReader(res.Body, maxBody))
}

// decodeError reads either surface's error body; an unreadable body still yields the status.
func decodeError(status int, b []byte) *Error {
	var v struct {
		Code             json.RawMessage `json:"code"`
		ErrorCode        string          `json:"error_code"`
		Message          string          `json:"message"`
		Msg              string          `json:"msg"`
		Details          string          `json:"details"`
		Hint             string          `json:"hint"`
		ErrorName        string          `json:"error"`
		ErrorDescription string          `json:"error_description"`
	}
	e := &Error{Status: status}
	if json.Unmarshal(b, &v) != nil {
		e.Message = http.StatusText(status)
		return e
	}
	var code string
	if json.Unmarshal(v.Code, &code) != nil { // GoTrue's first format sends the status as a number
		code = ""
	}
	e.Code = firstNonEmpty(v.ErrorCode, code, v.ErrorName)
	e.Message = firstNonEmpty(v.Message, v.Msg, v.ErrorDescription, http.StatusText(status))
	e.Details, e.Hint = v.Details, v.Hint
	if e.Code == codeNulInText && strings.Contains(e.Details, `\u0000`) {
		// PostgreSQL's words ("unsupported Unicode escape sequence") name its JSON parser, not
		// what the person sent.
		e.Message = "a text cannot hold the NUL character (U+0000): remove it and try again"
	}
	if words := constraintRefusal(e.Code, e.Message); words != "" {
		// The details would name the failing row, in PostgreSQL's notation.
		e.Message, e.Details = words, ""
	}
	return e
}

// codeNulInText is PostgreSQL's error for a character a JSON value cannot be read as text with;
// in a UTF-8 database only a NUL (\u0000, named in the details), which is how one arrives from
// a form or a tool's arguments.
const codeNulInText = "22P05"

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// structural undoes url.Values.Encode's escaping of PostgREST's structural characters. Built
// once: a Replacer builds its lookup tables on first use, about 12 µs and 12 kB, which every
// request paid when it was made per call (measured under MCP's read tools).
var structural = strings.NewReplacer("%28", "(", "%29", ")", "%2C", ",", "%3A", ":", "%2A", "*", "%21", "!", "%3E", ">")

// encodeQuery is url.Values.Encode with PostgREST's structural characters left readable.
func encodeQuery(q url.Values) string {
	return structural.Replace(q.Encode())
}

// parseContentRange reads the total of "0-24/1234" (or "*/0"); -1 when unknown.
func parseContentRange(h string) int {
	_, total, ok := strings.Cut(h, "/")
	if !ok || total == "*" {
		return -1
	}
	n, err := strconv.Atoi(total)
	if err != nil {
		return -1
	}
	return n
}

// ReadHeader and ReadPrimary are the request header by which a client asks that its reads
// come from the primary, not a read replica that may not have its last write yet.
const (
	ReadHeader  = "Masthead-Read"
	ReadPrimary = "primary"
)

type readPrimaryKey struct{}

// WithReadPrimary marks ctx so that the calls made with it ask to read from the primary.
func WithReadPrimary(ctx context.Context) context.Context {
	return context.WithValue(ctx, readPrimaryKey{}, true)
}
