package rest

import (
	"net/http"
	"slices"
	"strings"
)

// Prefer holds the Prefer header preferences PostgREST honours. Unknown or
// repeated preferences are ignored (PostgREST's default "lenient"
// handling); Applied lists what was honoured, for Preference-Applied.
type Prefer struct {
	Return     string // minimal, representation, headers-only; "" = default
	Count      string // exact, planned, estimated
	Resolution string // merge-duplicates, ignore-duplicates
	Missing    string // default
	Applied    []string
}

var preferValues = map[string][]string{
	"return":     {"minimal", "representation", "headers-only"},
	"count":      {"exact", "planned", "estimated"},
	"resolution": {"merge-duplicates", "ignore-duplicates"},
	"missing":    {"default", "null"},
}

// ParsePrefer reads every Prefer header value (comma-separated lists).
func ParsePrefer(h http.Header) Prefer {
	var p Prefer
	for _, line := range h.Values("Prefer") {
		for _, item := range strings.Split(line, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(item), "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !validPrefer(k, v) {
				continue
			}
			dst := p.field(k)
			if *dst != "" {
				continue
			}
			*dst = v
		}
	}
	return p
}

func validPrefer(k, v string) bool {
	for _, ok := range preferValues[k] {
		if v == ok {
			return true
		}
	}
	return false
}

func (p *Prefer) field(k string) *string {
	switch k {
	case "return":
		return &p.Return
	case "count":
		return &p.Count
	case "resolution":
		return &p.Resolution
	default:
		return &p.Missing
	}
}

// Apply records a preference as honoured, for the Preference-Applied
// header.
func (p *Prefer) Apply(k, v string) {
	p.Applied = append(p.Applied, k+"="+v)
}

// appliedOrder is the order in which PostgREST lists honoured preferences.
var appliedOrder = []string{"resolution", "missing", "return", "count"}

// setApplied writes Preference-Applied (when anything was honoured) in PostgREST's order.
func (p *Prefer) setApplied(h http.Header) {
	if len(p.Applied) == 0 {
		return
	}
	out := slices.Clone(p.Applied)
	rank := func(s string) int {
		k, _, _ := strings.Cut(s, "=")
		return slices.Index(appliedOrder, k)
	}
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	h.Set("Preference-Applied", strings.Join(slices.Compact(out), ", "))
}
