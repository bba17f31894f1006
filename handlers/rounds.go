package handlers

import (
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/internal/diff"
	"masthead/internal/rounds"
	"masthead/views/pages"
)

// roundInfo is the detail page's "Round 3, submitted by … 2 hours ago", from the newest
// revision the publication embeds; nil before the first submit.
func roundInfo(pc *projectContext, p *client.Publication) *pages.RoundInfo {
	if len(p.Revisions) == 0 {
		return nil
	}
	r := p.Revisions[0]
	return &pages.RoundInfo{Number: strconv.Itoa(r.Round), SubmittedBy: submitter(r), When: pc.clock.time(r.CreatedAt)}
}

// changesSincePrevious is "Changes since round N−1", from the two newest revisions the
// publication embeds (newest first); nil before round 2.
func changesSincePrevious(pc *projectContext, p *client.Publication) *pages.ChangesModel {
	if len(p.Revisions) < 2 {
		return nil
	}
	to, from := p.Revisions[0], p.Revisions[1]
	m := changesModel(pc, p, from, to)
	return &m
}

// changesModel says what changed from one round to another, with the reviews written in the
// earlier round and links to compare the other consecutive rounds.
func changesModel(pc *projectContext, p *client.Publication, from, to client.Revision) pages.ChangesModel {
	ch := rounds.Compare(from.Snapshot, to.Snapshot)
	m := pages.ChangesModel{
		From: strconv.Itoa(from.Round), To: strconv.Itoa(to.Round),
		BodyWords: plural(ch.Deleted, "word", "words") + " removed, " + thousands(ch.Inserted) + " added",
		Nothing:   !ch.Any(),
	}
	if ch.Title.Changed() {
		m.Fields = append(m.Fields, pages.FieldDiff{Name: "Title", Spans: spans(ch.Title.Spans)})
	}
	if ch.Summary.Changed() {
		m.Fields = append(m.Fields, pages.FieldDiff{Name: "Summary", Spans: spans(ch.Summary.Spans)})
	}
	if ch.Body.Changed() {
		m.Body = spans(ch.Body.Spans)
	}
	for _, pr := range ch.Promos {
		d := pages.PromoDiff{Channel: pr.Channel, Kind: promoKinds[pr.Kind]}
		switch pr.Kind {
		case rounds.Added:
			d.Spans = []pages.DiffSpan{{Op: "ins", Text: pr.New}}
		case rounds.Removed:
			d.Spans = []pages.DiffSpan{{Op: "del", Text: pr.Old}}
		default:
			d.Spans = spans(pr.Spans)
			if pr.OldLink != pr.NewLink {
				d.Link = fmt.Sprintf("Link changed from %s to %s", orNone(pr.OldLink), orNone(pr.NewLink))
			}
		}
		m.Promos = append(m.Promos, d)
	}
	for _, md := range ch.Media {
		m.Media = append(m.Media, mediaChange(md))
	}
	for _, r := range p.Reviews {
		if r.Round != from.Round {
			continue
		}
		who := "someone"
		if r.Reviewer != nil {
			who = r.Reviewer.DisplayName
		}
		m.Notes = append(m.Notes, pages.RoundNote{Reviewer: who, Verdict: verdict(r.Verdict), Notes: r.Notes, When: pc.clock.time(r.CreatedAt)})
	}
	latest := max(from.Round, to.Round, p.Revisions[0].Round)
	if latest > 2 {
		base := publicationURL(pc.project.Slug, p.ID)
		for n := 1; n < latest; n++ {
			m.Links = append(m.Links, pages.RoundLink{
				Label:   fmt.Sprintf("Round %d → %d", n, n+1),
				URL:     fmt.Sprintf("%s/rounds/%d..%d", base, n, n+1),
				Current: from.Round == n && to.Round == n+1,
			})
		}
	}
	return m
}

var promoKinds = map[string]string{rounds.Added: "Added", rounds.Removed: "Removed", rounds.Changed: "Changed"}

