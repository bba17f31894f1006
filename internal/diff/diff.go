// Package diff compares two versions of a text word by word, for review rounds: "what changed
// since I asked for changes". It works in two passes, paragraphs (lines) first and then words
// inside the paragraphs that changed, so a long article with a few edits costs little, and it
// gives up gracefully (a changed block shown as removed and added whole) where two blocks
// share too little for a word diff to help a reader.
//
// It is pure computation on strings and imports no masthead package.
package diff

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Op says what happened to a span of text.
type Op int8

// The operations, in the order a reader meets them within one change: deleted text first.
const (
	Equal Op = iota
	Delete
	Insert
)

// Span is a run of text that was kept, deleted or inserted.
type Span struct {
	Op   Op
	Text string
}

// maxEdits bounds the edit distance one Myers pass explores: its memory grows with the square
// of the distance. Beyond it, two blocks have too little in common for a word diff to read
// well, and the block is shown as replaced.
const maxEdits = 600

// Words returns the spans that turn a into b, word by word. Whitespace travels with the words,
// so concatenating the Equal and Delete spans gives a, and the Equal and Insert spans give b.
func Words(a, b string) []Span {
	if a == b {
		if a == "" {
			return nil
		}
		return []Span{{Equal, a}}
	}
	la, lb := splitLines(a), splitLines(b)
	var out []Span
	var delBuf, insBuf strings.Builder
	flush := func() {
		if delBuf.Len() > 0 || insBuf.Len() > 0 {
			out = append(out, wordDiff(delBuf.String(), insBuf.String())...)
			delBuf.Reset()
			insBuf.Reset()
		}
	}
	for _, e := range tokenDiff(la, lb) {
		switch e.op {
		case Equal:
			flush()
			out = append(out, Span{Equal, e.text})
		case Delete:
			delBuf.WriteString(e.text)
		case Insert:
			insBuf.WriteString(e.text)
		}
	}
	flush()
	return merge(out)
}

// Stats counts the words a diff deletes and inserts.
func Stats(spans []Span) (deleted, inserted int) {
	for _, s := range spans {
		switch s.Op {
		case Delete:
			deleted += len(strings.Fields(s.Text))
		case Insert:
			inserted += len(strings.Fields(s.Text))
		}
	}
	return deleted, inserted
}

// Changed reports whether a diff holds any change.
func Changed(spans []Span) bool {
	for _, s := range spans {
		if s.Op != Equal {
			return true
		}
	}
	return false
}

// wordDiff diffs one changed block word by word and tidies the result for reading.
func wordDiff(a, b string) []Span {
	if a == "" || b == "" {
		return nonEmpty(Span{Delete, a}, Span{Insert, b})
	}
	return tidy(tokenDiff(splitWords(a), splitWords(b)))
}

// edit is one token's fate.
type edit struct {
	op   Op
	text string
}

// tokenDiff is Myers' diff over two token lists, after trimming what they share at both
// ends. When the lists differ by more than maxEdits tokens it answers "all of a deleted, all
// of b inserted".
func tokenDiff(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []edit
	for _, t := range a[:pre] {
		out = append(out, edit{Equal, t})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if mid, ok := myers(ma, mb, maxEdits); ok {
		out = append(out, mid...)
	} else {
		for _, t := range ma {
			out = append(out, edit{Delete, t})
		}
		for _, t := range mb {
			out = append(out, edit{Insert, t})
		}
	}
	for _, t := range a[len(a)-suf:] {
		out = append(out, edit{Equal, t})
	}
	return out
}

// myers finds a shortest edit script from a to b with Myers' greedy algorithm, keeping the
// frontier of every step for the walk back (memory grows as the square of the distance, which
// maxD bounds). It reports false when the distance exceeds maxD.
func myers(a, b []string, maxD int) ([]edit, bool) {
	n, m := len(a), len(b)
	maxD = min(maxD, n+m)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		snap := make([]int, 2*d+1)
		copy(snap, v[off-d:off+d+1])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return walkBack(trace, a, b, d), true
			}
		}
	}
	return nil, false
}

// walkBack turns the frontiers myers kept into the edit script, from the end to the start.
func walkBack(trace [][]int, a, b []string, dist int) []edit {
	x, y := len(a), len(b)
	var rev []edit
	for d := dist; d > 0; d-- {
		v := trace[d] // the frontier after step d-1; index k+d holds diagonal k
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && v[k-1+d] < v[k+1+d]) {
			prevK = k + 1
		}
		prevX := v[prevK+d]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			rev = append(rev, edit{Equal, a[x-1]})
			x, y = x-1, y-1
		}
		if x == prevX {
			rev = append(rev, edit{Insert, b[y-1]})
		} else {
			rev = append(rev, edit{Delete, a[x-1]})
		}
		x, y = prevX, prevY
	}
	for x > 0 && y > 0 {
		rev = append(rev, edit{Equal, a[x-1]})
		x, y = x-1, y-1
	}
	out := make([]edit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out
}

// tidy groups each run of changes into one deletion followed by one insertion, absorbing the
// single spaces between changed words, so "the quick brown fox" → "the slow red fox" reads as
// "quick brown" replaced by "slow red" rather than as alternating fragments.
func tidy(edits []edit) []Span {
	var out []Span
	var del, ins strings.Builder
	flush := func() {
		out = append(out, nonEmpty(Span{Delete, del.String()}, Span{Insert, ins.String()})...)
		del.Reset()
		ins.Reset()
	}
	changing := false
	for i, e := range edits {
		switch {
		case e.op == Delete:
			del.WriteString(e.text)
			changing = true
		case e.op == Insert:
			ins.WriteString(e.text)
			changing = true
		case changing && isSpace(e.text) && i+1 < len(edits) && edits[i+1].op != Equal:
			// whitespace between two changes belongs to both sides of the change
			del.WriteString(e.text)
			ins.WriteString(e.text)
		default:
			if changing {
				flush()
				changing = false
			}
			out = append(out, Span{Equal, e.text})
		}
	}
	if changing {
		flush()
	}
	return out
}

// merge joins neighbouring spans of the same kind.
func merge(spans []Span) []Span {
	out := spans[:0]
	for _, s := range spans {
		if s.Text == "" {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Op == s.Op {
			out[n-1].Text += s.Text
			continue
		}
		out = append(out, s)
	}
	return out
}

func nonEmpty(spans ...Span) []Span {
	out := spans[:0]
	for _, s := range spans {
		if s.Text != "" {
			out = append(out, s)
		}
	}
	return out
}

// splitLines cuts text after each newline, keeping the newline with its line.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// splitWords cuts text into words, runs of space and single punctuation marks, so words
// compare whole ("Monday." → "Monday 3 March." inserts " 3 March"), and spacing is kept exactly.
func splitWords(s string) []string {
	var out []string
	start, prev := 0, -1
	for i, r := range s {
		k := class(r)
		if i > start && (k != prev || k == punct) {
			out = append(out, s[start:i])
			start = i
		}
		prev = k
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

const (
	space = iota
	word
	punct
)

func class(r rune) int {
	switch {
	case unicode.IsSpace(r):
		return space
	case unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsMark(r), r == '_', r == '\'':
		return word
	default:
		return punct
	}
}

func isSpace(s string) bool {
	if s == "" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}
