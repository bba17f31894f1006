package handlers

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"masthead/internal/client"
	"masthead/views/layout"
	"masthead/views/pages"
)

// promoCards are the editor's promo cards: one per default channel of the project, one per
// other channel the publication has a promo for, and the channel asked for with ?add=. The
// counts come from internal/channels, the one implementation the service checks with too.
func (a *App) promoCards(c echo.Context, pc *projectContext, p *client.Publication, all []client.Channel, add string) ([]pages.PromoCard, []pages.Option) {
	byslug := map[string]client.Channel{}
	for _, ch := range all {
		byslug[ch.Slug] = ch
	}
	have := map[string]client.Promo{}
	for _, pr := range p.Promos {
		have[pr.Channel] = pr
	}
	order := slices.Clone(pc.project.DefaultChannels)
	for _, pr := range p.Promos {
		if !slices.Contains(order, pr.Channel) {
			order = append(order, pr.Channel)
		}
	}
	if _, ok := byslug[add]; ok && !slices.Contains(order, add) {
		order = append(order, add)
	}
	base := publicationURL(pc.project.Slug, p.ID) + "/promos/"
	csrf := str(stateOf(c).sess, keyCSRF)
	var cards []pages.PromoCard
	for _, slug := range order {
		ch, ok := byslug[slug]
		if !ok {
			continue
		}
		pr, exists := have[slug]
		card := pages.PromoCard{Channel: slug, Name: ch.Name, Body: pr.Body, Exists: exists,
			SaveURL: base + slug, RemoveURL: base + slug + "/delete", CountURL: base + slug + "/count", CSRF: csrf}
		switch {
		case pr.Link != nil:
			card.Link = *pr.Link
		case !exists:
			card.Link = canonicalURL(pc.project, p) // a new promo links to the publication
		}
		card.Count = promoCount(ch, card.Body, card.Link)
		cards = append(cards, card)
	}
	var more []pages.Option
	for _, ch := range all {
		if !slices.Contains(order, ch.Slug) {
			more = append(more, pages.Option{Value: ch.Slug, Label: ch.Name})
		}
	}
	return cards, more
}

// canonicalURL is where readers find p: its project's site URL and its slug, or "" when the
// project has no site URL.
func canonicalURL(pr *client.Project, p *client.Publication) string {
	if pr.SiteURL == "" {
		return ""
	}
	return strings.TrimRight(pr.SiteURL, "/") + "/" + p.Slug
}

// promoCount measures body and link as channel ch counts them.
func promoCount(ch client.Channel, body, link string) pages.PromoCount {
	pr := client.Promo{Channel: ch.Slug, Body: body, ChannelInfo: &ch}
	if link != "" {
		pr.Link = &link
	}
	it := promoItem(pr)
	var rules []string
	if ch.Limits.URLChars > 0 {
		rules = append(rules, "a link counts as "+plural(ch.Limits.URLChars, "character", "characters"))
	}
	if ch.Limits.MaxHashtags > 0 {
		rules = append(rules, "at most "+plural(ch.Limits.MaxHashtags, "hashtag", "hashtags"))
	}
	rule := ""
	if len(rules) > 0 {
		rule = sentence(strings.Join(rules, "; "))
	}
	return pages.PromoCount{Channel: ch.Slug, Text: it.Count, Warning: it.Warning, Over: it.Over, Rules: rule}
}

// channelOf finds the channel named in the URL among all, or errNotFound.
func (a *App) channelOf(c echo.Context) (client.Channel, []client.Channel, error) {
	all, err := a.channels(c)
	if err != nil {
		return client.Channel{}, nil, err
	}
	for _, ch := range all {
		if ch.Slug == c.Param("channel") {
			return ch, all, nil
		}
	}
	return client.Channel{}, nil, errNotFound
}

