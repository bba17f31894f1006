package benchreport

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// On says which figure a target is about.
type On int

const (
	OnRatio On = iota // ours / floor
	OnOurs            // our figure alone
)

// Op is how a figure must compare with a target's value.
type Op string

const (
	AtMost  Op = "≤"
	AtLeast Op = "≥"
	Below   Op = "<"
)

// Target is one measure's goal.
type Target struct {
	Bench    string // benchmark name without the -GOMAXPROCS suffix
	Quantity string // the <quantity> of its ours_/floor_/ratio_ metrics
	Measure  string // what the table calls it
	On       On
	Op       Op
	Value    float64
}

// meets says whether v satisfies t.
func (t Target) meets(v float64) bool {
	switch t.Op {
	case AtMost:
		return v <= t.Value
	case AtLeast:
		return v >= t.Value
	case Below:
		return v < t.Value
	}
	return false
}

func (t Target) String() string {
	if t.On == OnRatio {
		return fmt.Sprintf("%s %g×", t.Op, t.Value)
	}
	return fmt.Sprintf("%s %g %s", t.Op, t.Value, t.Quantity)
}

// Measure is one benchmark quantity's figures, one entry per run (-count) in the order read.
type Measure struct {
	Bench, Quantity    string
	Ours, Floor, Ratio []float64
}

// Report is what one `go test -bench` output holds.
type Report struct {
	Measures []*Measure
	Failures []string // FAIL lines: a benchmark or package that failed
}

// suffix is the -GOMAXPROCS suffix go test appends to a benchmark's name.
var suffix = regexp.MustCompile(`-\d+$`)

// Parse reads `go test -bench` output. Lines that are not benchmark results (logs, pkg:,
// PASS) are skipped; metrics outside the convention are ignored.
func Parse(r io.Reader) (*Report, error) {
	rep := &Report{}
	index := map[[2]string]*Measure{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "--- FAIL") || strings.HasPrefix(line, "FAIL") {
			rep.Failures = append(rep.Failures, strings.TrimSpace(line))
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue // a name line before the benchmark's log output
		}
		name := suffix.ReplaceAllString(f[0], "")
		type figures struct{ ours, floor, ratio float64 }
		run := map[string]*figures{}
		var order []string
		for i := 2; i+1 < len(f); i += 2 {
			role, q, ok := strings.Cut(f[i+1], "_")
			if !ok || (role != "ours" && role != "floor" && role != "ratio") || q == "" {
				continue
			}
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchreport: %s: value %q of %s is not a number", name, f[i], f[i+1])
			}
			fig := run[q]
			if fig == nil {
				fig = &figures{math.NaN(), math.NaN(), math.NaN()}
				run[q] = fig
				order = append(order, q)
			}
			switch role {
			case "ours":
				fig.ours = v
			case "floor":
				fig.floor = v
			case "ratio":
				fig.ratio = v
			}
		}
		for _, q := range order {
			fig := run[q]
			if math.IsNaN(fig.ratio) && !math.IsNaN(fig.ours) && !math.IsNaN(fig.floor) && fig.floor != 0 {
				fig.ratio = fig.ours / fig.floor
			}
			key := [2]string{name, q}
			m := index[key]
			if m == nil {
				m = &Measure{Bench: name, Quantity: q}
				index[key] = m
				rep.Measures = append(rep.Measures, m)
			}
			m.Ours = appendKnown(m.Ours, fig.ours)
			m.Floor = appendKnown(m.Floor, fig.floor)
			m.Ratio = appendKnown(m.Ratio, fig.ratio)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("benchreport: read: %w", err)
	}
	return rep, nil
}

func appendKnown(s []float64, v float64) []float64 {
	if math.IsNaN(v) {
		return s
	}
	return append(s, v)
}

// Row is one line of the table.
type Row struct {
	Measure, Ours, Floor, Ratio, Target string
}

// Rows lays rep out against targets: every target in its order (those no benchmark reported
// say "not run"), then every reported measure without a target.
func (rep *Report) Rows(targets []Target) []Row {
	byKey := map[[2]string]*Measure{}
	for _, m := range rep.Measures {
		byKey[[2]string{m.Bench, m.Quantity}] = m
	}
	var rows []Row
	seen := map[[2]string]bool{}
	for _, t := range targets {
		key := [2]string{t.Bench, t.Quantity}
		seen[key] = true
		m := byKey[key]
		if m == nil {
			rows = append(rows, Row{Measure: t.Measure, Ours: "not run", Floor: "", Ratio: "", Target: t.String()})
			continue
		}
		figs := m.Ratio
		if t.On == OnOurs {
			figs = m.Ours
		}
		met := 0
		for _, v := range figs {
			if t.meets(v) {
				met++
			}
		}
		verdict := "met"
		switch {
		case len(figs) == 0:
			verdict = "no figure"
		case met == 0:
			verdict = "NOT met"
		case met < len(figs):
			verdict = fmt.Sprintf("met in %d of %d", met, len(figs))
		}
		rows = append(rows, Row{Measure: t.Measure, Ours: span(m.Ours, m.Quantity), Floor: span(m.Floor, m.Quantity),
			Ratio: span(m.Ratio, "×"), Target: t.String() + ": " + verdict})
	}
	for _, m := range rep.Measures {
		if seen[[2]string{m.Bench, m.Quantity}] {
			continue
		}
		rows = append(rows, Row{Measure: m.Bench + " " + m.Quantity, Ours: span(m.Ours, m.Quantity),
			Floor: span(m.Floor, m.Quantity), Ratio: span(m.Ratio, "×"), Target: "—"})
	}
	return rows
}

// Write prints rows as a Markdown table.
func Write(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("| measure | ours | floor | ratio | target |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Measure, r.Ours, r.Floor, r.Ratio, r.Target)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// span is "min–max unit" of vs ("v unit" when they agree, "" when there are none).
func span(vs []float64, unit string) string {
	if len(vs) == 0 {
		return ""
	}
	lo, hi := vs[0], vs[0]
	for _, v := range vs[1:] {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	s := num(lo)
	if num(hi) != s {
		s += "–" + num(hi)
	}
	if unit == "×" {
		return s + "×"
	}
	return s + " " + unit
}

// num prints v with about three significant digits, never in exponent form.
func num(v float64) string {
	a := math.Abs(v)
	prec := 0
	switch {
	case a == 0 || a >= 100:
		prec = 0
	case a >= 10:
		prec = 1
	case a >= 1:
		prec = 2
	default:
		prec = 3
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}
