// Package channels measures promo text the way each social network does, so the dashboard can
// say "212 / 280 characters" and warn before a post would be refused. A channel's rule comes
// from channels.limits: count by Unicode characters, by grapheme clusters (what a person sees
// as one character, as Bluesky counts) or by UTF-8 bytes (as Threads counts), with URLs
// counted as a fixed length where the network shortens links (X, Mastodon: url_chars).
//
// It is pure computation on strings and imports no masthead package.
package channels

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Units a limit may count in (channels.limits.count).
const (
	UnitChars     = "chars"
	UnitGraphemes = "graphemes"
	UnitBytes     = "bytes"
)

// Limits is the part of channels.limits that measuring needs.
type Limits struct {
	MaxChars    int
	Count       string
	URLChars    int
	MaxHashtags int
}

// Measure is a promo's size against its channel's limits.
type Measure struct {
	Used, Max            int
	Unit                 string // chars, graphemes or bytes
	Hashtags, MaxTags    int
	OverLength, OverTags bool
}

// Over reports whether the network would refuse or cut the post.
func (m Measure) Over() bool { return m.OverLength || m.OverTags }

var (
	urlRE     = regexp.MustCompile(`https?://[^\s<>"]+`)
	hashtagRE = regexp.MustCompile(`(^|[^\p{L}\p{N}_&/])#[\p{L}\p{N}_]*\p{L}[\p{L}\p{N}_]*`)
)

// Of measures a promo: its body and, when set and not already in the body, the link the
// network will append after a space.
func Of(body, link string, l Limits) Measure {
	text := body
	if link = strings.TrimSpace(link); link != "" && !strings.Contains(body, link) {
		text = strings.TrimRight(body, " \n") + " " + link
	}
	m := Measure{Max: l.MaxChars, Unit: unit(l.Count), MaxTags: l.MaxHashtags}
	m.Used = count(text, m.Unit, l.URLChars)
	m.Hashtags = len(hashtagRE.FindAllStringIndex(body, -1))
	m.OverLength = m.Max > 0 && m.Used > m.Max
	m.OverTags = m.MaxTags > 0 && m.Hashtags > m.MaxTags
	return m
}

func unit(s string) string {
	switch s {
	case UnitGraphemes, UnitBytes:
		return s
	default:
		return UnitChars
	}
}

// count measures text in unit; every URL counts urlChars when the network shortens links.
func count(text, unit string, urlChars int) int {
	n := 0
	if urlChars > 0 {
		urls := urlRE.FindAllStringIndex(text, -1)
		n += urlChars * len(urls)
		text = urlRE.ReplaceAllString(text, "")
	}
	switch unit {
	case UnitGraphemes:
		return n + uniseg.GraphemeClusterCount(text)
	case UnitBytes:
		return n + len(text)
	default:
		return n + utf8.RuneCountInString(text)
	}
}
