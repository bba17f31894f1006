package rest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"masthead/internal/pg"
	"masthead/internal/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testKey is the publishable key of the tests' tiny authenticator.
const testKey = "sb_publishable_test"

// userAuth is a small real Authenticator: the publishable key alone means
// anon; "Bearer user:<uuid>" means that signed-in user. The identity
// service verifies JWTs instead; the contract towards rest is the same.
type userAuth struct{}

func (userAuth) Caller(r *http.Request) (pg.Caller, error) {
	if r.Header.Get("apikey") != testKey {
		return pg.Caller{}, &Error{Status: http.StatusUnauthorized, Code: "PGRST301", Message: "No API key found in request"}
	}
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if tok == "" || tok == testKey {
		return pg.Anon, nil
	}
	id, ok := strings.CutPrefix(tok, "user:")
	if !ok {
		return pg.Caller{}, errors.New("JWT invalid")
	}
	// As the identity service remembers the tokens it verified (internal/tokencache), the
	// claims of a token seen before are not built again.
	if claims, ok := userClaims.Load(id); ok {
		return pg.UserCaller(claims.(json.RawMessage)), nil
	}
	claims, _ := json.Marshal(map[string]any{"sub": id, "role": "authenticated", "aud": "authenticated"})
	userClaims.Store(id, json.RawMessage(claims))
	return pg.UserCaller(claims), nil
}

// userClaims are the claims userAuth built, by user id.
var userClaims sync.Map

// fixture is two tenants: project A with a member per role and content in
// every status, project B with its own publication, and an outsider.
type fixture struct {
	db    *pgtest.DB
	srv   *httptest.Server
	h     *Handler
	users map[string]string
	projA string
	projB string
	pubs  map[string]string // title → id
	media string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	db := pgtest.New(t)
	own := db.Owner(t)
	f := &fixture{db: db, users: map[string]string{}, pubs: map[string]string{}}
	for _, name := range []string{"leadA", "editorA", "reviewerA", "viewerA", "editorB", "outsider"} {
		var id string
		mustScan(t, own.QueryRow(ctx, `insert into auth.users (email) values ($1) returning id`, name+"@example.test"), &id)
		f.users[name] = id
	}
	mustScan(t, own.QueryRow(ctx, `insert into projects (slug, name, default_channels) values ('proj-a', 'A', '{x,bluesky}') returning id`), &f.projA)
	mustScan(t, own.QueryRow(ctx, `insert into projects (slug, name) values ('proj-b', 'B') returning id`), &f.projB)
	for _, m := range []struct{ user, proj, role string }{
		{"leadA", f.projA, "lead"}, {"editorA", f.projA, "editor"}, {"reviewerA", f.projA, "reviewer"},
		{"viewerA", f.projA, "viewer"}, {"editorB", f.projB, "editor"},
	} {
		mustExec(t, own, `insert into project_members (project_id, user_id, role) values ($1, $2, $3)`, m.proj, f.users[m.user], m.role)
	}
	// Publications are written by their author as drafts; the owner then
	// moves them with the same guarded UPDATE clients use.
	for i, p := range []struct{ title, proj, author string }{
		{"Alpha launch", f.projA, "editorA"}, {"Beta notes", f.projA, "editorA"},
		{"Gamma, with comma", f.projA, "leadA"}, {"Delta (draft)", f.projA, "editorA"},
		{"Bravo in B", f.projB, "editorB"},
	} {
		var id string
		slug := "pub-" + string(rune('a'+i))
		mustScan(t, own.QueryRow(ctx, `insert into publications (project_id, title, slug, summary, body, author_id, created_at)
			values ($1, $2, $3, $4, 'Some *markdown* body', $5, now()) returning id`, p.proj, p.title, slug, "summary "+string(rune('a'+i)), f.users[p.author]), &id)
		f.pubs[p.title] = id
	}
	f.transition(t, "editorA", "submit_for_review", "Alpha launch", nil)
	f.transition(t, "editorA", "submit_for_review", "Beta notes", nil)
	f.transition(t, "reviewerA", "approve", "Beta notes", map[string]any{"note": "fine"})
	f.transition(t, "leadA", "submit_for_review", "Gamma, with comma", nil)
	for _, pr := range []struct{ pub, channel, body string }{
		{"Alpha launch", "x", "Alpha on X"}, {"Alpha launch", "bluesky", "Alpha on Bluesky"},
		{"Beta notes", "x", "Beta on X"}, {"Bravo in B", "x", "Bravo on X"},
	} {
		mustExec(t, own, `insert into promos (publication_id, channel, body) values ($1, $2, $3)`, f.pubs[pr.pub], pr.channel, pr.body)
	}
	mustScan(t, own.QueryRow(ctx, `insert into media (project_id, storage_path, mime_type, width, height, alt_text) values ($1, 'proj-a/a.png', 'image/png', 640, 480, 'A lighthouse at dusk') returning id`, f.projA), &f.media)
	mustExec(t, own, `insert into publication_media (publication_id, media_id, position) values ($1, $2, 1)`, f.pubs["Alpha launch"], f.media)

	f.serve(t, Config{})
	return f
}

