package channels

import (
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	t.Parallel()
	x := Limits{MaxChars: 280, Count: "chars", URLChars: 23, MaxHashtags: 2}
	bsky := Limits{MaxChars: 300, Count: "graphemes"}
	threads := Limits{MaxChars: 500, Count: "bytes"}
	family := "👨‍👩‍👧" // one grapheme, five code points, eighteen bytes
	cases := []struct {
		name     string
		body     string
		link     string
		l        Limits
		used     int
		over     bool
		hashtags int
	}{
		{"plain chars", "hello", "", x, 5, false, 0},
		{"url counts 23 on x", "read https://example.com/a/very/long/path/that/goes/on/and/on", "", x, 5 + 23, false, 0},
		{"link appended", "read", "https://example.com/x", x, 5 + 23, false, 0},
		{"link already in the body", "read https://example.com/x", "https://example.com/x", x, 5 + 23, false, 0},
		{"exactly at limit", strings.Repeat("a", 280), "", x, 280, false, 0},
		{"one over", strings.Repeat("a", 281), "", x, 281, true, 0},
		{"too many hashtags", "#one #two #three", "", x, 16, true, 3},
		{"anchor is no hashtag", "see https://e.com/#frag and #1", "", x, 4 + 23 + 7, false, 0},
		{"emoji family graphemes", family, "", bsky, 1, false, 0},
		{"emoji family chars", family, "", Limits{MaxChars: 10, Count: "chars"}, 5, false, 0},
		{"emoji family bytes", family, "", threads, 18, false, 0},
		{"bytes over", strings.Repeat("é", 251), "", threads, 502, true, 0},
		{"bluesky counts url in full", "https://e.com", "", bsky, 13, false, 0},
		{"unknown unit is chars", "héllo", "", Limits{MaxChars: 3, Count: "words"}, 5, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := Of(c.body, c.link, c.l)
			if m.Used != c.used || m.Over() != c.over || m.Hashtags != c.hashtags {
				t.Errorf("Of(%q, %q) = used %d over %v tags %d; want %d %v %d",
					c.body, c.link, m.Used, m.Over(), m.Hashtags, c.used, c.over, c.hashtags)
			}
		})
	}
}
