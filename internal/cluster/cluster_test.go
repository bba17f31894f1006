package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestCluster builds masthead once and runs each scenario on its own cluster: a fresh database,
// real `masthead serve` processes and HAProxy in front. The rolling restart runs first and
// alone, since it counts failures under load; the others then run side by side.
func TestCluster(t *testing.T) {
	bin := buildMasthead(t)
	t.Run("RollingRestartUnderLoad", func(t *testing.T) { rollingRestart(t, bin) })
	for _, s := range []struct {
		name string
		run  func(*testing.T, string)
	}{
		{"DashboardSessionOnEveryInstance", dashboardSession},
		{"SignOutEverywhereAtOnce", signOutEverywhere},
		{"SchedulerPublishesOnce", schedulerPublishesOnce},
		{"SchemaReloadReachesEveryInstance", schemaReload},
		{"RateLimitSharedOut", rateLimitSharedOut},
	} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			s.run(t, bin)
		})
	}
}

// dashboardSession: a person signs in to the dashboard through HAProxy (the form shown by one
// instance, posted to the next) and loads 40 pages; both instances serve some, every one is
// the person's signed-in page, and each instance's access log agrees with what HAProxy said.
func dashboardSession(t *testing.T, bin string) {
	c := start(t, bin, options{instances: 2})
	b := browser()
	dashboardSignIn(t, b, c.URL, c.lead)
	served := map[string]int{}
	paths := []string{"/p/cluster/queue", "/inbox", "/p/cluster/schedule", "/schedule"}
	const loads = 40
	for i := range loads {
		path := paths[i%len(paths)]
		res, err := do(b, page(c.URL, path, ""))
		if err != nil {
			t.Fatal(err)
		}
		if res.status != http.StatusOK || !signedIn(res.body, c.lead) {
			t.Fatalf("load %d of %s (by %s): %d to %q, signed-in page: %v", i, path, res.instance, res.status,
				res.header.Get("Location"), signedIn(res.body, c.lead))
		}
		served[res.instance]++
	}
	t.Logf("%d page loads served by instance: %v", loads, served)
	for _, in := range c.insts {
		if served[in.name] == 0 {
			t.Errorf("%s served none of %d page loads: %v", in.name, loads, served)
		}
		// Its own access log says the same: every page it served, answered 200. (A line is
		// written just after its response, so the last one may still be on its way.)
		waitFor(t, 30*time.Second, in.name+"'s access log agreeing", func() (bool, error) {
			n := 0
			for _, p := range []string{"/p/:slug/queue", "/inbox", "/p/:slug/schedule", "/schedule"} {
				n += len(in.logLines(`"msg":"request"`, `"route":"`+p+`"`, `"status":200`))
			}
			if n > served[in.name] {
				return false, fmt.Errorf("%s logged %d page requests, HAProxy says it served %d", in.name, n, served[in.name])
			}
			return n == served[in.name], nil
		})
	}
}

