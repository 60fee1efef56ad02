package gate

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// five returns five repetitions m-2d … m+2d: mean m, sd d*sqrt(10/4), and a
// 95% half-width of 2.7764 * 1.5811d / sqrt(5) = 1.9632d.
func five(m, d float64) []float64 { return []float64{m - 2*d, m - d, m, m + d, m + 2*d} }

// side is one target's cell: rps ±1.96, p95 (seconds) ±0.000196, 1000 requests.
func side(rps, p95 float64) Side {
	return Side{
		Samples:  map[Metric][]float64{RPS: five(rps, 1), P95: five(p95, 0.0001)},
		Requests: 1000,
	}
}

var (
	kQ01c4  = CellKey{Variant: "csv", Class: "Q01", Concurrency: 4}
	kQ01c8  = CellKey{Variant: "csv", Class: "Q01", Concurrency: 8}
	kQ11c1  = CellKey{Variant: "csv", Class: "Q11", Concurrency: 1}
	kQ02c8v = CellKey{Variant: "votable", Class: "Q02", Concurrency: 8}
	kQ05c16 = CellKey{Variant: "csv", Class: "Q05", Concurrency: 16}
)

// grid: Q01 c=4 ties (rps overlap, p95 2.5% apart), Q01 c=8 regresses on
// both, Q11 c=1 regresses on rps, the votable Q02 c=8 improves on rps.
var grid = []CellInput{
	{Key: kQ01c4, Baseline: side(200, 0.020), Candidate: side(203, 0.0205)},
	{Key: kQ01c8, Baseline: side(400, 0.024), Candidate: side(200, 0.059)},
	{Key: kQ11c1, Baseline: side(100, 0.100), Candidate: side(80, 0.100)},
	{Key: kQ02c8v, Baseline: side(100, 0.050), Candidate: side(130, 0.050)},
}

type cellWant struct {
	gated   []Metric
	verdict Verdict
}

func checkComparison(t *testing.T, name string, c Comparison, cells []cellWant, counts Counts, failures []Failure, outcome Outcome) {
	t.Helper()
	if len(c.Cells) != len(cells) {
		t.Fatalf("%s: %d cells, want %d", name, len(c.Cells), len(cells))
	}
	for i, w := range cells {
		got := c.Cells[i]
		if !slices.Equal(got.Gated, w.gated) || got.Verdict != w.verdict {
			t.Errorf("%s: cell %v: gated %v, verdict %s; want gated %v, verdict %s",
				name, got.Key, got.Gated, got.Verdict, w.gated, w.verdict)
		}
	}
	if c.Counts != counts {
		t.Errorf("%s: counts %+v, want %+v", name, c.Counts, counts)
	}
	if !reflect.DeepEqual(c.Failures, failures) {
		t.Errorf("%s: failures\n got %+v\nwant %+v", name, c.Failures, failures)
	}
	if c.Outcome != outcome {
		t.Errorf("%s: outcome %s, want %s", name, c.Outcome, outcome)
	}
}

