package handlers_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"

	"masthead/handlers"
	"masthead/internal/client"
	"masthead/internal/config"
	"masthead/internal/pg/pgtest"
	"masthead/internal/seed"
	"masthead/internal/server/servertest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// stack is the real service with the demo data, and a dashboard in front of it whose clock and
// outgoing HTTP the test controls. The dashboard talks to the service over HTTP, as in
// `masthead web`; nothing is mocked.
type stack struct {
	env   *servertest.Env
	url   string // the dashboard
	clock *fakeClock
	calls *atomic.Int64 // service calls the dashboard made
	// primaryCalls counts the calls that asked to read from the primary (client.ReadHeader).
	primaryCalls *atomic.Int64
	// faults breaks the dashboard's calls to the service while a test says so (an outage).
	faults *faults
}

// newStack starts the service on a fresh database, seeds the demo projects, and starts a
// dashboard against it.
func newStack(t testing.TB) *stack { return newStackWith(t, 0) }

// newStackWith seeds publications per project (0: the hand-made demo set only).
func newStackWith(t testing.TB, publications int) *stack { return newStackConfig(t, publications, nil) }

// newStackConfig is newStackWith with the service's config changed first (may be nil).
func newStackConfig(t testing.TB, publications int, change func(*config.Config)) *stack {
	t.Helper()
	env := servertest.New(t, change)
	opts := seed.Options{MediaDir: env.Config.StorageDir, Publications: publications}
	if _, err := seed.Run(context.Background(), env.DB.OwnerURL, opts); err != nil {
		t.Fatalf("seed: %v", err)
	}
	s := &stack{env: env, clock: &fakeClock{}, calls: &atomic.Int64{}, primaryCalls: &atomic.Int64{},
		faults: &faults{rt: http.DefaultTransport}}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: countingTransport{s.faults, s.calls, s.primaryCalls}}
	app, err := handlers.New(handlers.Config{
		APIURL: env.URL, PublishableKey: env.Key, SessionKeys: handlers.GenerateSessionKeys(),
		HTTPClient: hc, Now: s.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		t.Logf("dashboard: %s %s: %v", c.Request().Method, c.Path(), err)
		e.DefaultHTTPErrorHandler(err, c)
	}
	app.Register(e)
	if err := app.RegisterMedia(e, env.URL, env.Key, hc); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(e)
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

// fakeClock is real time plus an offset the test moves forward.
type fakeClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

type countingTransport struct {
	rt      http.RoundTripper
	n       *atomic.Int64
	primary *atomic.Int64
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	if r.Header.Get(client.ReadHeader) == client.ReadPrimary {
		t.primary.Add(1)
	}
	return t.rt.RoundTrip(r)
}

// faults stands between the dashboard and the service and, while a fault is set, answers the
// calls whose path starts with its prefix as an outage would: with a 5xx status in the service's
// error shape, or a connection that cannot be made (status 0). With lost set, the service gets
// the call and acts on it, and its answer is lost on the way back (a proxy's 502 after the
// service did the work). With once set, only the first such call meets the fault. No fault
// set: every call goes through untouched.
type faults struct {
	rt  http.RoundTripper
	mu  sync.Mutex
	now *fault
}

type fault struct {
	prefix string
	status int // 0: the connection fails
	lost   bool
	once   bool
}

// set starts breaking calls as f says; nil ends the outage.
func (fs *faults) set(f *fault) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.now = f
}

