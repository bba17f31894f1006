package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVersionNamesCommit: `masthead version`, of the binary `make build` makes in a git
// checkout (CI tests a fresh clone), names the checkout's commit (git rev-parse HEAD), adds
// " modified" when the tree differs from it, and names the Go version that built it (README,
// Commands). The commit is what go build records from the checkout, so only a real build
// shows it: the test binary carries none.
func TestVersionNamesCommit(t *testing.T) {
	t.Parallel()
	root := git(t, ".", "rev-parse", "--show-toplevel")
	head := git(t, root, "rev-parse", "HEAD")
	checkout := primaryCheckout(t, root, head)
	modified := ""
	if git(t, checkout, "status", "--porcelain") != "" { // go build's own test of a tree
		modified = " modified"
	}

	bin := filepath.Join(t.TempDir(), "masthead")
	// The Makefile's own flags decide, over the go env of the machine (this one's turns
	// stamping off: GOFLAGS=-buildvcs=false, so a build without -buildvcs names no commit).
	build := exec.Command("make", "-C", checkout, "build", "BIN="+bin)
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("masthead version: %v", err)
	}
	t.Logf("masthead version: %s", out)
	goVersion := goEnv(t, "GOVERSION")
	want := regexp.MustCompile(`^masthead \S+ \(` + head + ` \S+` + modified + `\) ` + regexp.QuoteMeta(goVersion) + "\n$")
	if !want.Match(out) {
		t.Errorf("masthead version printed %q; want commit %s%s and %s", out, head, modified, goVersion)
	}
}

// primaryCheckout is a git checkout of head, in a folder of t, holding root's working tree
// (its tracked and untracked files, not the ignored ones). go build records a commit only
// where .git is a folder, and a linked worktree's .git is a file it passes over
// (golang/go#58218), so root itself may give none; the copy is what root would be as a clone.
func primaryCheckout(t *testing.T, root, head string) string {
	t.Helper()
	dir := t.TempDir()
	git(t, ".", "clone", "--quiet", "--shared", "--no-checkout", root, dir)
	git(t, dir, "reset", "--quiet", head) // HEAD and the index at head; the files come below
	for _, name := range strings.Split(git(t, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"), "\x00") {
		if name == "" {
			continue
		}
		if err := copyFile(filepath.Join(root, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// copyFile copies the file or link src to dst, with its mode; a src deleted from the working
// tree (but still tracked) is left out.
func copyFile(src, dst string) error {
	st, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// git runs git in dir and returns its output without the final newline.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// goEnv is the go command's value of key.
func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}
