package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"masthead/internal/config"
	"masthead/internal/server/servertest"
)

// noRedirects answers a redirect itself, so one request makes one access line.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestAccessLogProject: the access line names the project when the request itself does (a
// dashboard page's slug, a storage object's first path segment, a REST filter to one project)
// and has no project otherwise, nor when the value is not shaped like a slug or uuid.
func TestAccessLogProject(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	const projectID = "5d7c3f0a-1b2e-4c8d-9f6a-3e2d1c0b9a87"
	key := map[string]string{"apikey": e.Key}
	tests := []struct {
		name, method, path, route string
		header                    map[string]string
		want                      string // "" means no project field
	}{
		{"dashboard page", http.MethodGet, "/p/northwind/queue", "/p/:slug/queue", nil, "northwind"},
		{"dashboard page with an id", http.MethodGet, "/p/acme-travel/publications/" + projectID, "/p/:slug/publications/:id", nil, "acme-travel"},
		{"storage object", http.MethodGet, "/storage/v1/object/media/lumen-health/cover.png", "/storage/v1/object/:bucket/*", key, "lumen-health"},
		{"signed storage object", http.MethodGet, "/storage/v1/object/sign/media/lumen-health/a/b.png?token=x", "/storage/v1/object/sign/:bucket/*", nil, "lumen-health"},
		{"rest filtered to a project", http.MethodGet, "/rest/v1/publications?select=id&project_id=eq." + projectID, "/rest/v1/:table", key, projectID},
		{"rest project by slug", http.MethodGet, "/rest/v1/projects?select=id&slug=eq.northwind", "/rest/v1/:table", key, "northwind"},
		{"rest project by id", http.MethodGet, "/rest/v1/projects?select=id&id=eq." + projectID, "/rest/v1/:table", key, projectID},
		{"rest across projects", http.MethodGet, "/rest/v1/publications?select=id&project_id=in.(" + projectID + ")", "/rest/v1/:table", key, ""},
		{"not a slug", http.MethodGet, "/rest/v1/projects?select=id&slug=eq.North%20Wind", "/rest/v1/:table", key, ""},
		{"not shaped like a slug", http.MethodGet, "/p/Bad%22Slug/queue", "/p/:slug/queue", nil, ""},
		{"no project", http.MethodGet, "/auth/v1/user", "/auth/v1/user", key, ""},
		{"health", http.MethodGet, "/healthz", "/healthz", nil, ""},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, e.URL+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tt.header {
			req.Header.Set(k, v)
		}
		req.Header.Set("X-Request-Id", "project-"+strings.ReplaceAll(tt.name, " ", "-"))
		res, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := e.Logs.Lines(`"msg":"request"`, `"request_id":"project-`+strings.ReplaceAll(tt.name, " ", "-")+`"`)
			if len(lines) != 1 {
				t.Fatalf("want one access line, got %d:\n%s", len(lines), e.Logs.String())
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
				t.Fatal(err)
			}
			if rec["route"] != tt.route {
				t.Errorf("route %v, want %s", rec["route"], tt.route)
			}
			got, has := rec["project"]
			switch {
			case tt.want == "" && has:
				t.Errorf("project %v logged for a request that names none: %s", got, lines[0])
			case tt.want != "" && got != tt.want:
				t.Errorf("project %v, want %s: %s", got, tt.want, lines[0])
			}
		})
	}
}

// TestLogSettingsInTheService: the service logs in the configured format and drops what is
// below the configured level (servertest builds the service's logger from the config, as
// main does from MASTHEAD_LOG_FORMAT and MASTHEAD_LOG_LEVEL).
func TestLogSettingsInTheService(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		format  string
		level   slog.Level
		wantLog bool // the access line (info) is written
	}{
		{"text at info", config.LogText, slog.LevelInfo, true},
		{"json at info", config.LogJSON, slog.LevelInfo, true},
		{"text at warn", config.LogText, slog.LevelWarn, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := servertest.New(t, func(c *config.Config) { c.LogFormat, c.LogLevel = tt.format, tt.level })
			// The access line is written before the response leaves the handler, so it is
			// in the log once the answer has arrived.
			req, err := http.NewRequest(http.MethodGet, e.URL+"/p/northwind/queue", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Request-Id", "log-settings")
			res, err := noRedirects.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			lines := e.Logs.Lines("log-settings")
			if !tt.wantLog {
				if len(lines) != 0 {
					t.Fatalf("an info line was logged at %s: %v", tt.level, lines)
				}
				return
			}
			if len(lines) != 1 {
				t.Fatalf("want one access line, got:\n%s", e.Logs.String())
			}
			var rec map[string]any
			isJSON := json.Unmarshal([]byte(lines[0]), &rec) == nil
			if isJSON != (tt.format == config.LogJSON) {
				t.Fatalf("format %s, line: %s", tt.format, lines[0])
			}
			if !isJSON && !strings.Contains(lines[0], "msg=request") || !strings.Contains(lines[0], "northwind") {
				t.Fatalf("access line: %s", lines[0])
			}
		})
	}
}