// serve (re)starts the fixture's server with a handler using cfg.
func (f *fixture) serve(t testing.TB, cfg Config) {
	t.Helper()
	cache, err := NewSchemaCache(context.Background(), f.db.Pool)
	if err != nil {
		t.Fatal(err)
	}
	f.h = NewHandler(f.db.Pool, cache, userAuth{}, cfg, slog.New(slog.NewTextHandler(testLog{t}, nil)))
	e := echo.New()
	f.h.Mount(e.Group("/rest/v1"))
	if f.srv != nil {
		f.srv.Close()
	}
	f.srv = httptest.NewServer(e)
	t.Cleanup(f.srv.Close)
}

// transition runs a workflow RPC as a user, straight through pg, to build
// history the way clients do.
func (f *fixture) transition(t testing.TB, user, fn, pub string, extra map[string]any) {
	t.Helper()
	claims, _ := json.Marshal(map[string]any{"sub": f.users[user], "role": "authenticated"})
	err := pg.WithCaller(context.Background(), f.db.Pool, pg.UserCaller(claims), pg.ReadWrite, func(tx pgx.Tx) error {
		args := map[string]any{"publication_id": f.pubs[pub]}
		for k, v := range extra {
			args[k] = v
		}
		b, _ := json.Marshal(args)
		_, err := tx.Exec(context.Background(), `select `+pgx.Identifier{"public", fn}.Sanitize()+`(publication_id => (j->>'publication_id')::uuid, note => j->>'note') from (select $1::jsonb j) s`, string(b))
		return err
	})
	if err != nil {
		t.Fatalf("%s %s as %s: %v", fn, pub, user, err)
	}
}

// testLog sends the handler's log lines to the test's log.
type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func mustScan(t testing.TB, row pgx.Row, dst ...any) {
	t.Helper()
	if err := row.Scan(dst...); err != nil {
		t.Fatal(err)
	}
}

func mustExec(t testing.TB, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// call is one HTTP request to the service as a fixture user ("anon" for
// the publishable key alone, "" for no key at all).
type call struct {
	method, path, user, body string
	header                   map[string]string
}

type reply struct {
	status int
	header http.Header
	body   string
}

func (f *fixture) do(t testing.TB, c call) reply {
	t.Helper()
	if c.method == "" {
		c.method = http.MethodGet
	}
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequest(c.method, f.srv.URL+"/rest/v1"+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.user != "" {
		req.Header.Set("apikey", testKey)
	}
	if c.user != "" && c.user != "anon" {
		req.Header.Set("Authorization", "Bearer user:"+f.users[c.user])
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// rows decodes a JSON array body.
func (r reply) rows(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return out
}

func (r reply) object(t testing.TB) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return out
}

func (r reply) errCode(t testing.TB) string {
	t.Helper()
	return r.object(t)["code"].(string)
}

// TestSmoke: the fixture answers a read with an embed as its data says: project A's four
// publications by title, each with its promos, and nothing of project B.
func TestSmoke(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.do(t, call{path: "/publications?select=title,promos(channel)&order=title&promos.order=channel", user: "editorA"})
	want := `[{"title":"Alpha launch","promos":[{"channel":"bluesky"},{"channel":"x"}]},` +
		`{"title":"Beta notes","promos":[{"channel":"x"}]},{"title":"Delta (draft)","promos":[]},` +
		`{"title":"Gamma, with comma","promos":[]}]`
	var got, exp any
	if err := json.Unmarshal([]byte(r.body), &got); err != nil {
		t.Fatalf("%d %s", r.status, r.body)
	}
	_ = json.Unmarshal([]byte(want), &exp)
	if r.status != http.StatusOK || !reflect.DeepEqual(got, exp) || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("%d %s %s\nwant %s", r.status, r.header.Get("Content-Type"), r.body, want)
	}
}
