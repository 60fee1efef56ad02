package report

import (
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// goBenchInput is a decided gobench comparison: one benchmark 3× slower
// with more allocations, one unchanged with a custom unit.
func goBenchInput() Input {
	side := func(m map[gate.Metric][]float64) gate.Side { return gate.Side{Samples: m} }
	cells := []gate.CellInput{
		{Key: gate.CellKey{Class: "store.BenchmarkInsert/rows=100-4"},
			Baseline:  side(map[gate.Metric][]float64{"sec/op": {1.20e-6, 1.22e-6, 1.19e-6}, "B/op": {2048, 2048, 2048}, "allocs/op": {12, 12, 12}}),
			Candidate: side(map[gate.Metric][]float64{"sec/op": {3.61e-6, 3.70e-6, 3.58e-6}, "B/op": {6144, 6144, 6144}, "allocs/op": {36, 36, 36}})},
		{Key: gate.CellKey{Class: ".BenchmarkParse|<b>"},
			Baseline:  side(map[gate.Metric][]float64{"sec/op": {0.0021, 0.0020, 0.0022}, "rows/op": {100, 100, 100}}),
			Candidate: side(map[gate.Metric][]float64{"sec/op": {0.0021, 0.0021, 0.0020}, "rows/op": {100, 100, 100}})},
	}
	s := gate.DefaultSettings
	s.TieWithinFor = map[gate.Metric]float64{"allocs/op": 0}
	c := gate.Compare(cells, s, gate.Policy{FailOn: []gate.Rule{{Metric: "sec/op"}, {Metric: "allocs/op"}}, MaxErrorRate: -1, OnlyMeasured: true})
	res := &benchdata.Results{Kind: "gobench", Status: "complete", RoundsDone: map[string]int{"": 3},
		Scenario: benchdata.ScenarioInfo{Name: "client"},
		Plan: benchdata.Plan{Rounds: 3, Cells: []benchdata.Cell{
			{Class: "store.BenchmarkInsert/rows=100-4"}, {Class: ".BenchmarkParse|<b>"}}}}
	return Input{Results: res, Comparison: c}
}

func TestGoBenchTable(t *testing.T) {
	t.Parallel()
	in := goBenchInput()
	var md strings.Builder
	if err := Markdown(&md, in); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| benchmark | unit | baseline | baseline median | candidate | candidate median | Δ | verdict |",
		"| store.BenchmarkInsert/rows=100-4 | sec/op | 1.203 µs ± 3% | 1.200 µs | 3.630 µs ± 4% | 3.610 µs | +201.7% | **regression** |",
		"|  | B/op | 2.000 KiB ± 0% | 2.000 KiB | 6.000 KiB ± 0% | 6.000 KiB | +200.0% | regression (not gated) |",
		"|  | allocs/op | 12.00 ± 0% | 12.00 | 36.00 ± 0% | 36.00 | +200.0% | **regression** |",
		"| .BenchmarkParse\\|&lt;b&gt; | sec/op | 2.100 ms ± 12% | 2.100 ms | 2.067 ms ± 7% | 2.100 ms | -1.6% | tie (rules out > 18%) |",
		"|  | rows/op | 100.0 ± 0% | 100.0 | 100.0 ± 0% | 100.0 | 0.0% | tie |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks\n%s\n---\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "baseline rps") || strings.Contains(md.String(), "undecided") {
		t.Errorf("the HTTP table in a gobench report:\n%s", md.String())
	}
	var term strings.Builder
	if err := Terminal(&term, in, TerminalOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"benchmark", "store.BenchmarkInsert/rows=100-4", "allocs/op", "REGRESSION", "3.630 µs ± 4%"} {
		if !strings.Contains(term.String(), want) {
			t.Errorf("terminal lacks %q:\n%s", want, term.String())
		}
	}
}
