// Command masthead is the one binary of Masthead: the service, the dashboard and the admin
// commands around them. Each subcommand lives in its own file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"masthead/internal/config"
)

// command is one subcommand: it parses its own flags from args.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error
}

// commands is filled by the init functions of the subcommand files.
var commands = map[string]command{}

func main() {
	// MASTHEAD_LOG_FORMAT and MASTHEAD_LOG_LEVEL apply to every command; serve and api also take
	// them as flags.
	log, err := config.LoggerFromEnv(os.Getenv, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "masthead: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, log)
	stop()
	os.Exit(code)
}

// run is main without the process around it, so tests can call it: it returns the exit code,
// 0 for success and for -h, 1 for a failed command and 2 for an unknown one.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, log *slog.Logger) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "masthead: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := cmd.run(ctx, args[1:], stdout, log)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errBadFlags):
		return 2 // the flag package has already said what was wrong
	}
	fmt.Fprintf(stderr, "masthead %s: %v\n", args[0], err)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: masthead <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'masthead <command> -h' for a command's flags.")
}

// errBadFlags marks a command line the flag package refused and explained on stderr.
var errBadFlags = errors.New("bad flags")

// newFlags is a subcommand's flag set: -h prints its usage to stdout (asked for, so not an
// error) and a refused flag is reported on stderr with the same usage.
func newFlags(name, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: masthead %s [flags]\n\n%s\n\nflags:\n", name, summary)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args into fs: -h prints the usage to stdout and returns flag.ErrHelp,
// anything else the flag package refuses is printed with the usage to stderr as errBadFlags.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		return flag.ErrHelp
	}
	fs.SetOutput(os.Stderr)
	fmt.Fprintf(os.Stderr, "masthead %s: %v\n", fs.Name(), err)
	fs.Usage()
	return errBadFlags
}

// listen takes the service's address before any database work, so a taken port is reported
// at once, naming the setting to change, and nothing is migrated or seeded for an instance
// that could not serve.
func listen(addr, env string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w; choose another address with --addr or %s", addr, err, env)
	}
	return ln, nil
}

// envOr returns the environment variable key, or def when it is unset or empty.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
