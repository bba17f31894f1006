// Package servertest runs the real service for tests: a fresh database per test (pgtest), a
// generated key set and publishable key, the server from internal/server on a loopback port,
// and helpers to create users. Only tests import it; it must not be imported by production code.
package servertest

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"masthead/internal/auth"
	"masthead/internal/config"
	"masthead/internal/pg/pgtest"
	"masthead/internal/server"
)

// BcryptCost keeps test sign-ins fast; production uses config's default.
const BcryptCost = 4

// Env is one running service with its own database.
type Env struct {
	URL    string // base URL, e.g. http://127.0.0.1:41234
	Key    string // the publishable key
	Config config.Config
	DB     *pgtest.DB
	Server *server.Server
	Logs   *Buffer // everything the service logged: JSON lines at debug level unless change says otherwise
	// MetricsURL is http://<metrics address>/metrics when change set Config.MetricsAddr (say
	// "127.0.0.1:0"): served while Server.Serve runs, never on URL.
	MetricsURL string
}

// New starts a service for t, after applying change to its config (may be nil). Rate limits
// are generous unless change sets them; the server and database are gone when t ends.
func New(t testing.TB, change func(*config.Config)) *Env {
	t.Helper()
	db := pgtest.New(t)
	env := Serve(t, db.URL, change)
	env.DB = db
	return env
}

// Serve starts a service for t on the database at databaseURL (as the login role), for tests
// that bring their own cluster, such as one they stop and start; Env.DB is then nil.
func Serve(t testing.TB, databaseURL string, change func(*config.Config)) *Env {
	t.Helper()
	keys, err := auth.GenerateKeySet()
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DatabaseURL = databaseURL
	cfg.PublishableKey = auth.GeneratePublishableKey()
	cfg.JWTKeys = string(keys)
	cfg.BcryptCost = BcryptCost
	cfg.StorageDir = t.TempDir()
	cfg.TokenRateIP = config.Rate{Count: 100000, Per: time.Second, Burst: 100000}
	cfg.TokenRateAccount = cfg.TokenRateIP
	cfg.TokenRateAccountTotal = cfg.TokenRateIP
	cfg.AuthorizeRateIP = cfg.TokenRateIP
	cfg.LogFormat, cfg.LogLevel = config.LogJSON, slog.LevelDebug
	ts := httptest.NewUnstartedServer(nil)
	cfg.PublicURL = "http://" + ts.Listener.Addr().String()
	if change != nil {
		change(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	logs := &Buffer{}
	var opts []server.Option
	var metricsURL string
	if cfg.MetricsAddr != "" {
		ln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		opts, metricsURL = append(opts, server.WithMetricsListener(ln)), "http://"+ln.Addr().String()+"/metrics"
	}
	srv, err := server.New(context.Background(), cfg, cfg.Logger(logs), opts...)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv.Handler()
	ts.Start()
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
		if t.Failed() {
			t.Logf("service log:\n%s", logs.String())
		}
	})
	return &Env{URL: ts.URL, Key: cfg.PublishableKey, Config: cfg, Server: srv, Logs: logs, MetricsURL: metricsURL}
}

// Loopback runs the server on a loopback listener of its own with Server.Serve, as masthead
// serve does (real connections, so per-client addresses and connection-level limits apply, and
// the background loops run), until t ends, and returns its base URL. Server.Serve must then
// return cleanly. (Env.URL is an httptest server of the same service, without the loops.)
func (e *Env) Loopback(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.Server.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("servertest: serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// User is a fixture user.
type User struct {
	ID, Email, Password string
}

// CreateUser inserts a confirmed user with a bcrypt hash of password, as the cluster owner
// (no user could create another), and returns it.
func (e *Env) CreateUser(t testing.TB, email, password string) User {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), e.Config.BcryptCost)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	err = e.DB.Owner(t).QueryRow(context.Background(), `
		insert into auth.users (email, encrypted_password, email_confirmed_at, raw_user_meta_data)
		values ($1, $2, now(), jsonb_build_object('name', split_part($1, '@', 1)))
		returning id::text`, email, string(hash)).Scan(&id)
	if err != nil {
		t.Fatalf("servertest: create user %s: %v", email, err)
	}
	return User{ID: id, Email: email, Password: password}
}

// Buffer is a goroutine-safe log sink that tests can wait on.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed at the next write; nil until someone waits
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.b.Write(p)
}

// WaitLines waits until at least n log lines contain every one of subs and returns them, or
// fails t once timeout has passed. It wakes on each write, so a test waits for what the service
// does (a scheduler run, a request) rather than for a while.
func (b *Buffer) WaitLines(t testing.TB, timeout time.Duration, n int, subs ...string) []string {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		if b.written == nil {
			b.written = make(chan struct{})
		}
		next := b.written
		b.mu.Unlock()
		if lines := b.Lines(subs...); len(lines) >= n {
			return lines
		}
		select {
		case <-next:
		case <-deadline.C:
			t.Fatalf("servertest: no %d log lines with %q within %s", n, subs, timeout)
			return nil
		}
	}
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Lines returns the log lines whose text contains every one of subs.
func (b *Buffer) Lines(subs ...string) []string {
	var out []string
	for _, l := range strings.Split(b.String(), "\n") {
		ok := l != ""
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}
