package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"masthead/internal/config"
	"masthead/internal/pg"
	"masthead/internal/pgrun"
	"masthead/internal/seed"
	"masthead/internal/server/servertest"
)

// TestDatabaseOutage is the fault test: while a bounded load of reads (REST, /auth/v1/user,
// storage) and workflow RPCs runs against the real service, its private cluster is restarted,
// then stopped for a few seconds and started again. Every answer must be 2xx or a clean 503
// (Retry-After, the surface's own JSON shape), every surface must answer 503 while the
// database is down, the service must recover by itself within a second of the database, and
// the audit must hold afterwards: every non-draft publication has its events, each
// publication's events form one unbroken chain ending in its status, and versions went up by
// exactly the transitions recorded.
func TestDatabaseOutage(t *testing.T) {
	f := startFaultEnv(t)
	l := f.startLoad(t)

	l.waitAll(t, "the load to get going", time.Time{}, 3, 200)

	// A restart: the pool's connections all die at once, the database comes straight back.
	f.stopCluster(t)
	restartRecovery := f.startCluster(t, l)

	// An outage of a few seconds: every surface must say 503, in its own shape.
	f.stopCluster(t)
	down := time.Now()
	f.probeSurfacesDown(t)
	l.waitAll(t, "every worker to meet the outage", down, 3, 503)
	for time.Since(down) < 2*time.Second {
		l.waitAll(t, "more outage answers", time.Now(), 1, 503)
	}
	outageRecovery := f.startCluster(t, l)

	l.waitAll(t, "the load to carry on", time.Now(), 5, 200)
	l.stopAndWait()

	counts, bad := l.results()
	t.Logf("answers by status: %v; recovery after restart %s, after a %s outage %s",
		counts, restartRecovery.Round(time.Millisecond), time.Since(down).Round(100*time.Millisecond), outageRecovery.Round(time.Millisecond))
	for _, b := range bad {
		t.Error(b)
	}
	for _, d := range []time.Duration{restartRecovery, outageRecovery} {
		if d > time.Second {
			t.Errorf("the service took %s to recover after the database was back, want at most 1s", d)
		}
	}
	f.checkAudit(t, l)
}

// faultEnv is a service on its own private cluster, which the test may stop and start (the
// shared pgtest cluster serves other tests and must stay up).
type faultEnv struct {
	pgdir    string
	cluster  *pgrun.Cluster
	ownerURL string
	url, key string
	viewer   string // access tokens: viewer and lead of northwind
	lead     string
	media    string   // a storage path the viewer may read
	pubs     []string // draft publications the workflow workers own, one each
	before   map[string][2]int
}

const faultDB = "fault"

