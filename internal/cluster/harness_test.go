package cluster

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"masthead/internal/auth"
	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
	"masthead/internal/testwait"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// haproxyBin is Debian's HAProxy (package haproxy; make deps-haproxy installs it).
const haproxyBin = "/usr/sbin/haproxy"

//go:embed haproxy.cfg.tmpl
var haproxyTemplate string

// Health checks every 100 ms, two failures to take an instance out and two successes to put
// it back: a restarted instance is in rotation again a few hundred milliseconds after it
// listens. Production checks less often (packaging/haproxy.cfg).
const (
	checkInter = 100 * time.Millisecond
	checkFall  = 2
	checkRise  = 2
)

// password is every fixture account's.
const password = "cluster-password"

// buildMasthead builds cmd/masthead into a folder of t, which lives as long as t: the parent
// test builds once and its subtests share the binary.
func buildMasthead(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(haproxyBin); err != nil {
		t.Fatalf("%s is missing; install it with make deps-haproxy (apt-get install -y haproxy): %v", haproxyBin, err)
	}
	bin := filepath.Join(t.TempDir(), "masthead")
	cmd := exec.Command("go", "build", "-o", bin, "masthead/cmd/masthead")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build masthead: %v\n%s", err, out)
	}
	return bin
}

// options shape one cluster.
type options struct {
	instances int
	// env are settings every instance gets on top of the harness's (see start); a key with an
	// empty value removes one.
	env map[string]string
}

// account is a fixture person: a member of project "cluster" with the shared password.
type account struct {
	id, email, name string
	caller          pg.Caller // for fixtures written through RLS as this person
}

// cluster is HAProxy in front of several `masthead serve` processes on one fresh database, all
// started for one test and stopped, with their folder removed, when it ends.
type cluster struct {
	URL     string // HAProxy's frontend
	key     string // the publishable key every instance shares
	db      *pgtest.DB
	dir     string
	insts   []*instance
	proxy   *process
	proxyLg string // HAProxy's log (one line per request)
	sock    string // HAProxy's stats socket

	project                string // id of project "cluster"
	lead, editor, reviewer account
}

// instance is one `masthead serve` process; it may be stopped and started again on its port.
type instance struct {
	name string // HAProxy's name for it: m1, m2, …
	URL  string // straight to this instance, past HAProxy
	bin  string
	env  []string
	log  string // its log file, JSON lines, every run appended
	proc *process
}

// process is a child process whose output goes to a file.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once it has exited and err is set
	err    error
}

// freePorts picks n free loopback ports by listening on :0, then lets them go for the
// processes that will listen there.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var lns []net.Listener
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// start runs o.instances instances of bin on a fresh database, with fixture accounts and
// publications, behind HAProxy, and returns once HAProxy reports every instance up.
func start(t *testing.T, bin string, o options) *cluster {
	t.Helper()
	began := time.Now()
	c := &cluster{db: pgtest.New(t), dir: t.TempDir()}
	c.fixtures(t)
	keys, err := auth.GenerateKeySet()
	if err != nil {
		t.Fatal(err)
	}
	c.key = auth.GeneratePublishableKey()
	ports := freePorts(t, o.instances+1)
	c.URL = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	settings := map[string]string{
		"DATABASE_URL":             c.db.URL,
		"MASTHEAD_JWT_KEYS":        string(keys),
		"MASTHEAD_PUBLISHABLE_KEY": c.key,
		// Every instance issues and accepts tokens for the address people use: HAProxy's.
		"MASTHEAD_PUBLIC_URL": c.URL,
		// One media folder for all, as one S3 bucket would be.
		"MASTHEAD_STORAGE_DIR": filepath.Join(c.dir, "media"),
		// HAProxy's X-Forwarded-For is believed, so limits and logs see the client.
		"MASTHEAD_TRUSTED_PROXIES":  "127.0.0.1/32",
		"MASTHEAD_INSTANCES":        strconv.Itoa(o.instances),
		"MASTHEAD_BCRYPT_COST":      "4",
		"MASTHEAD_LOG_FORMAT":       "json",
		"MASTHEAD_LOG_LEVEL":        "debug",
		"MASTHEAD_SHUTDOWN_TIMEOUT": "20s",
		// Generous limits unless a test sets its own: one address (127.0.0.1) signs in often.
		"MASTHEAD_TOKEN_RATE_IP":            "100000/1s,100000",
		"MASTHEAD_TOKEN_RATE_ACCOUNT":       "100000/1s,100000",
		"MASTHEAD_TOKEN_RATE_ACCOUNT_TOTAL": "100000/1s,100000",
	}
	for k, v := range o.env {
		settings[k] = v
	}
	env := childEnv(settings)
	var servers []haproxyServer
	for i := range o.instances {
		addr := fmt.Sprintf("127.0.0.1:%d", ports[i+1])
		in := &instance{
			name: fmt.Sprintf("m%d", i+1), URL: "http://" + addr, bin: bin,
			env: append(slices.Clip(env), "MASTHEAD_ADDR="+addr),
			log: filepath.Join(c.dir, fmt.Sprintf("m%d.log", i+1)),
		}
		c.insts = append(c.insts, in)
		servers = append(servers, haproxyServer{Name: in.name, Addr: addr})
	}
	// Stopped before the database is dropped and the folder removed (cleanups run last first).
	t.Cleanup(func() { c.stop(t) })
	for _, in := range c.insts {
		in.start(t)
	}
	for _, in := range c.insts {
		in.waitReady(t, time.Minute)
	}
	c.startProxy(t, ports[0], servers)
	for _, in := range c.insts {
		c.waitStatus(t, in.name, "UP", time.Minute)
	}
	t.Logf("%d instances up behind HAProxy at %s in %s", len(c.insts), c.URL, time.Since(began).Round(time.Millisecond))
	return c
}

