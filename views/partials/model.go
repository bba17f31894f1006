// Package partials holds the small components several pages share (status badges, times,
// rendered markdown) and their models. Markdown is the one place templ.Raw is used, and only on
// markdown.HTML's sanitised output. It imports internal/markdown and nothing else of masthead.
package partials

// Status is a workflow status as a word people read, with its machine key for styling.
type Status struct {
	Key   string // e.g. "changes_requested"
	Label string // e.g. "Changes requested"
}

// Time is an instant shown in the project's timezone and relative to now.
type Time struct {
	ISO      string // RFC 3339, for <time datetime>
	Absolute string // "Tue 24 Nov 2026, 14:05 CET"
	Relative string // "in 3 hours", "2 days ago"
}

// IsZero reports an absent time.
func (t Time) IsZero() bool { return t.ISO == "" }
