package benchreport

import (
	"reflect"
	"strings"
	"testing"
)

// sample is go test -bench output as it comes: a header, a name line followed by a log line,
// results of two -count runs, metrics outside the convention, PASS and ok.
const sample = `goos: linux
goarch: amd64
pkg: masthead/internal/storage
cpu: AMD EPYC
BenchmarkFloorDownload
    bench_test.go:40: warming up
BenchmarkFloorDownload-2   	      22	 209002992 ns/op	 306.22 MB/s	        85.56 floor_cpu-µs/req	      5072 floor_req/s	       195.1 ours_cpu-µs/req	      2216 ours_req/s	       197.4 pg-cpu-µs/req	         2.281 ratio_cpu-µs/req	         0.4369 ratio_req/s
BenchmarkFloorDownload-2   	      25	 107775673 ns/op	 593.83 MB/s	        87.38 floor_cpu-µs/req	     12658 floor_req/s	       153.7 ours_cpu-µs/req	      4559 ours_req/s	       146.2 pg-cpu-µs/req	         1.759 ratio_cpu-µs/req	         0.3601 ratio_req/s
BenchmarkFloorSignedDownload-2 	 49	  50392808 ns/op	 100.3 ours_req/s	 100 floor_req/s
BenchmarkFloorMCPRead/get_publication-2   	 300	 1200000 ns/op	 1.12 ratio_post-µs	 1.25 ratio_sdk-µs	 840 floor_post-µs	 940 ours_post-µs
BenchmarkFloorSeed100k 	 1	 58000000000 ns/op	 58.2 ours_s	 12.5 go-cpu-s
BenchmarkHTML-2   	 5000	 230000 ns/op	 1200 B/op
PASS
ok  	masthead/internal/storage	12.1s
`

func TestParse(t *testing.T) {
	rep, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := []*Measure{
		{Bench: "BenchmarkFloorDownload", Quantity: "cpu-µs/req", Ours: []float64{195.1, 153.7}, Floor: []float64{85.56, 87.38}, Ratio: []float64{2.281, 1.759}},
		{Bench: "BenchmarkFloorDownload", Quantity: "req/s", Ours: []float64{2216, 4559}, Floor: []float64{5072, 12658}, Ratio: []float64{0.4369, 0.3601}},
		// no ratio reported: ours / floor
		{Bench: "BenchmarkFloorSignedDownload", Quantity: "req/s", Ours: []float64{100.3}, Floor: []float64{100}, Ratio: []float64{1.003}},
		// the reported ratio wins over the quotient (a ratio of medians)
		{Bench: "BenchmarkFloorMCPRead/get_publication", Quantity: "post-µs", Ours: []float64{940}, Floor: []float64{840}, Ratio: []float64{1.12}},
		{Bench: "BenchmarkFloorMCPRead/get_publication", Quantity: "sdk-µs", Ratio: []float64{1.25}},
		// no GOMAXPROCS suffix, no floor
		{Bench: "BenchmarkFloorSeed100k", Quantity: "s", Ours: []float64{58.2}},
	}
	if len(rep.Measures) != len(want) {
		t.Fatalf("got %d measures, want %d: %+v", len(rep.Measures), len(want), rep.Measures)
	}
	for i, w := range want {
		g := rep.Measures[i]
		if g.Bench != w.Bench || g.Quantity != w.Quantity || !same(g.Ours, w.Ours) || !same(g.Floor, w.Floor) || !same(g.Ratio, w.Ratio) {
			t.Errorf("measure %d = %+v, want %+v", i, *g, *w)
		}
	}
	if len(rep.Failures) != 0 {
		t.Errorf("failures %v in a passing run", rep.Failures)
	}
}

func same(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := a[i] - b[i]; d > 1e-9 || d < -1e-9 {
			return false
		}
	}
	return true
}

func TestParseFailuresAndBadValues(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		failures []string
		err      string
	}{
		{"benchmark failed", "--- FAIL: BenchmarkFloorDownload-2\n    bench_test.go:80: status 500\nFAIL\nFAIL\tmasthead/internal/storage\t3.1s\n",
			[]string{"--- FAIL: BenchmarkFloorDownload-2", "FAIL", "FAIL\tmasthead/internal/storage\t3.1s"}, ""},
		{"value not a number", "BenchmarkFloorX-2 \t 10\t 5 ns/op\t abc ours_µs\n", nil, `value "abc" of ours_µs is not a number`},
		{"no figures", "PASS\nok  \tmasthead/internal/diff\t0.1s\n", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Parse(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rep.Failures, tc.failures) {
				t.Errorf("failures %q, want %q", rep.Failures, tc.failures)
			}
		})
	}
}

func TestRows(t *testing.T) {
	rep, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	targets := []Target{
		{"BenchmarkFloorDownload", "req/s", "download throughput", OnRatio, AtLeast, 0.4},
		{"BenchmarkFloorDownload", "cpu-µs/req", "download CPU", OnRatio, AtMost, 1.5},
		{"BenchmarkFloorSignedDownload", "req/s", "signed throughput", OnRatio, AtLeast, 0.9},
		{"BenchmarkFloorSeed100k", "s", "seed", OnOurs, Below, 60},
		{"BenchmarkFloorSearch", "p95-ms", "search", OnOurs, Below, 50},
	}
	got := rep.Rows(targets)
	want := []Row{
		{"download throughput", "2216–4559 req/s", "5072–12658 req/s", "0.360–0.437×", "≥ 0.4×: met in 1 of 2"},
		{"download CPU", "154–195 cpu-µs/req", "85.6–87.4 cpu-µs/req", "1.76–2.28×", "≤ 1.5×: NOT met"},
		{"signed throughput", "100 req/s", "100 req/s", "1.00×", "≥ 0.9×: met"},
		{"seed", "58.2 s", "", "", "< 60 s: met"},
		{"search", "not run", "", "", "< 50 p95-ms"},
		// measures without a target come last, as they are
		{"BenchmarkFloorMCPRead/get_publication post-µs", "940 post-µs", "840 post-µs", "1.12×", "—"},
		{"BenchmarkFloorMCPRead/get_publication sdk-µs", "", "", "1.25×", "—"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", table(t, got), table(t, want))
	}
}

// TestTargetsAreDistinct keeps the target table free of two goals for one measure.
func TestTargetsAreDistinct(t *testing.T) {
	seen := map[[2]string]bool{}
	for _, tg := range Targets {
		k := [2]string{tg.Bench, tg.Quantity}
		if seen[k] || tg.Measure == "" || !strings.HasPrefix(tg.Bench, "BenchmarkFloor") {
			t.Errorf("target %+v: duplicate, unnamed or not a BenchmarkFloor… benchmark", tg)
		}
		seen[k] = true
	}
}

func table(t *testing.T, rows []Row) string {
	var b strings.Builder
	if err := Write(&b, rows); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