// childEnv is this process's environment without any Masthead or database setting (the
// instances must not pick up the developer's), plus settings.
func childEnv(settings map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "MASTHEAD_") || strings.HasPrefix(k, "DATABASE_") {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range settings {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// fixtures creates project "cluster" with a lead, an editor and a reviewer, and eight drafts.
func (c *cluster) fixtures(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	own := c.db.Owner(t)
	if err := own.QueryRow(ctx, `insert into projects (slug, name) values ('cluster', 'Cluster Daily') returning id`).Scan(&c.project); err != nil {
		t.Fatal(err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), 4)
	if err != nil {
		t.Fatal(err)
	}
	for role, a := range map[string]*account{"lead": &c.lead, "editor": &c.editor, "reviewer": &c.reviewer} {
		a.email, a.name = role+"@cluster.test", "Cluster "+strings.ToUpper(role[:1])+role[1:]
		err := own.QueryRow(ctx, `
			insert into auth.users (email, encrypted_password, email_confirmed_at, raw_user_meta_data)
			values ($1, $2, now(), jsonb_build_object('name', $3::text)) returning id::text`,
			a.email, string(hash), a.name).Scan(&a.id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := own.Exec(ctx, `insert into project_members (project_id, user_id, role) values ($1, $2, $3)`, c.project, a.id, role); err != nil {
			t.Fatal(err)
		}
		claims, _ := json.Marshal(map[string]any{"sub": a.id, "role": "authenticated"})
		a.caller = pg.UserCaller(claims)
	}
	c.as(t, c.editor, `insert into publications (project_id, title, slug, summary, body)
		select $1, 'Draft ' || g, 'draft-' || g, 'Summary', 'Body' from generate_series(1, 8) g`, c.project)
}

// as runs sql as a, through row-level security, as the service would.
func (c *cluster) as(t *testing.T, a account, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	if err := pg.WithCaller(ctx, c.db.Pool, a.caller, pg.ReadWrite, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql, args...)
		return err
	}); err != nil {
		t.Fatalf("as %s: %s: %v", a.email, sql, err)
	}
}

// startProcess runs name with args and env, its output appended to logPath. The child is
// killed if this process dies without cleaning up.
func startProcess(name string, args, env []string, logPath string) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// Pdeathsig fires when the thread that started the child exits; keep that thread alive.
	runtime.LockOSThread()
	err = cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.exited)
	}()
	return p, nil
}

