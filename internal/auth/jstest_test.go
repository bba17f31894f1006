package auth_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSupabaseJS runs jstest/auth.test.mjs, which drives the service with the real supabase-js
// client, against a service on a real loopback port. It installs the locked npm packages when
// node_modules is missing, and fails (never skips) when node or npm is not installed.
func TestSupabaseJS(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required for the supabase-js test; install it with: apt-get install -y nodejs npm")
	}
	dir, err := filepath.Abs("jstest")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@supabase", "supabase-js")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Fatal("npm is required to install supabase-js; install it with: apt-get install -y npm")
		}
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}

	e := newEnv(t, nil)
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "auth.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"MASTHEAD_URL="+e.URL,
		"MASTHEAD_PUBLISHABLE_KEY="+e.Key,
		"MASTHEAD_TEST_EMAIL="+e.user.Email,
		"MASTHEAD_TEST_PASSWORD="+e.user.Password,
	)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("supabase-js test failed: %v", err)
	}
}