func TestCompareGrid(t *testing.T) {
	t.Parallel()
	none := []Metric{}
	rps := []Metric{RPS}

	c := Compare(grid, DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS, Classes: []string{"Q0*"}}}, MaxErrorRate: 0.01})
	checkComparison(t, "rps on Q0*", c,
		[]cellWant{{rps, Tie}, {rps, Regression}, {none, Regression}, {rps, Improvement}},
		Counts{Regressions: 2, Improvements: 1, Ties: 1},
		[]Failure{{Key: kQ01c8, Metric: RPS, Kind: "regression", Reason: "candidate 50.0% lower, intervals apart"}},
		Fail)
	if !reflect.DeepEqual(c.Settings, DefaultSettings) || len(c.Policy.FailOn) != 1 {
		t.Errorf("comparison does not carry its settings and policy: %+v %+v", c.Settings, c.Policy)
	}

	// Decisions of a cell, in AllMetrics order, with their reasons.
	got := c.Cells[0].Decisions
	if len(got) != 2 || got[0].Metric != RPS || got[1].Metric != P95 ||
		got[0].Reason != "intervals overlap" || got[1].Reason != "means 2.5% apart (< 10%)" {
		t.Errorf("Q01 c=4 decisions: %+v", got)
	}
	if d, _ := c.Cells[1].Decision(P95); d.Verdict != Regression || d.Reason != "candidate 145.8% higher, intervals apart" {
		t.Errorf("Q01 c=8 p95: %s %q", d.Verdict, d.Reason)
	}

	// p95 gated at c=8 of the csv variant only: Q02 c=8 is votable.
	c = Compare(grid, DefaultSettings, Policy{FailOn: []Rule{{Metric: P95, Concurrency: []string{"8"}, Variants: []string{"csv"}}}, MaxErrorRate: -1})
	checkComparison(t, "p95 at c=8 csv", c,
		[]cellWant{{none, Tie}, {[]Metric{P95}, Regression}, {none, Regression}, {none, Improvement}},
		Counts{Regressions: 2, Improvements: 1, Ties: 1},
		[]Failure{{Key: kQ01c8, Metric: P95, Kind: "regression", Reason: "candidate 145.8% higher, intervals apart"}},
		Fail)

	// Regressions no rule gates are reported, not failed.
	c = Compare(grid, DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS, Classes: []string{"Q0*"}, Concurrency: []string{"4"}}}, MaxErrorRate: 0})
	checkComparison(t, "rps on Q0* c=4", c,
		[]cellWant{{rps, Tie}, {none, Regression}, {none, Regression}, {none, Improvement}},
		Counts{Regressions: 2, Improvements: 1, Ties: 1},
		[]Failure{}, Pass)

	// Every metric everywhere: Q01 c=4 ties on both; Q02 improves on rps.
	c = Compare(grid, DefaultSettings, Policy{FailOn: []Rule{{Metric: P95, Classes: []string{"*"}}, {Metric: RPS}, {Metric: RPS}}, MaxErrorRate: -1})
	both := []Metric{RPS, P95}
	checkComparison(t, "all", c,
		[]cellWant{{both, Tie}, {both, Regression}, {both, Regression}, {both, Improvement}},
		Counts{Regressions: 2, Improvements: 1, Ties: 1},
		[]Failure{
			{Key: kQ01c8, Metric: RPS, Kind: "regression", Reason: "candidate 50.0% lower, intervals apart"},
			{Key: kQ01c8, Metric: P95, Kind: "regression", Reason: "candidate 145.8% higher, intervals apart"},
			{Key: kQ11c1, Metric: RPS, Kind: "regression", Reason: "candidate 20.0% lower, intervals apart"},
		},
		Fail)
}

