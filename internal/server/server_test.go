package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/pg/pgtest"
	"masthead/internal/server"
	"masthead/internal/server/servertest"
	"masthead/internal/testwait"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// get performs one request and returns the response with its body read.
func get(t *testing.T, method, url string, header map[string]string, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// accessToken signs email in with the password grant at base and returns the access token.
func accessToken(t *testing.T, base, key, email, password string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	res, b := get(t, http.MethodPost, base+"/auth/v1/token?grant_type=password",
		map[string]string{"apikey": key, "Content-Type": "application/json"}, bytes.NewReader(body))
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &tok) != nil {
		t.Fatalf("sign in %s: %d %s", email, res.StatusCode, b)
	}
	return tok.AccessToken
}

func TestHealth(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	for _, path := range []string{"/healthz", "/readyz"} {
		res, body := get(t, http.MethodGet, e.URL+path, nil, nil)
		if res.StatusCode != http.StatusOK || string(body) != `{"status":"ok"}`+"\n" {
			t.Fatalf("%s: %d %s", path, res.StatusCode, body)
		}
	}
	e.Server.Close() // the database is gone: not ready, but still alive
	if res, _ := get(t, http.MethodGet, e.URL+"/readyz", nil, nil); res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("readyz without a database: %d", res.StatusCode)
	}
	if res, _ := get(t, http.MethodGet, e.URL+"/healthz", nil, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("healthz without a database: %d", res.StatusCode)
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	tests := []struct {
		name, sent string
		kept       bool
	}{
		{"none", "", false},
		{"from a proxy", "lb-7f3a.42_x", true},
		{"too long", strings.Repeat("a", 65), false},
		{"spaces and quotes", `a" level=ERROR`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.sent != "" {
				h["X-Request-Id"] = tt.sent
			}
			res, _ := get(t, http.MethodGet, e.URL+"/healthz", h, nil)
			id := res.Header.Get("X-Request-Id")
			if tt.kept && id != tt.sent || !tt.kept && (id == tt.sent || len(id) != 32) {
				t.Fatalf("sent %q, got %q", tt.sent, id)
			}
		})
	}
}

// TestAccessLog: one line per request with the fields operators need, and no secret in the
// whole log even though every request below carries one.
func TestAccessLog(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	u := e.CreateUser(t, "logs@northwind.test", "a very secret password")
	key := map[string]string{"apikey": e.Key, "Content-Type": "application/json"}
	res, body := get(t, http.MethodPost, e.URL+"/auth/v1/token?grant_type=password", key,
		strings.NewReader(`{"email":"logs@northwind.test","password":"a very secret password"}`))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("sign in: %d %s", res.StatusCode, body)
	}
	var tok struct{ AccessToken, RefreshToken string }
	if err := json.Unmarshal(body, &struct {
		A *string `json:"access_token"`
		R *string `json:"refresh_token"`
	}{&tok.AccessToken, &tok.RefreshToken}); err != nil {
		t.Fatal(err)
	}
	bearer := map[string]string{"apikey": e.Key, "Authorization": "Bearer " + tok.AccessToken}
	get(t, http.MethodGet, e.URL+"/auth/v1/user", bearer, nil)
	get(t, http.MethodGet, e.URL+"/rest/v1/projects?select=*&apikey="+e.Key, bearer, nil)
	get(t, http.MethodPost, e.URL+"/auth/v1/token?grant_type=refresh_token", key,
		strings.NewReader(`{"refresh_token":"`+tok.RefreshToken+`"}`))
	get(t, http.MethodGet, e.URL+"/no/such/route", nil, nil)

	lines := e.Logs.Lines(`"msg":"request"`)
	if len(lines) != 5 {
		t.Fatalf("want 5 access log lines, got %d:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	// A path no route matches is logged (and counted) as "unmatched", never as itself.
	wantRoutes := []string{"/auth/v1/token", "/auth/v1/user", "/rest/v1/:table", "/auth/v1/token", "unmatched"}
	for i, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"request_id", "method", "route", "status", "duration_ms", "client_ip"} {
			if rec[k] == nil || rec[k] == "" {
				t.Errorf("line %d lacks %s: %s", i, k, l)
			}
		}
		if rec["route"] != wantRoutes[i] {
			t.Errorf("line %d route = %v, want %s", i, rec["route"], wantRoutes[i])
		}
	}
	all := e.Logs.String()
	for name, secret := range map[string]string{"password": u.Password, "access token": tok.AccessToken,
		"refresh token": tok.RefreshToken, "publishable key": e.Key, "access token signature": tok.AccessToken[strings.LastIndex(tok.AccessToken, ".")+1:]} {
		if strings.Contains(all, secret) {
			t.Errorf("the log contains the %s", name)
		}
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	res, _ := get(t, http.MethodOptions, e.URL+"/auth/v1/token?grant_type=password", map[string]string{
		"Origin": "https://app.example", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "apikey, authorization, content-type, x-client-info, x-supabase-api-version",
	}, nil)
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
	}
	if !strings.Contains(strings.ToLower(res.Header.Get("Access-Control-Allow-Headers")), "apikey") {
		t.Fatalf("apikey not allowed: %v", res.Header)
	}
	res, _ = get(t, http.MethodGet, e.URL+"/healthz", map[string]string{"Origin": "https://app.example"}, nil)
	if res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("CORS must be limited to the client APIs")
	}
}

