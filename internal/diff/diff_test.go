package diff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// render shows spans as a reader sees them: [-deleted-]{+inserted+}.
func render(spans []Span) string {
	var b strings.Builder
	for _, s := range spans {
		switch s.Op {
		case Delete:
			b.WriteString("[-" + s.Text + "-]")
		case Insert:
			b.WriteString("{+" + s.Text + "+}")
		default:
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

// sides rebuilds both texts from the spans.
func sides(spans []Span) (a, b string) {
	var x, y strings.Builder
	for _, s := range spans {
		if s.Op != Insert {
			x.WriteString(s.Text)
		}
		if s.Op != Delete {
			y.WriteString(s.Text)
		}
	}
	return x.String(), y.String()
}

func TestWords(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, a, b, want string }{
		{"same", "one two", "one two", "one two"},
		{"both empty", "", "", ""},
		{"from nothing", "", "new text", "{+new text+}"},
		{"to nothing", "old text", "", "[-old text-]"},
		{"one word replaced", "the quick fox", "the slow fox", "the [-quick-]{+slow+} fox"},
		{"phrase replaced reads as one change", "the quick brown fox jumps", "the slow red fox jumps", "the [-quick brown-]{+slow red+} fox jumps"},
		{"word added", "tighten the lede", "tighten the lede now", "tighten the lede{+ now+}"},
		{"word removed", "a very long lede", "a long lede", "a [-very -]long lede"},
		{"untouched paragraphs kept whole", "# Title\n\nFirst para.\n\nSecond para here.\n", "# Title\n\nFirst para.\n\nSecond para there.\n", "# Title\n\nFirst para.\n\nSecond para [-here-]{+there+}.\n"},
		{"punctuation is its own token", "reopened on Monday.", "reopened on Monday 3 March.", "reopened on Monday{+ 3 March+}."},
		{"paragraph inserted", "A.\n\nC.\n", "A.\n\nB.\n\nC.\n", "A.\n\n{+B.\n\n+}C.\n"},
		{"spacing change is a change", "a  b", "a b", "a[-  -]{+ +}b"},
		{"unicode words", "Ça va très bien", "Ça va très mal", "Ça va très [-bien-]{+mal+}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			spans := Words(c.a, c.b)
			if got := render(spans); got != c.want {
				t.Errorf("Words(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
			}
			if a, b := sides(spans); a != c.a || b != c.b {
				t.Errorf("spans rebuild %q / %q", a, b)
			}
		})
	}
}

// TestWordsRebuildsBothSides: on random edits of random texts, the spans always rebuild both
// texts exactly, and never put two spans of one kind side by side.
func TestWordsRebuildsBothSides(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	vocab := strings.Fields("the a lede harbour tide ferry opens closes \n \n\n , . gala night # - *")
	text := func(n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return w
	}
	for i := range 500 {
		a := text(r.IntN(60))
		b := append([]string(nil), a...)
		for range r.IntN(8) {
			switch p := r.IntN(len(b) + 1); r.IntN(3) {
			case 0:
				b = append(b[:p], append(text(1+r.IntN(3)), b[p:]...)...)
			case 1:
				if p < len(b) {
					b = append(b[:p], b[p+1:]...)
				}
			default:
				if p < len(b) {
					b[p] = vocab[r.IntN(len(vocab))]
				}
			}
		}
		as, bs := strings.Join(a, " "), strings.Join(b, " ")
		spans := Words(as, bs)
		if x, y := sides(spans); x != as || y != bs {
			t.Fatalf("case %d: rebuilt %q / %q from %q / %q", i, x, y, as, bs)
		}
		for j := 1; j < len(spans); j++ {
			if spans[j].Op == spans[j-1].Op {
				t.Fatalf("case %d: neighbouring %v spans in %s", i, spans[j].Op, render(spans))
			}
		}
	}
}

// TestWordsRewriteFallsBack: two unrelated long texts come back as one deletion and one
// insertion, fast, instead of a word soup.
func TestWordsRewriteFallsBack(t *testing.T) {
	t.Parallel()
	a := strings.Repeat("alpha beta gamma delta ", 1500)
	b := strings.Repeat("one two three four five ", 1500)
	spans := Words(a, b)
	if len(spans) < 2 || spans[0].Op != Delete || spans[1].Op != Insert || len(spans) > 3 || (len(spans) == 3 && spans[2].Text != " ") {
		t.Fatalf("rewrite gave %d spans", len(spans))
	}
	if d, i := Stats(spans); d != 6000 || i != 7500 {
		t.Errorf("stats %d deleted, %d inserted", d, i)
	}
}

// article is a markdown body of about n words in paragraphs.
func article(n int) string {
	r := rand.New(rand.NewPCG(3, 4))
	words := strings.Fields("harbour tide ferry lighthouse council budget school river bridge market festival weather road rail port season")
	var b strings.Builder
	for i := range n {
		b.WriteString(words[r.IntN(len(words))])
		if i%60 == 59 {
			b.WriteString(".\n\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// BenchmarkWords5000: a 5,000-word body with an edit in every tenth paragraph.
func BenchmarkWords5000(b *testing.B) {
	a := article(5000)
	paras := strings.Split(a, "\n\n")
	for i := range paras {
		if i%10 == 3 {
			paras[i] = strings.Replace(paras[i], "harbour", "new harbour wall", 2)
		}
	}
	edited := strings.Join(paras, "\n\n")
	b.ReportAllocs()
	for b.Loop() {
		if spans := Words(a, edited); !Changed(spans) {
			b.Fatal("no change found")
		}
	}
}
