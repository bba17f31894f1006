package handlers

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"masthead/internal/client"
	"masthead/views/partials"
)

// statusLabels are the words people read for each status (as app.status_label in the schema).
var statusLabels = map[string]string{
	"draft":             "Draft",
	"reviewing":         "In review",
	"changes_requested": "Changes requested",
	"approved":          "Approved",
	"scheduled":         "Scheduled",
	"published":         "Published",
	"archived":          "Archived",
	"writing":           "Being written (drafts and changes requested)",
}

// statusOrder lists statuses in workflow order, for filters.
var statusOrder = []string{"draft", "reviewing", "changes_requested", "approved", "scheduled", "published", "archived"}

func status(key string) partials.Status {
	label, ok := statusLabels[key]
	if !ok {
		label = strings.ReplaceAll(key, "_", " ")
	}
	return partials.Status{Key: key, Label: label}
}

// verdictLabels name review verdicts.
var verdictLabels = map[string]string{
	"approved":          "Approved",
	"changes_requested": "Changes requested",
	"comment":           "Comment",
}

func verdict(key string) partials.Status {
	label, ok := verdictLabels[key]
	if !ok {
		label = key
	}
	return partials.Status{Key: key, Label: label}
}

// intentWords say what an intent did, as the history reads: "Ana approved".
var intentWords = map[string]string{
	"submit":          "submitted it for review",
	"withdraw":        "withdrew it",
	"approve":         "approved it",
	"request_changes": "requested changes",
	"schedule":        "scheduled it",
	"unschedule":      "unscheduled it",
	"publish":         "published it",
	"archive":         "archived it",
	"restore":         "restored it",
	"reopen":          "reopened it to draft",
}

// viaWords explain how a change was made.
var viaWords = map[string]string{
	"rpc":       "workflow action",
	"direct":    "direct edit",
	"scheduler": "scheduler",
}

// clock formats instants for one project: its timezone and the request's "now".
type clock struct {
	loc *time.Location
	now time.Time
}

func newClock(tz string, now time.Time) clock {
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "" {
		loc = time.UTC
	}
	return clock{loc: loc, now: now}
}

// zoneName is the timezone as the page states it: "Europe/Berlin".
func (k clock) zoneName() string { return k.loc.String() }

func (k clock) time(t time.Time) partials.Time {
	if t.IsZero() {
		return partials.Time{}
	}
	lt := t.In(k.loc)
	return partials.Time{
		ISO:      t.UTC().Format(time.RFC3339),
		Absolute: lt.Format("Mon 2 Jan 2006, 15:04 MST"),
		Relative: relative(t, k.now),
	}
}

func (k clock) timePtr(t *time.Time) partials.Time {
	if t == nil {
		return partials.Time{}
	}
	return k.time(*t)
}

// relative says how far t is from now in the largest sensible unit: "3 hours ago", "in 2 days".
// Any instant PostgreSQL holds may arrive here; past what a Duration spans (about 292 years)
// the distance is counted in calendar years.
func relative(t, now time.Time) string {
	future := t.After(now)
	d := now.Sub(t)
	if future {
		d = t.Sub(now)
	}
	if d < 45*time.Second {
		return "just now"
	}
	s := span(d)
	if d == math.MaxInt64 {
		s = strconv.Itoa(max(t.Year()-now.Year(), now.Year()-t.Year())) + " years"
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// span is a duration in words, rounded to its largest unit: "1 minute", "3 days".
func span(d time.Duration) string {
	switch {
	case d < 90*time.Second:
		return "1 minute"
	case d < 45*time.Minute:
		return plural(int(d.Round(time.Minute)/time.Minute), "minute", "minutes")
	case d < 36*time.Hour:
		return plural(max(1, int(d.Round(time.Hour)/time.Hour)), "hour", "hours")
	case d < 45*24*time.Hour:
		return plural(int(d.Round(24*time.Hour)/(24*time.Hour)), "day", "days")
	case d < 365*24*time.Hour:
		return plural(int(d/(30*24*time.Hour)), "month", "months")
	default:
		return plural(int(d/(365*24*time.Hour)), "year", "years")
	}
}

// plural is a count with the noun that agrees with it: "1 promo", "2 promos", "1,200 words".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return thousands(n) + " " + many
}

// dayRelative names a calendar day against today: "today", "tomorrow", "in 5 days", "2 days ago".
func dayRelative(day, today time.Time) string {
	// Seconds, not a Duration, so distant dates do not saturate.
	n := int(math.Round(float64(day.Unix()-today.Unix()) / 86400))
	switch {
	case n == 0:
		return "today"
	case n == 1:
		return "tomorrow"
	case n == -1:
		return "yesterday"
	case n > 1:
		return fmt.Sprintf("in %d days", n)
	default:
		return fmt.Sprintf("%d days ago", -n)
	}
}

// thousands writes n with thin grouping: 12,345 (client.Thousands, as the refusals it words).
func thousands(n int) string { return client.Thousands(n) }

// dateInput and dateTimeInput are the value formats of <input type=date> and datetime-local.
const (
	dateInput     = "2006-01-02"
	dateTimeInput = "2006-01-02T15:04"
)
