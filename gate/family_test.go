package gate

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// familyCell is a decided cell of one gated rps decision with a paired
// ratio of the given mean log ratio and standard errors (25 batches, 5
// rounds), its verdict as its own interval has it.
func familyCell(i int, logRatio, seB, seR float64, v Verdict) CellResult {
	r := math.Exp(logRatio)
	return CellResult{Key: CellKey{Class: fmt.Sprint("c", i), Concurrency: 1}, Gated: []Metric{RPS},
		Decisions: []Decision{{Metric: RPS, Verdict: v, Rule: RulePaired, Confidence: 0.95, TieWithin: 0.10,
			Reason: "own", Paired: &Ratio{Ratio: r, Lo: r * 0.9, Hi: r * 1.1, N: 25, Pairs: 100, Spread: SpreadRounds,
				Log: LogSpread{Batches: 25, SEBatches: seB, Rounds: 5, SERounds: seR}}}}}
}

// TestControlFamily: which decisions the whole gate's control touches and
// how. Exposed decisions (a standard error of 0.05 against a band of
// ln 1.1 = 0.095) are judged by Holm over all of them: a regression 8
// standard errors out stands, one 2.4 out (its own interval excluded no
// change) is withheld as an unresolved tie that says why; protected ones
// (0.005) keep their verdicts; with the control off or under the overlap
// rule nothing changes. Rps: higher is better, so a regression is a
// ratio below 1.
func TestControlFamily(t *testing.T) {
	s := Settings{Confidence: 0.95, TieWithin: 0.10, Rule: RulePaired, FalseFailure: 0.01}
	exposed := func() []CellResult {
		var cs []CellResult
		for i := range 22 {
			cs = append(cs, familyCell(i, 0.01*float64(i%3-1), 0.05, 0.05, Tie))
		}
		return append(cs, familyCell(22, -0.4, 0.05, 0.05, Regression), familyCell(23, -0.12, 0.05, 0.05, Regression))
	}
	cs := exposed()
	f := controlFamily(cs, s)
	if f == nil || f.Decisions != 24 || f.Exposed != 24 || f.Withheld != 1 || f.RoundsFactor != 1 {
		t.Fatalf("family %+v", f)
	}
	if d := cs[22].Decisions[0]; d.Verdict != Regression || d.Withheld {
		t.Errorf("8 standard errors out: %+v", d)
	}
	d := cs[23].Decisions[0]
	if d.Verdict != Tie || !d.Unresolved || !d.Withheld ||
		!strings.HasPrefix(d.Reason, "own; not confirmed for the whole gate: p ") ||
		!strings.Contains(d.Reason, "(24 of 24 gated decisions exposed, whole gate's false failure <= 1%)") {
		t.Errorf("2.4 standard errors out: %+v", d)
	}
	for _, c := range cs[:22] {
		if d := c.Decisions[0]; d.Verdict != Tie || d.Withheld || d.Reason != "own" {
			t.Errorf("tie changed: %+v", d)
		}
	}

	// Protected: the band alone keeps a false regression unlikely.
	var quiet []CellResult
	for i := range 23 {
		quiet = append(quiet, familyCell(i, 0, 0.005, 0.005, Tie))
	}
	quiet = append(quiet, familyCell(23, -0.12, 0.005, 0.005, Regression))
	if f := controlFamily(quiet, s); f == nil || f.Exposed != 0 || f.Withheld != 0 || quiet[23].Decisions[0].Verdict != Regression {
		t.Errorf("quiet: %+v, %+v", f, quiet[23].Decisions[0])
	}

	// The rounds' variance pooled: rounds twice the batches' standard
	// error make every decision's standard error twice its batches'.
	var pooled []CellResult
	for i := range 24 {
		pooled = append(pooled, familyCell(i, 0, 0.01, 0.02, Tie))
	}
	if f := controlFamily(pooled, s); f == nil || math.Abs(f.RoundsFactor-4) > 1e-12 {
		t.Errorf("pooled: %+v", f)
	}

	for _, c := range []struct {
		name string
		s    Settings
	}{{"off", Settings{Confidence: 0.95, TieWithin: 0.10, Rule: RulePaired}}, {"overlap", Settings{Confidence: 0.95, TieWithin: 0.10, Rule: RuleOverlap, FalseFailure: 0.01}}} {
		cs := exposed()
		if f := controlFamily(cs, c.s); f != nil || cs[23].Decisions[0].Verdict != Regression {
			t.Errorf("%s: %+v, %+v", c.name, f, cs[23].Decisions[0])
		}
	}
}

// TestWithheldIsOpen: a withheld regression does not fail the gate; it
// is an unresolved tie of the comparison and keeps its cell open, so an
// adaptive design measures it again.
func TestWithheldIsOpen(t *testing.T) {
	cs := []CellResult{familyCell(0, -0.12, 0.05, 0.05, Regression)}
	for i := 1; i < 24; i++ {
		cs = append(cs, familyCell(i, 0, 0.05, 0.05, Tie))
	}
	controlFamily(cs, Settings{Confidence: 0.95, TieWithin: 0.10, Rule: RulePaired, FalseFailure: 0.01})
	cell := judgeCell(cs[0], CellInput{Key: cs[0].Key}, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: -1})
	if cell.Verdict != Tie || len(cell.Failures) != 0 || len(cell.Unresolved) != 1 || !Open(cell) {
		t.Errorf("withheld cell: %+v", cell)
	}
}
