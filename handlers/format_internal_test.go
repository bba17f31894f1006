package handlers

import (
	"strings"
	"testing"
	"time"

	"masthead/internal/client"
)

func TestRelative(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cases := map[time.Duration]string{
		-10 * time.Second:     "just now",
		-time.Minute:          "1 minute ago",
		-20 * time.Minute:     "20 minutes ago",
		-3 * time.Hour:        "3 hours ago",
		30 * time.Hour:        "in 30 hours",
		-3 * 24 * time.Hour:   "3 days ago",
		90 * 24 * time.Hour:   "in 3 months",
		-800 * 24 * time.Hour: "2 years ago",
	}
	for d, want := range cases {
		if got := relative(now.Add(d), now); got != want {
			t.Errorf("relative(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/p/x/queue?status=draft": "/p/x/queue?status=draft",
		"//evil.test":             "",
		`/\evil.test`:             "",
		"https://evil.test/":      "",
		"javascript:alert(1)":     "",
		"/ok\r\nSet-Cookie: x":    "",
		"":                        "",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOffered(t *testing.T) {
	t.Parallel()
	names := func(ss []step) (out []string) {
		for _, s := range ss {
			out = append(out, s.rpc)
		}
		return out
	}
	cases := []struct {
		role, status string
		author       bool
		want         []string
	}{
		{"viewer", "reviewing", false, nil},
		{"reviewer", "reviewing", true, []string{"request_changes", "add_review"}},
		{"editor", "draft", true, []string{"submit_for_review"}},
		{"lead", "approved", false, []string{"schedule", "publish_now", "reopen", "archive", "add_review"}},
		{"lead", "scheduled", false, []string{"schedule", "publish_now", "unschedule", "reopen", "add_review"}},
		{"editor", "approved", true, nil},
		{"owner", "archived", false, []string{"restore", "add_review"}},
		{"editor", "published", false, nil},
	}
	for _, c := range cases {
		got := names(offered(c.role, c.status, c.author))
		if len(got) != len(c.want) {
			t.Errorf("%s/%s: %v, want %v", c.role, c.status, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s/%s: %v, want %v", c.role, c.status, got, c.want)
				break
			}
		}
	}
}

// TestReadiness: the queue's promo column and go-live badge word the database's checks: the
// column counts the promo checks it calls ok and gives the others' words (with one default
// channel, says whether its promo is ready), a project without default channels counts promos,
// and the badge counts every failing check; every count agrees with its noun.
func TestReadiness(t *testing.T) {
	t.Parallel()
	checks := []client.Check{
		{Check: "title", OK: true, Detail: "Title is set"},
		{Check: "summary", OK: false, Detail: "Summary is missing"},
		{Check: "promo:x", OK: true, Detail: "X: 5 / 280 characters"},
		{Check: "promo:bluesky", OK: false, Detail: "Bluesky: 320 / 300 characters (20 over)"},
		{Check: "promo:threads", OK: false, Detail: "Threads: no promo written"},
		{Check: "alt_text", OK: true, Detail: "No media attached"},
	}
	for _, c := range []struct {
		checks  []client.Check
		promos  []client.Promo
		label   string
		failing string // the failing promos' words, "; "-joined; ok when empty
	}{
		{checks, nil, "1 of 3 promos ready", "Bluesky: 320 / 300 characters (20 over); Threads: no promo written"},
		{checks[2:4], nil, "1 of 2 promos ready", "Bluesky: 320 / 300 characters (20 over)"},
		{append(checks[:3:3], checks[2]), nil, "2 of 2 promos ready", ""},
		{checks[:3], nil, "Promo ready", ""},
		{checks[3:4], nil, "Promo not ready", "Bluesky: 320 / 300 characters (20 over)"},
		{checks[:2], nil, "0 promos", ""},
		{checks[:2], []client.Promo{{Channel: "x"}}, "1 promo", ""},
		{checks[:2], []client.Promo{{Channel: "x"}, {Channel: "y"}}, "2 promos", ""},
	} {
		r := readiness(client.Publication{Checks: c.checks, Promos: c.promos})
		if r.Label != c.label || r.OK != (c.failing == "") || strings.Join(r.Failing, "; ") != c.failing {
			t.Errorf("readiness(%+v, %d promos) = %+v, want %q failing %q", c.checks, len(c.promos), r, c.label, c.failing)
		}
	}
	for _, c := range []struct {
		status string
		checks []client.Check
		want   string // the badge's label, "" for none
	}{
		{"reviewing", checks, "3 things before it can go live"},
		{"approved", checks[3:4], "1 thing before it can go live"},
		{"draft", checks[:1], "Ready to go live"},
		{"published", checks, ""},
		{"archived", checks, ""},
		{"draft", nil, ""}, // no verdict read: no badge rather than a guess
	} {
		g := goLiveBadge(client.Publication{Status: c.status, Checks: c.checks})
		got := ""
		if g != nil {
			got = g.Label
			if g.Ready != (len(g.Failing) == 0) {
				t.Errorf("%s: badge %+v", c.status, g)
			}
		}
		if got != c.want {
			t.Errorf("%s: badge %q, want %q", c.status, got, c.want)
		}
	}
}

// TestTimesAtTheEdges: any instant PostgreSQL can hold formats without a panic and says the
// right direction and size, past what a time.Duration spans.
func TestTimesAtTheEdges(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	k := newClock("Europe/Berlin", now)
	cases := []struct {
		at                 time.Time
		iso, rel, abs, day string
	}{
		{time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC), "12345-01-01T00:00:00Z", "in 10319 years", "Mon 1 Jan 12345, 01:00 CET", "in 3768817 days"},
		{time.Date(294276, 12, 31, 23, 59, 59, 0, time.UTC), "294276-12-31T23:59:59Z", "in 292250 years", "Mon 1 Jan 294277, 00:59 CET", ""},
		{time.Date(-4712, 1, 1, 0, 0, 0, 0, time.UTC), "-4712-01-01T00:00:00Z", "6738 years ago", "", ""},
		{now.Add(3 * time.Hour), "2026-05-01T15:00:00Z", "in 3 hours", "Fri 1 May 2026, 17:00 CEST", "today"},
	}
	for _, c := range cases {
		got := k.time(c.at)
		if got.ISO != c.iso || got.Relative != c.rel || (c.abs != "" && got.Absolute != c.abs) {
			t.Errorf("time(%v) = %+v, want %s / %s / %s", c.at, got, c.iso, c.rel, c.abs)
		}
		if c.day != "" {
			if d := dayRelative(c.at.Truncate(24*time.Hour), now.Truncate(24*time.Hour)); d != c.day {
				t.Errorf("dayRelative(%v) = %q, want %q", c.at, d, c.day)
			}
		}
	}
}

// TestCounts: counts read as the rest of the dashboard writes numbers, grouped in thousands,
// with the noun that agrees; the banner's count of nothing is no text at all.
func TestCounts(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{plural(1, "promo", "promos"), "1 promo"},
		{plural(0, "promo", "promos"), "0 promos"},
		{plural(1200, "word", "words"), "1,200 words"},
		{thousands(-1234567), "-1,234,567"},
		{countLabel(0), ""},
		{countLabel(7), "7"},
		{countLabel(1234), "1,234"},
		{sentence("the slug is taken"), "The slug is taken."},
		{sentence("editor@northwind.test is already a member of this project"), "editor@northwind.test is already a member of this project."},
		{sentence("tram-line is taken."), "tram-line is taken."},
		{sentence("note: say why"), "Note: say why."},
		{sentence("élan is a word"), "Élan is a word."},
		{sentence("a project's name is 1 to 200 characters"), "A project's name is 1 to 200 characters."},
		{sizeWords(1), "1 byte"},
		{sizeWords(1000), "1,000 bytes"},
		{sizeWords(1536), "1.5 KB"},
		{sizeWords(10 << 10), "10 KB"},
		{sizeWords(1023 << 10), "1,023 KB"},
		{sizeWords(50 << 20), "50 MB"}, // the upload limit, where it said "50.0 MB"
		{sizeWords(1<<20 + 1<<19), "1.5 MB"},
		{sizeWords(10<<20 - 1), "10 MB"},
		{sizeWords(2048 << 20), "2,048 MB"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