// Within a gated cell: regression, else inconclusive, else improvement, else tie.
func TestCompareHeadline(t *testing.T) {
	t.Parallel()
	k := kQ01c4
	gateAll := Policy{FailOn: []Rule{{Metric: RPS}, {Metric: P95}}, MaxErrorRate: -1}
	withP99 := Policy{FailOn: []Rule{{Metric: RPS}, {Metric: P95}, {Metric: P99}}, MaxErrorRate: -1}
	cell := func(rpsBase, rpsCand, p95Base, p95Cand float64, p99 bool) []CellInput {
		in := CellInput{Key: k, Baseline: side(rpsBase, p95Base), Candidate: side(rpsCand, p95Cand)}
		if p99 {
			in.Baseline.Samples[P99] = five(0.5, 0.001)
			in.Candidate.Samples[P99] = []float64{0.5} // one repetition
		}
		return []CellInput{in}
	}
	check := func(name string, in []CellInput, p Policy, verdict Verdict, outcome Outcome, kinds ...string) {
		t.Helper()
		c := Compare(in, DefaultSettings, p)
		var gotKinds []string
		for _, f := range c.Failures {
			gotKinds = append(gotKinds, f.Kind+" "+string(f.Metric))
		}
		if c.Cells[0].Verdict != verdict || c.Outcome != outcome || !slices.Equal(gotKinds, kinds) {
			t.Errorf("%s: verdict %s, outcome %s, failures %v; want %s, %s, %v",
				name, c.Cells[0].Verdict, c.Outcome, gotKinds, verdict, outcome, kinds)
		}
	}
	check("improvement and tie", cell(100, 130, 0.02, 0.02, false), gateAll, Improvement, Pass)
	check("ties", cell(100, 101, 0.02, 0.02, false), gateAll, Tie, Pass)
	check("improvement and regression", cell(100, 130, 0.02, 0.03, false), gateAll, Regression, Fail,
		"regression p95")
	check("improvement and inconclusive", cell(100, 130, 0.02, 0.02, true), withP99, Inconclusive, OutcomeUndecided,
		"inconclusive p99")
	check("regression and inconclusive", cell(100, 50, 0.02, 0.02, true), withP99, Regression, Fail,
		"regression rps", "inconclusive p99")
	check("ungated p95 regression: headline from rps", cell(100, 130, 0.02, 0.03, false),
		Policy{MaxErrorRate: -1}, Improvement, Pass)
	check("ungated, inconclusive p99 does not count", cell(100, 101, 0.02, 0.02, true),
		Policy{MaxErrorRate: -1}, Tie, Pass)
	check("gated metric nobody measured", cell(100, 101, 0.02, 0.02, false),
		Policy{FailOn: []Rule{{Metric: P99}}, MaxErrorRate: -1}, Inconclusive, OutcomeUndecided, "inconclusive p99")

	c := Compare(cell(100, 101, 0.02, 0.02, true), DefaultSettings, withP99)
	if f := c.Failures[0]; f.Reason != "need >= 2 repetitions, have 5 (baseline) and 1 (candidate)" {
		t.Errorf("inconclusive reason %q", f.Reason)
	}
	c = Compare(cell(100, 101, 0.02, 0.02, false), DefaultSettings, Policy{FailOn: []Rule{{Metric: P99}}, MaxErrorRate: -1})
	if f := c.Failures[0]; f.Reason != "not measured" {
		t.Errorf("unmeasured reason %q", f.Reason)
	}
}

// A cancelled run leaves a cell with nothing on one side: every metric the
// other side has is inconclusive, never a pass.
func TestCompareCancelledCell(t *testing.T) {
	t.Parallel()
	in := []CellInput{
		{Key: kQ01c4, Baseline: side(200, 0.02), Candidate: side(201, 0.02)},
		{Key: kQ05c16, Baseline: side(300, 0.05), Candidate: Side{}},
	}
	const reason = "measured by the baseline only (5 repetitions, none of the candidate)"

	c := Compare(in, DefaultSettings, Policy{MaxErrorRate: -1})
	checkComparison(t, "ungated", c,
		[]cellWant{{[]Metric{}, Tie}, {[]Metric{}, Inconclusive}},
		Counts{Ties: 1, Inconclusive: 1}, []Failure{}, Pass)
	cancelled := c.Cells[1]
	if len(cancelled.Decisions) != 2 {
		t.Fatalf("cancelled cell decisions: %+v", cancelled.Decisions)
	}
	for _, d := range cancelled.Decisions {
		if d.Verdict != Inconclusive || d.Reason != reason {
			t.Errorf("cancelled cell %s: %s %q", d.Metric, d.Verdict, d.Reason)
		}
	}
	if cancelled.Candidate != (SideTotals{}) || cancelled.Baseline != (SideTotals{Requests: 1000}) {
		t.Errorf("cancelled cell totals: %+v %+v", cancelled.Baseline, cancelled.Candidate)
	}

	c = Compare(in, DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: 0})
	checkComparison(t, "gated", c,
		[]cellWant{{[]Metric{RPS}, Tie}, {[]Metric{RPS}, Inconclusive}},
		Counts{Ties: 1, Inconclusive: 1},
		[]Failure{{Key: kQ05c16, Metric: RPS, Kind: "inconclusive", Reason: reason}},
		OutcomeUndecided)

	// Nothing measured on either side.
	c = Compare([]CellInput{{Key: kQ05c16}}, DefaultSettings, Policy{MaxErrorRate: -1})
	if c.Cells[0].Verdict != Inconclusive || len(c.Cells[0].Decisions) != 0 {
		t.Errorf("empty cell: %+v", c.Cells[0])
	}
}

