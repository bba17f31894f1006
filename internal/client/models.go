package client

import "time"

// The types below mirror the public schema's rows as /rest/v1 returns them (see
// internal/pg/migrations). Embedded resources are pointers or slices named as the queries in
// this package alias them.

// Profile is the public face of a user.
type Profile struct {
	ID          string `json:"id,omitempty"`
	DisplayName string `json:"display_name"`
}

// Project is a tenant, with the caller's view of its members and collections when embedded.
type Project struct {
	ID              string   `json:"id"`
	Slug            string   `json:"slug"`
	Name            string   `json:"name"`
	Timezone        string   `json:"timezone"`
	DefaultChannels []string `json:"default_channels"`
	// SiteURL is where the project's publications are read; a publication's canonical URL is
	// SiteURL/slug. Empty when the project has none.
	SiteURL     string       `json:"site_url"`
	Members     []Member     `json:"project_members,omitempty"`
	Collections []Collection `json:"collections,omitempty"`
}

// RoleOf is userID's role in p according to the embedded members, or "".
func (p Project) RoleOf(userID string) string {
	for _, m := range p.Members {
		if m.UserID == userID {
			return m.Role
		}
	}
	return ""
}

// Member is one row of project_members.
type Member struct {
	UserID  string   `json:"user_id"`
	Role    string   `json:"role"`
	Profile *Profile `json:"profile,omitempty"`
}

// Collection groups publications (a section or a campaign).
type Collection struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}

// ChannelLimits is channels.limits: how a network measures and caps a post.
type ChannelLimits struct {
	MaxChars    int    `json:"max_chars"`
	Count       string `json:"count"`     // chars, graphemes or bytes
	URLChars    int    `json:"url_chars"` // a URL counts as this many, when the network shortens links
	MaxMedia    int    `json:"max_media"`
	MaxHashtags int    `json:"max_hashtags"`
}

// Channel is a network promos are written for.
type Channel struct {
	Slug   string        `json:"slug"`
	Name   string        `json:"name"`
	Limits ChannelLimits `json:"limits"`
}

// Publication is one article with, when embedded, everything the detail page shows.
type Publication struct {
	ID           string     `json:"id"`
	ProjectID    string     `json:"project_id"`
	CollectionID *string    `json:"collection_id"`
	Title        string     `json:"title"`
	Slug         string     `json:"slug"`
	Summary      string     `json:"summary"`
	Body         string     `json:"body"`
	Status       string     `json:"status"`
	ScheduledFor *time.Time `json:"scheduled_for"`
	PublishedAt  *time.Time `json:"published_at"`
	AuthorID     string     `json:"author_id"`
	Version      int        `json:"version"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`

	Author     *Profile           `json:"author,omitempty"`
	Collection *Collection        `json:"collection,omitempty"`
	Promos     []Promo            `json:"promos,omitempty"`
	Media      []PublicationMedia `json:"publication_media,omitempty"`
	Reviews    []Review           `json:"reviews,omitempty"`
	Events     []StatusEvent      `json:"status_events,omitempty"`
	// Revisions are the latest review rounds, newest first (the detail page embeds two).
	Revisions []Revision `json:"publication_revisions,omitempty"`
	// Checks are readiness() as a column (readiness_checks, migration 031), in its order: the
	// queue selects it to judge its rows; nil when not selected.
	Checks []Check `json:"readiness_checks,omitempty"`
}

// Promo is the text of a publication for one channel.
type Promo struct {
	ID        string    `json:"id"`
	Channel   string    `json:"channel"`
	Body      string    `json:"body"`
	Link      *string   `json:"link"`
	UpdatedAt time.Time `json:"updated_at"`
	// ChannelInfo is the embedded channel row (select channels(…)).
	ChannelInfo *Channel `json:"channels,omitempty"`
}

// PublicationMedia places one media item in a publication.
type PublicationMedia struct {
	Position int   `json:"position"`
	Media    Media `json:"media"`
}

// Media is an uploaded image or video.
type Media struct {
	ID          string `json:"id"`
	StoragePath string `json:"storage_path"`
	Kind        string `json:"kind"`
	MimeType    string `json:"mime_type"`
	AltText     string `json:"alt_text"`
	Width       *int   `json:"width"`
	Height      *int   `json:"height"`
	Bytes       int64  `json:"bytes"`
}

// Review is a verdict or a comment.
type Review struct {
	ID         string    `json:"id"`
	ReviewerID string    `json:"reviewer_id"`
	Verdict    string    `json:"verdict"`
	Notes      string    `json:"notes"`
	Round      int       `json:"round"` // the review round it was written in (0: before the first submit)
	CreatedAt  time.Time `json:"created_at"`
	Reviewer   *Profile  `json:"reviewer,omitempty"`
}

// StatusEvent is one entry of the audit of status changes.
type StatusEvent struct {
	ID         int64     `json:"id"`
	FromStatus string    `json:"from_status"`
	ToStatus   string    `json:"to_status"`
	ActorID    *string   `json:"actor_id"`
	Intent     string    `json:"intent"`
	Note       string    `json:"note"`
	Via        string    `json:"via"`
	CreatedAt  time.Time `json:"created_at"`
	Actor      *Profile  `json:"actor,omitempty"`
}