// countPromo is POST …/promos/:channel/count: the counter for what is typed, for htmx.
func (a *App) countPromo(c echo.Context) error {
	ch, _, err := a.channelOf(c)
	if err != nil {
		return a.fail(c, err)
	}
	return a.render(c, http.StatusOK, pages.PromoCountPart(promoCount(ch, c.FormValue("body"), strings.TrimSpace(c.FormValue("link")))))
}

// savePromo is POST …/promos/:channel: the promo written as the person. Back on the editor,
// at the card; a refusal shows the card again with their text and the reason.
func (a *App) savePromo(c echo.Context) error {
	pc, p, err := a.loadPublication(c)
	if err != nil {
		return a.fail(c, err)
	}
	ch, all, err := a.channelOf(c)
	if err != nil {
		return a.fail(c, err)
	}
	body, link := c.FormValue("body"), strings.TrimSpace(c.FormValue("link"))
	edit := publicationURL(pc.project.Slug, p.ID) + "/edit"
	if strings.TrimSpace(body) == "" {
		return a.promoRefused(c, pc, p, all, ch, body, link, "Write the text first, or remove the promo.")
	}
	err = a.call(c, func(token string) error {
		_, err := a.api.SavePromo(ctx(c), token, p.ID, ch.Slug, body, link)
		return err
	})
	if e, ok := client.ErrorOf(err); ok && e.Status < 500 && e.Status != http.StatusNotFound && e.Status != http.StatusTooManyRequests {
		return a.promoRefused(c, pc, p, all, ch, body, link, sentence(e.Message)+" "+sentence(e.Hint))
	}
	if err != nil {
		return a.fail(c, err)
	}
	text := ch.Name + " promo saved."
	if m := promoCount(ch, body, link); m.Over {
		text += " It is " + m.Warning + ": it must be shortened before this can go live."
	}
	a.flash(c, layout.Flash{Kind: "success", Text: text})
	return a.redirect(c, edit+"#promo-"+ch.Slug)
}

// promoRefused shows the editor with the refused card holding what the person typed.
func (a *App) promoRefused(c echo.Context, pc *projectContext, p *client.Publication, all []client.Channel, ch client.Channel, body, link, why string) error {
	m := a.savedEditor(c, pc, p, all, ch.Slug)
	for i := range m.Promos {
		if m.Promos[i].Channel == ch.Slug {
			m.Promos[i].Body, m.Promos[i].Link = body, link
			m.Promos[i].Count = promoCount(ch, body, link)
			m.Promos[i].Notice = &pages.Notice{Kind: "error", Title: "Not saved.", Text: strings.TrimSpace(why)}
		}
	}
	return a.render(c, http.StatusUnprocessableEntity, pages.Editor(m))
}

// removePromo is POST …/promos/:channel/delete.
func (a *App) removePromo(c echo.Context) error {
	pc, p, err := a.loadPublication(c)
	if err != nil {
		return a.fail(c, err)
	}
	ch, _, err := a.channelOf(c)
	if err != nil {
		return a.fail(c, err)
	}
	var removed bool
	err = a.call(c, func(token string) (err error) {
		removed, err = a.api.DeletePromo(ctx(c), token, p.ID, ch.Slug)
		return err
	})
	if e, ok := client.ErrorOf(err); ok && (e.Status == http.StatusConflict || e.Status == http.StatusForbidden) {
		a.flash(c, layout.Flash{Kind: "error", Text: "Not removed. " + sentence(e.Message)})
		return a.redirect(c, publicationURL(pc.project.Slug, p.ID)+"/edit#promo-"+ch.Slug)
	}
	if err != nil {
		return a.fail(c, err)
	}
	if !removed {
		// Removed already (another tab, Back and resend): say so rather than claim a removal.
		a.flash(c, layout.Flash{Kind: "info", Text: "There was no " + ch.Name + " promo to remove."})
	} else {
		a.flash(c, layout.Flash{Kind: "success", Text: "Promo removed."})
	}
	return a.redirect(c, publicationURL(pc.project.Slug, p.ID)+"/edit#promos-title")
}
