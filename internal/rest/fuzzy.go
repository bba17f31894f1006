package rest

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// closest is the "Perhaps you meant …" search PostgREST runs when a table, function,
// parameter list or relationship is not found: a fuzzy set (as the fuzzyset library PostgREST
// uses) that scores candidates by the cosine of their character trigrams, then bigrams when no
// trigram matches, re-ranks the best by Levenshtein similarity and keeps those scoring at least
// floor. It returns the best candidate and its score; an exact match (ignoring case) scores 1.
func closest(candidates []string, value string, floor float64) (string, float64, bool) {
	key := strings.ToLower(value)
	for _, c := range candidates {
		if strings.ToLower(c) == key {
			return c, 1, true
		}
	}
	for size := 3; size >= 2; size-- {
		if best, score, ok := closestBy(candidates, key, size, floor); ok {
			return best, score, true
		}
	}
	return "", 0, false
}

type scored struct {
	score float64
	word  string
}

func closestBy(candidates []string, key string, size int, floor float64) (string, float64, bool) {
	want := gramCounts(key, size)
	var norm float64
	for _, n := range want {
		norm += float64(n * n)
	}
	norm = math.Sqrt(norm)
	var results []scored
	for _, c := range candidates {
		have := gramCounts(strings.ToLower(c), size)
		var dot, cnorm float64
		for g, n := range have {
			cnorm += float64(n * n)
			dot += float64(n * want[g])
		}
		if dot == 0 {
			continue
		}
		results = append(results, scored{dot / (norm * math.Sqrt(cnorm)), c})
	}
	if len(results) == 0 {
		return "", 0, false
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].score > results[j].score })
	results = results[:min(50, len(results))]
	for i := range results {
		results[i].score = similarity(strings.ToLower(results[i].word), key)
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].score > results[j].score })
	if results[0].score < floor {
		return "", 0, false
	}
	return results[0].word, results[0].score, true
}

// gramCounts counts the n-grams of s padded with '-', keeping only letters, digits, commas and
// spaces, as fuzzyset does.
func gramCounts(s string, n int) map[string]int {
	var b strings.Builder
	b.WriteByte('-')
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == ',' || r == ' ' {
			b.WriteRune(r)
		}
	}
	b.WriteByte('-')
	rs := []rune(b.String())
	for len(rs) < n {
		rs = append(rs, '-')
	}
	out := map[string]int{}
	for i := 0; i+n <= len(rs); i++ {
		out[string(rs[i:i+n])]++
	}
	return out
}

// similarity is 1 - the Levenshtein distance over the longer length.
func similarity(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	longest := max(len(ra), len(rb))
	if longest == 0 {
		return 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return 1 - float64(prev[len(rb)])/float64(longest)
}
