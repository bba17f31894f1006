package channels

import "strings"

// Example is a promo with its measure as every network we count for would see it.
type Example struct {
	Name       string
	Body, Link string
	Limits     Limits
	Used       int
	Over       bool
	Hashtags   int
}

// Corpus is the set of examples both this package and the database's readiness check
// (app.promo_measure, internal/pg) are held to: this package must match every one exactly; the
// database must match them where it can count exactly and may only count more where it cannot
// (grapheme clusters, non-ASCII hashtags), so it errs towards refusing, never towards letting a
// post through that the network would cut.
var Corpus = func() []Example {
	x := Limits{MaxChars: 280, Count: UnitChars, URLChars: 23, MaxHashtags: 2}
	bsky := Limits{MaxChars: 300, Count: UnitGraphemes}
	threads := Limits{MaxChars: 500, Count: UnitBytes}
	family := "👨‍👩‍👧" // one grapheme, five code points, eighteen bytes
	return []Example{
		{"plain chars", "hello", "", x, 5, false, 0},
		{"url counts 23 on x", "read https://example.com/a/very/long/path/that/goes/on/and/on", "", x, 5 + 23, false, 0},
		{"link appended", "read", "https://example.com/x", x, 5 + 23, false, 0},
		{"link already in the body", "read https://example.com/x", "https://example.com/x", x, 5 + 23, false, 0},
		{"exactly at limit", strings.Repeat("a", 280), "", x, 280, false, 0},
		{"one over", strings.Repeat("a", 281), "", x, 281, true, 0},
		{"too many hashtags", "#one #two #three", "", x, 16, true, 3},
		{"anchor is no hashtag", "see https://e.com/#frag and #1", "", x, 4 + 23 + 7, false, 0},
		{"hashtag glued to a word is none", "a#b and c_#d", "", x, 12, false, 0},
		{"accented hashtag", "#café time", "", x, 10, false, 1},
		{"emoji family graphemes", family, "", bsky, 1, false, 0},
		{"emoji family chars", family, "", Limits{MaxChars: 10, Count: UnitChars}, 5, false, 0},
		{"emoji family bytes", family, "", threads, 18, false, 0},
		{"combining accent is one grapheme", "e\u0301t\u0301e\u0301", "", bsky, 3, false, 0},
		{"heart with variation selector", "❤️ x", "", bsky, 3, false, 0},
		{"skin tone", "👍🏽", "", bsky, 1, false, 0},
		{"graphemes at the limit", strings.Repeat("é", 300), "", bsky, 300, false, 0},
		{"graphemes over", strings.Repeat("e\u0301", 301), "", bsky, 301, true, 0},
		{"bytes over", strings.Repeat("é", 251), "", threads, 502, true, 0},
		{"bluesky counts url in full", "https://e.com", "", bsky, 13, false, 0},
		{"link after trailing newline", "read\n", "https://e.com/x", threads, 20, false, 0},
		{"unknown unit is chars", "héllo", "", Limits{MaxChars: 3, Count: "words"}, 5, true, 0},
	}
}()