func startFaultEnv(t *testing.T) *faultEnv {
	t.Helper()
	ctx := context.Background()
	// Not t.TempDir: when tests run as root the server runs as postgres, which needs to reach it.
	dir, err := os.MkdirTemp("", "masthead-fault-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := &faultEnv{pgdir: filepath.Join(dir, "pg")}
	if f.cluster, err = pgrun.Start(ctx, f.pgdir, pgrun.Options{Ephemeral: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.cluster.Stop() })
	admin, err := pgx.Connect(ctx, f.cluster.URL(pgrun.Superuser, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = admin.Exec(ctx, "create database "+faultDB)
	admin.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.ownerURL = f.cluster.URL(pgrun.Superuser, faultDB)
	if err := pg.Migrate(ctx, f.ownerURL); err != nil {
		t.Fatal(err)
	}
	mediaDir := filepath.Join(dir, "media")
	if _, err := seed.Run(ctx, f.ownerURL, seed.Options{MediaDir: mediaDir}); err != nil {
		t.Fatal(err)
	}

	env := servertest.Serve(t, f.cluster.URL(pg.LoginRole, faultDB), func(c *config.Config) { c.StorageDir = mediaDir })
	f.url, f.key = env.URL, env.Key

	f.viewer = f.signIn(t, "viewer@northwind.test")
	f.lead = f.signIn(t, "lead@northwind.test")
	owner, err := pgx.Connect(ctx, f.ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	if err := owner.QueryRow(ctx, `select m.storage_path from media m join projects p on p.id = m.project_id
		where p.slug = 'northwind' order by m.storage_path limit 1`).Scan(&f.media); err != nil {
		t.Fatal(err)
	}
	rows, _ := owner.Query(ctx, `select pu.id::text from publications pu join projects p on p.id = pu.project_id
		where p.slug = 'northwind' and pu.status = 'draft' order by pu.id limit 2`)
	if f.pubs, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(f.pubs) != 2 {
		t.Fatalf("draft publications for the workflow: %v %v", f.pubs, err)
	}
	f.before = versionsAndEvents(t, owner, f.pubs)
	return f
}

func (f *faultEnv) signIn(t *testing.T, email string) string {
	t.Helper()
	body := fmt.Sprintf(`{"email":%q,"password":%q}`, email, seed.DefaultPassword)
	res, b := get(t, http.MethodPost, f.url+"/auth/v1/token?grant_type=password",
		map[string]string{"apikey": f.key, "Content-Type": "application/json"}, strings.NewReader(body))
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("sign in %s: %d %s", email, res.StatusCode, b)
	}
	return tok.AccessToken
}

func (f *faultEnv) stopCluster(t *testing.T) {
	t.Helper()
	if err := f.cluster.Stop(); err != nil {
		t.Fatal(err)
	}
}

// startCluster starts the database again and returns how long after it was ready every
// worker had a 2xx answer again.
func (f *faultEnv) startCluster(t *testing.T, l *load) time.Duration {
	t.Helper()
	var err error
	if f.cluster, err = pgrun.Start(context.Background(), f.pgdir, pgrun.Options{Ephemeral: true}); err != nil {
		t.Fatal(err)
	}
	ready := time.Now()
	return l.waitAll(t, "recovery", ready, 1, 200)
}

// probeSurfacesDown asks each surface something that needs the database while it is down.
func (f *faultEnv) probeSurfacesDown(t *testing.T) {
	t.Helper()
	probes := []struct {
		surface, method, path, token, ctype, body string
	}{
		{"rest", "GET", "/rest/v1/publications?select=id&limit=1", f.viewer, "", ""},
		{"rest", "POST", "/rest/v1/rpc/submit_for_review", f.lead, "application/json", `{"publication_id":"` + f.pubs[0] + `"}`},
		{"auth", "GET", "/auth/v1/user", f.viewer, "", ""},
		{"auth", "POST", "/auth/v1/token?grant_type=password", "", "application/json", `{"email":"viewer@northwind.test","password":"masthead-demo"}`},
		{"oauth", "POST", "/auth/v1/oauth/token", "", "application/x-www-form-urlencoded",
			url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"abcdefghijkl"}, "client_id": {"00000000-0000-0000-0000-000000000000"}}.Encode()},
		{"storage", "GET", "/storage/v1/object/authenticated/media/" + f.media, f.viewer, "", ""},
	}
	for _, p := range probes {
		req, _ := http.NewRequest(p.method, f.url+p.path, strings.NewReader(p.body))
		req.Header.Set("apikey", f.key)
		if p.token != "" {
			req.Header.Set("Authorization", "Bearer "+p.token)
		}
		if p.ctype != "" {
			req.Header.Set("Content-Type", p.ctype)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", p.method, p.path, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("database down: %s %s answered %d %s, want 503", p.method, p.path, res.StatusCode, b)
			continue
		}
		if err := cleanOutage(p.surface, res, b); err != nil {
			t.Errorf("database down: %s %s: %v", p.method, p.path, err)
		}
	}
}

// shapes are the keys each surface's error body has.
var shapes = map[string][]string{
	"rest":    {"code", "message", "details", "hint"},
	"auth":    {"code", "error_code", "msg"},
	"oauth":   {"error", "error_description"},
	"storage": {"statusCode", "error", "message"},
}

// outageValues are the members whose value a surface's 503 fixes, as the README lists them.
// REST's code is PGRST000 when the database could not be reached, or, as PostgREST forwards a
// database's error, the SQLSTATE with which the stopping database ended the statement.
var outageValues = map[string]map[string]func(any) bool{
	"rest": {"code": func(v any) bool {
		return v == "PGRST000" || v == "57P01" || v == "57P02" || v == "57P03"
	}},
	"auth":    {"code": func(v any) bool { return v == float64(http.StatusServiceUnavailable) }},
	"oauth":   {"error": func(v any) bool { return v == "temporarily_unavailable" }},
	"storage": {"statusCode": func(v any) bool { return v == "503" }},
}

// cleanOutage checks a 503: Retry-After set and the surface's JSON error shape, with the values
// a client tells an outage by.
func cleanOutage(surface string, res *http.Response, body []byte) error {
	if res.Header.Get("Retry-After") == "" {
		return fmt.Errorf("503 without Retry-After: %s", body)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("503 body is not JSON: %q", body)
	}
	for _, k := range shapes[surface] {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("503 body lacks %q for %s: %s", k, surface, body)
		}
	}
	for k, ok := range outageValues[surface] {
		if !ok(m[k]) {
			return fmt.Errorf("503 body's %q is %v for %s, not an outage's: %s", k, m[k], surface, body)
		}
	}
	return nil
}

