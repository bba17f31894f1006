package mcp

import (
	"testing"

	"masthead/internal/channels"
)

// TestCountWords: what the tools say with a count agrees with it: a promo's length ("1 / 1
// char", "1 byte"), its hashtags ("/ 1 hashtag") and the rounds a comparison may name.
func TestCountWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		m    channels.Measure
		want string
	}{
		{channels.Measure{Used: 50, Max: 280, Unit: "chars", Hashtags: 0, MaxTags: 2}, "50 / 280 chars, 0 / 2 hashtags"},
		{channels.Measure{Used: 1, Max: 280, Unit: "chars"}, "1 / 280 chars"},
		{channels.Measure{Used: 2, Max: 1, Unit: "chars"}, "2 / 1 char"},
		{channels.Measure{Used: 1, Max: 1, Unit: "bytes"}, "1 / 1 byte"},
		{channels.Measure{Used: 0, Unit: "graphemes"}, "0 graphemes"},
		{channels.Measure{Used: 1, Unit: "graphemes"}, "1 grapheme"},
		{channels.Measure{Used: 2, Unit: "bytes"}, "2 bytes"},
		{channels.Measure{Used: 9, Max: 280, Unit: "chars", Hashtags: 1, MaxTags: 1}, "9 / 280 chars, 1 / 1 hashtag"},
		{channels.Measure{Used: 9, Max: 280, Unit: "chars", Hashtags: 2, MaxTags: 1}, "9 / 280 chars, 2 / 1 hashtag"},
	} {
		if got := describe(c.m); got != c.want {
			t.Errorf("describe(%+v) = %q, want %q", c.m, got, c.want)
		}
	}
	for n, want := range []string{
		"This publication has not been submitted for review yet, so it has no rounds to compare.",
		"This publication has 1 review round; there is no other round to compare it with.",
		"This publication has 2 review rounds; compare rounds between 1 and 2.",
		"This publication has 3 review rounds; compare rounds between 1 and 3.",
	} {
		if got := noSuchRound(n).Error(); got != want {
			t.Errorf("noSuchRound(%d) = %q, want %q", n, got, want)
		}
	}
}
