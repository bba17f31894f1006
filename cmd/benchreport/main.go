// Command benchreport reads `go test -bench` output (a file named as its argument, or stdin)
// and prints issue 14's table `measure | ours | floor | ratio | target` (see
// internal/benchreport for the convention the benchmarks follow). It exits 1 when the output
// holds a failure or no issue-14 figure at all, after printing what it has.
//
//	go test -run '^$' -bench '^BenchmarkFloor' -count 3 ./internal/storage | tee bench.txt
//	go run ./cmd/benchreport bench.txt
package main

import (
	"fmt"
	"io"
	"os"

	"masthead/internal/benchreport"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	in := stdin
	switch len(args) {
	case 0:
	case 1:
		f, err := os.Open(args[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	default:
		return fmt.Errorf("usage: benchreport [go-test-bench-output-file]")
	}
	rep, err := benchreport.Parse(in)
	if err != nil {
		return err
	}
	if err := benchreport.Write(stdout, rep.Rows(benchreport.Targets)); err != nil {
		return err
	}
	if len(rep.Failures) > 0 {
		return fmt.Errorf("the benchmarks failed: %v", rep.Failures)
	}
	if len(rep.Measures) == 0 {
		return fmt.Errorf("no ours_/floor_/ratio_ figures in the input")
	}
	return nil
}