// stop sends sig and waits up to timeout for the process to exit, then kills it. It reports
// whether the process exited by itself.
func (p *process) stop(sig os.Signal, timeout time.Duration) bool {
	if p == nil {
		return true
	}
	select {
	case <-p.exited:
		return true
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.exited:
		return true
	case <-timer.C:
		_ = p.cmd.Process.Kill()
		<-p.exited
		return false
	}
}

// stop ends HAProxy and every instance (all at once: each may drain); on failure it logs the
// end of each one's log.
func (c *cluster) stop(t *testing.T) {
	c.proxy.stop(syscall.SIGTERM, 10*time.Second)
	var wg sync.WaitGroup
	for _, in := range c.insts {
		wg.Go(func() { in.proc.stop(syscall.SIGTERM, 30*time.Second) })
	}
	wg.Wait()
	if t.Failed() {
		for _, in := range c.insts {
			t.Logf("log of %s (%s), last lines:\n%s", in.name, in.URL, tail(in.log, 40))
		}
		t.Logf("HAProxy log, last lines:\n%s", tail(c.proxyLg, 40))
	}
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// start runs the instance (again).
func (in *instance) start(t *testing.T) {
	t.Helper()
	p, err := startProcess(in.bin, []string{"serve"}, in.env, in.log)
	if err != nil {
		t.Fatal(err)
	}
	in.proc = p
}

// waitReady waits until the instance itself answers /readyz with 200.
func (in *instance) waitReady(t *testing.T, timeout time.Duration) {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second}
	waitFor(t, timeout, in.name+" ready", func() (bool, error) {
		select {
		case <-in.proc.exited:
			return false, fmt.Errorf("%s exited: %v\n%s", in.name, in.proc.err, tail(in.log, 30))
		default:
		}
		res, err := hc.Get(in.URL + "/readyz")
		if err != nil {
			return false, nil
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK, nil
	})
}

// waitExit waits for the instance to exit after a stop signal and fails t unless it exited
// cleanly (status 0) within timeout.
func (in *instance) waitExit(t *testing.T, timeout time.Duration) {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-in.proc.exited:
		if in.proc.err != nil {
			t.Fatalf("%s exited with %v", in.name, in.proc.err)
		}
	case <-timer.C:
		t.Fatalf("%s did not exit within %s of SIGTERM", in.name, timeout)
	}
}

// logLines returns the instance's log lines (every run) that contain every one of subs.
func (in *instance) logLines(subs ...string) []string {
	f, err := os.Open(in.log)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// waitFor calls cond until it reports true, fails t when it returns an error (what the
// cluster did cannot be waited away) or when timeout has passed. It polls: what it waits on
// (another process, HAProxy's view) cannot call back.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	testwait.Until(t, timeout, what, func() (bool, string) {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		return ok, ""
	})
}

type haproxyServer struct{ Name, Addr string }

// startProxy writes HAProxy's configuration from the template and runs it in the foreground.
func (c *cluster) startProxy(t *testing.T, port int, servers []haproxyServer) {
	t.Helper()
	tmpl := template.Must(template.New("haproxy").Parse(haproxyTemplate))
	c.sock = filepath.Join(c.dir, "haproxy.sock")
	var cfg bytes.Buffer
	if err := tmpl.Execute(&cfg, map[string]any{
		"Port": port, "Socket": c.sock, "Servers": servers,
		"Inter": fmt.Sprintf("%dms", checkInter.Milliseconds()), "Fall": checkFall, "Rise": checkRise,
	}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(c.dir, "haproxy.cfg")
	if err := os.WriteFile(path, cfg.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	c.proxyLg = filepath.Join(c.dir, "haproxy.log")
	p, err := startProcess(haproxyBin, []string{"-db", "-f", path}, os.Environ(), c.proxyLg)
	if err != nil {
		t.Fatal(err)
	}
	c.proxy = p
}

// stats is HAProxy's `show stat` for the backend: one row per server, plus "BACKEND".
func (c *cluster) stats() (map[string]map[string]string, error) {
	select {
	case <-c.proxy.exited:
		return nil, fmt.Errorf("haproxy exited: %v\n%s", c.proxy.err, tail(c.proxyLg, 30))
	default:
	}
	conn, err := net.DialTimeout("unix", c.sock, 2*time.Second)
	if err != nil {
		return nil, nil // not listening yet
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, "show stat\n"); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("# "))))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) < 2 {
		return nil, fmt.Errorf("show stat: %v: %q", err, b)
	}
	out := map[string]map[string]string{}
	for _, row := range rows[1:] {
		m := map[string]string{}
		for i, col := range rows[0] {
			if i < len(row) {
				m[col] = row[i]
			}
		}
		if m["pxname"] == "masthead" && m["svname"] != "FRONTEND" {
			out[m["svname"]] = m
		}
	}
	return out, nil
}