func TestCompareErrorRate(t *testing.T) {
	t.Parallel()
	withErrors := func(baseErr, candErr, requests int64) []CellInput {
		in := CellInput{Key: kQ01c4, Baseline: side(200, 0.02), Candidate: side(201, 0.02)}
		in.Baseline.Requests, in.Baseline.Errors = requests, baseErr
		in.Candidate.Requests, in.Candidate.Errors = requests, candErr
		return []CellInput{in}
	}
	check := func(in []CellInput, limit float64, outcome Outcome, reason string) {
		t.Helper()
		c := Compare(in, DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: limit})
		var want []Failure = []Failure{}
		if reason != "" {
			want = []Failure{{Key: kQ01c4, Metric: ErrorRate, Kind: "error_rate", Reason: reason}}
		}
		if c.Outcome != outcome || !reflect.DeepEqual(c.Failures, want) {
			t.Errorf("limit %v: outcome %s, failures %+v; want %s, %+v", limit, c.Outcome, c.Failures, outcome, want)
		}
		// A cell failing on errors is a regression whatever its speed.
		if want := map[bool]Verdict{true: Regression, false: Tie}[reason != ""]; c.Cells[0].Verdict != want {
			t.Errorf("limit %v: headline %s, want %s", limit, c.Cells[0].Verdict, want)
		}
	}
	check(withErrors(0, 3, 150), 0.01, Fail,
		"candidate error rate 2% (3 of 150), baseline 0% (0 of 150), limit 1%")
	check(withErrors(0, 3, 150), 0.02, Pass, "") // 3/150 is not above 2%
	check(withErrors(0, 3, 150), -1, Pass, "")
	check(withErrors(2, 1, 65119), 0, Fail, // the reference report's one failed request
		"candidate error rate 0.00154% (1 of 65119), baseline 0.00307% (2 of 65119), limit 0%")
	check(withErrors(0, 0, 0), 0, Pass, "")

	c := Compare(withErrors(1, 3, 150), DefaultSettings, Policy{MaxErrorRate: -1})
	if got := c.Cells[0].Candidate; got != (SideTotals{Requests: 150, Errors: 3, ErrorRate: 0.02}) {
		t.Errorf("candidate totals %+v", got)
	}

	// Relative to the baseline: a baseline that already errors at 5%
	// does not fail a candidate at 5.5% within 1 point, but does one at 10%.
	inc := 0.01
	rel := Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: -1, MaxErrorIncrease: &inc}
	if c := Compare(withErrors(50, 55, 1000), DefaultSettings, rel); c.Outcome != Pass || len(c.Failures) != 0 {
		t.Errorf("5%% vs 5.5%% within 1 point: %s %+v", c.Outcome, c.Failures)
	}
	c = Compare(withErrors(50, 100, 1000), DefaultSettings, rel)
	want := []Failure{{Key: kQ01c4, Metric: ErrorRate, Kind: FailErrorRate,
		Reason: "candidate error rate 10% (100 of 1000), baseline 5% (50 of 1000), more than 1% above the baseline"}}
	if c.Outcome != Fail || !reflect.DeepEqual(c.Failures, want) || c.Cells[0].Verdict != Regression || c.Counts.Regressions != 1 {
		t.Errorf("5%% vs 10%%: %s %+v %s %+v", c.Outcome, c.Failures, c.Cells[0].Verdict, c.Counts)
	}
}