// load is a fixed set of workers that call the service until stopped (or a hard minute).
type load struct {
	f    *faultEnv
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	seen []map[int][]time.Time // per worker: status → when each answer came
	bad  []string
	// transitions answered 2xx and answered 503 (which may or may not have committed)
	okMoves, unsureMoves map[string]int
}

const loadLimit = time.Minute

func (f *faultEnv) startLoad(t *testing.T) *load {
	l := &load{f: f, stop: make(chan struct{}), okMoves: map[string]int{}, unsureMoves: map[string]int{}}
	client := &http.Client{Timeout: 10 * time.Second}
	readers := []func() (string, *http.Response, []byte, error){
		func() (string, *http.Response, []byte, error) {
			return l.call(client, "rest", "GET", "/rest/v1/publications?select=id,title,status&limit=20", f.viewer, "")
		},
		func() (string, *http.Response, []byte, error) {
			return l.call(client, "auth", "GET", "/auth/v1/user", f.viewer, "")
		},
		func() (string, *http.Response, []byte, error) {
			return l.call(client, "storage", "GET", "/storage/v1/object/authenticated/media/"+f.media, f.viewer, "")
		},
	}
	for range 2 {
		l.worker(func(i int) (string, *http.Response, []byte, error) { return readers[i%len(readers)]() })
	}
	for _, pub := range f.pubs {
		l.worker(func(int) (string, *http.Response, []byte, error) { return l.move(client, pub) })
	}
	t.Cleanup(l.stopAndWait)
	return l
}

// worker runs fn until the load stops, recording each answer.
func (l *load) worker(fn func(i int) (string, *http.Response, []byte, error)) {
	l.mu.Lock()
	w := len(l.seen)
	l.seen = append(l.seen, map[int][]time.Time{})
	l.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		end := time.Now().Add(loadLimit)
		for i := 0; time.Now().Before(end); i++ {
			select {
			case <-l.stop:
				return
			default:
			}
			surface, res, body, err := fn(i)
			l.mu.Lock()
			switch {
			case err != nil:
				l.bad = append(l.bad, fmt.Sprintf("%s: %v", surface, err))
			case res.StatusCode == http.StatusServiceUnavailable:
				if err := cleanOutage(surface, res, body); err != nil {
					l.bad = append(l.bad, fmt.Sprintf("%s %s: %v", res.Request.Method, res.Request.URL.Path, err))
				}
			case res.StatusCode < 200 || res.StatusCode > 299:
				l.bad = append(l.bad, fmt.Sprintf("%s %s answered %d: %s", res.Request.Method, res.Request.URL.Path, res.StatusCode, body))
			}
			if err == nil {
				status := res.StatusCode
				if status/100 == 2 {
					status = 200
				}
				l.seen[w][status] = append(l.seen[w][status], time.Now())
			}
			l.mu.Unlock()
			if err == nil && res.StatusCode == http.StatusServiceUnavailable {
				// Pace, not synchronisation: a client backing off a little during an outage
				// keeps the load bounded on a small machine.
				select {
				case <-l.stop:
				case <-time.After(10 * time.Millisecond):
				}
			}
		}
	}()
}

// move reads the publication's status and makes the one transition back or forth: the worker
// owns it, so a 503 whose outcome is unknown is resolved by reading again.
func (l *load) move(client *http.Client, pub string) (string, *http.Response, []byte, error) {
	surface, res, body, err := l.call(client, "rest", "GET", "/rest/v1/publications?select=status&id=eq."+pub, l.f.lead, "")
	if err != nil || res.StatusCode != http.StatusOK {
		return surface, res, body, err
	}
	var rows []struct{ Status string }
	if err := json.Unmarshal(body, &rows); err != nil || len(rows) != 1 {
		return surface, nil, nil, fmt.Errorf("read %s: %s", pub, body)
	}
	rpc := "submit_for_review"
	if rows[0].Status == "reviewing" {
		rpc = "withdraw"
	}
	surface, res, body, err = l.call(client, "rest", "POST", "/rest/v1/rpc/"+rpc, l.f.lead, `{"publication_id":"`+pub+`"}`)
	if err == nil {
		l.mu.Lock()
		switch res.StatusCode {
		case http.StatusOK:
			l.okMoves[pub]++
		case http.StatusServiceUnavailable:
			l.unsureMoves[pub]++
		}
		l.mu.Unlock()
	}
	return surface, res, body, err
}