// signOutEverywhere: a token and a dashboard session work on every instance; signing out on one
// instance ends both at once on all: the very next request with the old token to each instance
// directly is refused (REST 401, /auth/v1/user 403 session_not_found as GoTrue, the refresh
// token too), and the old dashboard cookie replayed on each lands on the sign-in page.
func signOutEverywhere(t *testing.T, bin string) {
	c := start(t, bin, options{instances: 3})
	hc := httpClient(nil, false)
	access, refresh := c.signIn(t, c.URL, c.lead)
	b := browser()
	dashboardSignIn(t, b, c.URL, c.editor)
	cookie := cookieHeader(b, c.URL)
	for _, in := range c.insts {
		res, err := do(hc, c.rest(http.MethodGet, in.URL, "/rest/v1/projects?select=slug", access, nil))
		if err != nil || res.status != http.StatusOK || !strings.Contains(string(res.body), `"cluster"`) {
			t.Fatalf("%s before sign-out: %d %s %v", in.name, res.status, res.body, err)
		}
		res, err = do(hc, page(in.URL, "/p/cluster/queue", cookie))
		if err != nil || res.status != http.StatusOK || !signedIn(res.body, c.editor) {
			t.Fatalf("%s dashboard before sign-out: %d %v", in.name, res.status, err)
		}
	}

	// The token's session ends on the first instance.
	res, err := do(hc, c.rest(http.MethodPost, c.insts[0].URL, "/auth/v1/logout", access, nil))
	if err != nil || res.status != http.StatusNoContent {
		t.Fatalf("logout on %s: %d %s %v", c.insts[0].name, res.status, res.body, err)
	}
	for _, in := range c.insts {
		res, err := do(hc, c.rest(http.MethodGet, in.URL, "/rest/v1/projects?select=slug", access, nil))
		if err != nil || res.status != http.StatusUnauthorized {
			t.Errorf("%s right after sign-out on %s: REST read with the old token %d %s %v, want 401", in.name, c.insts[0].name, res.status, res.body, err)
		}
		// GoTrue's answer for a token whose session is gone.
		res, err = do(hc, c.rest(http.MethodGet, in.URL, "/auth/v1/user", access, nil))
		if err != nil || res.status != http.StatusForbidden || res.header.Get("x-sb-error-code") != "session_not_found" {
			t.Errorf("%s right after sign-out: /auth/v1/user %d %s %v, want 403 session_not_found", in.name, res.status, res.body, err)
		}
		res, err = do(hc, c.rest(http.MethodPost, in.URL, "/auth/v1/token?grant_type=refresh_token", "", map[string]string{"refresh_token": refresh}))
		if err != nil || res.status == http.StatusOK {
			t.Errorf("%s right after sign-out: the old refresh token got %d %s %v", in.name, res.status, res.body, err)
		}
	}

	// The dashboard session ends on the second instance; the cookie from before, replayed on
	// every instance, no longer opens a page.
	req, _ := http.NewRequest(http.MethodGet, c.insts[1].URL+"/p/cluster/queue", nil)
	form, err := do(b, req)
	if err != nil {
		t.Fatal(err)
	}
	m := csrfRE.FindSubmatch(form.body)
	if m == nil {
		t.Fatalf("no CSRF token on the queue page of %s (%d)", c.insts[1].name, form.status)
	}
	req, _ = http.NewRequest(http.MethodPost, c.insts[1].URL+"/logout", strings.NewReader("_csrf="+string(m[1])))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res, err := do(b, req); err != nil || res.status != http.StatusSeeOther {
		t.Fatalf("POST /logout on %s: %d %v", c.insts[1].name, res.status, err)
	}
	for _, in := range c.insts {
		res, err := do(hc, page(in.URL, "/p/cluster/queue", cookie))
		if err != nil || res.status != http.StatusSeeOther || !strings.HasPrefix(res.header.Get("Location"), "/login") {
			t.Errorf("%s right after dashboard sign-out on %s: old cookie got %d to %q %v, want 303 to /login",
				in.name, c.insts[1].name, res.status, res.header.Get("Location"), err)
		}
	}
}