func TestWithCorrectnessFailures(t *testing.T) {
	t.Parallel()
	c := Compare([]CellInput{{Key: kQ01c4, Baseline: side(200, 0.02), Candidate: side(201, 0.02)}},
		DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: -1})
	if c.Outcome != Pass {
		t.Fatalf("outcome %s", c.Outcome)
	}
	if got := WithCorrectnessFailures(c, nil); got.Outcome != Pass || len(got.Failures) != 0 {
		t.Errorf("no correctness failures: %s %+v", got.Outcome, got.Failures)
	}
	f := Failure{Key: CellKey{Class: "Q01"}, Kind: FailAgreement, Reason: "$.n: 1 vs 2"}
	got := WithCorrectnessFailures(c, []Failure{f})
	if got.Outcome != Fail || !reflect.DeepEqual(got.Failures, []Failure{f}) {
		t.Errorf("agreement failure: %s %+v", got.Outcome, got.Failures)
	}
	if c.Outcome != Pass || len(c.Failures) != 0 {
		t.Errorf("the input comparison changed: %s %+v", c.Outcome, c.Failures)
	}
}

func TestCompareMetrics(t *testing.T) {
	t.Parallel()
	// A metric on one side only is decided (inconclusive), and metrics the
	// gate does not know follow AllMetrics by name.
	in := CellInput{Key: kQ01c4, Baseline: side(200, 0.02), Candidate: side(201, 0.02)}
	in.Baseline.Samples["mem_bytes"] = five(1000, 1)
	in.Candidate.Samples["mem_bytes"] = five(2000, 1)
	in.Baseline.Samples["cpu_s"] = five(10, 1)
	in.Candidate.Samples["cpu_s"] = five(10, 1)
	in.Candidate.Samples[P50] = five(0.01, 0.001)
	in.Baseline.Samples[P99] = nil
	c := Compare([]CellInput{in}, DefaultSettings, Policy{FailOn: []Rule{{Metric: "mem_bytes"}, {Metric: P50}}, MaxErrorRate: -1})

	var order []Metric
	for _, d := range c.Cells[0].Decisions {
		order = append(order, d.Metric)
	}
	if want := []Metric{RPS, P50, P95, "cpu_s", "mem_bytes"}; !slices.Equal(order, want) {
		t.Errorf("decided %v, want %v", order, want)
	}
	if want := []Metric{P50, "mem_bytes"}; !slices.Equal(c.Cells[0].Gated, want) {
		t.Errorf("gated %v, want %v", c.Cells[0].Gated, want)
	}
	checkComparison(t, "metrics", c, []cellWant{{[]Metric{P50, "mem_bytes"}, Regression}},
		Counts{Regressions: 1},
		[]Failure{
			{Key: kQ01c4, Metric: P50, Kind: "inconclusive", Reason: "measured by the candidate only (5 repetitions, none of the baseline)"},
			{Key: kQ01c4, Metric: "mem_bytes", Kind: "regression", Reason: "candidate 100.0% higher, intervals apart"},
		},
		Fail)
}

func TestCompareEdges(t *testing.T) {
	t.Parallel()
	// Nothing measured (every class absent, a run that ended before its
	// first round) is never a pass.
	c := Compare(nil, DefaultSettings, Policy{})
	if c.Cells == nil || c.Outcome != OutcomeUndecided || c.Counts != (Counts{}) ||
		!reflect.DeepEqual(c.Failures, []Failure{{Kind: FailInconclusive, Reason: "no cell was measured"}}) {
		t.Errorf("empty comparison: %+v", c)
	}
	// Invalid settings decide nothing.
	c = Compare(grid, Settings{Confidence: 1.5}, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: -1})
	if c.Outcome != OutcomeUndecided || c.Counts != (Counts{Inconclusive: 4}) {
		t.Errorf("invalid settings: outcome %s, counts %+v", c.Outcome, c.Counts)
	}
}