func TestRESTIsMountedBehindTheKey(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	if res, body := get(t, http.MethodGet, e.URL+"/rest/v1/projects", nil, nil); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the key: %d %s", res.StatusCode, body)
	}
	res, body := get(t, http.MethodGet, e.URL+"/rest/v1/projects", map[string]string{"apikey": e.Key}, nil)
	if res.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("anon: %d %s", res.StatusCode, body)
	}
	res, body = get(t, http.MethodGet, e.URL+"/rest/v1/projects", map[string]string{"apikey": e.Key, "Authorization": "Bearer forged"}, nil)
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a bad token: %d %s", res.StatusCode, body)
	}

	// A signed-in user reaches REST until their session ends; then REST refuses the token.
	e.CreateUser(t, "rest@northwind.test", "rest password")
	res, body = get(t, http.MethodPost, e.URL+"/auth/v1/token?grant_type=password",
		map[string]string{"apikey": e.Key, "Content-Type": "application/json"},
		strings.NewReader(`{"email":"rest@northwind.test","password":"rest password"}`))
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("sign in: %d %s", res.StatusCode, body)
	}
	user := map[string]string{"apikey": e.Key, "Authorization": "Bearer " + tok.AccessToken}
	if res, body := get(t, http.MethodGet, e.URL+"/rest/v1/projects", user, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("signed in: %d %s", res.StatusCode, body)
	}
	if res, _ := get(t, http.MethodPost, e.URL+"/auth/v1/logout", user, nil); res.StatusCode != http.StatusNoContent {
		t.Fatalf("logout: %d", res.StatusCode)
	}
	res, body = get(t, http.MethodGet, e.URL+"/rest/v1/projects", user, nil)
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "PGRST301") {
		t.Fatalf("signed out: %d %s", res.StatusCode, body)
	}
}

func TestClientIPFromTrustedProxiesOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		trusted []netip.Prefix
		want    string
	}{
		{"direct", nil, `"client_ip":"127.0.0.1"`},
		{"behind a trusted proxy", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, `"client_ip":"203.0.113.9"`},
		{"untrusted peer", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, `"client_ip":"127.0.0.1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := servertest.New(t, func(c *config.Config) { c.TrustedProxies = tt.trusted })
			get(t, http.MethodGet, e.URL+"/healthz", map[string]string{"X-Forwarded-For": "203.0.113.9"}, nil)
			if len(e.Logs.Lines(`"msg":"request"`, tt.want)) != 1 {
				t.Fatalf("want %s in:\n%s", tt.want, e.Logs.String())
			}
		})
	}
}

// TestGracefulShutdown: a request in flight when the stop signal comes is answered, then Serve
// returns cleanly and the port is closed. The request is held in flight by a row lock the test
// owns, so "in flight" is a fact the database shows, not a guess about timing.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *config.Config) { c.ShutdownTimeout = 2 * time.Minute })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.Server.Serve(ctx, ln) }()

	bg := context.Background()
	own := e.DB.Owner(t)
	editor := e.CreateUser(t, "editor@shutdown.test", "a long password")
	var project, pub string
	if err := own.QueryRow(bg, `insert into projects (slug, name) values ('shut', 'Shut') returning id`).Scan(&project); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Exec(bg, `insert into project_members (project_id, user_id, role) values ($1, $2, 'editor')`, project, editor.ID); err != nil {
		t.Fatal(err)
	}
	if err := own.QueryRow(bg, `insert into publications (project_id, title, slug, author_id) values ($1, 'Held', 'held', $2) returning id`,
		project, editor.ID).Scan(&pub); err != nil {
		t.Fatal(err)
	}
	res, body := get(t, http.MethodPost, base+"/auth/v1/token?grant_type=password",
		map[string]string{"apikey": e.Key, "Content-Type": "application/json"},
		strings.NewReader(`{"email":"editor@shutdown.test","password":"a long password"}`))
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &tok) != nil {
		t.Fatalf("sign in: %d %s", res.StatusCode, body)
	}

	// The test holds the row; the editor's PATCH waits for it inside the service.
	lock, err := own.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(bg)
	if _, err := lock.Exec(bg, `select 1 from publications where id = $1 for update`, pub); err != nil {
		t.Fatal(err)
	}
	answered := make(chan int, 1)
	go func() {
		res, _ := get(t, http.MethodPatch, base+"/rest/v1/publications?id=eq."+pub,
			map[string]string{"apikey": e.Key, "Authorization": "Bearer " + tok.AccessToken, "Content-Type": "application/json"},
			strings.NewReader(`{"title":"Edited during shutdown"}`))
		answered <- res.StatusCode
	}()
	testwait.Until(t, 10*time.Second, "the PATCH to reach the row lock", func() (bool, string) {
		var waiting int
		if err := own.QueryRow(bg, `select count(*) from pg_stat_activity where datname = current_database()
			and usename = 'authenticator' and wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting == 1, fmt.Sprintf("%d of the service's backends wait on a lock", waiting)
	})
	stop()
	// Shutdown has begun: the listener closes while the request is still held.
	testwait.Until(t, 10*time.Second, "the listener to close after the stop signal", func() (bool, string) {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			return true, ""
		}
		c.Close()
		return false, "still accepting connections"
	})
	if err := lock.Rollback(bg); err != nil {
		t.Fatal(err)
	}
	if status := <-answered; status != http.StatusNoContent {
		t.Fatalf("in-flight request got %d, want its real answer (204)", status)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	var title string
	if err := own.QueryRow(bg, `select title from publications where id = $1`, pub).Scan(&title); err != nil || title != "Edited during shutdown" {
		t.Errorf("the in-flight edit: %q %v", title, err)
	}
}