func mediaChange(md rounds.Media) pages.MediaDiff {
	name := path.Base(md.StoragePath)
	switch md.Kind {
	case rounds.Added:
		return pages.MediaDiff{Kind: "Added", Text: fmt.Sprintf("%s, alt text %s", name, quoted(md.NewAlt))}
	case rounds.Removed:
		return pages.MediaDiff{Kind: "Removed", Text: name}
	case rounds.Recaptioned:
		t := fmt.Sprintf("%s, alt text %s → %s", name, quoted(md.OldAlt), quoted(md.NewAlt))
		if md.NewPlace {
			t += ", and moved"
		}
		return pages.MediaDiff{Kind: "Re-captioned", Text: t}
	default:
		return pages.MediaDiff{Kind: "Moved", Text: name + " has a new place in the order"}
	}
}

func quoted(s string) string {
	if s == "" {
		return "(none)"
	}
	return strconv.Quote(s)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func spans(in []diff.Span) []pages.DiffSpan {
	ops := map[diff.Op]string{diff.Equal: "eq", diff.Delete: "del", diff.Insert: "ins"}
	out := make([]pages.DiffSpan, len(in))
	for i, s := range in {
		out[i] = pages.DiffSpan{Op: ops[s.Op], Text: s.Text}
	}
	return out
}

func submitter(r client.Revision) string {
	if r.Submitter != nil && r.Submitter.DisplayName != "" {
		return r.Submitter.DisplayName
	}
	return "someone"
}

// readinessShown are the statuses whose page shows the go-live checklist: while content can
// still change or is about to go live.
var readinessShown = map[string]bool{"draft": true, "changes_requested": true, "reviewing": true, "approved": true, "scheduled": true}

// readiness asks the service what the publication still needs before it may go live (the
// database's one definition), as the checklist and the list shown beside the workflow.
func (a *App) readiness(c echo.Context, p *client.Publication) ([]pages.CheckItem, []string, error) {
	if !readinessShown[p.Status] {
		return nil, nil, nil
	}
	var checks []client.Check
	err := a.call(c, func(token string) error {
		var err error
		checks, err = a.api.Readiness(ctx(c), token, p.ID)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var items []pages.CheckItem
	var missing []string
	for _, ch := range checks {
		state := "ok"
		if !ch.OK {
			state = "missing"
			missing = append(missing, ch.Detail)
		}
		items = append(items, pages.CheckItem{Check: ch.Check, OK: ch.OK, State: state, Detail: ch.Detail})
	}
	return items, missing, nil
}

// rounds is GET /p/:slug/publications/:id/rounds/:range, range being "a..b": what changed
// from round a to round b, with the reviews of round a.
func (a *App) rounds(c echo.Context) error {
	from, to, ok := parseRounds(c.Param("range"))
	if !ok {
		return a.fail(c, errNotFound)
	}
	pc, p, err := a.loadPublication(c)
	if err != nil {
		return a.fail(c, err)
	}
	var revs []client.Revision
	err = a.call(c, func(token string) error {
		var err error
		revs, err = a.api.Revisions(ctx(c), token, p.ID, from, to)
		return err
	})
	if err != nil {
		return a.fail(c, err)
	}
	var rf, rt *client.Revision
	for i := range revs {
		switch revs[i].Round {
		case from:
			rf = &revs[i]
		case to:
			rt = &revs[i]
		}
	}
	if rf == nil || rt == nil {
		return a.fail(c, errNotFound)
	}
	return a.render(c, http.StatusOK, pages.Rounds(pages.RoundsModel{
		Page:    a.frameSection(c, fmt.Sprintf("%s: rounds %d and %d", p.Title, from, to), pc, "queue"),
		Title:   p.Title,
		BackURL: publicationURL(pc.project.Slug, p.ID),
		Changes: changesModel(pc, p, *rf, *rt),
	}))
}

// parseRounds reads "a..b" (two different rounds from 1).
func parseRounds(s string) (from, to int, ok bool) {
	a, b, found := strings.Cut(s, "..")
	if !found {
		return 0, 0, false
	}
	from, err1 := strconv.Atoi(a)
	to, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || from < 1 || to < 1 || from == to || from > 10000 || to > 10000 {
		return 0, 0, false
	}
	return from, to, true
}
