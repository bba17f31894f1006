// Package markdown turns the markdown people write (publication bodies, review notes) into HTML
// that is safe to put in a page: goldmark renders GitHub-flavoured markdown, then bluemonday
// keeps only formatting elements and safe links, so no script from any field ever runs.
//
// It is the only producer of trusted HTML in the dashboard: views pass its output to
// templ.Raw and nothing else. It imports no masthead package.
package markdown

import (
	"bytes"
	"html/template"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
)

// MaxInput bounds what is rendered, so a pathological body cannot cost unbounded time; the
// rest is dropped and the cut is visible to the reader.
const MaxInput = 256 << 10

var (
	// md renders GFM (tables, strikethrough, autolinks, task lists). Raw HTML in the source is
	// left out rather than passed through: the sanitiser would strip it anyway, and omitting it
	// keeps the output predictable.
	md = goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	)
	policy = newPolicy()
)

// newPolicy allows the elements GFM produces for text (no images: media are shown from the
// media list, where alt text is checked, not hot-linked from bodies; no forms, frames, styles
// or event attributes), links only to http(s), mailto and relative targets, with rel=nofollow
// noreferrer so a link cannot reach back into the dashboard's window.
func newPolicy() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowStandardURLs()
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AllowAttrs("href").OnElements("a")
	p.AllowAttrs("id").Matching(regexp.MustCompile(`^[a-z0-9-]{1,80}$`)).OnElements("h1", "h2", "h3", "h4", "h5", "h6")
	p.AllowElements("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code",
		"em", "strong", "del", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "sup", "sub")
	p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center)$`)).OnElements("th", "td")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[a-zA-Z0-9_+-]{1,40}$`)).OnElements("code")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	return p
}

// HTML renders source as sanitised HTML. A rendering failure (goldmark reports none for text
// input, but the contract allows it) degrades to the escaped source, never to raw input.
func HTML(source string) template.HTML {
	if len(source) > MaxInput {
		source = strings.ToValidUTF8(source[:MaxInput], "") + "\n\n…"
	}
	var buf bytes.Buffer
	if err := md.Convert([]byte(source), &buf); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(source) + "</pre>")
	}
	return template.HTML(policy.SanitizeBytes(buf.Bytes()))
}
