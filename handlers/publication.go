package handlers

import (
	"cmp"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/pages"
)

// publication is GET /p/:slug/publications/:id: the whole publication in two service calls
// (the projects, then the publication with every embed).
func (a *App) publication(c echo.Context) error {
	pc, p, err := a.loadPublication(c)
	if err != nil {
		return a.fail(c, err)
	}
	return a.render(c, http.StatusOK, pages.Detail(a.detail(c, pc, p, formEcho{})))
}

// loadPublication resolves the project and fetches the publication with everything it shows.
func (a *App) loadPublication(c echo.Context) (*projectContext, *client.Publication, error) {
	id := c.Param("id")
	if !uuidRE.MatchString(id) {
		return nil, nil, errNotFound
	}
	pc, err := a.loadProjects(c, c.Param("slug"))
	if err != nil {
		return nil, nil, err
	}
	p, err := a.fetchPublication(c, pc, id)
	return pc, p, err
}

func (a *App) fetchPublication(c echo.Context, pc *projectContext, id string) (*client.Publication, error) {
	var p *client.Publication
	err := a.call(c, func(token string) error {
		var err error
		p, err = a.api.Publication(ctx(c), token, pc.project.ID, id)
		return err
	})
	return p, err
}

// formEcho is what the person just sent, shown again after a refusal or a preview, with the
// outcome to report.
type formEcho struct {
	rpc      string
	note     string
	noteErr  string
	preview  bool
	when     string
	whenErr  string
	notice   *pages.Notice
	announce string
}

func (a *App) detail(c echo.Context, pc *projectContext, p *client.Publication, f formEcho) pages.DetailModel {
	k := pc.clock
	m := pages.DetailModel{
		Page:       a.frameSection(c, p.Title, pc, "queue"),
		Title:      p.Title,
		Collection: "No collection",
		Author:     "unknown",
		Created:    k.time(p.CreatedAt),
		Updated:    k.time(p.UpdatedAt),
		Summary:    p.Summary,
		Body:       p.Body,
		Workflow:   a.workflow(c, pc, p, f),
		Round:      roundInfo(pc, p),
		Changes:    changesSincePrevious(pc, p),
	}
	// The checklist is worth a request of its own: the database is the one judge of readiness.
	// Without it the page still serves its purpose, so a failure is logged, not shown.
	checks, missing, err := a.readiness(c, p)
	if err != nil {
		a.log.WarnContext(ctx(c), "handlers: readiness unavailable", "route", c.Path(), "err", err)
	}
	m.Readiness = checks
	if p.Status == "reviewing" || p.Status == "approved" || p.Status == "scheduled" {
		m.Workflow.NotReady = missing
	}
	if p.Collection != nil {
		m.Collection = p.Collection.Name
	}
	if p.Author != nil {
		m.Author = p.Author.DisplayName
	}
	if editable(pc.role, p.Status) {
		m.EditURL = publicationURL(pc.project.Slug, p.ID) + "/edit"
		if p.Status == "draft" && len(p.Events) == 0 {
			m.DeleteURL = publicationURL(pc.project.Slug, p.ID) + "/delete"
		}
	}
	canEditMedia := slices.Contains(editorPlus, pc.role)
	csrf := str(stateOf(c).sess, keyCSRF)
	for i, pm := range p.Media {
		it := mediaItem(pc.project.Slug, i+1, pm)
		if canEditMedia {
			it.AltURL, it.PublicationID, it.CSRF = it.Src+"/alt", p.ID, csrf
		}
		m.Media = append(m.Media, it)
	}
	have := map[string]bool{}
	for _, pr := range inChannelOrder(p.Promos, pc.project.DefaultChannels) {
		have[pr.Channel] = true
		m.Promos = append(m.Promos, promoItem(pr))
	}
	var names map[string]string // read once, and only when a default channel has no promo
	for _, ch := range pc.project.DefaultChannels {
		if have[ch] {
			continue
		}
		if names == nil {
			names = a.channelNames(c)
		}
		m.MissingPromos = append(m.MissingPromos, cmp.Or(names[ch], ch))
	}
	return m
}

// inChannelOrder is promos in the order of the project's default channels, as the checklist
// and the editor list them, and then the other channels' by slug.
func inChannelOrder(promos []client.Promo, defaults []string) []client.Promo {
	rank := func(ch string) int {
		if i := slices.Index(defaults, ch); i >= 0 {
			return i
		}
		return len(defaults)
	}
	out := slices.Clone(promos)
	slices.SortFunc(out, func(a, b client.Promo) int {
		return cmp.Or(rank(a.Channel)-rank(b.Channel), strings.Compare(a.Channel, b.Channel))
	})
	return out
}

