// Package pgrun runs a private PostgreSQL cluster in a folder: initdb on first use, a server
// listening only on a unix socket inside that folder, and a clean shutdown.
//
// It exists so that `masthead dev` and the tests need nothing but the PostgreSQL server binaries:
// no system service, no shared port, no password. It must not import any other masthead package.
package pgrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Superuser is the bootstrap role initdb creates. Only migrations and admin commands use it.
const Superuser = "postgres"

// Options tunes a cluster. The zero value is a durable cluster for `masthead dev`.
type Options struct {
	// Ephemeral turns off fsync and friends: for throwaway test clusters only.
	Ephemeral bool
	// Log receives the server's output; nil discards it.
	Log *os.File
}

// Cluster is a running private PostgreSQL server.
type Cluster struct {
	dir    string // the folder given to Start
	data   string // PGDATA
	socket string // unix socket directory
	cmd    *exec.Cmd
	// exited is closed when the server process has ended, after waitErr is set: closing (not
	// sending) lets start-up, Stop and anyone else wait on it without draining it for the others.
	exited  chan struct{}
	waitErr error
	output  *tail // the server's last output lines, for the reason it gave when it failed
}

// ErrNoServer says that no PostgreSQL server binaries could be found.
var ErrNoServer = errors.New("pgrun: no PostgreSQL server binaries (initdb, postgres) found on PATH or under /usr/lib/postgresql/*/bin; install them with: apt-get install -y postgresql")

// FindBinDir returns the folder holding initdb and postgres: PATH first, then the newest
// /usr/lib/postgresql/<version>/bin.
func FindBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	sort.Slice(matches, func(i, j int) bool { return versionOf(matches[i]) > versionOf(matches[j]) })
	for _, m := range matches {
		dir := filepath.Dir(m)
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	return "", ErrNoServer
}

func versionOf(path string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return v
}

// Start initialises dir on first use and starts the server. When the process runs as root the
// server runs as the `postgres` system user, because PostgreSQL refuses to run as root.
func Start(ctx context.Context, dir string, opts Options) (*Cluster, error) {
	bin, err := FindBinDir()
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("pgrun: %w", err)
	}
	c := &Cluster{dir: dir, data: filepath.Join(dir, "data"), socket: filepath.Join(dir, "run")}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	for _, d := range []string{dir, c.socket} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("pgrun: %w", err)
		}
		if err := chown(d, cred); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(c.data, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := c.initdb(ctx, bin, cred); err != nil {
			return nil, err
		}
	}
	if err := c.start(bin, cred, opts); err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx, 30*time.Second); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) initdb(ctx context.Context, bin string, cred *syscall.Credential) error {
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", c.data, "-U", Superuser, "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pgrun: initdb %s: %w\n%s", c.data, err, out.String())
	}
	return nil
}

func (c *Cluster) start(bin string, cred *syscall.Credential, opts Options) error {
	args := []string{
		"-D", c.data,
		"-c", "listen_addresses=",
		"-c", "unix_socket_directories=" + c.socket,
		"-c", "max_connections=200",
		"-c", "shared_buffers=256MB",
		"-c", "log_min_messages=warning",
	}
	if opts.Ephemeral {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			// Replicas made at the same time (StartReplica): a backup's checkpoint could remove
			// the WAL another backup's stream has yet to read, before its slot holds it.
			"-c", "wal_keep_size=512MB")
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	// Own process group, so a terminal's Ctrl-C reaches us first and we stop the server in order;
	// Pdeathsig stops it if this process dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGTERM}
	c.output = &tail{}
	var out io.Writer = c.output
	if opts.Log != nil {
		out = io.MultiWriter(opts.Log, c.output)
	}
	cmd.Stdout, cmd.Stderr = out, out
	// Pdeathsig fires when the thread that started the child exits; keep that thread alive.
	runtime.LockOSThread()
	err := cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		return fmt.Errorf("pgrun: start postgres: %w", err)
	}
	c.cmd = cmd
	c.exited = make(chan struct{})
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	return nil
}

func (c *Cluster) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	sock := filepath.Join(c.socket, ".s.PGSQL.5432")
	for time.Now().Before(deadline) {
		select {
		case <-c.exited:
			return c.startError()
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if _, err := os.Stat(sock); err == nil && c.accepting() {
			return nil
		}
	}
	return fmt.Errorf("pgrun: postgres did not become ready within %s", limit)
}

// anotherServer finds PostgreSQL's hint that the data folder is locked by a running server.
var anotherServer = regexp.MustCompile(`another postmaster \(PID (\d+)\)`)

// startError explains why the server exited during start-up in PostgreSQL's own words (its
// FATAL and HINT lines), leading with the common case of a second instance on the same folder.
func (c *Cluster) startError() error {
	out := c.output.String()
	lead := "postgres exited during start-up"
	if m := anotherServer.FindStringSubmatch(out); m != nil {
		lead = fmt.Sprintf("another server is running in this folder, PID %s (%s); stop it or choose another data folder", m[1], c.dir)
	}
	return fmt.Errorf("pgrun: %s: %v\n%s", lead, c.waitErr, strings.TrimSpace(out))
}

// tail keeps the last few KiB the server wrote: enough for its FATAL and HINT lines.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 4096

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// accepting reports whether postmaster.pid says our server is ready for connections. The file
// must name our process: a second server started on a folder already in use finds the first
// one's file (ready) and then exits, and must not be taken for ready meanwhile.
func (c *Cluster) accepting() bool {
	b, err := os.ReadFile(filepath.Join(c.data, "postmaster.pid"))
	if err != nil {
		return false
	}
	pid, rest, _ := strings.Cut(string(b), "\n")
	return c.cmd != nil && pid == strconv.Itoa(c.cmd.Process.Pid) && strings.Contains(rest, "ready")
}

// URL returns a connection string for database db as role, over the private socket.
func (c *Cluster) URL(role, db string) string {
	return fmt.Sprintf("postgres://%s@/%s?host=%s&sslmode=disable", role, db, c.socket)
}

// Dir is the folder the cluster lives in.
func (c *Cluster) Dir() string { return c.dir }

// Stop asks the server for a fast shutdown (clients disconnected, data consistent) and waits.
// It returns at once when the server has already exited (failed start-up, or stopped from
// outside), so a caller on its way out never hangs on it.
func (c *Cluster) Stop() error {
	if c.cmd == nil || c.cmd.Process == nil {
		return nil
	}
	select {
	case <-c.exited:
	default:
		_ = c.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
	}
	c.cmd = nil
	return nil
}

// serverCredential returns the user to run the server as: nil (ourselves) unless we are root.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgrun: running as root needs the postgres system user (apt-get install -y postgresql creates it): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func chown(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("pgrun: %w", err)
	}
	return nil
}

// StartReplica makes dir a streaming replica of c and starts it: pg_basebackup copies c's data
// over its socket and writes the standby settings (-R), so the new server follows c from then on
// and answers read-only queries (hot standby). dir must not hold a cluster yet.
func (c *Cluster) StartReplica(ctx context.Context, dir string, opts Options) (*Cluster, error) {
	bin, err := FindBinDir()
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("pgrun: %w", err)
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pgrun: %w", err)
	}
	if err := chown(dir, cred); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "pg_basebackup"),
		"-D", filepath.Join(dir, "data"), "-R", "-X", "stream", "--checkpoint=fast", "--no-sync", "-h", c.socket, "-U", Superuser)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("pgrun: pg_basebackup into %s: %w\n%s", dir, err, out.String())
	}
	return Start(ctx, dir, opts)
}