func TestRuleMatches(t *testing.T) {
	t.Parallel()
	check := func(r Rule, k CellKey, want bool) {
		t.Helper()
		if got := r.Matches(k); got != want {
			t.Errorf("%+v.Matches(%+v) = %v, want %v", r, k, got, want)
		}
	}
	check(Rule{}, kQ01c4, true)
	check(Rule{Classes: []string{"*"}, Concurrency: []string{"*"}, Variants: []string{"*"}}, kQ01c4, true)
	check(Rule{Classes: []string{"Q0*"}}, kQ01c4, true)
	check(Rule{Classes: []string{"Q0*"}}, kQ11c1, false)
	check(Rule{Classes: []string{"Q0?", "Q11"}}, kQ11c1, true)
	check(Rule{Classes: []string{"Q1[0-2]"}}, kQ11c1, true)
	check(Rule{Concurrency: []string{"8"}}, kQ01c8, true)
	check(Rule{Concurrency: []string{"8"}}, kQ05c16, false) // not a substring match
	check(Rule{Concurrency: []string{"1?"}}, kQ05c16, true)
	check(Rule{Variants: []string{"csv"}}, kQ02c8v, false)
	check(Rule{Variants: []string{"vo*"}, Concurrency: []string{"8"}}, kQ02c8v, true)
	check(Rule{Variants: []string{"vo*"}, Concurrency: []string{"4"}}, kQ02c8v, false)
	check(Rule{Classes: []string{"Q0["}}, kQ11c1, true) // malformed: widens, never silences
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	check := func(p Policy, wantErr string) {
		t.Helper()
		got := ""
		if err := p.Validate(); err != nil {
			got = err.Error()
		}
		if got != wantErr {
			t.Errorf("Validate(%+v) = %q, want %q", p, got, wantErr)
		}
	}
	check(Policy{}, "")
	check(Policy{FailOn: []Rule{{Metric: RPS, Classes: []string{"Q0*"}, Concurrency: []string{"1?"}}}}, "")
	check(Policy{FailOn: []Rule{{Metric: RPS}, {Metric: P95, Variants: []string{"a", "[b"}}}},
		`fail_on[1]: glob "[b": syntax error in pattern`)
	check(Policy{FailOn: []Rule{{Classes: []string{"Q01"}}}}, "fail_on[0]: no metric")
	for _, u := range []Unresolved{"", UnresolvedWarn, UnresolvedFail, UnresolvedPass} {
		check(Policy{Unresolved: u}, "")
	}
	check(Policy{Unresolved: "ignore"}, `unresolved "ignore" is not warn, fail or pass`)
}

func TestCompareUnits(t *testing.T) {
	t.Parallel()
	// Go benchmark units: sec/op and allocs/op lower is better, B/s higher;
	// allocs/op is deterministic, so tie_within 0 makes 10 → 10.5 a
	// regression where the default band calls it a tie.
	in := CellInput{Key: CellKey{Class: "pkg.BenchmarkX"},
		Baseline: Side{Samples: map[Metric][]float64{
			"sec/op": {1e-6, 1.02e-6, 0.99e-6}, "allocs/op": {10, 10, 10}, "B/s": {100, 101, 99}}},
		Candidate: Side{Samples: map[Metric][]float64{
			"sec/op": {3e-6, 3.1e-6, 2.9e-6}, "allocs/op": {10.5, 10.5, 10.5}, "B/s": {300, 301, 299}}},
	}
	p := Policy{FailOn: []Rule{{Metric: "sec/op"}, {Metric: "allocs/op"}}, MaxErrorRate: -1}
	verdicts := func(s Settings) map[Metric]Verdict {
		c := Compare([]CellInput{in}, s, p)
		v := map[Metric]Verdict{}
		for _, d := range c.Cells[0].Decisions {
			v[d.Metric] = d.Verdict
		}
		return v
	}
	got := verdicts(DefaultSettings)
	if got["sec/op"] != Regression || got["allocs/op"] != Tie || got["B/s"] != Improvement {
		t.Errorf("default band: %v", got)
	}
	s := DefaultSettings
	s.TieWithinFor = map[Metric]float64{"allocs/op": 0}
	if got := verdicts(s); got["allocs/op"] != Regression || got["sec/op"] != Regression {
		t.Errorf("allocs/op within 0: %v", got)
	}
	s.TieWithinFor = map[Metric]float64{"allocs/op": -1}
	if err := s.Validate(); err == nil {
		t.Error("a negative per-metric band validated")
	}
}

