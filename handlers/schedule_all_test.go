package handlers_test

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestScheduleAllProjects: /schedule shows the scheduled publications of every project the
// person is a member of, and of no other. multi@masthead.test (reviewer in northwind, lead in
// acme-travel) sees both projects' schedules on one page; a member of one project sees only
// that one's. What is expected is read from the database as its owner: every publication
// scheduled in the next seven weeks (well inside the eight-week agenda, whatever day the
// agenda cuts in its timezone) of the person's projects.
func TestScheduleAllProjects(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	own := s.env.DB.Owner(t)
	for _, c := range []struct {
		email    string
		projects []string
	}{
		{"multi@masthead.test", []string{"acme-travel", "northwind"}},
		{"lead@northwind.test", []string{"northwind"}},
		{"viewer@acme.test", []string{"acme-travel"}},
	} {
		t.Run(c.email, func(t *testing.T) {
			rows, err := own.Query(context.Background(), `
				select '/p/' || j.slug || '/publications/' || p.id
				  from publications p join projects j on j.id = p.project_id
				  join project_members m on m.project_id = j.id join auth.users u on u.id = m.user_id
				 where u.email = $1 and p.status = 'scheduled'
				   and p.scheduled_for > now() + interval '1 hour' and p.scheduled_for < now() + interval '7 weeks'`, c.email)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			for rows.Next() {
				var u string
				if err := rows.Scan(&u); err != nil {
					t.Fatal(err)
				}
				want[u] = true
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			wantProjects := map[string]bool{}
			for u := range want {
				wantProjects[strings.Split(u, "/")[2]] = true
			}
			if len(wantProjects) != len(c.projects) {
				t.Fatalf("the demo data schedules publications in %v in the next weeks, want some in each of %v", wantProjects, c.projects)
			}

			b := s.browser(t)
			b.login(c.email)
			p := b.get("/schedule")
			if p.status != http.StatusOK {
				t.Fatalf("/schedule: %d", p.status)
			}
			shown := map[string]bool{}
			p.doc.Find(`[data-testid="schedule-day"] [data-testid="schedule-item"] .row-main a`).Each(func(_ int, a *goquery.Selection) {
				shown[a.AttrOr("href", "")] = true
			})
			for u := range want {
				if !shown[u] {
					t.Errorf("scheduled %s is not on /schedule", u)
				}
			}
			seen := map[string]bool{}
			p.doc.Find(`[data-testid="schedule-item"] .row-main a`).Each(func(_ int, a *goquery.Selection) {
				href := a.AttrOr("href", "")
				slug := strings.Split(href, "/")[2]
				seen[slug] = true
				if !slices.Contains(c.projects, slug) {
					t.Errorf("/schedule shows %s, of a project %s is not a member of", href, c.email)
				}
			})
			var got []string
			for slug := range seen {
				got = append(got, slug)
			}
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(c.projects, ",") {
				t.Errorf("/schedule shows items of %v, want %v", got, c.projects)
			}
		})
	}
}
