package pgrun

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// Bouncer is a PgBouncer in transaction mode in front of a Cluster, the way a production
// deployment behind Supavisor, RDS Proxy or PgBouncer sees PostgreSQL: each transaction may
// run on a different server connection.
type Bouncer struct {
	addr   string
	cmd    *exec.Cmd
	exited chan struct{}
	output *tail
}

// BouncerOptions tunes StartPgBouncer.
type BouncerOptions struct {
	// PoolSize is the server connections per database and role (default_pool_size); small
	// sizes make consecutive transactions of one client land on different server connections.
	PoolSize int
	// IgnoreStartupParameters lets clients send these startup parameters (PgBouncer refuses
	// any it does not know).
	IgnoreStartupParameters string
}

// StartPgBouncer starts Debian's pgbouncer (package pgbouncer) in pool_mode=transaction on a
// free loopback port, forwarding every database to c with trust authentication for roles. It
// runs as the cluster's system user, as PgBouncer refuses to run as root.
func (c *Cluster) StartPgBouncer(ctx context.Context, dir string, roles []string, opts BouncerOptions) (*Bouncer, error) {
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/pgbouncer"); serr != nil {
			return nil, fmt.Errorf("pgrun: pgbouncer is missing; install it with: apt-get install -y pgbouncer")
		}
		bin = "/usr/sbin/pgbouncer"
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("pgrun: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pgrun: %w", err)
	}
	if err := chown(dir, cred); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	users := ""
	for _, r := range roles {
		users += strconv.Quote(r) + ` ""` + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte(users), 0o644); err != nil {
		return nil, fmt.Errorf("pgrun: %w", err)
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = 20
	}
	ini := fmt.Sprintf(`[databases]
* = host=%s port=5432

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 1000
ignore_startup_parameters = %s
logfile =
pidfile =
`, c.socket, port, filepath.Join(dir, "users.txt"), opts.PoolSize, opts.IgnoreStartupParameters)
	conf := filepath.Join(dir, "pgbouncer.ini")
	if err := os.WriteFile(conf, []byte(ini), 0o644); err != nil {
		return nil, fmt.Errorf("pgrun: %w", err)
	}
	cmd := exec.Command(bin, conf)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGTERM}
	b := &Bouncer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, exited: make(chan struct{}), output: &tail{}}
	cmd.Stdout, cmd.Stderr = b.output, b.output
	runtime.LockOSThread()
	err = cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		return nil, fmt.Errorf("pgrun: start pgbouncer: %w", err)
	}
	go func() {
		_ = cmd.Wait()
		close(b.exited)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", b.addr, time.Second)
		if err == nil {
			conn.Close()
			return b, nil
		}
		select {
		case <-b.exited:
			return nil, fmt.Errorf("pgrun: pgbouncer exited during start-up:\n%s", b.output.String())
		case <-ctx.Done():
			b.Stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Stop()
			return nil, fmt.Errorf("pgrun: pgbouncer did not listen within 30s:\n%s", b.output.String())
		}
	}
}

// URL returns a connection string for database db as role, through the bouncer.
func (b *Bouncer) URL(role, db string) string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", role, b.addr, db)
}

// Stop ends the bouncer and waits for it.
func (b *Bouncer) Stop() {
	select {
	case <-b.exited:
		return
	default:
	}
	_ = b.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-b.exited:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.exited
	}
}

// freePort asks the kernel for a loopback port nobody listens on.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgrun: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