// TestAccessLogFollowsInProcessCalls: a dashboard page and an MCP tool call reach the service
// in process, and the service requests they make are logged with the outer request's id (sent
// by the client or made by the service) and the outer client's address, so one line of the log
// leads to the others.
func TestAccessLogFollowsInProcessCalls(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	base := e.Loopback(t)
	user := e.CreateUser(t, "follow@inprocess.test", "follow password")

	// lines waits for two access lines with id (the outer request's is written once its
	// handler returns, which a flushed answer may beat), counts them by route and checks each
	// came from ip.
	lines := func(t *testing.T, id, ip string) map[string]int {
		t.Helper()
		routes := map[string]int{}
		for _, l := range e.Logs.WaitLines(t, 30*time.Second, 2, `"msg":"request"`, `"request_id":"`+id+`"`) {
			var rec map[string]any
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatal(err)
			}
			routes[fmt.Sprint(rec["route"])]++
			if rec["client_ip"] != ip {
				t.Errorf("line for %v from %v, want %s: %s", rec["route"], rec["client_ip"], ip, l)
			}
		}
		return routes
	}

	t.Run("dashboard sign-in", func(t *testing.T) {
		if got := signIn(t, browserAt(t, "127.0.0.7"), base, user.Email, user.Password, "X-Request-Id", "follow-sign-in"); got != http.StatusSeeOther {
			t.Fatalf("sign-in: %d", got)
		}
		routes := lines(t, "follow-sign-in", "127.0.0.7")
		if routes["/login"] != 1 || routes["/auth/v1/token"] != 1 {
			t.Errorf("lines with the sign-in's id, by route: %v; want /login and its /auth/v1/token", routes)
		}
	})

	token := accessToken(t, base, e.Key, user.Email, user.Password)
	call := func(t *testing.T, id, protocol string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_projects","arguments":{}}}`))
		for k, v := range map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json",
			"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": protocol} {
			req.Header.Set(k, v)
		}
		if id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		res, err := browserAt(t, "127.0.0.8").Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || strings.Contains(string(body), `"isError":true`) {
			t.Fatalf("list_projects: %d %s", res.StatusCode, body)
		}
		return res.Header.Get("X-Request-Id")
	}
	// 2024-11-05 is a version the fast path leaves to the go-sdk's handler.
	for _, tt := range []struct{ name, sent, protocol string }{
		{"mcp call with an id", "follow-mcp", "2025-06-18"},
		{"mcp call without one", "", "2025-06-18"},
		{"mcp call through the sdk", "follow-mcp-sdk", "2024-11-05"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := call(t, tt.sent, tt.protocol)
			if tt.sent != "" && id != tt.sent {
				t.Fatalf("answered with request id %q, want %q", id, tt.sent)
			}
			routes := lines(t, id, "127.0.0.8")
			if routes["/mcp"] != 1 || routes["/rest/v1/:table"] != 1 {
				t.Errorf("lines with the call's id %q, by route: %v; want /mcp and its /rest/v1/:table", id, routes)
			}
		})
	}
}

// TestAccessLogKeepsDashboardSecrets: what a person sends the dashboard (the sign-in form's
// password and CSRF token, the session cookie it sets, a query string) never reaches the log,
// neither on the dashboard's own line nor on those of the service requests it makes for them.
func TestAccessLogKeepsDashboardSecrets(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, nil)
	base := e.Loopback(t)
	user := e.CreateUser(t, "secrets@dashboard.test", "a dashboard secret password")
	b := browserAt(t, "127.0.0.9")
	if got := signIn(t, b, base, user.Email, user.Password); got != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", got)
	}
	res, err := b.Get(base + "/?q=" + url.QueryEscape("query-secret-value"))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), `data-testid="user">secrets<`) {
		t.Fatalf("start page (%d) is not signed in as the person", res.StatusCode)
	}
	secrets := map[string]string{"password": user.Password, "query string": "query-secret-value"}
	u, _ := url.Parse(base)
	for _, c := range b.Jar.Cookies(u) {
		secrets["cookie "+c.Name] = c.Value
	}
	if len(secrets) < 3 {
		t.Fatalf("no cookie set by the sign-in: %v", b.Jar.Cookies(u))
	}
	if m := csrfRE.FindSubmatch(page); m != nil {
		secrets["CSRF token"] = string(m[1])
	}
	e.Logs.WaitLines(t, 30*time.Second, 1, `"msg":"request"`, `"route":"/"`)
	all := e.Logs.String()
	for name, secret := range secrets {
		if strings.Contains(all, secret) {
			t.Errorf("the log contains the %s", name)
		}
	}
}
