// Package rounds says what changed between two review rounds of a publication: the title and
// summary, the body word by word, each channel's promo, and the media (added, removed,
// re-captioned, moved). The dashboard renders it and the MCP server hands its compact form to
// agents, so both tell the same story.
//
// A round's content is the snapshot the database records on every submit
// (publication_revisions.snapshot). The package is pure computation; it imports only
// internal/diff.
package rounds

import (
	"slices"
	"strings"

	"masthead/internal/diff"
)

// Snapshot is publication_revisions.snapshot: the content as it was submitted.
type Snapshot struct {
	Title   string          `json:"title"`
	Summary string          `json:"summary"`
	Body    string          `json:"body"`
	Promos  []SnapshotPromo `json:"promos"`
	Media   []SnapshotMedia `json:"media"`
}

// SnapshotPromo is a promo as submitted.
type SnapshotPromo struct {
	Channel string  `json:"channel"`
	Body    string  `json:"body"`
	Link    *string `json:"link"`
}

// SnapshotMedia is an attached media item as submitted.
type SnapshotMedia struct {
	ID          string `json:"id"`
	Position    int    `json:"position"`
	AltText     string `json:"alt_text"`
	StoragePath string `json:"storage_path"`
}

// Kinds of change for promos and media.
const (
	Added       = "added"
	Removed     = "removed"
	Changed     = "changed"
	Recaptioned = "recaptioned"
	Moved       = "moved"
)

// Field is one text field's change; Spans is its word diff, empty when unchanged.
type Field struct {
	Old, New string
	Spans    []diff.Span
}

// Changed reports whether the field differs between the rounds.
func (f Field) Changed() bool { return f.Old != f.New }

// Promo is one channel's promo change.
type Promo struct {
	Channel          string
	Kind             string // Added, Removed or Changed
	Old, New         string
	OldLink, NewLink string
	Spans            []diff.Span
}

// Media is one media item's change.
type Media struct {
	ID, StoragePath string
	Kind            string // Added, Removed, Recaptioned or Moved
	OldAlt, NewAlt  string
	// NewCaption and NewPlace say both things that may happen to a kept item; Kind names the
	// first (a re-captioned item that also moved is Recaptioned with NewPlace set).
	NewCaption, NewPlace bool
}

// Changes is everything that changed from one round to another.
type Changes struct {
	Title, Summary, Body Field
	Deleted, Inserted    int // words of the body
	Promos               []Promo
	Media                []Media
}

// Any reports whether anything changed at all.
func (c Changes) Any() bool {
	return c.Title.Changed() || c.Summary.Changed() || c.Body.Changed() || len(c.Promos) > 0 || len(c.Media) > 0
}

// Compare says what changed from a (the earlier round) to b.
func Compare(a, b Snapshot) Changes {
	c := Changes{
		Title:   field(a.Title, b.Title),
		Summary: field(a.Summary, b.Summary),
		Body:    field(a.Body, b.Body),
	}
	c.Deleted, c.Inserted = diff.Stats(c.Body.Spans)
	c.Promos = comparePromos(a.Promos, b.Promos)
	c.Media = compareMedia(a.Media, b.Media)
	return c
}

func field(a, b string) Field {
	f := Field{Old: a, New: b}
	if a != b {
		f.Spans = diff.Words(a, b)
	}
	return f
}

func link(l *string) string {
	if l == nil {
		return ""
	}
	return *l
}

// comparePromos pairs promos by channel, in channel order.
func comparePromos(a, b []SnapshotPromo) []Promo {
	old := map[string]SnapshotPromo{}
	var chans []string
	for _, p := range a {
		old[p.Channel] = p
		chans = append(chans, p.Channel)
	}
	cur := map[string]SnapshotPromo{}
	for _, p := range b {
		cur[p.Channel] = p
		if _, ok := old[p.Channel]; !ok {
			chans = append(chans, p.Channel)
		}
	}
	slices.Sort(chans)
	var out []Promo
	for _, ch := range chans {
		o, hadOld := old[ch]
		n, hasNew := cur[ch]
		p := Promo{Channel: ch, Old: o.Body, New: n.Body, OldLink: link(o.Link), NewLink: link(n.Link)}
		switch {
		case !hasNew:
			p.Kind = Removed
		case !hadOld:
			p.Kind = Added
		case p.Old != p.New || p.OldLink != p.NewLink:
			p.Kind = Changed
			if p.Old != p.New {
				p.Spans = diff.Words(p.Old, p.New)
			}
		default:
			continue
		}
		out = append(out, p)
	}
	return out
}

