package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"masthead/internal/config"
	"masthead/internal/server/servertest"
)

// TestRESTWiring: the service mounts /rest/v1's OpenAPI document behind the publishable key
// (what anon may use without a token, more with a user's), and MASTHEAD_DB_AGGREGATES_ENABLED
// reaches the REST handler.
func TestRESTWiring(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *config.Config) { c.DBAggregatesEnabled = true })
	u := e.CreateUser(t, "openapi@example.test", "a long password")
	token := accessToken(t, e.URL, e.Key, u.Email, "a long password")
	paths := func(hdr map[string]string) (int, string, map[string]any) {
		res, body := get(t, http.MethodGet, e.URL+"/rest/v1/", hdr, nil)
		var doc struct{ Paths map[string]any }
		_ = json.Unmarshal(body, &doc)
		return res.StatusCode, res.Header.Get("Content-Type"), doc.Paths
	}
	if status, _, _ := paths(nil); status != http.StatusUnauthorized {
		t.Errorf("without the key: %d, want 401", status)
	}
	status, ctype, anon := paths(map[string]string{"apikey": e.Key})
	if status != http.StatusOK || ctype != "application/openapi+json; charset=utf-8" || anon["/publications"] == nil || anon["/rpc/my_inbox"] != nil {
		t.Errorf("anon: %d %s, /publications %v, /rpc/my_inbox %v", status, ctype, anon["/publications"] != nil, anon["/rpc/my_inbox"] != nil)
	}
	status, _, user := paths(map[string]string{"apikey": e.Key, "Authorization": "Bearer " + token})
	if status != http.StatusOK || user["/rpc/my_inbox"] == nil {
		t.Errorf("signed in: %d, /rpc/my_inbox %v", status, user["/rpc/my_inbox"] != nil)
	}
	res, body := get(t, http.MethodGet, e.URL+"/rest/v1/publications?select=count()", map[string]string{"apikey": e.Key, "Authorization": "Bearer " + token}, nil)
	if res.StatusCode != http.StatusOK || string(body) != `[{"count":0}]` {
		t.Errorf("count() with aggregates on: %d %s", res.StatusCode, body)
	}
}
