// Package metricstest reads a Prometheus endpoint for tests: Scrape fetches and parses
// /metrics, and Samples.Value finds series by name and labels. Only tests import it.
package metricstest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Samples are the metric families of one scrape, by name.
type Samples map[string]*dto.MetricFamily

// Scrape GETs url (a /metrics address) and parses the text format; it fails t unless the
// answer is a 200 in that format.
func Scrape(t testing.TB, url string) Samples {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("metricstest: scrape %s: %v", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("metricstest: scrape %s: %d %s", url, res.StatusCode, b)
	}
	s, err := Parse(res.Body)
	if err != nil {
		t.Fatalf("metricstest: scrape %s: %v", url, err)
	}
	return s
}

// Parse reads Prometheus' text format.
func Parse(r io.Reader) (Samples, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	return Samples(fams), err
}

// Value sums the series of name whose labels include every pair of labels (a counter's or a
// gauge's value, a histogram's count); n is how many series matched, 0 when none did.
func (s Samples) Value(name string, labels map[string]string) (sum float64, n int) {
	fam := s[name]
	if fam == nil {
		return 0, 0
	}
	for _, m := range fam.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		n++
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			sum += m.Untyped.GetValue()
		}
	}
	return sum, n
}

// Labels lists the label sets of name's series, as name{k="v",…}, for failure messages.
func (s Samples) Labels(name string) string {
	fam := s[name]
	if fam == nil {
		return name + ": no series"
	}
	var b strings.Builder
	for _, m := range fam.GetMetric() {
		b.WriteString(name + "{")
		for i, l := range m.GetLabel() {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%s=%q", l.GetName(), l.GetValue())
		}
		b.WriteString("}\n")
	}
	return b.String()
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			return false
		}
	}
	return true
}
