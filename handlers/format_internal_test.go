package handlers

import (
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

func TestReadiness(t *testing.T) {
	t.Parallel()
	x := &client.Channel{Limits: client.ChannelLimits{MaxChars: 10, Count: "chars"}}
	promos := []client.Promo{{Channel: "x", Body: "short", ChannelInfo: x}, {Channel: "bluesky", Body: "far too long for it", ChannelInfo: x}}
	if r := readiness([]string{"x", "bluesky", "threads"}, promos); r.OK || r.Label != "1 of 3 promos ready · 1 over limit · 1 missing" {
		t.Errorf("readiness = %+v", r)
	}
	if r := readiness([]string{"x"}, promos[:1]); !r.OK || r.Label != "1 of 1 promos ready" {
		t.Errorf("readiness = %+v", r)
	}
}
