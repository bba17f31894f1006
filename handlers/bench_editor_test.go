package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"masthead/internal/seed"
)

// BenchmarkEditor measures the writing pages as people use them, with benchPublications per
// project and benchUsers editors (each their own account and session, as in a newsroom), every
// one requesting the next the moment the last answered: the edit page, a version-checked save
// of their own draft, and the promo counter's round trip as they type. It reports the median
// and the 95th percentile of the server time and the service calls per request.
//
//	go test ./handlers -run '^$' -bench Editor -benchtime 400x
func BenchmarkEditor(b *testing.B) {
	s := newStackWith(b, benchPublications)
	own := s.env.DB.Owner(b)
	ctx := context.Background()
	type writer struct {
		b       *browser
		draft   string
		version int
	}
	writers := make([]*writer, benchUsers)
	for i := range writers {
		email := fmt.Sprintf("writer%d@northwind.test", i)
		u := s.env.CreateUser(b, email, seed.DefaultPassword)
		w := &writer{b: s.browser(b)}
		if _, err := own.Exec(ctx, `insert into project_members (project_id, user_id, role) select id, $1, 'editor' from projects where slug = 'northwind'`, u.ID); err != nil {
			b.Fatal(err)
		}
		w.b.login(email)
		p := w.b.post("/p/northwind/publications/new", url.Values{"title": {"Draft " + strconv.Itoa(i)}, "summary": {"A summary."},
			"body": {strings.Repeat("A paragraph of the draft, long enough to read like one. ", 40)}})
		if p.status != http.StatusSeeOther {
			b.Fatalf("create: %d", p.status)
		}
		w.draft, w.version = strings.TrimPrefix(p.location(), "/p/northwind/publications/"), 1
		writers[i] = w
	}
	run := func(b *testing.B, do func(w *writer, i int) (int, int)) {
		s.calls.Store(0)
		var mu sync.Mutex
		lat := make([]time.Duration, 0, b.N)
		var next atomic.Int64
		b.ResetTimer()
		var wg sync.WaitGroup
		for _, w := range writers {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= b.N {
						return
					}
					start := time.Now()
					got, want := do(w, i)
					d := time.Since(start)
					if got != want {
						b.Errorf("status %d, want %d", got, want)
						return
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		slices.Sort(lat)
		if len(lat) == 0 {
			return
		}
		pct := func(q float64) float64 {
			return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
		}
		b.ReportMetric(pct(0.50), "p50_ms")
		b.ReportMetric(pct(0.95), "p95_ms")
		b.ReportMetric(float64(s.calls.Load())/float64(len(lat)), "calls/req")
	}
	b.Run("edit-page", func(b *testing.B) {
		run(b, func(w *writer, _ int) (int, int) {
			return w.b.fetch("/p/northwind/publications/" + w.draft + "/edit"), http.StatusOK
		})
	})
	b.Run("save", func(b *testing.B) {
		run(b, func(w *writer, i int) (int, int) {
			p := w.b.post("/p/northwind/publications/"+w.draft+"/edit", url.Values{"title": {"Draft"}, "summary": {"A summary."},
				"body": {"Revision " + strconv.Itoa(i) + ". " + strings.Repeat("A paragraph of the draft. ", 40)}, "expected_version": {strconv.Itoa(w.version)}})
			if p.status == http.StatusSeeOther {
				w.version++
			}
			return p.status, http.StatusSeeOther
		})
	})
	b.Run("promo-counter", func(b *testing.B) {
		run(b, func(w *writer, i int) (int, int) {
			p := w.b.post("/p/northwind/publications/"+w.draft+"/promos/x/count",
				url.Values{"body": {strings.Repeat("x", i%300)}, "link": {"https://northwind.test/a"}}, htmx("count-x")...)
			return p.status, http.StatusOK
		})
	})
}