// channelNames maps each channel's slug to the network's name ("X" for x), as a written
// promo's card and the checklist show it; empty when the list of channels cannot be read, which
// the page can do without (it shows slugs then).
func (a *App) channelNames(c echo.Context) map[string]string {
	all, err := a.channels(c)
	if err != nil {
		a.log.WarnContext(ctx(c), "handlers: channels unavailable", "route", c.Path(), "err", err)
	}
	names := make(map[string]string, len(all))
	for _, ch := range all {
		names[ch.Slug] = ch.Name
	}
	return names
}

// mediaItem describes the n-th image (counted from 1 in position order).
func mediaItem(slug string, n int, pm client.PublicationMedia) pages.MediaItem {
	md := pm.Media
	caption := fmt.Sprintf("Image %d · %s", n, md.MimeType)
	if md.Width != nil && md.Height != nil {
		caption += fmt.Sprintf(" · %d×%d", *md.Width, *md.Height)
	}
	if md.Bytes > 0 {
		caption += " · " + sizeWords(md.Bytes)
	}
	return pages.MediaItem{ID: md.ID, Src: mediaURL(slug, md.ID), Alt: md.AltText, MissingAlt: md.AltText == "", Caption: caption}
}

// sizeWords is n bytes as a person reads a file's size: "1 byte", "512 bytes", "1.5 KB",
// "50 MB". Under 10 of a unit it keeps one decimal, dropped when it is zero ("50.0 MB" read as
// a measurement of something that is exactly the limit); from 10 on, whole units.
func sizeWords(n int64) string {
	v, unit := float64(n), ""
	switch {
	case n >= 1<<20:
		v, unit = v/(1<<20), " MB"
	case n >= 1<<10:
		v, unit = v/(1<<10), " KB"
	default:
		return plural(int(n), "byte", "bytes")
	}
	if v < 10 {
		return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0") + unit
	}
	return thousands(int(math.Round(v))) + unit
}

// unitWords name what a channel counts, for one and for any other number.
var unitWords = map[string][2]string{
	"chars":     {"character", "characters"},
	"graphemes": {"character (as seen)", "characters (as seen)"},
	"bytes":     {"byte", "bytes"},
}

// units is n of a channel's unit: "1 byte", "280 characters".
func units(n int, unit string) string {
	return plural(n, unitWords[unit][0], unitWords[unit][1])
}

func promoItem(pr client.Promo) pages.PromoItem {
	m := measure(pr)
	name := pr.Channel
	if pr.ChannelInfo != nil && pr.ChannelInfo.Name != "" {
		name = pr.ChannelInfo.Name
	}
	it := pages.PromoItem{Channel: name, Body: pr.Body, Over: m.Over()}
	if pr.Link != nil {
		it.Link = *pr.Link
	}
	// "212 / 280 characters": the unit agrees with the limit it follows.
	if m.Max > 0 {
		it.Count = thousands(m.Used) + " / " + units(m.Max, m.Unit)
	} else {
		it.Count = units(m.Used, m.Unit)
	}
	if m.MaxTags > 0 {
		it.Count += fmt.Sprintf(" · %d of %s", m.Hashtags, plural(m.MaxTags, "hashtag", "hashtags"))
	}
	switch {
	case m.OverLength && m.OverTags:
		it.Warning = fmt.Sprintf("%d over the limit, and too many hashtags", m.Used-m.Max)
	case m.OverLength:
		it.Warning = fmt.Sprintf("%s over the limit", thousands(m.Used-m.Max))
	case m.OverTags:
		it.Warning = "too many hashtags"
	}
	return it
}

// composer adds step s (a verdict: comment, request changes, approve) to the one review form,
// keeping what the person typed when the page comes back after a refusal or a preview.
func composer(c *pages.Composer, s step, base, csrf string, version int, f formEcho) *pages.Composer {
	if c == nil {
		c = &pages.Composer{CSRF: csrf, ExpectedVersion: strconv.Itoa(version),
			Note: pages.NoteField{Label: "Your review", PreviewURL: base + "/preview/" + reviewKey}}
	}
	if f.rpc == s.rpc || f.rpc == reviewKey {
		c.Note.Value, c.Note.Error = f.note, f.noteErr
		if f.preview {
			c.Note.Preview = f.note
		}
	}
	label := s.label
	if s.rpc == client.RPCAddReview {
		label = "Comment"
	}
	c.Verdicts = append(c.Verdicts, pages.Verdict{Key: s.rpc, Label: label, URL: base + "/actions/" + s.rpc, Style: s.style})
	// Comment first, then Request changes, then Approve, as review tools order them.
	rank := map[string]int{client.RPCAddReview: 0, client.RPCRequestChanges: 1, client.RPCApprove: 2}
	slices.SortStableFunc(c.Verdicts, func(a, b pages.Verdict) int { return rank[a.Key] - rank[b.Key] })
	return c
}

