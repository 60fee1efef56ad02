package gate

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the docs' metrics table")

// metricsTable is the docs' table of Registry, a row a metric.
func metricsTable() string {
	var b strings.Builder
	b.WriteString("| metric | unit | better | what it measures | kept in history |\n| --- | --- | --- | --- | --- |\n")
	for _, d := range Registry {
		better, kept := "lower", "no"
		if d.HigherIsBetter {
			better = "higher"
		}
		if d.Kept {
			kept = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", d.Metric, d.Unit, better, d.Doc, kept)
	}
	return b.String()
}

// TestMetricsTable: docs/scenario.md lists every metric of Registry,
// and nothing else, as the registry defines it (go test -run
// TestMetricsTable -update rewrites the table).
func TestMetricsTable(t *testing.T) {
	const path = "../docs/scenario.md"
	const begin, end = "<!-- metrics table: generated from gate.Registry, checked by TestMetricsTable -->\n", "<!-- end metrics table -->"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no metrics table between %q and %q", path, begin, end)
	}
	got, want := doc[i+len(begin):j], metricsTable()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the metrics table differs from gate.Registry (go test ./gate -run TestMetricsTable -update):\n%s\nwant:\n%s", path, got, want)
}

// TestRegistry: the lists of metrics are the registry's, every metric
// named once, every latency percentile with its quantile.
func TestRegistry(t *testing.T) {
	seen := map[Metric]bool{}
	for _, d := range Registry {
		if seen[d.Metric] || d.Metric == "" || strings.ContainsAny(string(d.Metric), " \t") || d.Unit == "" || d.Doc == "" {
			t.Errorf("definition %+v: a metric named once, without spaces, with a unit and what it measures", d)
		}
		seen[d.Metric] = true
		if d.Source == FromLatency && d.Metric != Mean && !(d.Quantile > 0 && d.Quantile < 100) {
			t.Errorf("%s: a percentile needs its quantile in (0, 100), has %v", d.Metric, d.Quantile)
		}
		if got, ok := Lookup(d.Metric); !ok || got.Metric != d.Metric || d.Metric.HigherIsBetter() != d.HigherIsBetter {
			t.Errorf("%s: Lookup %+v, %v", d.Metric, got, ok)
		}
	}
	if len(AllMetrics) != len(Registry) {
		t.Errorf("AllMetrics %v, Registry %d", AllMetrics, len(Registry))
	}
	if _, ok := Lookup("sec/op"); ok || !Metric("B/s").HigherIsBetter() || Metric("sec/op").HigherIsBetter() {
		t.Error("a Go benchmark unit is not a registry metric, and a rate is better higher")
	}
}

// TestUnit: a registry metric's unit, any other metric its own name.
func TestUnit(t *testing.T) {
	for m, want := range map[Metric]string{RPS: "req/s", P95: "s", MemPeak: "bytes", "sec/op": "sec/op", "items/op": "items/op"} {
		if got := m.Unit(); got != want {
			t.Errorf("%s.Unit() = %q, want %q", m, got, want)
		}
	}
}
