package seed

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSlugify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Review: The Lighthouse Keeper at the Royal Theatre", "review-the-lighthouse-keeper-at-the-royal-theatre"},
		{"Walking 7,000 steps: is it enough?", "walking-7-000-steps-is-it-enough"},
		{"Farmers' market moves indoors", "farmers-market-moves-indoors"},
		{"  --Édition spéciale--  ", "dition-sp-ciale"},
		{strings.Repeat("long words ", 20), "long-words-long-words-long-words-long-words-long-words-long-words-long-words-lon"},
	} {
		if got := slugify(tc.in); got != tc.want {
			t.Errorf("slugify(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPromoFitsUnlessAskedNotTo(t *testing.T) {
	t.Parallel()
	limits := map[string]int{"x": 280, "bluesky": 300, "threads": 500, "mastodon": 500, "linkedin": 3000}
	for _, p := range projects {
		for i, s := range p.Stories {
			for ch, limit := range limits {
				url := "https://" + p.Domain + "/" + s.Section + "/" + slugify(s.Title)
				if n := utf8.RuneCountInString(promo(&p, s, url, limit, false)); n > limit {
					t.Errorf("%s story %d on %s: %d characters, limit %d", p.Slug, i, ch, n, limit)
				}
				over := utf8.RuneCountInString(promo(&p, s, url, limit, true))
				if wantOver := limit <= 500; (over > limit) != wantOver {
					t.Errorf("%s story %d on %s: over-limit promo has %d characters, limit %d", p.Slug, i, ch, over, limit)
				}
			}
		}
	}
}

func TestBulkEndsFollowTheMix(t *testing.T) {
	t.Parallel()
	ends := bulkEnds()
	if len(ends) != 100 {
		t.Fatalf("%d buckets, want 100", len(ends))
	}
	got := map[string]int{}
	for _, e := range ends {
		got[e]++
	}
	for _, m := range bulkMix {
		if got[m.status] != m.pct {
			t.Errorf("%s: %d buckets, want %d", m.status, got[m.status], m.pct)
		}
	}
}

func TestEveryProjectHasADemoStoryPerScript(t *testing.T) {
	t.Parallel()
	for _, p := range projects {
		if len(p.Stories) != len(demoScripts) {
			t.Errorf("%s: %d stories for %d scripts", p.Slug, len(p.Stories), len(demoScripts))
		}
		sections := map[string]bool{}
		for _, c := range p.Collections {
			sections[c.Slug] = true
		}
		for _, s := range p.Stories {
			if !sections[s.Section] {
				t.Errorf("%s: %q is in unknown section %q", p.Slug, s.Title, s.Section)
			}
		}
	}
}

// TestDemoLogins: the list the dev sign-in page shows names every demo account the seed makes.
func TestDemoLogins(t *testing.T) {
	t.Parallel()
	logins := DemoLogins()
	if len(logins) != 4*len(projects)+1 {
		t.Fatalf("%d demo logins, want %d", len(logins), 4*len(projects)+1)
	}
	if logins[0] != (DemoLogin{Email: "lead@northwind.test", Roles: "lead of Northwind Daily"}) {
		t.Errorf("first demo login %+v", logins[0])
	}
	if last := logins[len(logins)-1]; last.Email != multiUser.Email || last.Roles != "lead of Acme Travel, reviewer of Northwind Daily" {
		t.Errorf("multi-project login %+v", last)
	}
}
