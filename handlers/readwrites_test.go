package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestReadsAfterAChangeAskForThePrimary: for a few seconds after a person posts a form (every
// change in the dashboard is one), the dashboard's calls ask the service to read from the
// primary database, so the page after a change shows it even when reads come from replicas a
// moment behind; later pages read wherever the service chooses.
func TestReadsAfterAChangeAskForThePrimary(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	b.login("editor@northwind.test")
	s.clock.Advance(10 * time.Second)
	before := s.primaryCalls.Load()
	b.get("/p/northwind/queue")
	if got := s.primaryCalls.Load() - before; got != 0 {
		t.Fatalf("%d calls asked for the primary ten seconds after the last change", got)
	}

	p := b.post("/p/northwind/publications/new", url.Values{"title": {"Read after write"}, "summary": {"s"}, "body": {"b"}})
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location(), "/p/northwind/publications/") {
		t.Fatalf("create: %d %q", p.status, p.location())
	}
	before = s.primaryCalls.Load()
	calls := s.calls.Load()
	if page := b.get(p.location()); page.status != http.StatusOK || !strings.Contains(page.body, "Read after write") {
		t.Fatalf("the new draft's page: %d", page.status)
	}
	if primary, all := s.primaryCalls.Load()-before, s.calls.Load()-calls; primary != all || all == 0 {
		t.Fatalf("%d of %d calls of the page after a change asked for the primary", primary, all)
	}
}
