package decide

import (
	"reflect"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/gate"
)

func TestGateChanges(t *testing.T) {
	t.Parallel()
	inc := 0.01
	v2 := gate.Section{Confidence: 0.95, TieWithin: 0.1, MaxErrorRate: 0.001, FailOn: []gate.Rule{{Metric: gate.RPS}}}
	check := func(name string, recorded, declared gate.Section, want []string) {
		t.Helper()
		got, err := GateChanges(recorded, declared)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	// A version-2 file leaves the rule and unresolved out: overlap, warn.
	overlap := v2
	overlap.Rule, overlap.Unresolved = gate.RuleOverlap, gate.UnresolvedWarn
	check("same", v2, overlap, nil)
	check("default", v2, gate.DefaultSection, []string{"rule paired, recorded overlap"})
	d := gate.DefaultSection
	d.TieWithinFor = map[gate.Metric]float64{gate.P95: 0}
	d.FailOn = []gate.Rule{}
	d.MaxErrorIncrease = &inc
	d.Unresolved = gate.UnresolvedFail
	off, ff := 0.0, gate.DefaultFalseFailure
	d.FalseFailure = &off
	check("every field", gate.DefaultSection, d, []string{
		`metrics' tie_within {"p95":0}, recorded none`,
		`fail_on none, recorded [{"metric":"rps"}]`,
		"max_error_increase 0.01, recorded none",
		"unresolved fail, recorded warn",
		"false_failure off, recorded 0.01 (the default)",
	})
	// false_failure unset is its default: declaring the default is no change.
	d = gate.DefaultSection
	d.FalseFailure = &ff
	check("false_failure at its default", gate.DefaultSection, d, nil)
}

// TestSameGate: a scenario whose gate section agrees with the recorded one
// is no error; one that differs is refused, naming both files and each
// change.
func TestSameGate(t *testing.T) {
	t.Parallel()
	if err := SameGate(gate.DefaultSection, gate.DefaultSection, "r/results.json", "bench.yml"); err != nil {
		t.Errorf("same sections: %v", err)
	}
	declared := gate.DefaultSection
	declared.Unresolved = gate.UnresolvedFail
	err := SameGate(gate.DefaultSection, declared, "r/results.json", "bench.yml")
	const want = "-scenario bench.yml: its gate section differs from the one r/results.json recorded when it ran (unresolved fail, recorded warn); " +
		"a results file is decided by the rule declared before it was measured"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("changed section: %v, want %q…", err, want)
	}
}
