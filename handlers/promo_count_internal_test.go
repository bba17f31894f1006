package handlers

import (
	"testing"

	"masthead/internal/client"
)

// TestPromoCountWords: the editor's live counter and its rules say every count with a noun
// that agrees with it: the unit agrees with the limit it follows ("1 / 1 character"), or with
// the count when the channel sets no limit ("1 character"), and so do hashtags and a link's
// fixed length.
func TestPromoCountWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		limits           client.ChannelLimits
		body             string
		text, warn, rule string
	}{
		{client.ChannelLimits{MaxChars: 280, Count: "chars"}, "a", "1 / 280 characters", "", ""},
		{client.ChannelLimits{MaxChars: 1, Count: "chars"}, "a", "1 / 1 character", "", ""},
		{client.ChannelLimits{MaxChars: 1, Count: "chars"}, "ab", "2 / 1 character", "1 over the limit", ""},
		{client.ChannelLimits{MaxChars: 2, Count: "chars"}, "ab", "2 / 2 characters", "", ""},
		{client.ChannelLimits{Count: "chars"}, "", "0 characters", "", ""},
		{client.ChannelLimits{Count: "chars"}, "a", "1 character", "", ""},
		{client.ChannelLimits{Count: "chars"}, "ab", "2 characters", "", ""},
		{client.ChannelLimits{MaxChars: 1, Count: "bytes"}, "a", "1 / 1 byte", "", ""},
		{client.ChannelLimits{MaxChars: 500, Count: "bytes"}, "é", "2 / 500 bytes", "", ""},
		{client.ChannelLimits{Count: "graphemes"}, "👍🏽", "1 character (as seen)", "", ""},
		{client.ChannelLimits{MaxChars: 300, Count: "graphemes"}, "👍🏽", "1 / 300 characters (as seen)", "", ""},
		{client.ChannelLimits{MaxChars: 280, Count: "chars", MaxHashtags: 1}, "#a", "2 / 280 characters · 1 of 1 hashtag", "", "At most 1 hashtag."},
		{client.ChannelLimits{MaxChars: 280, Count: "chars", MaxHashtags: 1}, "#a #b", "5 / 280 characters · 2 of 1 hashtag", "too many hashtags", "At most 1 hashtag."},
		{client.ChannelLimits{MaxChars: 280, Count: "chars", MaxHashtags: 2}, "#a", "2 / 280 characters · 1 of 2 hashtags", "", "At most 2 hashtags."},
		{client.ChannelLimits{MaxChars: 280, Count: "chars", URLChars: 1}, "a", "1 / 280 characters", "", "A link counts as 1 character."},
		{client.ChannelLimits{MaxChars: 280, Count: "chars", URLChars: 23, MaxHashtags: 2}, "a", "1 / 280 characters · 0 of 2 hashtags", "", "A link counts as 23 characters; at most 2 hashtags."},
	} {
		got := promoCount(client.Channel{Slug: "net", Name: "Net", Limits: c.limits}, c.body, "")
		if got.Text != c.text || got.Warning != c.warn || got.Rules != c.rule {
			t.Errorf("%+v, %q: %q / %q / %q, want %q / %q / %q", c.limits, c.body, got.Text, got.Warning, got.Rules, c.text, c.warn, c.rule)
		}
	}
}
