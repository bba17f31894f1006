package server_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

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