func (l *load) call(client *http.Client, surface, method, path, token, body string) (string, *http.Response, []byte, error) {
	req, err := http.NewRequest(method, l.f.url+path, strings.NewReader(body))
	if err != nil {
		return surface, nil, nil, err
	}
	req.Header.Set("apikey", l.f.key)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	if err != nil {
		return surface, nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return surface, res, b, err
}

// waitAll waits until every worker has had n answers of status (200 stands for any 2xx) after
// since, and returns how long after since that took. It fails the test after 20 s.
func (l *load) waitAll(t *testing.T, what string, since time.Time, n, status int) time.Duration {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		l.mu.Lock()
		var latest time.Time
		done := true
		for _, s := range l.seen {
			var after []time.Time
			for _, at := range s[status] {
				if at.After(since) {
					after = append(after, at)
				}
			}
			if len(after) < n {
				done = false
				break
			}
			if after[n-1].After(latest) {
				latest = after[n-1]
			}
		}
		l.mu.Unlock()
		if done {
			return latest.Sub(since)
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (%d answers of %d per worker)", what, n, status)
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-l.stop:
			t.Fatalf("the load stopped while waiting for %s", what)
		}
	}
}

func (l *load) stopAndWait() {
	l.mu.Lock()
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// results are the answers by status over all workers, and every answer that was neither 2xx
// nor a clean 503.
func (l *load) results() (map[int]int, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	counts := map[int]int{}
	for _, s := range l.seen {
		for status, ts := range s {
			counts[status] += len(ts)
		}
	}
	return counts, l.bad
}

// versionsAndEvents returns each publication's version and number of status events.
func versionsAndEvents(t *testing.T, conn *pgx.Conn, pubs []string) map[string][2]int {
	t.Helper()
	out := map[string][2]int{}
	for _, id := range pubs {
		var v, n int
		if err := conn.QueryRow(context.Background(), `select version, (select count(*) from status_events e where e.publication_id = p.id)
			from publications p where id = $1`, id).Scan(&v, &n); err != nil {
			t.Fatal(err)
		}
		out[id] = [2]int{v, n}
	}
	return out
}

// checkAudit checks the audit invariants on the whole database and, for the workflow's
// publications, that every transition answered 2xx is recorded and nothing else is but those
// whose answer was lost to the outage.
func (f *faultEnv) checkAudit(t *testing.T, l *load) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, f.ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	checks := []struct{ name, sql string }{
		{"non-draft publications without events", `select count(*) from publications p
			where p.status <> 'draft' and not exists (select 1 from status_events e where e.publication_id = p.id)`},
		{"transitions without their event (an event's from_status is not the previous event's to_status)", `select count(*) from (
			select from_status, lag(to_status) over (partition by publication_id order by id) as prev from status_events) e
			where e.prev is not null and e.prev <> e.from_status`},
		{"publications whose last event does not end in their status", `select count(*) from publications p
			cross join lateral (select to_status from status_events e where e.publication_id = p.id order by id desc limit 1) last
			where last.to_status <> p.status`},
		{"publications whose version is below 1 + their transitions", `select count(*) from publications p
			where p.version < 1 + (select count(*) from status_events e where e.publication_id = p.id)`},
	}
	for _, c := range checks {
		var n int
		if err := conn.QueryRow(ctx, c.sql).Scan(&n); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n != 0 {
			t.Errorf("audit: %d %s", n, c.name)
		}
	}
	after := versionsAndEvents(t, conn, f.pubs)
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := append([]string(nil), f.pubs...)
	sort.Strings(ids)
	for _, id := range ids {
		dv, de := after[id][0]-f.before[id][0], after[id][1]-f.before[id][1]
		t.Logf("publication %s: %d transitions answered 2xx, %d answered 503, %d events and %d versions added", id, l.okMoves[id], l.unsureMoves[id], de, dv)
		if dv != de {
			t.Errorf("publication %s: version went up by %d but %d events were written", id, dv, de)
		}
		if de < l.okMoves[id] || de > l.okMoves[id]+l.unsureMoves[id] {
			t.Errorf("publication %s: %d events for %d transitions answered 2xx and %d answered 503", id, de, l.okMoves[id], l.unsureMoves[id])
		}
		if l.okMoves[id] == 0 {
			t.Errorf("publication %s: no transition succeeded under load", id)
		}
	}
}
