package report

import (
	"strings"
	"testing"

	"github.com/benchgate/benchgate/baselines"
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
	res := &baselines.Results{Kind: "gobench", Status: "complete", RoundsDone: map[string]int{"": 3},
		Scenario: baselines.ScenarioInfo{Name: "client"},
		Plan: baselines.Plan{Rounds: 3, Cells: []baselines.Cell{
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
		"| store.BenchmarkInsert/rows=100-4 | sec/op | 1.20 ±0.04 µs | 1.20 µs | 3.63 ±0.16 µs | 3.61 µs | +201.7% | **regression** |",
		"|  | B/op | 2 ±0 KiB/op | 2 KiB/op | 6 ±0 KiB/op | 6 KiB/op | +200.0% | regression (not gated) |",
		"|  | allocs/op | 12 ±0 | 12 | 36 ±0 | 36 | +200.0% | **regression** |",
		"| .BenchmarkParse\\|&lt;b&gt; | sec/op | 2.10 ±0.25 ms | 2.10 ms | 2.07 ±0.14 ms | 2.10 ms | -1.6% | tie (rules out > 18%) |",
		"|  | rows/op | 100 ±0 | 100 | 100 ±0 | 100 | 0.0% | tie |",
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
	for _, want := range []string{"benchmark", "store.BenchmarkInsert/rows=100-4", "allocs/op", "REGRESSION", "3.63 ±0.16 µs"} {
		if !strings.Contains(term.String(), want) {
			t.Errorf("terminal lacks %q:\n%s", want, term.String())
		}
	}
}
