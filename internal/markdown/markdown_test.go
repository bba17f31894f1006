package markdown

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// checkSafe parses out as a browser would and refuses any element outside the formatting
// allowlist, any event handler attribute and any link that is not http(s), mailto or relative.
func checkSafe(out string) error {
	allowed := map[string]bool{"p": true, "br": true, "hr": true, "h1": true, "h2": true, "h3": true,
		"h4": true, "h5": true, "h6": true, "blockquote": true, "pre": true, "code": true, "em": true,
		"strong": true, "del": true, "ul": true, "ol": true, "li": true, "table": true, "thead": true,
		"tbody": true, "tr": true, "th": true, "td": true, "a": true, "input": true, "sup": true, "sub": true}
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return nil
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			tok := z.Token()
			if !allowed[tok.Data] {
				return fmt.Errorf("element <%s> survived", tok.Data)
			}
			for _, a := range tok.Attr {
				k, v := strings.ToLower(a.Key), strings.ToLower(strings.TrimSpace(a.Val))
				if strings.HasPrefix(k, "on") || k == "style" || k == "src" || k == "srcdoc" {
					return fmt.Errorf("attribute %s survived", k)
				}
				if k == "href" && strings.Contains(v, ":") && !strings.HasPrefix(v, "http://") &&
					!strings.HasPrefix(v, "https://") && !strings.HasPrefix(v, "mailto:") {
					return fmt.Errorf("link %q survived", v)
				}
			}
		}
	}
}

// TestHostile feeds inputs that try to run script or smuggle markup; none may survive.
func TestHostile(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"script tag":        "<script>alert(1)</script>",
		"img onerror":       `<img src=x onerror="alert(1)">`,
		"markdown image js": "![x](javascript:alert(1))",
		"link js":           "[click](javascript:alert(1))",
		"link js entity":    "[click](jav&#x61;script:alert(1))",
		"link vbscript":     "[click](vbscript:msgbox(1))",
		"link data":         "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
		"autolink js":       "<javascript:alert(1)>",
		"iframe":            `<iframe src="https://evil.test"></iframe>`,
		"svg":               `<svg onload=alert(1)><circle/></svg>`,
		"style":             `<style>body{display:none}</style>`,
		"inline attr":       `<a href="https://ok.test" onclick="alert(1)">x</a>`,
		"html in table":     "| a |\n|---|\n| <img src=x onerror=alert(1)> |",
		"meta refresh":      `<meta http-equiv="refresh" content="0;url=https://evil.test">`,
		"base":              `<base href="https://evil.test/">`,
		"form":              `<form action="https://evil.test"><input name=x></form>`,
		"object":            `<object data="x.swf"></object><embed src="x.swf">`,
		"nested quotes":     "[a](\"onmouseover=alert(1)\")",
		"heading id":        "# <script>alert(1)</script>",
		"code fence lang":   "```\"><script>alert(1)</script>\nx\n```",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := string(HTML(in))
			if err := checkSafe(out); err != nil {
				t.Errorf("HTML(%q) = %q: %v", in, out, err)
			}
		})
	}
}

// TestFormatting keeps what writers rely on: GFM tables, strikethrough, autolinks, code.
func TestFormatting(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"emphasis", "*a* **b**", "<em>a</em> <strong>b</strong>"},
		{"strikethrough", "~~gone~~", "<del>gone</del>"},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", "<td>1</td>"},
		{"autolink", "see https://example.com now", `<a href="https://example.com" rel="nofollow noreferrer">https://example.com</a>`},
		{"code lang", "```go\nx := 1\n```", `<code class="language-go">`},
		{"task list", "- [x] done", `<input checked="" disabled="" type="checkbox"`},
		{"escaped text", "a < b & c", "a &lt; b &amp; c"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if out := string(HTML(c.in)); !strings.Contains(out, c.want) {
				t.Errorf("HTML(%q) = %q, want it to contain %q", c.in, out, c.want)
			}
		})
	}
}

// TestLongInput bounds the work and never splits a character.
func TestLongInput(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("é", MaxInput)
	out := string(HTML(in))
	if !strings.Contains(out, "…") || !strings.HasPrefix(out, "<p>é") {
		t.Errorf("long input not cut cleanly: %q…", out[:40])
	}
}

func BenchmarkHTML(b *testing.B) {
	src := strings.Repeat("## Heading\n\nSome *text* with a [link](https://example.com) and `code`.\n\n- one\n- two\n\n", 40)
	for b.Loop() {
		HTML(src)
	}
}
