package handlers

import (
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"masthead/internal/channels"
	"masthead/internal/client"
	"masthead/views/pages"
)

// pageSize is how many publications one queue page shows.
const pageSize = 25

// queueQuery is the queue's filters and page as the URL carries them, so filtered views can be
// shared and Back restores them.
type queueQuery struct {
	Status     string `query:"status"` // a status, or "all"; empty means "reviewing"
	Collection string `query:"collection"`
	Author     string `query:"author"`
	From       string `query:"from"` // yyyy-mm-dd in the project's timezone
	To         string `query:"to"`   // inclusive
	Text       string `query:"q"`
	Page       int    `query:"page"`
}

// statusGroups are queue filters over more than one status, with their labels in statusLabels.
var statusGroups = map[string][]string{"writing": {"draft", "changes_requested"}}

// authorMe and authorOthers filter the queue by the person looking at it: what they wrote, or
// what someone else did (the start pages of editors and reviewers).
const (
	authorMe     = "me"
	authorOthers = "others"
)

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// normalise drops values the service would refuse, so a hand-edited URL shows a page rather
// than an error.
func (q *queueQuery) normalise() {
	if q.Status == "" {
		q.Status = "reviewing"
	}
	if _, ok := statusLabels[q.Status]; !ok && q.Status != "all" && statusGroups[q.Status] == nil {
		q.Status = "reviewing"
	}
	if !uuidRE.MatchString(q.Collection) {
		q.Collection = ""
	}
	if !uuidRE.MatchString(q.Author) && q.Author != authorMe && q.Author != authorOthers {
		q.Author = ""
	}
	if _, err := time.Parse(dateInput, q.From); err != nil {
		q.From = ""
	}
	if _, err := time.Parse(dateInput, q.To); err != nil {
		q.To = ""
	}
	// No stored text holds a NUL (PostgreSQL's text cannot), and the service refuses one in a
	// search; a cut at 200 bytes keeps whole characters.
	q.Text = strings.TrimSpace(strings.ReplaceAll(q.Text, "\x00", ""))
	if len(q.Text) > maxSearch {
		q.Text = strings.ToValidUTF8(q.Text[:maxSearch], "")
	}
	q.Page = min(max(q.Page, 1), maxPage)
}

// maxSearch is how many bytes of a search the queue keeps.
const maxSearch = 200

// maxPage bounds the page a URL may ask for, far past the end of any queue, so that the rows
// before it ((page-1)*pageSize, and a search's walk beyond them) are counted without wrapping
// around below zero.
const maxPage = math.MaxInt32 / pageSize

// url is the queue URL for these filters at page n; defaults are left out to keep it short.
func (q queueQuery) url(slug string, page int) string {
	v := url.Values{}
	if q.Status != "reviewing" {
		v.Set("status", q.Status)
	}
	for k, s := range map[string]string{"collection": q.Collection, "author": q.Author, "from": q.From, "to": q.To, "q": q.Text} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return queueURL(slug)
	}
	return queueURL(slug) + "?" + v.Encode()
}

// queue is GET /p/:slug/queue: the full page, or only the results for htmx.
func (a *App) queue(c echo.Context) error {
	var q queueQuery
	if err := (&echo.DefaultBinder{}).BindQueryParams(c, &q); err != nil {
		q = queueQuery{}
	}
	q.normalise()
	pc, err := a.loadProjects(c, c.Param("slug"))
	if err != nil {
		return a.fail(c, err)
	}
	f := client.QueueFilter{
		ProjectID: pc.project.ID, CollectionID: q.Collection, AuthorID: q.Author, Text: q.Text,
		Offset: (q.Page - 1) * pageSize, Limit: pageSize,
	}
	switch q.Author {
	case authorMe:
		f.AuthorID = pc.userID
	case authorOthers:
		f.AuthorID, f.NotAuthorID = "", pc.userID
	}
	switch {
	case statusGroups[q.Status] != nil:
		f.Statuses = statusGroups[q.Status]
	case q.Status != "all":
		f.Statuses = []string{q.Status}
	}
	if t, err := time.ParseInLocation(dateInput, q.From, pc.clock.loc); err == nil {
		f.ScheduledFrom = t
	}
	if t, err := time.ParseInLocation(dateInput, q.To, pc.clock.loc); err == nil {
		f.ScheduledTo = t.AddDate(0, 0, 1)
	}
	var rows []client.Publication
	var total client.QueueCount
	var seen *time.Time
	err = a.call(c, func(token string) error {
		var err error
		if rows, total, err = a.api.Queue(ctx(c), token, f); err != nil {
			return err
		}
		seen, err = a.api.Visit(ctx(c), token, "queue:"+pc.project.ID)
		return err
	})
	if err != nil {
		return a.fail(c, err)
	}
	results := a.queueResults(pc, q, rows, total)
	for i, p := range rows {
		results.Rows[i].New = seen != nil && p.UpdatedAt.After(*seen)
	}
	if wantsPart(c, "queue-results") {
		// The address bar gets the canonical URL (defaults and empty fields left out), so the
		// pushed history entry and a shared link read as the filters do.
		c.Response().Header().Set("HX-Push-Url", q.url(pc.project.Slug, q.Page))
		return a.render(c, http.StatusOK, pages.QueueResultsPart(results))
	}
	m := pages.QueueModel{
		Page:    a.frameSection(c, "Review queue · "+pc.project.Name, pc, "queue"),
		Action:  queueURL(pc.project.Slug),
		Filters: queueFilters(pc, q),
		Results: results,
	}
	if slices.Contains(editorPlus, pc.role) {
		m.NewURL = "/p/" + pc.project.Slug + "/publications/new"
	}
	return a.render(c, http.StatusOK, pages.Queue(m))
}

