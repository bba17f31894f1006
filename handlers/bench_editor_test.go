package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"masthead/internal/seed"
)

// writer is one editor of the editor benchmark, with their own draft.
type writer struct {
	b       *browser
	draft   string
	version int
}

// BenchmarkEditor measures the writing pages as people use them, with benchPublications per
// project and benchUsers editors (each their own account and session, as in a newsroom): the
// edit page, a version-checked save of their own draft, and the promo counter's round trip as
// they type. "busy" has everyone ask again the moment an answer arrives (a stress figure);
// "reading" pauses about a second between requests, as people do. It reports the median and
// the 95th percentile of the server time and the service calls per request.
//
//	go test ./handlers -run '^$' -bench Editor -benchtime 400x
func BenchmarkEditor(b *testing.B) {
	s := newStackWith(b, benchPublications)
	own := s.env.DB.Owner(b)
	writers := make([]*writer, benchUsers)
	for i := range writers {
		email := fmt.Sprintf("writer%d@northwind.test", i)
		u := s.env.CreateUser(b, email, seed.DefaultPassword)
		if _, err := own.Exec(context.Background(), `insert into project_members (project_id, user_id, role) select id, $1, 'editor' from projects where slug = 'northwind'`, u.ID); err != nil {
			b.Fatal(err)
		}
		w := &writer{b: s.browser(b)}
		w.b.login(email)
		p := w.b.post("/p/northwind/publications/new", url.Values{"title": {"Draft " + strconv.Itoa(i)}, "summary": {"A summary."},
			"body": {strings.Repeat("A paragraph of the draft, long enough to read like one. ", 40)}})
		if p.status != http.StatusSeeOther {
			b.Fatalf("create: %d", p.status)
		}
		w.draft, w.version = strings.TrimPrefix(p.location(), "/p/northwind/publications/"), 1
		writers[i] = w
	}
	requests := []struct {
		name string
		do   func(w *writer, i int) (got, want int)
	}{
		{"edit-page", func(w *writer, _ int) (int, int) {
			return w.b.fetch("/p/northwind/publications/" + w.draft + "/edit"), http.StatusOK
		}},
		{"save", func(w *writer, i int) (int, int) {
			p := w.b.post("/p/northwind/publications/"+w.draft+"/edit", url.Values{"title": {"Draft"}, "summary": {"A summary."},
				"body": {"Revision " + strconv.Itoa(i) + ". " + strings.Repeat("A paragraph of the draft. ", 40)}, "expected_version": {strconv.Itoa(w.version)}})
			if p.status == http.StatusSeeOther {
				w.version++
			}
			return p.status, http.StatusSeeOther
		}},
		{"promo-counter", func(w *writer, i int) (int, int) {
			p := w.b.post("/p/northwind/publications/"+w.draft+"/promos/x/count",
				url.Values{"body": {strings.Repeat("x", i%300)}, "link": {"https://northwind.test/a"}}, htmx("count-x")...)
			return p.status, http.StatusOK
		}},
	}
	for _, mode := range []struct {
		name  string
		pause time.Duration
	}{{"busy", 0}, {"reading", time.Second}} {
		for _, r := range requests {
			b.Run(mode.name+"/"+r.name, func(b *testing.B) { benchWriters(b, s, writers, mode.pause, r.do) })
		}
	}
}

// benchWriters has every writer make request do until b.N are made (see benchLoop).
func benchWriters(b *testing.B, s *stack, writers []*writer, pause time.Duration, do func(w *writer, i int) (int, int)) {
	benchLoop(b, s, len(writers), pause, func(u, i int) error {
		if got, want := do(writers[u], i); got != want {
			return fmt.Errorf("status %d, want %d", got, want)
		}
		return nil
	})
}
