package channels

import "testing"

func TestOf(t *testing.T) {
	t.Parallel()
	for _, c := range Corpus {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			m := Of(c.Body, c.Link, c.Limits)
			if m.Used != c.Used || m.Over() != c.Over || m.Hashtags != c.Hashtags {
				t.Errorf("Of(%q, %q) = used %d over %v tags %d; want %d %v %d",
					c.Body, c.Link, m.Used, m.Over(), m.Hashtags, c.Used, c.Over, c.Hashtags)
			}
		})
	}
}