func queueFilters(pc *projectContext, q queueQuery) pages.QueueFilters {
	f := pages.QueueFilters{Text: q.Text, From: q.From, To: q.To, ResetURL: queueURL(pc.project.Slug)}
	for _, s := range statusOrder {
		f.Status = append(f.Status, pages.Option{Value: s, Label: statusLabels[s], Selected: q.Status == s})
	}
	f.Status = append(f.Status, pages.Option{Value: "writing", Label: statusLabels["writing"], Selected: q.Status == "writing"})
	f.Status = append(f.Status, pages.Option{Value: "all", Label: "Any status", Selected: q.Status == "all"})
	for _, col := range pc.project.Collections {
		f.Collections = append(f.Collections, pages.Option{Value: col.ID, Label: col.Name, Selected: q.Collection == col.ID})
	}
	f.Authors = append(f.Authors,
		pages.Option{Value: authorMe, Label: "Me", Selected: q.Author == authorMe},
		pages.Option{Value: authorOthers, Label: "Anyone but me", Selected: q.Author == authorOthers})
	for _, m := range pc.project.Members {
		name := m.UserID
		if m.Profile != nil {
			name = m.Profile.DisplayName
		}
		f.Authors = append(f.Authors, pages.Option{Value: m.UserID, Label: name, Selected: q.Author == m.UserID})
	}
	return f
}

func (a *App) queueResults(pc *projectContext, q queueQuery, rows []client.Publication, count client.QueueCount) pages.QueueResults {
	slug := pc.project.Slug
	r := pages.QueueResults{Heading: "In review"}
	if q.Status == "all" {
		r.Heading = "All publications"
	} else {
		r.Heading = statusLabels[q.Status]
	}
	// A rare phrase's matches are counted up to client.SearchCap (past it, "more than", paged only
	// that far); a common phrase's are estimated ("about").
	of, n := countWords(count)
	last := max(1, (n+pageSize-1)/pageSize)
	if !count.Exact {
		// An estimate comes only when more matched than the end of this page (client.Queue).
		last = max(last, q.Page+1)
	}
	first := (q.Page-1)*pageSize + 1
	switch {
	case n <= 0:
		r.Summary = "No publications match."
		r.Empty = "Nothing here. Try another status or clear the filters."
		if q.Status == "reviewing" && q.Text == "" && q.Collection == "" && q.Author == "" && q.From == "" && q.To == "" {
			r.Empty = "Nothing is waiting for review."
		}
	case len(rows) == 0:
		r.Summary = of + " publications"
		if n == 1 {
			r.Summary = of + " publication"
		}
		r.Empty = "This page is past the end of the list."
	default:
		r.Summary = thousands(first) + "–" + thousands(first+len(rows)-1) + " of " + of
	}
	if q.Page > 1 {
		r.PrevURL = q.url(slug, min(q.Page-1, last))
	}
	if q.Page < last {
		r.NextURL = q.url(slug, q.Page+1)
	}
	if last > 1 {
		r.Pages = "Page " + thousands(q.Page) + " of " + thousands(last)
		if !count.Exact {
			r.Pages = "Page " + thousands(q.Page) + " of about " + thousands(last)
		}
	}
	r.Announce = r.Heading + ": " + r.Summary
	for _, p := range rows {
		r.Rows = append(r.Rows, queueRow(pc, p))
	}
	return r
}

