package topology_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"masthead/internal/client"
	"masthead/internal/config"
	"masthead/internal/pg/pgtest"
	"masthead/internal/seed"
	"masthead/internal/server/servertest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// demo seeds db with the demo projects and people, writing their images to a folder the
// service will serve, and returns that folder.
func demo(t testing.TB, db *pgtest.DB) string {
	t.Helper()
	media := t.TempDir()
	if _, err := seed.Run(context.Background(), db.OwnerURL, seed.Options{MediaDir: media}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	return media
}

// service starts the service on databaseURL with the demo media folder and change applied, and
// gives a client for it.
func service(t testing.TB, databaseURL, media string, change func(*config.Config)) (*servertest.Env, *client.Client) {
	t.Helper()
	env := servertest.Serve(t, databaseURL, func(c *config.Config) {
		c.StorageDir = media
		if change != nil {
			change(c)
		}
	})
	api, err := client.New(env.URL, env.Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	return env, api
}

// serveLoops runs the service's background loops (schema reloads, the scheduler, the replica
// watch) until t ends, by serving it on a listener of its own; the requests still go to env.URL.
func serveLoops(t testing.TB, env *servertest.Env) {
	t.Helper()
	env.Loopback(t)
}

// call sends one request as token (the publishable key when empty) and returns the status and
// body; header adds or overrides headers.
func call(t testing.TB, env *servertest.Env, token, method, path, body string, header map[string]string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, env.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token == "" {
		token = env.Key
	}
	req.Header.Set("apikey", env.Key)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// signIn returns a session of a demo person.
func signIn(t testing.TB, api *client.Client, email string) *client.Session {
	t.Helper()
	s, err := api.SignInWithPassword(context.Background(), email, seed.DefaultPassword)
	if err != nil {
		t.Fatalf("sign in %s: %v", email, err)
	}
	return s
}

func mustJSON(t testing.TB, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
}

func pgxConnect(ctx context.Context, url string) (*pgx.Conn, error) { return pgx.Connect(ctx, url) }
