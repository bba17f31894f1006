package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// runCmd runs the command line as main would and returns its exit code and output.
func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut, slog.New(slog.DiscardHandler))
	return code, out.String(), errOut.String()
}

// TestHelpOnEveryCommand: -h (and --help) prints the command's usage on stdout and exits 0 on
// every subcommand and sub-subcommand, as an operator expects from any tool.
func TestHelpOnEveryCommand(t *testing.T) {
	t.Parallel()
	cases := [][]string{{"-h"}, {"help"}, {"users", "create", "-h"}, {"users", "list", "--help"},
		{"keys", "generate", "-h"}, {"keys", "add", "-h"}, {"keys", "promote", "--help"}, {"keys", "retire", "-h"}, {"keys", "list", "-h"}}
	for name := range commands {
		cases = append(cases, []string{name, "-h"}, []string{name, "--help"})
	}
	for _, args := range cases {
		code, out, errOut := runCmd(args...)
		if code != 0 {
			t.Errorf("masthead %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
		}
		want := "usage: masthead " + strings.Join(args[:len(args)-1], " ")
		if len(args) == 1 {
			want = "usage: masthead <command>"
		}
		if !strings.Contains(out, want) {
			t.Errorf("masthead %s printed %q, want it to contain %q", strings.Join(args, " "), out, want)
		}
	}
}

// TestBadUsage: an unknown command or flag exits 2 with the usage on stderr; users without a
// subcommand explains itself and fails.
func TestBadUsage(t *testing.T) {
	t.Parallel()
	if code, _, errOut := runCmd("frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
	if code, _, _ := runCmd("migrate", "--no-such-flag"); code != 2 {
		t.Errorf("unknown flag: exit %d", code)
	}
	if code, _, errOut := runCmd("users"); code != 1 || !strings.Contains(errOut, "usage: masthead users <create|list|add|role|password|disable|enable>") {
		t.Errorf("users alone: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCmd("users", "delete"); code != 1 || !strings.Contains(errOut, `unknown users command "delete"`) {
		t.Errorf("users delete: exit %d, %q", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, out, _ := runCmd("version")
	if code != 0 || !strings.HasPrefix(out, "masthead ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("version: exit %d, %q", code, out)
	}
}

// TestDevTakenPort: a taken address is reported before anything else happens, naming --addr,
// and no cluster is created, migrated or seeded.
func TestDevTakenPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	data := filepath.Join(t.TempDir(), "data")
	code, _, errOut := runCmd("dev", "--data", data, "--addr", ln.Addr().String())
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{ln.Addr().String(), "--addr", "MASTHEAD_ADDR", "address already in use"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("error %q lacks %q", errOut, want)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the data folder was created although the port was taken: %v", err)
	}
}