// schedulerPublishesOnce: with three instances' schedulers running every 100 ms, 240 items
// fall due in one statement; every one is published exactly once, with one publish event by
// the scheduler, and the counts the instances logged add up to 240.
func schedulerPublishesOnce(t *testing.T, bin string) {
	const items = 240
	c := start(t, bin, options{instances: 3, env: map[string]string{"MASTHEAD_SCHEDULER_INTERVAL": "100ms"}})
	// Scheduled an hour ahead through the workflow, each step by the person allowed to take it.
	c.as(t, c.editor, `insert into publications (project_id, title, slug, summary, body)
		select $1, 'Due ' || g, 'due-' || g, 'Summary', 'Body' from generate_series(1, $2) g`, c.project, items)
	c.as(t, c.editor, `update publications set status = 'reviewing' where slug like 'due-%'`)
	c.as(t, c.reviewer, `update publications set status = 'approved' where slug like 'due-%'`)
	c.as(t, c.lead, `update publications set status = 'scheduled', scheduled_for = now() + interval '1 hour' where slug like 'due-%'`)
	// All fall due at once (as the owner: the workflow only schedules ahead).
	ctx := context.Background()
	own := c.db.Owner(t)
	tx, err := own.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`alter table publications disable trigger publications_guard`,
		`update publications set scheduled_for = now() - interval '1 minute' where slug like 'due-%' and status = 'scheduled'`,
		`alter table publications enable trigger publications_guard`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	count := func(sql string) int {
		var n int
		if err := own.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitFor(t, time.Minute, fmt.Sprintf("%d items published", items), func() (bool, error) {
		return count(`select count(*) from publications where slug like 'due-%' and status = 'published'`) == items, nil
	})
	if n := count(`select count(*) from status_events e join publications p on p.id = e.publication_id
		where p.slug like 'due-%' and e.to_status = 'published' and e.via = 'scheduler'`); n != items {
		t.Errorf("%d publish events by the scheduler for %d items", n, items)
	}
	if n := count(`select count(*) from (select e.publication_id from status_events e join publications p on p.id = e.publication_id
		where p.slug like 'due-%' and e.to_status = 'published' group by 1 having count(*) <> 1) twice`); n != 0 {
		t.Errorf("%d items published more than once", n)
	}
	// Each instance logs what it published after committing; together they published each once.
	shares := make([]int, len(c.insts))
	waitFor(t, 30*time.Second, "instance logs adding up", func() (bool, error) {
		total := 0
		for i, in := range c.insts {
			shares[i] = 0
			for _, l := range in.logLines(`"msg":"scheduler: published"`) {
				var rec struct{ Count int }
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					return false, fmt.Errorf("%s: %v", l, err)
				}
				shares[i] += rec.Count
			}
			total += shares[i]
		}
		if total > items {
			return false, fmt.Errorf("the instances logged %v published, %d in all, for %d items", shares, total, items)
		}
		return total == items, nil
	})
	t.Logf("published by instance: %v", shares)
}

