// Package benchreport turns the output of `go test -bench` into issue 14's table, one row per
// measure: `measure | ours | floor | ratio | target`, the table `make bench-report` prints.
//
// The convention every issue-14 benchmark follows:
//   - It is named BenchmarkFloor… (sub-benchmarks allowed); `make bench-report` runs exactly
//     those, with -count 3 and the default -benchtime.
//   - It measures ours and the floor (the best hand-written equivalent) alternately in the same
//     loop, so load from other processes hits both alike.
//   - It reports b.ReportMetric(v, "ours_<quantity>"), "floor_<quantity>" and, when the ratio is
//     not the plain quotient of those two (a ratio of medians, say), "ratio_<quantity>". The
//     quantity is a unit-like word without spaces or '_' (req/s, µs, cpu-µs/req, p95-ms, s); a
//     ratio is always ours / floor, whichever way is better. A measure without a floor reports
//     ours_<quantity> alone. Other metrics are ignored here.
//
// The targets live in one table (targets.go), so the report says which are met; results of
// -count runs show as min–max. It imports nothing of the service: it only reads text.
package benchreport