func TestPrepareDev(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var first config.Config
	if err := server.PrepareDev(dir, &first); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.PublishableKey, "sb_publishable_") || first.JWTKeys == "" {
		t.Fatalf("nothing generated: %+v", first)
	}
	if first.StorageDir != filepath.Join(dir, "media") {
		t.Fatalf("storage dir = %q", first.StorageDir)
	}
	for _, f := range []string{"publishable_key", "jwt_keys.json"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, mode %v; want a private file", f, err, st.Mode())
		}
	}
	var second config.Config
	if err := server.PrepareDev(dir, &second); err != nil {
		t.Fatal(err)
	}
	if second.PublishableKey != first.PublishableKey || second.JWTKeys != first.JWTKeys {
		t.Fatal("a second run must keep the generated secrets")
	}
	fromEnv := config.Config{PublishableKey: "sb_publishable_from_the_environment", JWTKeys: `{"keys":[]}`}
	if err := server.PrepareDev(t.TempDir(), &fromEnv); err != nil {
		t.Fatal(err)
	}
	if fromEnv.PublishableKey != "sb_publishable_from_the_environment" || fromEnv.JWTKeys != `{"keys":[]}` {
		t.Fatal("values from the environment must win")
	}
}

func TestWithoutDashboard(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	cfg := e.Config
	srv, err := server.New(context.Background(), cfg, slog.New(slog.DiscardHandler), server.WithoutDashboard())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { stop(); <-done }()
	base := "http://" + ln.Addr().String()
	if res, _ := get(t, http.MethodGet, base+"/login", nil, nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("api serves the dashboard: /login %d", res.StatusCode)
	}
	if res, _ := get(t, http.MethodGet, e.URL+"/login", nil, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("serve lacks the dashboard: /login %d", res.StatusCode)
	}
	if res, _ := get(t, http.MethodGet, base+"/auth/v1/.well-known/jwks.json", nil, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("api lacks the identity service: %d", res.StatusCode)
	}
}

// TestSIGHUPReloadsSchema: a table created without NOTIFY is unknown to REST until SIGHUP, after
// which it is served, as PostgREST does.
func TestSIGHUPReloadsSchema(t *testing.T) {
	e := servertest.New(t, nil)
	url := e.Loopback(t) + "/rest/v1/notes"
	// The schema listener reloads once when it subscribes; the table must come after that.
	e.Logs.WaitLines(t, 10*time.Second, 1, "schema cache listener subscribed")
	if _, err := e.DB.Owner(t).Exec(context.Background(),
		`create table public.notes (id int primary key); grant select on public.notes to anon`); err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{"apikey": e.Key}
	if res, _ := get(t, http.MethodGet, url, hdr, nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("before SIGHUP: %d, want 404 (not in the schema cache)", res.StatusCode)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	e.Logs.WaitLines(t, 10*time.Second, 1, "server: schema cache reloaded")
	if res, _ := get(t, http.MethodGet, url, hdr, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("after SIGHUP: %d, want 200", res.StatusCode)
	}
}

// TestErrorShapesPerSurface: what the router answers itself (an unknown path, a body over the
// limit) comes in the shape of the surface the path belongs to.
func TestErrorShapesPerSurface(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	hdr := map[string]string{"apikey": e.Key}
	for _, tc := range []struct {
		method, path string
		body         io.Reader
		status       int
		field, want  string
	}{
		{"GET", "/rest/v1/publications/extra/segments", nil, 404, "code", "PGRST125"},
		{"GET", "/auth/v1/nowhere", nil, 404, "error_code", "not_found"},
		{"GET", "/storage/v1/nowhere/at/all", nil, 404, "statusCode", "404"},
		{"POST", "/rest/v1/publications", strings.NewReader(strings.Repeat("x", 12<<20)), 413, "code", "PGRST102"},
		{"POST", "/auth/v1/token?grant_type=password", strings.NewReader(strings.Repeat("x", 12<<20)), 413, "error_code", "request_too_large"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			res, body := get(t, tc.method, e.URL+tc.path, hdr, tc.body)
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil || res.StatusCode != tc.status {
				t.Fatalf("%d %s", res.StatusCode, body)
			}
			if got := fmt.Sprint(m[tc.field]); got != tc.want {
				t.Errorf("%s = %q, want %q: %s", tc.field, got, tc.want, body)
			}
		})
	}
}