// schemaReload: a view created as the owner is unknown to every instance's schema cache until
// one NOTIFY masthead, 'reload schema'; then each instance, asked directly, serves it.
func schemaReload(t *testing.T, bin string) {
	c := start(t, bin, options{instances: 3})
	// Each cache listens (and loaded after subscribing) before the schema changes.
	for _, in := range c.insts {
		waitFor(t, time.Minute, in.name+" listening for schema changes", func() (bool, error) {
			return len(in.logLines(`"msg":"schema cache listener subscribed"`)) > 0, nil
		})
	}
	ctx := context.Background()
	own := c.db.Owner(t)
	for _, q := range []string{
		`create view public.cluster_probe with (security_invoker = true) as select p.slug, 42 as answer from public.projects p`,
		`grant select on public.cluster_probe to authenticated`,
	} {
		if _, err := own.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	access, _ := c.signIn(t, c.URL, c.lead)
	hc := httpClient(nil, false)
	read := func(in *instance) answer {
		res, err := do(hc, c.rest(http.MethodGet, in.URL, "/rest/v1/cluster_probe?select=slug,answer", access, nil))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, in := range c.insts {
		if res := read(in); res.status != http.StatusNotFound {
			t.Fatalf("%s served the view before any reload: %d %s", in.name, res.status, res.body)
		}
	}
	if _, err := own.Exec(ctx, `notify masthead, 'reload schema'`); err != nil {
		t.Fatal(err)
	}
	for _, in := range c.insts {
		waitFor(t, time.Minute, in.name+" serving the new view", func() (bool, error) {
			res := read(in)
			switch res.status {
			case http.StatusOK:
				if string(res.body) != `[{"slug":"cluster","answer":42}]` {
					return false, fmt.Errorf("%s: %s", in.name, res.body)
				}
				return true, nil
			case http.StatusNotFound:
				return false, nil
			}
			return false, fmt.Errorf("%s: %d %s", in.name, res.status, res.body)
		})
		waitFor(t, 30*time.Second, in.name+" logging the reload", func() (bool, error) {
			return len(in.logLines(`"msg":"schema cache reloaded"`)) == 1, nil
		})
	}
}

// rateLimitSharedOut: the token endpoint allows 30 requests an hour per client address; with
// MASTHEAD_INSTANCES=3 each instance allows 10, so a client sending 90 through HAProxy gets
// about 30 in all (at most 32 by the rounding; at least 20 if one instance were skipped), not
// 90, and the rest are refused with 429 and Retry-After.
func rateLimitSharedOut(t *testing.T, bin string) {
	const limit, instances, sent = 30, 3, 90
	c := start(t, bin, options{instances: instances, env: map[string]string{
		"MASTHEAD_TOKEN_RATE_IP": fmt.Sprintf("%d/1h,%d", limit, limit),
	}})
	hc := httpClient(nil, false)
	allowed, refused := map[string]int{}, map[string]int{}
	total := 0
	for range sent {
		res, err := do(hc, c.rest(http.MethodPost, c.URL, "/auth/v1/token?grant_type=password", "",
			map[string]string{"email": c.lead.email, "password": "not the password"}))
		if err != nil {
			t.Fatal(err)
		}
		switch res.status {
		case http.StatusTooManyRequests:
			refused[res.instance]++
			if res.header.Get("Retry-After") == "" || res.header.Get("x-sb-error-code") != "over_request_rate_limit" {
				t.Errorf("a 429 without Retry-After or GoTrue's error code: %v %s", res.header, res.body)
			}
		case http.StatusBadRequest:
			allowed[res.instance]++
			total++
		default:
			t.Fatalf("token request: %d %s", res.status, res.body)
		}
	}
	t.Logf("%d token requests through HAProxy: %d allowed (by instance %v), refused by instance %v", sent, total, allowed, refused)
	per := (limit + instances - 1) / instances
	if total > limit+instances-1 || total < limit-per {
		t.Errorf("%d of %d allowed across %d instances; want about the configured %d (between %d and %d)",
			total, sent, instances, limit, limit-per, limit+instances-1)
	}
	for _, in := range c.insts {
		if allowed[in.name] > per {
			t.Errorf("%s allowed %d, more than its share %d", in.name, allowed[in.name], per)
		}
	}
}

// rollingRestart: six clients send requests through HAProxy without pause (REST reads and
// read-only RPC calls with a token, dashboard pages with a session cookie) while each of three
// instances in turn gets SIGTERM, drains (its /readyz answers 503 until HAProxy has taken it
// out), exits cleanly and is started again, back in rotation before the next one stops. Not
// one request fails, and HAProxy never even had to send one again elsewhere.
func rollingRestart(t *testing.T, bin string) {
	const drain = 2 * time.Second
	c := start(t, bin, options{instances: 3, env: map[string]string{"MASTHEAD_SHUTDOWN_DRAIN": drain.String()}})
	access, _ := c.signIn(t, c.URL, c.lead)
	b := browser()
	dashboardSignIn(t, b, c.URL, c.lead)
	l := c.load(t, access, cookieHeader(b, c.URL))

	began := time.Now()
	for _, in := range c.insts {
		l.waitServed(t, in.name, 20)
		if err := in.proc.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// It drains: out of rotation before it exits.
		c.waitStatus(t, in.name, "DOWN", drain)
		in.waitExit(t, time.Minute)
		in.start(t)
		c.waitStatus(t, in.name, "UP", time.Minute)
		l.waitServed(t, in.name, 20) // back in rotation and serving
	}
	l.stop()
	st, err := c.stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rolling restart of %d instances in %s under load: %d requests sent, %d failed; answered by instance %v; HAProxy retries %s, redispatches %s",
		len(c.insts), time.Since(began).Round(time.Millisecond), l.sent.Load(), l.failed.Load(), l.servedBy(),
		st["BACKEND"]["wretr"], st["BACKEND"]["wredis"])
	if l.failed.Load() != 0 {
		t.Errorf("%d of %d requests failed during the rolling restart; first ones:\n%s", l.failed.Load(), l.sent.Load(), strings.Join(l.failures(), "\n"))
	}
	// Drained instances are out of rotation before their listener closes, so no request even
	// met a closed connection for HAProxy to send again elsewhere.
	if st["BACKEND"]["wretr"] != "0" || st["BACKEND"]["wredis"] != "0" {
		t.Errorf("HAProxy had to retry %s and redispatch %s requests: some met a stopping instance", st["BACKEND"]["wretr"], st["BACKEND"]["wredis"])
	}
	if l.sent.Load() < 300 {
		t.Errorf("only %d requests sent during the rolling restart; the load was too light to tell", l.sent.Load())
	}
	for _, in := range c.insts {
		if n := len(in.logLines(`"msg":"server: draining"`)); n != 1 {
			t.Errorf("%s logged %d drains, want 1", in.name, n)
		}
	}
}

// load is clients sending GETs through HAProxy until stop.
type load struct {
	sent, failed atomic.Int64
	stopped      atomic.Bool
	wg           sync.WaitGroup

	mu     sync.Mutex
	by     map[string]int64 // answers per instance
	errors []string         // the first failures
}

// load starts six clients over keep-alive connections, each sending its next request as soon
// as the last is answered (every 5 ms at most): two read /rest/v1 as the token's user, two call
// a read-only RPC with POST (which HAProxy does not resend once it reached an instance, so
// only the drain keeps them whole), and two load a dashboard page with cookie. Every answer
// must be a 200 with the expected content.
func (c *cluster) load(t *testing.T, token, cookie string) *load {
	l := &load{by: map[string]int64{}}
	hc := httpClient(nil, true)
	type client struct {
		req func() *http.Request
		ok  func(answer) bool
	}
	rows := func(n int) func(answer) bool {
		return func(a answer) bool {
			var rows []map[string]any
			return json.Unmarshal(a.body, &rows) == nil && (n < 0 || len(rows) == n)
		}
	}
	read := client{func() *http.Request {
		return c.rest(http.MethodGet, c.URL, "/rest/v1/publications?select=id,title&slug=like.draft-*&order=slug&limit=5", token, nil)
	}, rows(5)}
	rpc := client{func() *http.Request {
		return c.rest(http.MethodPost, c.URL, "/rest/v1/rpc/my_inbox", token, map[string]int{"max_per_reason": 5})
	}, rows(-1)}
	dashboard := client{func() *http.Request { return page(c.URL, "/p/cluster/queue", cookie) },
		func(a answer) bool { return signedIn(a.body, c.lead) }}
	for _, cl := range []client{read, read, rpc, rpc, dashboard, dashboard} {
		req, ok := cl.req, cl.ok
		l.wg.Go(func() {
			pace := time.NewTicker(5 * time.Millisecond)
			defer pace.Stop()
			for !l.stopped.Load() {
				l.sent.Add(1)
				at := time.Now()
				res, err := do(hc, req())
				switch {
				case err != nil:
					l.fail(fmt.Sprintf("%s: %v", at.Format("15:04:05.000"), err))
				case res.status != http.StatusOK || !ok(res):
					l.fail(fmt.Sprintf("%s: %d from %q: %.200s", at.Format("15:04:05.000"), res.status, res.instance, res.body))
				default:
					l.mu.Lock()
					l.by[res.instance]++
					l.mu.Unlock()
				}
				<-pace.C
			}
		})
	}
	t.Cleanup(l.stop)
	return l
}

func (l *load) fail(msg string) {
	l.failed.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errors) < 20 {
		l.errors = append(l.errors, msg)
	}
}

// stop ends the load once every client's last request is answered.
func (l *load) stop() {
	l.stopped.Store(true)
	l.wg.Wait()
}

func (l *load) failures() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errors...)
}

func (l *load) servedBy() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := make([]string, 0, len(l.by))
	for n := range l.by {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%d", n, l.by[n])
	}
	return strings.Join(parts, " ")
}

// waitServed waits until instance name has answered n more requests of the load.
func (l *load) waitServed(t *testing.T, name string, n int64) {
	t.Helper()
	l.mu.Lock()
	want := l.by[name] + n
	l.mu.Unlock()
	waitFor(t, time.Minute, fmt.Sprintf("%d more answers from %s", n, name), func() (bool, error) {
		if l.failed.Load() > 0 {
			return false, fmt.Errorf("requests failed: %s", strings.Join(l.failures(), "\n"))
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.by[name] >= want, nil
	})
}