// waitStatus waits until HAProxy reports instance name with exactly status: "UP" or "DOWN"
// (on the way, "UP 1/2" says one check failed, "DOWN 1/2" one passed).
func (c *cluster) waitStatus(t *testing.T, name, status string, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, fmt.Sprintf("%s %s in HAProxy", name, status), func() (bool, error) {
		s, err := c.stats()
		return s[name]["status"] == status, err
	})
}

// httpClient does not follow redirects (a redirect to /login is an answer to check) and opens
// a new connection per request unless keepAlive.
func httpClient(jar http.CookieJar, keepAlive bool) *http.Client {
	return &http.Client{
		Jar: jar, Timeout: 30 * time.Second,
		Transport:     &http.Transport{DisableKeepAlives: !keepAlive, MaxIdleConnsPerHost: 16},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// answer is one response, read.
type answer struct {
	status   int
	body     []byte
	instance string // X-Masthead-Instance: which instance answered through HAProxy
	header   http.Header
}

// do sends req with hc and reads the answer.
func do(hc *http.Client, req *http.Request) (answer, error) {
	res, err := hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{status: res.StatusCode, body: body, instance: res.Header.Get("X-Masthead-Instance"), header: res.Header}, nil
}

// rest builds a request to the service at base with the publishable key and, when token is
// set, a bearer token.
func (c *cluster) rest(method, base, path, token string, body any) *http.Request {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("apikey", c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// signIn takes the password grant at base and returns the access and refresh tokens.
func (c *cluster) signIn(t *testing.T, base string, a account) (access, refresh string) {
	t.Helper()
	res, err := do(httpClient(nil, false), c.rest(http.MethodPost, base, "/auth/v1/token?grant_type=password", "",
		map[string]string{"email": a.email, "password": password}))
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if res.status != http.StatusOK || json.Unmarshal(res.body, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("sign-in of %s at %s: %d %s", a.email, base, res.status, res.body)
	}
	return tok.AccessToken, tok.RefreshToken
}

var csrfRE = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// browser is a person's browser: it keeps cookies and sees redirects as answers.
func browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return httpClient(jar, false)
}

// dashboardSignIn loads /login at base and posts the form from b, as a person does; both go
// through HAProxy, so the form may be shown by one instance and posted to another.
func dashboardSignIn(t *testing.T, b *http.Client, base string, a account) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/login", nil)
	page, err := do(b, req)
	if err != nil {
		t.Fatal(err)
	}
	m := csrfRE.FindSubmatch(page.body)
	if page.status != http.StatusOK || m == nil {
		t.Fatalf("GET /login: %d, CSRF token found: %v", page.status, m != nil)
	}
	form := url.Values{"_csrf": {html.UnescapeString(string(m[1]))}, "email": {a.email}, "password": {password}}
	req, _ = http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := do(b, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/" {
		t.Fatalf("POST /login (form from %s, posted to %s): %d to %q, want 303 to /",
			page.instance, res.instance, res.status, res.header.Get("Location"))
	}
}

// signedIn reports whether a dashboard page is a's signed-in page: it names them in the header.
func signedIn(body []byte, a account) bool {
	return bytes.Contains(body, []byte(`data-testid="user">`+html.EscapeString(a.name)+"<"))
}

// page builds a dashboard GET of path at base carrying cookie.
func page(base, path, cookie string) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	return req
}

// cookieHeader is the Cookie header b sends to base.
func cookieHeader(b *http.Client, base string) string {
	u, _ := url.Parse(base)
	var parts []string
	for _, ck := range b.Jar.Cookies(u) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	return strings.Join(parts, "; ")
}
