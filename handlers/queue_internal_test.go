package handlers

import (
	"testing"

	"masthead/internal/client"
)

// TestCountWords: the queue says an exact count as it is, a rare phrase's count past
// client.SearchCap as "more than 1,000", and an estimate as "about" with two significant
// figures, paging by the number it shows.
func TestCountWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    client.QueueCount
		words string
		n     int
	}{
		{client.QueueCount{N: 0, Exact: true}, "0", 0},
		{client.QueueCount{N: 7, Exact: true}, "7", 7},
		{client.QueueCount{N: 1000, Exact: true}, "1,000", 1000},
		{client.QueueCount{N: 1001, Exact: true}, "more than 1,000", 1000},
		{client.QueueCount{N: 99}, "about 99", 99},
		{client.QueueCount{N: 101}, "about 100", 100},
		{client.QueueCount{N: 1062}, "about 1,100", 1100},
		{client.QueueCount{N: 2798}, "about 2,800", 2800},
		{client.QueueCount{N: 9987}, "about 10,000", 10000},
		{client.QueueCount{N: 123456}, "about 120,000", 120000},
	} {
		words, n := countWords(c.in)
		if words != c.words || n != c.n {
			t.Errorf("countWords(%+v) = %q, %d; want %q, %d", c.in, words, n, c.words, c.n)
		}
	}
}

// TestQueueSummaryCounts: a page past the end of the list says how many publications match,
// with the noun agreeing: "1 publication", "2 publications".
func TestQueueSummaryCounts(t *testing.T) {
	t.Parallel()
	pc := &projectContext{project: &client.Project{Slug: "northwind"}}
	for _, c := range []struct {
		count client.QueueCount
		want  string
	}{
		{client.QueueCount{N: 1, Exact: true}, "1 publication"},
		{client.QueueCount{N: 2, Exact: true}, "2 publications"},
		{client.QueueCount{N: 1001, Exact: true}, "more than 1,000 publications"},
	} {
		r := (&App{}).queueResults(pc, queueQuery{Status: "all", Page: 200}, nil, c.count)
		if r.Summary != c.want || r.Empty != "This page is past the end of the list." {
			t.Errorf("%+v past the end: summary %q (empty %q), want %q", c.count, r.Summary, r.Empty, c.want)
		}
	}
}
