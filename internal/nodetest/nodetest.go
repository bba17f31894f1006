// Package nodetest runs JavaScript tests (node's own test runner) from Go tests, so the real
// clients our users have, such as supabase-js, are exercised by `go test`. It installs the locked
// npm packages of a test folder when they are missing and fails, never skips, when node or npm
// is not installed. Only test code imports it.
package nodetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// installing is held while Install looks at or fills a node_modules folder. Two parallel tests
// of one package share their folder: without it, the second would see the probe's folder that
// the first one's npm ci has only begun to fill, and run node on half a tree.
var installing sync.Mutex

// Install makes sure dir's locked npm packages are installed, checking for the module named
// probe (a folder under node_modules), and returns the path of node.
func Install(t testing.TB, dir, probe string) string {
	t.Helper()
	installing.Lock()
	defer installing.Unlock()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required for this test; install it with: apt-get install -y nodejs npm")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", probe)); err == nil {
		return node
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("npm is required to install the test's packages; install it with: apt-get install -y npm")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
	return node
}

// Run runs `node --test script` in dir with env added to the environment, after Install, and
// fails t when any JavaScript test fails. Its output is logged.
func Run(t testing.TB, dir, probe, script string, env ...string) {
	t.Helper()
	node := Install(t, dir, probe)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test %s:\n%s", script, out)
	if err != nil {
		t.Fatalf("JavaScript tests in %s failed: %v", filepath.Join(dir, script), err)
	}
}
