package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"masthead/internal/client"
	"masthead/internal/config"
	"masthead/internal/seed"
	"masthead/internal/testwait"
)

// lockedBuffer is a command's stdout that a test reads while the command still writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitForLine waits until the command named what has written a line matching line to out,
// failing t when it ends first (done) or does not within limit.
func waitForLine(t *testing.T, what string, out *lockedBuffer, done <-chan error, line *regexp.Regexp, limit time.Duration) {
	t.Helper()
	testwait.Until(t, limit, what+" to say it serves", func() (bool, string) {
		select {
		case err := <-done:
			t.Fatalf("%s ended before serving: %v\n%s", what, err, out)
		default:
		}
		return line.MatchString(out.String()), "it printed:\n" + out.String()
	})
}

var (
	serviceLine = regexp.MustCompile(`(?m)^Service: +(http://\S+)$`)
	keyLine     = regexp.MustCompile(`(?m)^Publishable key: (\S+)$`)
	ownerLine   = regexp.MustCompile(`(?m)^Owner: +(postgres\S+)$`)
)

// devData is a data folder for dev, removed when t ends. The cluster runs as the postgres
// system user when the test runs as root: a folder it may enter.
func devData(t *testing.T) string {
	t.Helper()
	data, err := os.MkdirTemp("", "masthead-dev-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	if err := os.Chmod(data, 0o755); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDevRunsTwice: `masthead dev` as a developer meets it. The first run creates the cluster,
// seeds the demo data and prints the address it serves on (a free port when asked for port 0),
// the publishable key and the demo logins; a person signs in and writes a draft. Stopped, it
// stops PostgreSQL cleanly. The second run on the same folder keeps the data (no second seed),
// the key and the draft.
func TestDevRunsTwice(t *testing.T) {
	t.Parallel()
	data := devData(t)
	// runOnce starts dev, waits for it to print its key, calls use with the address and key,
	// then stops it and returns what it printed.
	runOnce := func(use func(base, key string)) string {
		t.Helper()
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		out := &lockedBuffer{}
		done := make(chan error, 1)
		go func() {
			done <- runDev(ctx, []string{"--data", data, "--addr", "127.0.0.12:0"}, out, slog.New(slog.DiscardHandler))
		}()
		waitForLine(t, "dev", out, done, keyLine, 2*time.Minute)
		base, key := serviceLine.FindStringSubmatch(out.String())[1], keyLine.FindStringSubmatch(out.String())[1]
		if strings.HasSuffix(base, ":0") {
			t.Fatalf("dev printed the port it was asked for, not the one it took: %s", base)
		}
		use(base, key)
		stop()
		if err := <-done; err != nil {
			t.Fatalf("dev stopped with %v", err)
		}
		if _, err := os.Stat(filepath.Join(data, "pg", "data", "postmaster.pid")); !os.IsNotExist(err) {
			t.Errorf("PostgreSQL still running after dev stopped (postmaster.pid: %v)", err)
		}
		return out.String()
	}
	ctx := context.Background()
	var firstKey, draft string
	first := runOnce(func(base, key string) {
		firstKey = key
		api, err := client.New(base, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := api.SignInWithPassword(ctx, "editor@northwind.test", seed.DefaultPassword)
		if err != nil {
			t.Fatalf("the demo editor signs in: %v", err)
		}
		projects, err := api.Projects(ctx, s.AccessToken)
		if err != nil || len(projects) == 0 {
			t.Fatalf("projects: %v %v", projects, err)
		}
		d, err := api.CreateDraft(ctx, s.AccessToken, projects[0].ID, client.Draft{Title: "Written in the first run", Summary: "s", Body: "b"})
		if err != nil {
			t.Fatal(err)
		}
		draft = d.ID
		res, err := http.Get(base + "/login")
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("the sign-in page: %v %v", res, err)
		}
		res.Body.Close()
	})
	for _, want := range []string{"Demo data:   3 projects", "Demo logins (password \"masthead-demo\")", "editor@", "multi@masthead.test"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first run did not print %q:\n%s", want, first)
		}
	}
	second := runOnce(func(base, key string) {
		if key != firstKey {
			t.Errorf("the second run's key %q differs from the first's %q", key, firstKey)
		}
		api, err := client.New(base, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := api.SignInWithPassword(ctx, "editor@northwind.test", seed.DefaultPassword)
		if err != nil {
			t.Fatal(err)
		}
		var rows []struct{ Title string }
		if _, err := api.Get(ctx, s.AccessToken, client.From("publications").Select("title").Eq("id", draft), &rows); err != nil ||
			len(rows) != 1 || rows[0].Title != "Written in the first run" {
			t.Errorf("the first run's draft in the second: %v %v", rows, err)
		}
	})
	if !strings.Contains(second, "Demo data:   already there, left as it is") {
		t.Errorf("the second run seeded again:\n%s", second)
	}
}

// TestDevHashesAtTheConfiguredCost: the demo accounts dev seeds have their password hashed at
// the configured bcrypt cost (MASTHEAD_BCRYPT_COST), the cost the service pays to check an
// unknown email, so a sign-in's time does not tell which emails exist. The configuration goes
// to dev directly: this test runs in parallel and cannot set the environment runDev reads.
func TestDevHashesAtTheConfiguredCost(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.BcryptCost = 5 // neither the default nor bcrypt's minimum
	data := devData(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- dev(ctx, data, "127.0.0.13:0", cfg, out, slog.New(slog.DiscardHandler))
	}()
	waitForLine(t, "dev", out, done, keyLine, 2*time.Minute)
	conn, err := pgx.Connect(t.Context(), ownerLine.FindStringSubmatch(out.String())[1])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), `select email, encrypted_password from auth.users order by email`)
	if err != nil {
		t.Fatal(err)
	}
	hashes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Email, Hash string }])
	if err != nil {
		t.Fatal(err)
	}
	if len(hashes) != len(seed.DemoLogins()) {
		t.Errorf("%d accounts, want the %d demo logins", len(hashes), len(seed.DemoLogins()))
	}
	for _, h := range hashes {
		if cost, err := bcrypt.Cost([]byte(h.Hash)); err != nil || cost != cfg.BcryptCost {
			t.Errorf("%s: password hashed at cost %d (%v), want %d", h.Email, cost, err, cfg.BcryptCost)
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("dev stopped with %v", err)
	}
}
