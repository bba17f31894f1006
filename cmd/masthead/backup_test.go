package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"masthead/internal/config"
	"masthead/internal/pg"
	"masthead/internal/pgrun"
	"masthead/internal/server"
	"masthead/internal/server/servertest"
)

// The production set-up of the README, on private clusters that ask every role but the
// bootstrap superuser for a password: the owner role that runs migrate and users, and the
// login role whose password DATABASE_URL carries.
const (
	ownerRole     = "masthead_owner"
	prodDatabase  = "masthead"
	ownerPassword = "owner-secret-1"
	loginPassword = "login-secret-1"
)

// TestBackupRestore follows the README's production section end to end: a server whose roles
// need passwords; migrate and users create as a non-superuser owner role; the service on a
// DATABASE_URL with the login role's password (and the role refused without it); content made
// through the service (writeFixture); a backup (pg_dump -Fc of the server's own version, as the
// owner, and a copy of the media folder); a restore into a new cluster (packaging/roles.sql,
// pg_restore, migrate); and the service on the restored database and media copy, with the
// source gone. The restored service answers a member's REST reads byte for byte as the source
// did, serves every file with the same content, signs in the accounts, and accepts a token
// issued before the backup.
func TestBackupRestore(t *testing.T) {
	ctx := context.Background()
	bin, err := pgrun.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	work := t.TempDir()
	env := generateEnv(t)

	// The source server, set up as the README says.
	src := passwordCluster(t)
	superExec(t, src, `create role `+ownerRole+` login createrole password '`+ownerPassword+`'`,
		`create database `+prodDatabase+` owner `+ownerRole,
		`grant set on parameter session_replication_role to `+ownerRole)
	srcOwner := withPassword(t, src.URL(ownerRole, prodDatabase), ownerPassword)
	var out bytes.Buffer
	if err := commands["migrate"].run(ctx, []string{"--owner-url", srcOwner}, &out, log); err != nil {
		t.Fatalf("migrate as the owner role: %v", err)
	}
	ownerExec(t, srcOwner, `alter role authenticator password '`+loginPassword+`'`)
	// Accounts as production makes them: `masthead users create`, run by the owner role.
	ownerExec(t, srcOwner, `insert into projects (slug, name) values ('gazette', 'The Gazette')`)
	for _, u := range fixtureUsers {
		if err := commands["users"].run(ctx, []string{"create", "--owner-url", srcOwner, "--email", u.email,
			"--password", fixturePassword, "--project", "gazette", "--role", u.role}, &out, log); err != nil {
			t.Fatalf("users create as the owner role: %v", err)
		}
	}

	// Nothing connects as the login role without its password.
	if pool, err := pg.Open(ctx, src.URL(pg.LoginRole, prodDatabase)); err == nil {
		pool.Close()
		t.Fatal("the login role connected without a password")
	} else if !strings.Contains(err.Error(), "password") {
		t.Fatalf("connecting without the password failed, but not for want of it: %v", err)
	}
	srcMedia := filepath.Join(work, "media")
	a := startService(t, env, withPassword(t, src.URL(pg.LoginRole, prodDatabase), loginPassword), srcMedia)
	writeFixture(t, a)
	lead := a.signIn(t, "lead@gazette.test", fixturePassword)
	before := a.snapshot(t, lead)
	// Behind TLS (an https public URL) the dashboard's cookie is Secure.
	resp, err := http.Get(a.url + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c := resp.Header.Get("Set-Cookie"); !strings.Contains(c, "; Secure") || !strings.Contains(c, "; HttpOnly") || !strings.Contains(c, "SameSite=Lax") {
		t.Errorf("with an https public URL the dashboard set %q, want Secure, HttpOnly, SameSite=Lax", c)
	}

	// Back up: the database with pg_dump of the server's own version, as the owner, and the
	// media folder.
	dump := filepath.Join(work, "masthead.dump")
	pgTool(t, filepath.Join(bin, "pg_dump"), ownerPassword, "--format=custom", "--file", dump, "--dbname", src.URL(ownerRole, prodDatabase))
	backupMedia := filepath.Join(work, "media-backup")
	copyTree(t, srcMedia, backupMedia)
	srcRoles := roleSet(t, src)
	// The source is gone from here on: its service, its database server and its files.
	a.stop(t)
	if err := src.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(srcMedia); err != nil {
		t.Fatal(err)
	}

	// Restore into a new server: the owner role and database, the cluster-wide roles, the
	// login role's new password, the dump, then migrate (nothing left to apply).
	dst := passwordCluster(t)
	const newLoginPassword = "login-secret-2"
	superExec(t, dst, `create role `+ownerRole+` login createrole password '`+ownerPassword+`'`,
		`create database `+prodDatabase+` owner `+ownerRole,
		`grant set on parameter session_replication_role to `+ownerRole)
	pgTool(t, filepath.Join(bin, "psql"), ownerPassword, "-X", "-q", "-v", "ON_ERROR_STOP=1",
		"-d", dst.URL(ownerRole, prodDatabase), "-f", filepath.Join("..", "..", "packaging", "roles.sql"))
	dstOwner := withPassword(t, dst.URL(ownerRole, prodDatabase), ownerPassword)
	ownerExec(t, dstOwner, `alter role authenticator password '`+newLoginPassword+`'`)
	if got := roleSet(t, dst); got != srcRoles {
		t.Fatalf("packaging/roles.sql makes other roles than the migrations:\nmigrations: %s\nroles.sql:  %s", srcRoles, got)
	}
	pgTool(t, filepath.Join(bin, "pg_restore"), ownerPassword, "--exit-on-error", "--single-transaction",
		"--dbname", dst.URL(ownerRole, prodDatabase), dump)
	versionBefore := schemaVersion(t, dstOwner)
	out.Reset()
	if err := commands["migrate"].run(ctx, []string{"--owner-url", dstOwner}, &out, log); err != nil {
		t.Fatalf("migrate after restore: %v", err)
	}
	if v := schemaVersion(t, dstOwner); v != versionBefore {
		t.Fatalf("migrate after a restore of the same version applied something: %d → %d", versionBefore, v)
	}

	b := startService(t, env, withPassword(t, dst.URL(pg.LoginRole, prodDatabase), newLoginPassword), backupMedia)
	if code := b.status(t, "/rest/v1/projects?select=slug", lead); code != http.StatusOK {
		t.Errorf("a token issued before the backup got %d from the restored service, want 200", code)
	}
	after := b.snapshot(t, b.signIn(t, "lead@gazette.test", fixturePassword))
	b.signIn(t, "reviewer@gazette.test", fixturePassword)

	if len(before.files) != 2 || !bytes.Contains(before.rows["publications"], []byte(`"status":"published"`)) {
		t.Fatalf("the source served too little to prove anything: %d files, publications %.200s", len(before.files), before.rows["publications"])
	}
	for name, want := range before.rows {
		if got := after.rows[name]; !bytes.Equal(got, want) {
			t.Errorf("%s differ after the restore:\nbefore %.300s\nafter  %.300s", name, want, got)
		}
	}
	for path, want := range before.files {
		if got := after.files[path]; got != want {
			t.Errorf("file %s: %q before the backup, %q after the restore", path, want, got)
		}
	}
	t.Logf("restored %d bytes of rows and %d files", len(before.rows["publications"]), len(before.files))
}

// passwordCluster starts a private cluster that trusts its bootstrap superuser on the socket
// (the test's administrator) and asks every other role for its password (SCRAM), as a
// production server does. pg_hba.conf is written between two starts, so the rule is in force
// from the first connection on.
func passwordCluster(t *testing.T) *pgrun.Cluster {
	t.Helper()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "masthead-backup-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // the server may run as the postgres user
		t.Fatal(err)
	}
	c, err := pgrun.Start(ctx, filepath.Join(dir, "pg"), pgrun.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	hba := "local all " + pgrun.Superuser + " trust\nlocal all all scram-sha-256\n"
	if err := os.WriteFile(filepath.Join(c.Dir(), "data", "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err = pgrun.Start(ctx, filepath.Join(dir, "pg"), pgrun.Options{Ephemeral: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return c
}

// withPassword puts password into a connection URL, as an operator writes DATABASE_URL.
func withPassword(t *testing.T, raw, password string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	return u.String()
}

func superExec(t *testing.T, c *pgrun.Cluster, stmts ...string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), c.URL(pgrun.Superuser, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, s := range stmts {
		if _, err := conn.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func ownerExec(t *testing.T, ownerURL, stmt string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), stmt); err != nil {
		t.Fatalf("as the owner role: %v", err)
	}
}

// roleSet describes Masthead's roles on a server: attributes and memberships, the owner and
// the bootstrap superuser left out.
func roleSet(t *testing.T, c *pgrun.Cluster) string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), c.URL(pgrun.Superuser, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var s string
	err = conn.QueryRow(context.Background(), `
		select string_agg(format('%s(login=%s inherit=%s member of %s)', r.rolname, r.rolcanlogin, r.rolinherit,
		         coalesce((select string_agg(g.rolname, ',' order by g.rolname) from pg_auth_members m
		                   join pg_roles g on g.oid = m.roleid where m.member = r.oid), '-')), ' ' order by r.rolname)
		from pg_roles r where r.rolname !~ '^pg_' and r.rolname not in ($1, $2)`, pgrun.Superuser, ownerRole).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func schemaVersion(t *testing.T, ownerURL string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var v int
	if err := conn.QueryRow(context.Background(), `select version from app.schema_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// pgTool runs a PostgreSQL client program with the password in PGPASSWORD (never on its
// command line, where other users of the machine could read it).
func pgTool(t *testing.T, prog, password string, args ...string) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+password)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(prog), strings.Join(args, " "), err, out)
	}
}

// copyTree copies the media folder as `cp -a` would: folders, files and their modes.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		target := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(target, info.Mode().Perm())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// generateEnv is `masthead keys generate` read as systemd reads an EnvironmentFile.
func generateEnv(t *testing.T) map[string]string {
	t.Helper()
	var out bytes.Buffer
	if err := runKeys([]string{"generate"}, nil, &out); err != nil {
		t.Fatal(err)
	}
	return parseEnvFile(t, out.String())
}

func parseEnvFile(t *testing.T, text string) map[string]string {
	t.Helper()
	env := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("env line without '=': %q", line)
		}
		env[k] = v
	}
	return env
}

// service is a running `masthead serve` for the test, configured from an env file as the
// systemd unit and the container configure it.
type service struct {
	url, key string
	stop     func(t *testing.T)
}

func startService(t *testing.T, envFile map[string]string, databaseURL, mediaDir string) *service {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"DATABASE_URL": databaseURL, "MASTHEAD_STORAGE_DIR": mediaDir,
		"MASTHEAD_ADDR": ln.Addr().String(), "MASTHEAD_SCHEDULER_INTERVAL": "200ms",
		// One public URL for both services, as a restore behind the same name has: the
		// token issuer is <public URL>/auth/v1.
		"MASTHEAD_PUBLIC_URL": "https://masthead.example.test",
	}
	for k, v := range envFile {
		env[k] = v
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	logs := &servertest.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, cfg, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ctx, ln) }()
	stopped := false
	s := &service{url: "http://" + ln.Addr().String(), key: cfg.PublishableKey}
	s.stop = func(t *testing.T) {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("serve: %v", err)
		}
		srv.Close()
	}
	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			t.Logf("service log:\n%s", logs.String())
		}
	})
	// Every connection the service makes uses DATABASE_URL: the pool answering requests, the
	// schema cache's LISTEN and the scheduler's runs all got in with the password.
	logs.WaitLines(t, 20*time.Second, 1, "schema cache listener subscribed")
	logs.WaitLines(t, 20*time.Second, 1, "scheduler: ran")
	return s
}

func (s *service) do(t *testing.T, method, path, token string, body io.Reader) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("apikey", s.key)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func (s *service) status(t *testing.T, path, token string) int {
	code, _ := s.do(t, http.MethodGet, path, token, nil)
	return code
}

func (s *service) signIn(t *testing.T, email, password string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	code, b := s.do(t, http.MethodPost, "/auth/v1/token?grant_type=password", "", bytes.NewReader(body))
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(b, &tok); code != http.StatusOK || err != nil || tok.AccessToken == "" {
		t.Fatalf("sign in as %s: %d %s", email, code, b)
	}
	return tok.AccessToken
}

// The fixture: one project with a lead, an editor and a reviewer, made as production makes
// accounts, and content made through the service as people make it.
var fixtureUsers = []struct{ email, role string }{
	{"lead@gazette.test", "lead"}, {"editor@gazette.test", "editor"}, {"reviewer@gazette.test", "reviewer"},
}

const fixturePassword = "gazette-password"

// writeFixture makes, through /rest/v1 and /storage/v1, three publications: one published with
// two images and a promo after a review round with changes requested, one in review with a
// comment, one draft. Every transition goes through the workflow RPCs, so the audit is real.
func writeFixture(t *testing.T, s *service) {
	t.Helper()
	lead := s.signIn(t, "lead@gazette.test", fixturePassword)
	editor := s.signIn(t, "editor@gazette.test", fixturePassword)
	reviewer := s.signIn(t, "reviewer@gazette.test", fixturePassword)
	var projects []struct {
		ID string `json:"id"`
	}
	s.call(t, editor, http.MethodGet, "/rest/v1/projects?select=id&slug=eq.gazette", "", &projects)
	if len(projects) != 1 {
		t.Fatalf("the editor sees %d gazette projects", len(projects))
	}
	draft := func(title string) string {
		var p struct {
			ID string `json:"id"`
		}
		s.call(t, editor, http.MethodPost, "/rest/v1/rpc/create_draft", fmt.Sprintf(
			`{"project_id":%q,"title":%q,"summary":"What happened at the council.","body":"# %s\n\nThe council met on Tuesday."}`,
			projects[0].ID, title, title), &p)
		return p.ID
	}
	rpc := func(token, fn, body string) { s.call(t, token, http.MethodPost, "/rest/v1/rpc/"+fn, body, nil) }

	live := draft("Council agrees the budget")
	for i, colour := range []color.RGBA{{200, 30, 30, 255}, {30, 30, 200, 255}} {
		path := fmt.Sprintf("gazette/council-%d.png", i)
		var up struct {
			ID string `json:"Id"`
		}
		s.callBody(t, editor, http.MethodPost, "/storage/v1/object/media/"+path, "image/png", pngOf(t, colour, 40+i*20), &up)
		rpc(editor, "attach_media", fmt.Sprintf(`{"publication_id":%q,"media_id":%q,"alt_text":"Council chamber, picture %d"}`, live, up.ID, i+1))
	}
	s.call(t, editor, http.MethodPost, "/rest/v1/promos", fmt.Sprintf(`{"publication_id":%q,"channel":"x","body":"The budget is agreed."}`, live), nil)
	rpc(editor, "submit_for_review", fmt.Sprintf(`{"publication_id":%q,"note":"Ready"}`, live))
	rpc(reviewer, "request_changes", fmt.Sprintf(`{"publication_id":%q,"note":"Name the vote count."}`, live))
	rpc(editor, "submit_for_review", fmt.Sprintf(`{"publication_id":%q,"note":"Vote count added"}`, live))
	rpc(reviewer, "approve", fmt.Sprintf(`{"publication_id":%q,"note":"Good to go"}`, live))
	rpc(lead, "publish_now", fmt.Sprintf(`{"publication_id":%q}`, live))

	inReview := draft("Library hours change")
	rpc(editor, "submit_for_review", fmt.Sprintf(`{"publication_id":%q,"note":"First go"}`, inReview))
	s.call(t, reviewer, http.MethodPost, "/rest/v1/reviews", fmt.Sprintf(`{"publication_id":%q,"verdict":"comment","notes":"Checking the dates."}`, inReview), nil)
	draft("Bridge repairs begin")
}

// pngOf is a small square picture of one colour.
func pngOf(t *testing.T, c color.RGBA, size int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// call sends a JSON request (or none) as token, fails t unless it succeeds, and decodes the
// answer into into when given.
func (s *service) call(t *testing.T, token, method, path, body string, into any) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	s.callBody(t, token, method, path, "application/json", r, into)
}

func (s *service) callBody(t *testing.T, token, method, path, contentType string, body any, into any) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case []byte:
		r = bytes.NewReader(b)
	case io.Reader:
		r = b
	}
	req, err := http.NewRequest(method, s.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("apikey", s.key)
	req.Header.Set("Authorization", "Bearer "+token)
	if r != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if into != nil {
		if err := json.Unmarshal(data, into); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
}

// snapshot is what a member sees: rows through /rest/v1 and files through /storage/v1.
type snapshot struct {
	rows  map[string][]byte
	files map[string]string // storage path → "<bytes> <sha256>"
}

// snapshotReads are the member's reads compared across the restore: the publications with
// what hangs off them, the audit, and the media rows.
var snapshotReads = map[string]string{
	"publications": "/rest/v1/publications?select=id,title,slug,summary,body,status,version,scheduled_for,published_at,updated_at," +
		"promos(id,channel,body,link),reviews(id,verdict,notes,round),publication_media(position,media_id)" +
		"&order=id&promos.order=id&reviews.order=id&publication_media.order=position",
	"status_events": "/rest/v1/status_events?select=id,publication_id,from_status,to_status,actor_id,via,note,created_at&order=id",
	"media":         "/rest/v1/media?select=id,storage_path,mime_type,alt_text,bytes,width,height&order=id",
	"projects":      "/rest/v1/projects?select=id,slug,name,project_members(user_id,role)&order=slug&project_members.order=user_id",
	"revisions":     "/rest/v1/publication_revisions?select=publication_id,round,version,snapshot,submitted_by,created_at&order=publication_id,round",
}

func (s *service) snapshot(t *testing.T, token string) snapshot {
	t.Helper()
	snap := snapshot{rows: map[string][]byte{}, files: map[string]string{}}
	for name, path := range snapshotReads {
		code, b := s.do(t, http.MethodGet, path, token, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, b)
		}
		snap.rows[name] = b
	}
	var media []struct {
		StoragePath string `json:"storage_path"`
		Bytes       int64  `json:"bytes"`
	}
	if err := json.Unmarshal(snap.rows["media"], &media); err != nil {
		t.Fatal(err)
	}
	for _, m := range media {
		code, b := s.do(t, http.MethodGet, "/storage/v1/object/authenticated/media/"+m.StoragePath, token, nil)
		if code != http.StatusOK {
			t.Fatalf("download %s: %d %s", m.StoragePath, code, b)
		}
		if int64(len(b)) != m.Bytes {
			t.Errorf("%s: %d bytes served, the media row says %d", m.StoragePath, len(b), m.Bytes)
		}
		sum := sha256.Sum256(b)
		snap.files[m.StoragePath] = fmt.Sprintf("%d %s", len(b), hex.EncodeToString(sum[:]))
	}
	return snap
}