func TestCompareGoBenchPolicy(t *testing.T) {
	t.Parallel()
	s := func(v ...float64) []float64 { return v }
	in := []CellInput{
		{Key: CellKey{Class: "BenchmarkOld"},
			Baseline:  Side{Samples: map[Metric][]float64{"sec/op": s(1, 1.1, 0.9), "req/sec": s(1000, 1010, 990)}},
			Candidate: Side{Samples: map[Metric][]float64{"sec/op": s(1, 1.1, 0.9), "req/sec": s(500, 505, 495)}}},
		{Key: CellKey{Class: "BenchmarkNew"},
			Candidate: Side{Samples: map[Metric][]float64{"sec/op": s(9, 9, 9)}}},
	}
	p := Policy{FailOn: []Rule{{Metric: "sec/op"}, {Metric: "req/sec"}}, MaxErrorRate: -1, OnlyMeasured: true, RuleMustApply: true}
	// req/sec is a rate the "/s" suffix does not catch: the scenario says
	// higher is better, and the halving is a regression.
	st := DefaultSettings
	st.HigherBetterFor = map[Metric]bool{"req/sec": true}
	c := Compare(in, st, p)
	if c.Outcome != Fail || len(c.Failures) != 1 || c.Failures[0].Metric != "req/sec" {
		t.Errorf("req/sec halved: %s %+v", c.Outcome, c.Failures)
	}
	// A benchmark the change added is shown, not failed.
	if d, _ := c.Cells[1].Decision("sec/op"); len(c.Cells[1].Gated) != 0 || d.Reason != "measured by the candidate only (3 repetitions, none of the baseline)" {
		t.Errorf("new benchmark: gated %v, %+v", c.Cells[1].Gated, d)
	}
	// A rule on a unit no benchmark reports gates nothing: inconclusive,
	// never a pass.
	p.FailOn = []Rule{{Metric: "ns/op"}}
	c = Compare(in, st, p)
	if c.Outcome != OutcomeUndecided || len(c.Failures) != 1 || c.Failures[0].Metric != "ns/op" {
		t.Errorf("rule on ns/op: %s %+v", c.Outcome, c.Failures)
	}
}

