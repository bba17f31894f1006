package handlers

import (
	"context"
	"strings"
	"testing"

	"masthead/internal/client"
	"masthead/internal/rounds"
	"masthead/views/pages"
)

// TestChangesBodyWords: the comparison of two rounds says how many words of the body went and
// came, the noun agreeing with the count: "1 word removed", "2 words removed", in the
// heading of the article's changes.
func TestChangesBodyWords(t *testing.T) {
	t.Parallel()
	pc := &projectContext{project: &client.Project{Slug: "northwind"}}
	for _, c := range []struct{ from, to, want string }{
		{"one two three", "one three", "1 word removed, 0 added"},
		{"one two three", "one", "2 words removed, 0 added"},
		{"one", "one two", "0 words removed, 1 added"},
		{"one two", "one three", "1 word removed, 1 added"},
		{"one two three", "one four five", "2 words removed, 2 added"},
	} {
		from := client.Revision{Round: 1, Snapshot: rounds.Snapshot{Title: "T", Body: c.from}}
		to := client.Revision{Round: 2, Snapshot: rounds.Snapshot{Title: "T", Body: c.to}}
		m := changesModel(pc, &client.Publication{Revisions: []client.Revision{to, from}}, from, to)
		var html strings.Builder
		if err := pages.ChangesPart(&m).Render(context.Background(), &html); err != nil {
			t.Fatal(err)
		}
		if want := "Article <span class=\"muted small\">(" + c.want + ")</span>"; !strings.Contains(html.String(), want) {
			t.Errorf("%q → %q: the changes say\n%s\nwant %s", c.from, c.to, html.String(), want)
		}
	}
}
