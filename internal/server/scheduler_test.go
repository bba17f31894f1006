package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"masthead/internal/config"
	"masthead/internal/pg"
	"masthead/internal/server/servertest"
)

// TestSchedulerPublishesThroughServer: the service's own loop (started by Serve, as in serve,
// dev and api) publishes an item a lead scheduled a couple of seconds ahead over REST within
// the interval (plus its jitter) and a second; and 100 items falling due together go live
// with the lag reported. Serve stops the loop on shutdown.
func TestSchedulerPublishesThroughServer(t *testing.T) {
	t.Parallel()
	const interval = 500 * time.Millisecond
	e := servertest.New(t, func(c *config.Config) { c.SchedulerInterval = interval })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.Server.Serve(ctx, ln) }()

	own := e.DB.Owner(t)
	bg := context.Background()
	var project string
	if err := own.QueryRow(bg, `insert into projects (slug, name) values ('sched', 'Sched') returning id`).Scan(&project); err != nil {
		t.Fatal(err)
	}
	users := map[string]string{}
	for _, role := range []string{"editor", "reviewer", "lead"} {
		u := e.CreateUser(t, role+"@sched.test", "a long password")
		users[role] = u.ID
		if _, err := own.Exec(bg, `insert into project_members (project_id, user_id, role) values ($1, $2, $3)`, project, u.ID, role); err != nil {
			t.Fatal(err)
		}
	}
	// Drafts by the editor, through review, as direct updates by the people allowed to.
	as := func(role, sql string, args ...any) {
		t.Helper()
		claims, _ := json.Marshal(map[string]any{"sub": users[role], "role": "authenticated"})
		if err := pg.WithCaller(bg, e.DB.Pool, pg.UserCaller(claims), pg.ReadWrite, func(tx pgx.Tx) error {
			_, err := tx.Exec(bg, sql, args...)
			return err
		}); err != nil {
			t.Fatalf("%s as %s: %v", sql, role, err)
		}
	}
	as("editor", `insert into publications (project_id, title, slug, summary, body)
		select $1, 'Item ' || g, 'item-' || g, 'Summary', 'Body' from generate_series(0, 100) g`, project)
	as("editor", `update publications set status = 'reviewing' where project_id = $1`, project)
	as("reviewer", `update publications set status = 'approved' where project_id = $1`, project)

	// One item scheduled over REST by the lead, two seconds ahead.
	token := accessToken(t, base, e.Key, "lead@sched.test", "a long password")
	var first string
	if err := own.QueryRow(bg, `select id from publications where slug = 'item-0'`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	due := time.Now().Add(2 * time.Second).UTC()
	res, body := get(t, http.MethodPost, base+"/rest/v1/rpc/schedule",
		map[string]string{"apikey": e.Key, "Authorization": "Bearer " + token, "Content-Type": "application/json"},
		strings.NewReader(fmt.Sprintf(`{"publication_id":%q,"scheduled_for":%q}`, first, due.Format(time.RFC3339Nano))))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("schedule: %d %s", res.StatusCode, body)
	}
	// When each item falls due, as its scheduling wrote it: read back afterwards, an item
	// could already be published (and its date cleared) on a loaded machine.
	var scheduled struct {
		ScheduledFor time.Time `json:"scheduled_for"`
	}
	if err := json.Unmarshal(body, &scheduled); err != nil || scheduled.ScheduledFor.IsZero() {
		t.Fatalf("schedule's answer: %s (%v)", body, err)
	}
	dueAt := map[string]time.Time{"item-0": scheduled.ScheduledFor}
	// The other hundred fall due together a little later.
	claims, _ := json.Marshal(map[string]any{"sub": users["lead"], "role": "authenticated"})
	if err := pg.WithCaller(bg, e.DB.Pool, pg.UserCaller(claims), pg.ReadWrite, func(tx pgx.Tx) error {
		rows, err := tx.Query(bg, `update publications set status = 'scheduled', scheduled_for = now() + interval '3 seconds'
			where project_id = $1 and slug <> 'item-0' returning slug, scheduled_for`, project)
		if err != nil {
			return err
		}
		var slug string
		var at time.Time
		_, err = pgx.ForEachRow(rows, []any{&slug, &at}, func() error {
			dueAt[slug] = at
			return nil
		})
		return err
	}); err != nil {
		t.Fatalf("schedule the hundred as lead: %v", err)
	}
	if len(dueAt) != 101 {
		t.Fatalf("%d scheduled items", len(dueAt))
	}

	// The loop is done when nothing is left: after each of its runs (awaited in its log) the
	// test looks; 120 runs (a minute at this interval) is far beyond what 101 items need.
	seen := len(e.Logs.Lines(`"msg":"scheduler: ran"`))
	for first := seen; ; {
		var left int
		if err := own.QueryRow(bg, `select count(*) from publications where project_id = $1 and status <> 'published'`, project).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if seen-first > 120 {
			t.Fatalf("%d items not published by the loop", left)
		}
		seen++
		e.Logs.WaitLines(t, time.Minute, seen, `"msg":"scheduler: ran"`)
	}
	runs := schedulerRuns(t, e.Logs.String())
	var lags []time.Duration
	var firstLag time.Duration
	rows, err := own.Query(bg, `select slug, published_at from publications where project_id = $1`, project)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var slug string
		var at time.Time
		if err := rows.Scan(&slug, &at); err != nil {
			t.Fatal(err)
		}
		due := dueAt[slug]
		// The promise, independent of how loaded the machine is: the first run that begins
		// once an item is due publishes it (published_at is that run's transaction time).
		if r, ok := firstRunFrom(runs, due); !ok {
			t.Errorf("%s: published at %s, but no run began after it fell due at %s", slug, at, due)
		} else if at.After(r.end()) || at.Before(due) {
			t.Errorf("%s: due %s, published %s: not by the first run after due (%s–%s)", slug, due, at, r.Started, r.end())
		}
		if slug == "item-0" {
			firstLag = at.Sub(due)
		} else {
			lags = append(lags, at.Sub(due))
		}
	}
	slices.Sort(lags)
	p50, worst := lags[len(lags)/2], lags[len(lags)-1]
	var events int
	if err := own.QueryRow(bg, `select count(*) from status_events e join publications p on p.id = e.publication_id
		where p.project_id = $1 and e.via = 'scheduler'`, project).Scan(&events); err != nil {
		t.Fatal(err)
	}
	// The lag on the wall clock is interval × [0.8, 1.2] plus a run on a quiet machine; it is
	// reported, not asserted, because a loaded machine stretches every timer alike.
	var widest time.Duration
	for i := 1; i < len(runs); i++ {
		widest = max(widest, runs[i].Started.Sub(runs[i-1].end()))
	}
	t.Logf("scheduler lag (due → published), interval %s: the REST-scheduled item %s; 100 items due together: median %s, max %s; %d runs, widest pause %s",
		interval, firstLag.Round(time.Millisecond), p50.Round(time.Millisecond), worst.Round(time.Millisecond), len(runs), widest.Round(time.Millisecond))
	if events != 101 {
		t.Errorf("%d scheduler events for 101 items", events)
	}

	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after the stop signal")
	}
}

// schedulerRun is one run of the loop as its debug log tells it.
type schedulerRun struct {
	Started    time.Time `json:"started"`
	DurationMS float64   `json:"duration_ms"`
}

func (r schedulerRun) end() time.Time {
	return r.Started.Add(time.Duration(r.DurationMS * float64(time.Millisecond)))
}

// schedulerRuns reads the loop's runs, in order, from the service's JSON log.
func schedulerRuns(t *testing.T, log string) []schedulerRun {
	t.Helper()
	var runs []schedulerRun
	for line := range strings.Lines(log) {
		var r struct {
			Msg string `json:"msg"`
			schedulerRun
		}
		if json.Unmarshal([]byte(line), &r) == nil && r.Msg == "scheduler: ran" {
			runs = append(runs, r.schedulerRun)
		}
	}
	if len(runs) == 0 {
		t.Fatal("the loop logged no run")
	}
	return runs
}

// firstRunFrom is the first run that began at or after at.
func firstRunFrom(runs []schedulerRun, at time.Time) (schedulerRun, bool) {
	for _, r := range runs {
		if !r.Started.Before(at) {
			return r, true
		}
	}
	return schedulerRun{}, false
}