func (fs *faults) RoundTrip(r *http.Request) (*http.Response, error) {
	fs.mu.Lock()
	f := fs.now
	if f != nil && f.once && strings.HasPrefix(r.URL.Path, f.prefix) {
		fs.now = nil
	}
	fs.mu.Unlock()
	if f == nil || !strings.HasPrefix(r.URL.Path, f.prefix) {
		return fs.rt.RoundTrip(r)
	}
	if f.lost {
		res, err := fs.rt.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	} else if r.Body != nil {
		r.Body.Close()
	}
	if f.status == 0 {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	body := `{"code":"PGRST000","message":"the service failed","details":null,"hint":null}`
	if strings.HasPrefix(r.URL.Path, "/auth/") {
		body = `{"code":` + strconv.Itoa(f.status) + `,"error_code":"unexpected_failure","msg":"the service failed"}`
	}
	return &http.Response{
		StatusCode: f.status, Status: strconv.Itoa(f.status) + " " + http.StatusText(f.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r,
	}, nil
}

// browser is one person's browser: a cookie jar, no automatic redirects (tests check them),
// and the CSRF token of the last page it loaded.
type browser struct {
	t    testing.TB
	base string
	hc   *http.Client
	csrf string
	ua   string // the User-Agent of every request, when set (else Go's)
}

func (s *stack) browser(t testing.TB) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: s.url, hc: &http.Client{
		Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// page is an answer with its parsed document.
type page struct {
	status int
	header http.Header
	body   string
	doc    *goquery.Document
}

func (p page) text(sel string) string { return strings.TrimSpace(p.doc.Find(sel).First().Text()) }
func (p page) count(sel string) int   { return p.doc.Find(sel).Length() }
func (p page) location() string       { return p.header.Get("Location") }

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	if b.ua != "" {
		req.Header.Set("User-Agent", b.ua)
	}
	res, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(raw)))
	if err != nil {
		b.t.Fatalf("parse %s: %v", req.URL, err)
	}
	if tok, ok := doc.Find(`input[name="_csrf"]`).First().Attr("value"); ok && tok != "" {
		b.csrf = tok
	}
	return page{status: res.StatusCode, header: res.Header, body: string(raw), doc: doc}
}

func (b *browser) get(path string, header ...string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.base+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

// fetch loads path and discards the answer, for benchmarks: parsing would cost the machine
// that is being measured.
func (b *browser) fetch(path string) int {
	b.t.Helper()
	res, err := b.hc.Get(b.base + path)
	if err != nil {
		b.t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

// post sends a form; the CSRF token is added unless form sets _csrf itself.
func (b *browser) post(path string, form url.Values, header ...string) page {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["_csrf"]; !ok {
		form.Set("_csrf", b.csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

// login signs in with the demo password and expects to land on next (or "/").
func (b *browser) login(email string) {
	b.t.Helper()
	b.get("/login")
	p := b.post("/login", url.Values{"email": {email}, "password": {seed.DefaultPassword}})
	if p.status != http.StatusSeeOther {
		b.t.Fatalf("login %s: %d %s", email, p.status, p.text("[data-testid=login-error]"))
	}
	b.get("/schedule") // signing in starts a new session with a new CSRF token: pick it up
}

// htmx are the headers htmx sends for a request that targets the element with id target.
func htmx(target string) []string {
	return []string{"HX-Request", "true", "HX-Target", target, "HX-Current-URL", "http://x/"}
}

// pub is a publication of the demo data, read as the cluster owner.
type pub struct {
	id, title, summary, status, authorEmail string
	version                                 int
}

// pubs lists a project's publications in one status, newest first.
func (s *stack) pubs(t testing.TB, project, status string) []pub {
	t.Helper()
	rows, err := s.env.DB.Owner(t).Query(context.Background(), `
		select p.id::text, p.title, p.summary, p.status, pr.email, p.version
		from publications p join projects j on j.id = p.project_id join profiles pr on pr.id = p.author_id
		where j.slug = $1 and p.status = $2 order by p.created_at desc`, project, status)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []pub
	for rows.Next() {
		var p pub
		if err := rows.Scan(&p.id, &p.title, &p.summary, &p.status, &p.authorEmail, &p.version); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		t.Fatalf("no %s publication in %s", status, project)
	}
	return out
}

// statusOf reads a publication's status and version as the owner.
func (s *stack) statusOf(t testing.TB, id string) (string, int) {
	t.Helper()
	var st string
	var v int
	if err := s.env.DB.Owner(t).QueryRow(context.Background(),
		`select status, version from publications where id = $1`, id).Scan(&st, &v); err != nil {
		t.Fatal(err)
	}
	return st, v
}
