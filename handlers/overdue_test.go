package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestOverdueAndSchedulerShown: a scheduled item whose time has passed says so on the schedule
// and on its page, and the schedule says when the scheduler last ran, or that it has stopped.
func TestOverdueAndSchedulerShown(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	own := s.env.DB.Owner(t)
	late := s.pubs(t, "northwind", "scheduled")[0]
	for _, q := range []string{
		`alter table publications disable trigger publications_guard`,
		`update publications set scheduled_for = now() - interval '3 minutes' where id = '` + late.id + `'`,
		`alter table publications enable trigger publications_guard`,
	} {
		if _, err := own.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	b := s.browser(t)
	b.login("lead@northwind.test")

	// These tests serve the handler without the service's loop: it has never run.
	p := b.get("/p/northwind/schedule")
	if p.status != http.StatusOK {
		t.Fatalf("schedule: %d", p.status)
	}
	if got := p.text(`[data-testid="scheduler-ran"]`); !strings.HasPrefix(got, "The scheduler has not run yet") {
		t.Errorf("scheduler line %q", got)
	}
	if got := p.text(`[data-testid="overdue"]`); got != "Due 3 minutes ago, not yet published" {
		t.Errorf("overdue badge %q", got)
	}
	if n := p.count(`[data-testid="overdue"]`); n != 1 {
		t.Errorf("%d overdue items, want 1", n)
	}
	if got := b.get("/p/northwind/publications/" + late.id).text(`[data-testid="overdue"]`); got != "Due 3 minutes ago, not yet published" {
		t.Errorf("detail overdue %q", got)
	}

	for _, c := range []struct{ ago, want string }{
		{"2 seconds", "The scheduler last ran just now; it publishes due items every 5s."},
		{"2 hours", "The scheduler last ran 2 hours ago; it publishes due items every 5s. It seems to have stopped: due items are not being published."},
	} {
		if _, err := own.Exec(context.Background(), `update app.scheduler_state set last_run_at = now() - $1::interval, interval_ms = 5000`, c.ago); err != nil {
			t.Fatal(err)
		}
		if got := b.get("/schedule").text(`[data-testid="scheduler-ran"]`); got != c.want {
			t.Errorf("ran %s ago: %q, want %q", c.ago, got, c.want)
		}
	}
}
