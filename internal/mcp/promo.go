package mcp

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"masthead/internal/channels"
	"masthead/internal/client"
)

func (s *Server) addPromoTool() {
	addTool(s, &sdk.Tool{
		Name:  "upsert_promo",
		Title: "Write a promo",
		Description: "Drafts or rewrites the promo text of a publication for one channel (x, linkedin, bluesky, threads, " +
			"instagram, facebook, mastodon): creates it if the publication has none for that channel, else replaces its " +
			"body. The text is measured as the network counts (characters, graphemes or bytes; links at their shortened " +
			"length) and refused, with the count, if it is over the channel's limit or hashtag cap, so nothing too long is " +
			"saved. Editors, leads and owners.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: new(bool), IdempotentHint: true, OpenWorldHint: new(bool)},
	}, schema[promoIn](func(p map[string]*jsonschema.Schema) {
		p["publication_id"].Pattern = uuidPattern
		p["channel"].Pattern = `^[a-z0-9][a-z0-9_-]{0,30}$`
		p["body"].MinLength = jsonschema.Ptr(1)
	}), s.upsertPromo)
}

type promoIn struct {
	PublicationID string  `json:"publication_id" jsonschema:"the publication the promo is for"`
	Channel       string  `json:"channel" jsonschema:"channel slug, e.g. x or linkedin (a project's usual ones are its default_channels)"`
	Body          string  `json:"body" jsonschema:"the post text, without the link"`
	Link          *string `json:"link,omitempty" jsonschema:"URL the network appends after the text; omit to keep the current one, empty string to remove it"`
}

// PromoOut is upsert_promo's answer.
type PromoOut struct {
	Message string `json:"message"`
	Promo   Promo  `json:"promo"`
	Created bool   `json:"created" jsonschema:"true when the publication had no promo for this channel before"`
	URL     string `json:"url" jsonschema:"the publication's page, where promos are shown"`
}

// errNoPromoRole words row-level security's refusal of a promo write (the upsert's insert
// policy) in terms of roles.
var errNoPromoRole = refuse("Not allowed: your role cannot write promos in this project; editors, leads and owners can.")

func (s *Server) upsertPromo(ctx context.Context, id identity, in promoIn) (PromoOut, error) {
	if strings.TrimSpace(in.Body) == "" {
		return PromoOut{}, refuse("Invalid request: body is required; write the post text.")
	}
	// Reading the publication first turns "cannot see it" into a clear not-found, instead of
	// the row-level-security refusal an insert would meet.
	pub, err := s.readSummary(ctx, id, in.PublicationID)
	if err != nil {
		return PromoOut{}, err
	}
	var ch client.Channel
	q := client.From("channels").Select("slug,name,limits").Eq("slug", in.Channel).Single()
	if _, err := s.api.Get(ctx, id.token, q, &ch); err != nil {
		if client.StatusOf(err) == http.StatusNotFound {
			return PromoOut{}, s.unknownChannel(ctx, id, in.Channel)
		}
		return PromoOut{}, err
	}
	existing, err := s.findPromo(ctx, id, in.PublicationID, in.Channel)
	if err != nil {
		return PromoOut{}, err
	}
	link := in.Link
	if link == nil && existing != nil {
		link = existing.Link
	}
	if link != nil && strings.TrimSpace(*link) == "" {
		link = nil
	}
	m := channels.Of(in.Body, deref(link), limits(ch.Limits))
	if m.Over() {
		return PromoOut{}, overLimit(ch, m)
	}

	// One upsert, as the dashboard saves a promo: a promo created by someone else since the
	// read above is replaced, not refused. Row-level security refuses the upsert of a role that
	// may not write promos (its insert policy checks the row whether or not one exists): a 403.
	row, err := s.api.SavePromo(ctx, id.token, in.PublicationID, in.Channel, in.Body, deref(link))
	if client.StatusOf(err) == http.StatusForbidden {
		return PromoOut{}, errNoPromoRole
	}
	if err != nil {
		return PromoOut{}, err
	}
	created := existing == nil
	verb := "Updated"
	if created {
		verb = "Created"
	}
	p := promoOut(row.ID, row.Channel, row.Body, deref(row.Link), &ch)
	return PromoOut{
		Message: fmt.Sprintf("%s the %s promo of %q: %s.", verb, ch.Name, pub.Title, p.Length),
		Promo:   p, Created: created, URL: pub.URL,
	}, nil
}

// findPromo returns the publication's promo for channel, or nil when it has none.
func (s *Server) findPromo(ctx context.Context, id identity, publicationID, channel string) (*client.Promo, error) {
	var rows []client.Promo
	q := client.From("promos").Select("id,channel,body,link").
		Eq("publication_id", publicationID).Eq("channel", channel).Range(0, 1)
	if _, err := s.api.Get(ctx, id.token, q, &rows); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return &rows[0], nil
}

// overLimit says how far over the channel's limits the text is, so the model can cut exactly
// that much.
func overLimit(ch client.Channel, m channels.Measure) error {
	var why []string
	if m.OverLength {
		why = append(why, fmt.Sprintf("it is %d %s and %s allows %d; cut at least %d", m.Used, m.Unit, ch.Name, m.Max, m.Used-m.Max))
	}
	if m.OverTags {
		why = append(why, fmt.Sprintf("it has %d hashtags and %s allows %d", m.Hashtags, ch.Name, m.MaxTags))
	}
	return refuse("Too long for %s, nothing was saved: %s.", ch.Name, strings.Join(why, "; "))
}

// unknownChannel names the channels that do exist, so the model can correct itself.
func (s *Server) unknownChannel(ctx context.Context, id identity, slug string) error {
	var all []client.Channel
	if _, err := s.api.Get(ctx, id.token, client.From("channels").Select("slug").Order("slug.asc"), &all); err != nil {
		return refuse("There is no channel %q.", slug)
	}
	names := make([]string, 0, len(all))
	for _, c := range all {
		names = append(names, c.Slug)
	}
	return refuse("There is no channel %q; use one of: %s.", slug, strings.Join(names, ", "))
}
