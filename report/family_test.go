package report

import (
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// TestFamilyClaim: the claims say how the whole gate's error was held —
// every decision protected by the band, some judged together with the
// regressions withheld counted, or the control turned off — and a
// withheld regression's line in the unresolved list says what its own
// interval found.
func TestFamilyClaim(t *testing.T) {
	off := 0.0
	for _, c := range []struct {
		name   string
		f      *gate.Family
		ff     float64
		set    *float64
		want   string
		absent bool
	}{
		{"protected", &gate.Family{Level: 0.01, Decisions: 24}, 0.01, nil,
			"Over its 24 gated decisions at once, the gate fails a build compared with itself in at most 1% of runs (`gate.false_failure`): each was precise enough", false},
		{"exposed", &gate.Family{Level: 0.01, Decisions: 24, Exposed: 5, Withheld: 2}, 0.01, nil,
			"5, noisier than the tie band protects, were judged together by Holm's step-down at the level the rest left, and a regression among them failed the gate only if confirmed there (docs/statistics.md#the-whole-gate); 2 regressions were not confirmed and are shown as unresolved ties.", false},
		{"off", nil, 0, &off, "Each gated decision stood on its own interval (`gate.false_failure: off`)", false},
		{"overlap", nil, 0.01, nil, "", true},
	} {
		rule := gate.RulePaired
		if c.name == "overlap" {
			rule = gate.RuleOverlap
		}
		res := &benchdata.Results{}
		res.Scenario.Gate.Rule, res.Scenario.Gate.FalseFailure = rule, c.set
		m := &model{in: Input{Results: res, Comparison: gate.Comparison{Family: c.f,
			Settings: gate.Settings{Rule: rule, FalseFailure: c.ff}}}}
		got := m.familyClaim()
		if c.absent && got != "" || !c.absent && !strings.Contains(got, c.want) {
			t.Errorf("%s: %q\nwant %q", c.name, got, c.want)
		}
	}
	it := unresolvedItem{key: gate.CellKey{Class: "search", Concurrency: 2},
		d: gate.Decision{Metric: gate.RPS, Delta: -0.142, RulesOut: 0.2301, TieWithin: 0.1, Unresolved: true, Withheld: true}}
	if got, want := unresolvedLine(it, md), "rps in search c=2: tie (rules out > 24%; band 10%; its own interval found -14.2%, not confirmed for the whole gate)"; got != want {
		t.Errorf("withheld line %q\nwant %q", got, want)
	}
}
