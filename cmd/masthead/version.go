package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3"; otherwise it comes from
// the module and VCS information Go embeds in the binary.
var version = ""

func init() {
	commands["version"] = command{summary: versionSummary, run: runVersion}
}

const versionSummary = "print the version, commit and Go version of this binary"

func runVersion(_ context.Context, args []string, stdout io.Writer, _ *slog.Logger) error {
	fs := newFlags("version", versionSummary)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	fmt.Fprintln(stdout, versionString())
	return nil
}

// versionString is "masthead <version> (<commit> <commit time>[ modified]) <go version>", with
// what the build recorded.
func versionString() string {
	v, commit, when, dirty := version, "unknown commit", "", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = " " + s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = " modified"
				}
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	return fmt.Sprintf("masthead %s (%s%s%s) %s", v, commit, when, dirty, runtime.Version())
}
