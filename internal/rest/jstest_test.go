package rest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSupabaseJS runs jstest/rest.test.js, the REST scenarios through the
// real supabase-js client, against this package's handler on a fresh
// database. It needs node and `npm ci --prefix internal/rest/jstest`.
func TestSupabaseJS(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (apt-get install nodejs)")
	}
	if _, err := os.Stat(filepath.Join("jstest", "node_modules", "@supabase", "supabase-js")); err != nil {
		t.Skip("supabase-js is not installed: run npm ci --prefix internal/rest/jstest")
	}
	f := newFixture(t)
	fx, _ := json.Marshal(map[string]any{"url": f.srv.URL, "key": testKey, "users": f.users, "pubs": f.pubs})
	cmd := exec.Command(node, "--test", "rest.test.js")
	cmd.Dir = "jstest"
	cmd.Env = append(os.Environ(), "MASTHEAD_FIXTURE="+string(fx))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("supabase-js scenarios failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