// compareMedia pairs media by id: removed ones in their old order, then the current list in
// its order, each added, re-captioned or moved (a re-captioned item that also moved says both).
func compareMedia(a, b []SnapshotMedia) []Media {
	old := map[string]SnapshotMedia{}
	for _, m := range a {
		old[m.ID] = m
	}
	cur := map[string]bool{}
	for _, m := range b {
		cur[m.ID] = true
	}
	var out []Media
	for _, m := range a {
		if !cur[m.ID] {
			out = append(out, Media{ID: m.ID, StoragePath: m.StoragePath, Kind: Removed, OldAlt: m.AltText})
		}
	}
	// Order among the items both rounds have: an item moved if its rank among them changed.
	var keptOld []string
	for _, m := range a {
		if cur[m.ID] {
			keptOld = append(keptOld, m.ID)
		}
	}
	rank := 0
	for _, m := range b {
		o, had := old[m.ID]
		if !had {
			out = append(out, Media{ID: m.ID, StoragePath: m.StoragePath, Kind: Added, NewAlt: m.AltText})
			continue
		}
		ch := Media{ID: m.ID, StoragePath: m.StoragePath, OldAlt: o.AltText, NewAlt: m.AltText}
		ch.NewCaption = o.AltText != m.AltText
		ch.NewPlace = keptOld[rank] != m.ID
		rank++
		switch {
		case ch.NewCaption:
			ch.Kind = Recaptioned
		case ch.NewPlace:
			ch.Kind = Moved
		default:
			continue
		}
		out = append(out, ch)
	}
	return out
}

// Compact is a change list an agent can act on: only what changed, the body as edits with a
// few words of context on each side.
type Compact struct {
	FromRound int           `json:"from_round"`
	ToRound   int           `json:"to_round"`
	Unchanged bool          `json:"unchanged,omitempty" jsonschema:"true when nothing changed between the rounds"`
	Title     *FieldChange  `json:"title,omitempty"`
	Summary   *FieldChange  `json:"summary,omitempty"`
	Body      []BodyEdit    `json:"body_edits,omitempty" jsonschema:"the body's edits in order, each with a few words before and after"`
	Words     *WordCount    `json:"body_words,omitempty"`
	Promos    []PromoChange `json:"promos,omitempty"`
	Media     []MediaChange `json:"media,omitempty"`
}

// FieldChange is a short field's old and new value.
type FieldChange struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// BodyEdit is one edit of the body.
type BodyEdit struct {
	Before   string `json:"before,omitempty"`
	Deleted  string `json:"deleted,omitempty"`
	Inserted string `json:"inserted,omitempty"`
	After    string `json:"after,omitempty"`
}

// WordCount counts the words an edit removed and added.
type WordCount struct {
	Deleted  int `json:"deleted"`
	Inserted int `json:"inserted"`
}

// PromoChange is one channel's promo change.
type PromoChange struct {
	Channel string `json:"channel"`
	Change  string `json:"change" jsonschema:"added, removed or changed"`
	Old     string `json:"old,omitempty"`
	New     string `json:"new,omitempty"`
	OldLink string `json:"old_link,omitempty"`
	NewLink string `json:"new_link,omitempty"`
}

// MediaChange is one media item's change.
type MediaChange struct {
	ID     string `json:"id"`
	Change string `json:"change" jsonschema:"added, removed, recaptioned or moved"`
	OldAlt string `json:"old_alt_text,omitempty"`
	NewAlt string `json:"new_alt_text,omitempty"`
}

// contextWords is how many words of unchanged text a body edit carries on each side.
const contextWords = 6

// ToCompact gives c's compact form for rounds from and to.
func (c Changes) ToCompact(from, to int) Compact {
	out := Compact{FromRound: from, ToRound: to, Unchanged: !c.Any()}
	if c.Title.Changed() {
		out.Title = &FieldChange{c.Title.Old, c.Title.New}
	}
	if c.Summary.Changed() {
		out.Summary = &FieldChange{c.Summary.Old, c.Summary.New}
	}
	if c.Body.Changed() {
		out.Body = bodyEdits(c.Body.Spans)
		out.Words = &WordCount{c.Deleted, c.Inserted}
	}
	for _, p := range c.Promos {
		out.Promos = append(out.Promos, PromoChange{Channel: p.Channel, Change: p.Kind, Old: p.Old, New: p.New, OldLink: p.OldLink, NewLink: p.NewLink})
	}
	for _, m := range c.Media {
		out.Media = append(out.Media, MediaChange{ID: m.ID, Change: m.Kind, OldAlt: m.OldAlt, NewAlt: m.NewAlt})
	}
	return out
}

// bodyEdits folds spans into edits with context: a deletion and the insertion that follows it
// are one edit.
func bodyEdits(spans []diff.Span) []BodyEdit {
	var out []BodyEdit
	for i := 0; i < len(spans); i++ {
		s := spans[i]
		if s.Op == diff.Equal {
			continue
		}
		e := BodyEdit{}
		if i > 0 && spans[i-1].Op == diff.Equal {
			e.Before = lastWords(spans[i-1].Text, contextWords)
		}
		if s.Op == diff.Delete {
			e.Deleted = s.Text
			if i+1 < len(spans) && spans[i+1].Op == diff.Insert {
				i++
				e.Inserted = spans[i].Text
			}
		} else {
			e.Inserted = s.Text
		}
		if i+1 < len(spans) && spans[i+1].Op == diff.Equal {
			e.After = firstWords(spans[i+1].Text, contextWords)
		}
		out = append(out, e)
	}
	return out
}

func lastWords(s string, n int) string {
	w := strings.Fields(s)
	return strings.Join(w[max(0, len(w)-n):], " ")
}

func firstWords(s string, n int) string {
	w := strings.Fields(s)
	return strings.Join(w[:min(n, len(w))], " ")
}