// A side that answered nothing measured nothing: with RequireAnswers the
// cell is never a pass, not even with no fail_on rule at all, where its
// zeros would otherwise leave the outcome a pass.
func TestCompareRequireAnswers(t *testing.T) {
	t.Parallel()
	answered := func(rps float64, answered, inFlight int64) Side {
		s := side(rps, 0.02)
		s.Answered, s.InFlight, s.Rungs = answered, inFlight, 5
		if answered == 0 {
			s.Requests = 0
		}
		return s
	}
	policy := Policy{FailOn: []Rule{}, MaxErrorRate: -1, RequireAnswers: true}
	cases := []struct {
		name          string
		base, cand    Side
		verdict       Verdict
		reason        string
		outcome       Outcome
		withoutPolicy Outcome
	}{
		{"candidate silent", answered(200, 1000, 0), answered(0, 0, 32), Regression,
			"the candidate answered no request in 5 rungs (32 still in flight when the windows closed)", Fail, Pass},
		{"baseline silent", answered(0, 0, 4), answered(200, 1000, 0), Inconclusive,
			"the baseline answered no request in 5 rungs (4 still in flight when the windows closed)", OutcomeUndecided, Pass},
		{"both silent", answered(0, 0, 0), answered(0, 0, 8), Inconclusive,
			"the baseline answered no request in 5 rungs; the candidate answered no request in 5 rungs (8 still in flight when the windows closed)", OutcomeUndecided, Pass},
	}
	for _, tc := range cases {
		in := []CellInput{{Key: kQ01c4, Baseline: tc.base, Candidate: tc.cand}}
		c := Compare(in, DefaultSettings, policy)
		kind := FailNoAnswers
		if tc.outcome == OutcomeUndecided {
			// Unmeasured: inconclusive, and no metric of it decided.
			kind = FailUnmeasured
			for _, d := range c.Cells[0].Decisions {
				if d.Verdict != Inconclusive || !strings.HasPrefix(d.Reason, "unmeasured: ") {
					t.Errorf("%s: %s decided %s (%s) in an unmeasured cell", tc.name, d.Metric, d.Verdict, d.Reason)
				}
			}
		}
		want := []Failure{{Key: kQ01c4, Metric: RPS, Kind: kind, Reason: tc.reason}}
		if c.Outcome != tc.outcome || c.Cells[0].Verdict != tc.verdict || !reflect.DeepEqual(c.Failures, want) {
			t.Errorf("%s: outcome %s, verdict %s, failures %+v; want %s, %s, %+v",
				tc.name, c.Outcome, c.Cells[0].Verdict, c.Failures, tc.outcome, tc.verdict, want)
		}
		p := policy
		p.RequireAnswers = false
		if c := Compare(in, DefaultSettings, p); c.Outcome != tc.withoutPolicy {
			t.Errorf("%s without RequireAnswers: outcome %s, want %s", tc.name, c.Outcome, tc.withoutPolicy)
		}
	}
	// Both sides timing out on every request: unmeasured, and nothing
	// else — not the candidate's 100% error rate either, which the
	// baseline's own says nothing about — and not open to more rounds.
	timedOut := func() Side {
		s := answered(0, 0, 0)
		s.Requests, s.Errors = 10, 10
		return s
	}
	pol := policy
	pol.MaxErrorRate = 0.001
	pol.FailOn = []Rule{{Metric: RPS}}
	c := Compare([]CellInput{{Key: kQ01c4, Baseline: timedOut(), Candidate: timedOut()}}, DefaultSettings, pol)
	if len(c.Failures) != 1 || c.Failures[0].Kind != FailUnmeasured || c.Outcome != OutcomeUndecided || c.Cells[0].Verdict != Inconclusive {
		t.Errorf("both timed out: outcome %s, verdict %s, failures %+v; want unmeasured alone", c.Outcome, c.Cells[0].Verdict, c.Failures)
	}
	if Open(c.Cells[0]) {
		t.Error("an unmeasured cell is open to more rounds")
	}
	// A cell not measured at all (a cancelled run) is left to the rules
	// on cancelled cells: no rung, no failure of this kind.
	c = Compare([]CellInput{{Key: kQ01c4, Baseline: Side{}, Candidate: Side{}}}, DefaultSettings, policy)
	for _, f := range c.Failures {
		if f.Kind == FailNoAnswers || f.Kind == FailUnmeasured {
			t.Errorf("a cell with no rung failed for no answers: %+v", f)
		}
	}
}

func TestCellKeyString(t *testing.T) {
	for k, want := range map[CellKey]string{
		{Class: "Q01", Concurrency: 8}: "Q01 c=8",
		kQ01c8:                         "csv/Q01 c=8",
		{Pins: "cpus=1", Variant: "csv", Class: "Q01", Concurrency: 8}: "[cpus=1] csv/Q01 c=8",
		// A Go benchmark has no concurrency: its -cpu suffix is its name's.
		{Pins: "cpus=1", Class: "store.BenchmarkInsert-4"}: "[cpus=1] store.BenchmarkInsert-4",
	} {
		if got := k.String(); got != want {
			t.Errorf("%#v: %q, want %q", k, got, want)
		}
	}
}