// workflow builds the swappable panel: status, the actions this person may take now, reviews
// and history.
func (a *App) workflow(c echo.Context, pc *projectContext, p *client.Publication, f formEcho) pages.Workflow {
	k := pc.clock
	w := pages.Workflow{
		Status:    status(p.Status),
		Version:   "Version " + strconv.Itoa(p.Version),
		Scheduled: k.timePtr(p.ScheduledFor),
		Published: k.timePtr(p.PublishedAt),
		Timezone:  k.zoneName(),
		Notice:    f.notice,
		Announce:  f.announce,
		Overdue:   overdue(*p, a.now()),
	}
	base := publicationURL(pc.project.Slug, p.ID)
	csrf := str(stateOf(c).sess, keyCSRF)
	for _, s := range offered(pc.role, p.Status, p.AuthorID == pc.userID) {
		if s.verdict {
			w.Composer = composer(w.Composer, s, base, csrf, p.Version, f)
			continue
		}
		act := pages.Action{
			Key: s.rpc, Label: s.label, URL: base + "/actions/" + s.rpc, CSRF: csrf,
			ExpectedVersion: strconv.Itoa(p.Version), Style: s.style, Confirm: confirmText(s.rpc, p.Title),
		}
		if s.rpc == client.RPCUnschedule && p.ScheduledFor != nil {
			act.Hidden = map[string]string{"was": p.ScheduledFor.In(k.loc).Format(dateTimeInput)}
		}
		if s.note != "" {
			n := &pages.NoteField{Label: "Note (optional)", Required: s.note == "required", PreviewURL: base + "/preview/" + s.rpc}
			if n.Required {
				n.Label = "Note (required)"
			}
			if s.rpc == client.RPCRequestChanges {
				n.Label = "What needs to change (required)"
			}
			if f.rpc == s.rpc {
				n.Value, n.Error = f.note, f.noteErr
				if f.preview {
					n.Preview = f.note
				}
			}
			act.Note = n
		}
		if s.schedule {
			sf := &pages.ScheduleField{Timezone: k.zoneName(), Min: k.now.In(k.loc).Format(dateTimeInput)}
			if p.ScheduledFor != nil {
				sf.Value = p.ScheduledFor.In(k.loc).Format(dateTimeInput)
			} else {
				tomorrow := k.now.In(k.loc).AddDate(0, 0, 1)
				sf.Value = time.Date(tomorrow.Year(), tomorrow.Month(), tomorrow.Day(), 9, 0, 0, 0, k.loc).Format(dateTimeInput)
			}
			if f.rpc == s.rpc && f.when != "" {
				sf.Value, sf.Error = f.when, f.whenErr
			}
			act.Schedule = sf
		}
		w.Actions = append(w.Actions, act)
	}
	for _, r := range p.Reviews {
		who := "someone"
		if r.Reviewer != nil {
			who = r.Reviewer.DisplayName
		}
		w.Reviews = append(w.Reviews, pages.ReviewItem{Verdict: verdict(r.Verdict), Who: who, Notes: r.Notes, When: k.time(r.CreatedAt)})
	}
	for _, e := range p.Events {
		actor := "Someone"
		if e.Actor != nil {
			actor = e.Actor.DisplayName
		} else if e.Via == "scheduler" {
			actor = "The scheduler"
		}
		intent, ok := intentWords[e.Intent]
		if !ok {
			intent = "changed it"
		}
		if e.Intent == "schedule" && e.FromStatus == "scheduled" {
			intent = "rescheduled it"
		}
		via, ok := viaWords[e.Via]
		if !ok {
			via = e.Via
		}
		w.History = append(w.History, pages.EventItem{
			From: status(e.FromStatus), To: status(e.ToStatus), Actor: actor, Intent: intent,
			Note: e.Note, Via: via, When: k.time(e.CreatedAt),
		})
	}
	return w
}
