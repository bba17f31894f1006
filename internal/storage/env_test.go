package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"masthead/internal/auth"
	"masthead/internal/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// env is one test's service: a fresh database with two tenants, the real identity service, a
// backend, and the handler mounted under /storage/v1 on a real HTTP server.
type env struct {
	db      *pgtest.DB
	h       *Handler
	srv     *httptest.Server
	e       *echo.Echo
	backend Backend
	auth    *auth.Service
	key     string            // the publishable key
	users   map[string]string // name → user id
	tokens  map[string]string // name → access token
	clock   atomic.Int64      // the signer's clock, Unix nanoseconds; atomic because handlers read it
	png     []byte            // the bytes of proj-a/photo.png
	spool   string            // the handler's TempDir
}

// members: user → project slug and role; "outsider" belongs nowhere.
var members = []struct{ user, project, role string }{
	{"ownerA", "proj-a", "owner"}, {"editorA", "proj-a", "editor"}, {"reviewerA", "proj-a", "reviewer"},
	{"viewerA", "proj-a", "viewer"}, {"editorB", "proj-b", "editor"},
}

func newEnv(t testing.TB, backend Backend) *env {
	t.Helper()
	ctx := context.Background()
	db := pgtest.New(t)
	own := db.Owner(t)
	ev := &env{db: db, backend: backend, users: map[string]string{}, tokens: map[string]string{"forged": "not-a-token"}}
	ev.clock.Store(time.Now().UnixNano())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ev.auth, ev.key = newAuth(t, db, log)
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ownerA", "editorA", "reviewerA", "viewerA", "editorB", "outsider"} {
		var id string
		if err := own.QueryRow(ctx, `insert into auth.users (email, encrypted_password, email_confirmed_at)
			values ($1, $2, now()) returning id`, name+"@example.test", string(hash)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ev.users[name] = id
		tok, err := ev.auth.PasswordGrant(ctx, name+"@example.test", password, auth.Client{IP: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		ev.tokens[name] = tok.AccessToken
	}
	proj := map[string]string{}
	for _, slug := range []string{"proj-a", "proj-b"} {
		var id string
		if err := own.QueryRow(ctx, `insert into projects (slug, name) values ($1, $1) returning id`, slug).Scan(&id); err != nil {
			t.Fatal(err)
		}
		proj[slug] = id
	}
	for _, m := range members {
		if _, err := own.Exec(ctx, `insert into project_members (project_id, user_id, role) values ($1, $2, $3)`,
			proj[m.project], ev.users[m.user], m.role); err != nil {
			t.Fatal(err)
		}
	}
	ev.png = pngBytes(t, 40, 30)
	for _, o := range []struct{ project, key, mime string }{
		{"proj-a", "proj-a/photo.png", "image/png"},
		{"proj-b", "proj-b/secret.png", "image/png"},
		{"proj-a", "proj-a/page.html", "text/html"}, // written by some other path than upload
	} {
		if _, err := own.Exec(ctx, `insert into media (project_id, storage_path, mime_type, bytes) values ($1, $2, $3, $4)`,
			proj[o.project], o.key, o.mime, len(ev.png)); err != nil {
			t.Fatal(err)
		}
		if err := backend.Put(ctx, o.key, bytes.NewReader(ev.png), int64(len(ev.png)), o.mime); err != nil {
			t.Fatal(err)
		}
	}
	ev.spool = t.TempDir()
	h, err := New(db.Pool, ev.auth, Options{
		Backend: backend, SigningKey: DeriveSigningKey("test secret"), MaxUploadBytes: 64 << 10,
		InvalidToken: auth.ErrInvalidToken, APIKey: ev.auth.RequireAPIKey, TempDir: ev.spool,
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	h.signer.now = func() time.Time { return time.Unix(0, ev.clock.Load()) }
	ev.h = h
	ev.e = echo.New()
	h.Mount(ev.e.Group("/storage/v1"))
	ev.srv = httptest.NewServer(ev.e)
	t.Cleanup(ev.srv.Close)
	return ev
}

// password is every fixture user's password.
const password = "correct horse battery"

// newAuth starts the identity service on db with fresh keys and loose rate limits.
func newAuth(t testing.TB, db *pgtest.DB, log *slog.Logger) (*auth.Service, string) {
	t.Helper()
	jwks, err := auth.GenerateKeySet()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := auth.ParseKeySet(jwks)
	if err != nil {
		t.Fatal(err)
	}
	key := auth.GeneratePublishableKey()
	loose := auth.Limit{Count: 1 << 20, Per: time.Minute, Burst: 1 << 20}
	svc, err := auth.New(db.Pool, auth.Options{Issuer: "http://masthead.test/auth/v1", PublishableKey: key,
		Keys: keys, AccessTTL: time.Hour, ReuseInterval: 10 * time.Second, BcryptCost: bcrypt.MinCost,
		IPLimit: loose, AccountLimit: loose}, log)
	if err != nil {
		t.Fatal(err)
	}
	return svc, key
}

// req is one request of a scenario: as user (a fixture name, "forged" for a token that does not
// verify, "" for anon), with the publishable key unless noKey.
type req struct {
	method, path, user string
	body               []byte
	header             map[string]string
	noKey              bool
}

// authorize sets the headers supabase-js would send for r.
func (ev *env) authorize(hr *http.Request, r req) {
	if !r.noKey {
		hr.Header.Set("apikey", ev.key)
	}
	if r.user != "" {
		hr.Header.Set("Authorization", "Bearer "+ev.tokens[r.user])
	}
}

// do sends r over HTTP and returns the response with its body read.
func (ev *env) do(t *testing.T, r req) (*http.Response, []byte) {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	hr, err := http.NewRequest(r.method, ev.srv.URL+r.path, bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	ev.authorize(hr, r)
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// rowCount counts media rows at key, as the superuser (no RLS).
func (ev *env) rowCount(t *testing.T, key string) int {
	t.Helper()
	var n int
	if err := ev.db.Owner(t).QueryRow(context.Background(), `select count(*) from media where storage_path = $1`, key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// exists reports whether the backend holds key.
func (ev *env) exists(t *testing.T, key string) bool {
	t.Helper()
	obj, err := ev.backend.Open(context.Background(), key)
	if errors.Is(err, ErrObjectNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	obj.Body.Close()
	return true
}

// storageError decodes a Supabase Storage error body, failing on any other shape.
func storageError(t *testing.T, b []byte) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil || m["statusCode"] == "" || m["error"] == "" || m["message"] == "" {
		t.Fatalf("not a storage error body: %s", b)
	}
	return m
}

func testImage(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x * 5), uint8(y * 7), 90, 255})
		}
	}
	return img
}

func pngBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, testImage(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gifBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := gif.Encode(&b, testImage(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// mp4Bytes is the start of an MP4 file: an ftyp box is all sniffing looks at.
func mp4Bytes() []byte {
	b := []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom")
	return append(b, make([]byte, 256)...)
}