// countWords says how many publications match, as the summary words it ("1,234", "more than
// 1,000", "about 9,900"), and the number to page by.
func countWords(c client.QueueCount) (string, int) {
	switch {
	case !c.Exact:
		n := roughly(c.N)
		return "about " + thousands(n), n
	case c.N > client.SearchCap:
		return "more than " + thousands(client.SearchCap), client.SearchCap
	default:
		return thousands(c.N), c.N
	}
}

// roughly rounds an estimate to two significant figures (9,987 → 10,000; 2,798 → 2,800), so it
// does not read as a count.
func roughly(n int) int {
	unit := 1
	for n/unit >= 100 {
		unit *= 10
	}
	return (n + unit/2) / unit * unit
}

func queueRow(pc *projectContext, p client.Publication) pages.QueueRow {
	row := pages.QueueRow{
		URL:        publicationURL(pc.project.Slug, p.ID),
		Title:      p.Title,
		Collection: "No collection",
		Author:     "unknown",
		Status:     status(p.Status),
		Scheduled:  pc.clock.timePtr(p.ScheduledFor),
		Created:    pc.clock.time(p.CreatedAt),
		Promos:     readiness(p),
		GoLive:     goLiveBadge(p),
	}
	if p.Collection != nil {
		row.Collection = p.Collection.Name
	}
	if p.Author != nil {
		row.Author = p.Author.DisplayName
	}
	since := p.CreatedAt
	if len(p.Events) > 0 && p.Events[0].ToStatus == p.Status {
		since = p.Events[0].CreatedAt
	}
	row.InStatus = row.Status.Label + " for " + span(pc.clock.now.Sub(since))
	return row
}

// goLiveBadge words the database's verdict (readiness() for the row, read with it) for a row
// not yet live nor archived; nil for the others, whose readiness no longer matters.
func goLiveBadge(p client.Publication) *pages.GoLive {
	if p.Status == "published" || p.Status == "archived" || len(p.Checks) == 0 {
		return nil
	}
	var failing []string
	for _, c := range p.Checks {
		if !c.OK {
			failing = append(failing, c.Detail)
		}
	}
	if len(failing) == 0 {
		return &pages.GoLive{Ready: true, Label: "Ready to go live"}
	}
	label := "1 thing before it can go live"
	if n := len(failing); n != 1 {
		label = strconv.Itoa(n) + " things before it can go live"
	}
	return &pages.GoLive{Label: label, Failing: failing}
}

// readiness words the database's verdict on a row's promos: readiness()'s check for each
// default channel (the checks named promo:<channel>), so the column and the go-live badge
// never disagree. A blank promo, one over its channel's limits or one with more media than the
// channel takes is not ready, and the title says why in readiness()'s words. A project with one
// default channel has one promo to judge, so its rows say whether that one is ready rather
// than count to one.
func readiness(p client.Publication) pages.Readiness {
	ready, of := 0, 0
	var failing []string
	for _, c := range p.Checks {
		if !strings.HasPrefix(c.Check, "promo:") {
			continue
		}
		of++
		if c.OK {
			ready++
		} else {
			failing = append(failing, c.Detail)
		}
	}
	switch {
	case of == 0:
		return pages.Readiness{Label: plural(len(p.Promos), "promo", "promos"), OK: true}
	case of == 1 && ready == 1:
		return pages.Readiness{Label: "Promo ready", OK: true}
	case of == 1:
		return pages.Readiness{Label: "Promo not ready", Failing: failing}
	}
	label := strconv.Itoa(ready) + " of " + strconv.Itoa(of) + " promos ready"
	return pages.Readiness{Label: label, OK: len(failing) == 0, Failing: failing}
}

// measure sizes a promo with its embedded channel's limits, for the detail page's promo cards.
func measure(p client.Promo) channels.Measure {
	var l client.ChannelLimits
	if p.ChannelInfo != nil {
		l = p.ChannelInfo.Limits
	}
	link := ""
	if p.Link != nil {
		link = *p.Link
	}
	return channels.Of(p.Body, link, channels.Limits{MaxChars: l.MaxChars, Count: l.Count, URLChars: l.URLChars, MaxHashtags: l.MaxHashtags})
}
