package decide

import (
	"reflect"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// results builds a complete two-round run of one cell in which each side's
// rungs read resources through src[0] (baseline) and src[1] (candidate).
func results(src [2]string) *benchdata.Results {
	cell := benchdata.Cell{Class: "Q", Concurrency: 1}
	r := &benchdata.Results{
		Version: benchdata.FormatVersion, Status: "complete",
		Plan:     benchdata.Plan{Cells: []benchdata.Cell{cell}, Rounds: 2},
		Scenario: benchdata.ScenarioInfo{Gate: gate.Section{Confidence: 0.95, TieWithin: 0.1, MaxErrorRate: 0.001}},
	}
	for round := range 2 {
		for t, name := range []string{"baseline", "candidate"} {
			r.Rungs = append(r.Rungs, benchdata.Rung{
				Cell: cell, Round: round, Target: name, Duration: 1, Requests: 100,
				Statuses: map[string]int64{"200": 100}, Values: map[string]float64{"rps": 100 + float64(round), "mean": 0.005, "p50": 0.004, "p90": 0.008, "p95": 0.01, "p99": 0.02},
				ResourceSource: src[t], CPUSeconds: 0.5 + 0.01*float64(round), MemMean: 10 << 20, MemPeak: 12 << 20,
			})
		}
	}
	return r
}

func TestDecideResourceSources(t *testing.T) {
	t.Parallel()
	check := func(src [2]string, wantResources bool) {
		t.Helper()
		cmp, err := Results(results(src))
		if err != nil {
			t.Fatal(err)
		}
		c := cmp.Cells[0]
		for _, m := range []gate.Metric{gate.CPUPerReq, gate.MemMean, gate.MemPeak} {
			if _, ok := c.Decision(m); ok != wantResources {
				t.Errorf("sources %v: decision of %s present %v, want %v", src, m, ok, wantResources)
			}
		}
		if d, ok := c.Decision(gate.RPS); !ok || d.Baseline.N != 2 {
			t.Errorf("sources %v: rps decision %+v", src, d)
		}
	}
	check([2]string{"cgroup", "cgroup"}, true)
	check([2]string{"proc", "proc"}, true)
	// Read two ways, the figures differ by definition: not decided.
	check([2]string{"cgroup", "proc"}, false)
	check([2]string{"docker", ""}, false)
	check([2]string{"", ""}, false)
}

// A rung in which nothing was answered contributes no latency and no
// resource-per-request sample: its zeros would read as perfect.
func TestDecideSilentRung(t *testing.T) {
	t.Parallel()
	res := results([2]string{"cgroup", "cgroup"})
	r := &res.Rungs[3] // round 1, candidate
	r.Statuses, r.Requests = nil, 0
	r.SetValue(gate.RPS, 0)
	delete(r.Values, string(gate.P95))
	cmp, err := Results(res)
	if err != nil {
		t.Fatal(err)
	}
	c := cmp.Cells[0]
	if d, _ := c.Decision(gate.P95); d.Candidate.N != 1 || d.Verdict != gate.Inconclusive {
		t.Errorf("p95: candidate n %d verdict %s, want 1 sample and inconclusive", d.Candidate.N, d.Verdict)
	}
	if d, _ := c.Decision(gate.RPS); d.Candidate.N != 2 {
		t.Errorf("rps keeps the silent rung's 0: n %d", d.Candidate.N)
	}
	if d, _ := c.Decision(gate.CPUPerReq); d.Candidate.N != 1 {
		t.Errorf("cpu_per_req: candidate n %d, want 1", d.Candidate.N)
	}
}

// TestDecideCorrectness: the correctness checks' findings turn into
// failures as docs/correctness.md says, and the cells are decided as
// without them.
func TestDecideCorrectness(t *testing.T) {
	t.Parallel()
	pf := func(name, target string, pass bool, exit int) benchdata.PreflightResult {
		return benchdata.PreflightResult{Name: name, Target: target, Pass: pass, ExitCode: exit, LastLine: name + " said so"}
	}
	dis := &benchdata.Disagreement{Index: 2, Method: "GET", Target: "/s?q=1", Reason: "$.n: 1 vs 2"}
	r := results([2]string{"", ""})
	r.Correctness = &benchdata.Correctness{
		Preflight: []benchdata.PreflightResult{
			pf("both", "baseline", false, 1), pf("both", "candidate", false, 1), // the setup's problem
			pf("broke", "baseline", true, 0), pf("broke", "candidate", false, 2), // the change's
			pf("fixed", "baseline", false, 1), pf("fixed", "candidate", true, 0),
			pf("only", "candidate", false, 4), // asked of the candidate alone
		},
		Agreement: &benchdata.AgreementResult{Classes: []benchdata.ClassAgreement{
			{Class: "Q", Mode: "required", Requests: 5, Agree: true},
			{Variant: "csv", Class: "S", Mode: "required", Requests: 3, First: dis},
			{Class: "W", Mode: "warn", Requests: 3, First: dis},
		}},
	}
	c, err := Results(r)
	if err != nil {
		t.Fatal(err)
	}
	want := []gate.Failure{
		{Kind: gate.FailPreflight, Reason: "pre-flight broke fails on the candidate (exit 2: broke said so) and passes on the baseline"},
		{Kind: gate.FailPreflight, Reason: "pre-flight only fails on the candidate (exit 4: only said so)"},
		{Key: gate.CellKey{Variant: "csv", Class: "S"}, Kind: gate.FailAgreement, Reason: "answers differ at request 3 (GET /s?q=1): $.n: 1 vs 2"},
	}
	if c.Outcome != gate.Fail || len(c.Failures) != len(want) {
		t.Fatalf("outcome %s, failures %+v", c.Outcome, c.Failures)
	}
	for i := range want {
		if c.Failures[i] != want[i] {
			t.Errorf("failure %d = %+v\nwant %+v", i, c.Failures[i], want[i])
		}
	}
	if len(c.Cells) != 1 || c.Cells[0].Verdict != gate.Tie {
		t.Errorf("cells %+v", c.Cells)
	}

	// Without failing checks the same cells pass.
	r.Correctness = &benchdata.Correctness{Preflight: []benchdata.PreflightResult{pf("ok", "baseline", true, 0), pf("ok", "candidate", true, 0)}}
	if c, _ := Results(r); c.Outcome != gate.Pass {
		t.Errorf("passing checks: %s %+v", c.Outcome, c.Failures)
	}
}

// TestRules: the tie rule and the policy are the file's gate section, with
// the default confidence where it has none, the looks of its design, the
// whole gate's error (the default where unset, 0 for off), and what the
// kind of results asks for. A section without rule and
// unresolved (a file of version 2) decides by overlap and warns.
func TestRules(t *testing.T) {
	t.Parallel()
	inc := 0.002
	g := gate.Section{TieWithin: 0.05, MaxErrorRate: 0.01, MaxErrorIncrease: &inc,
		TieWithinFor: map[gate.Metric]float64{gate.P95: 0.2}, HigherBetterFor: map[gate.Metric]bool{"req/sec": true},
		FailOn: []gate.Rule{{Metric: gate.RPS, Classes: []string{"Q*"}}}}
	res := &benchdata.Results{Kind: "import:k6", Scenario: benchdata.ScenarioInfo{Gate: g,
		Load: benchdata.LoadInfo{Repetitions: 3, MaxRepetitions: 5}}}
	s, p := Rules(res)
	wantS := gate.Settings{Confidence: 0.95, TieWithin: 0.05, TieWithinFor: g.TieWithinFor, HigherBetterFor: g.HigherBetterFor, Looks: 3, MaxRounds: 5,
		FalseFailure: gate.DefaultFalseFailure}
	wantP := gate.Policy{FailOn: g.FailOn, MaxErrorRate: 0.01, MaxErrorIncrease: &inc, RuleMustApply: true}
	if !reflect.DeepEqual(s, wantS) || !reflect.DeepEqual(p, wantP) {
		t.Errorf("import: rules %+v, %+v\nwant %+v, %+v", s, p, wantS, wantP)
	}

	res.Kind = "gobench"
	res.Scenario.Gate.Confidence, res.Scenario.Gate.Rule, res.Scenario.Gate.Unresolved = 0.9, gate.RulePaired, gate.UnresolvedFail
	s, p = Rules(res)
	if s.Confidence != 0.9 || s.Rule != gate.RulePaired || p.Unresolved != gate.UnresolvedFail ||
		!p.OnlyMeasured || !p.RuleMustApply || p.RequireAnswers {
		t.Errorf("gobench: rules %+v, %+v", s, p)
	}
	off, ff := 0.0, 0.05
	for _, c := range []struct {
		set  *float64
		want float64
	}{{nil, gate.DefaultFalseFailure}, {&off, 0}, {&ff, 0.05}} {
		res.Scenario.Gate.FalseFailure = c.set
		if s, _ = Rules(res); s.FalseFailure != c.want {
			t.Errorf("false_failure %v: settings' %v, want %v", c.set, s.FalseFailure, c.want)
		}
	}
	res.Kind = ""
	if _, p = Rules(res); p.OnlyMeasured || p.RuleMustApply || !p.RequireAnswers {
		t.Errorf("load: policy %+v", p)
	}
}

// TestCPUFloor: CPU per request read from /proc is below its floor when
// a side used fewer than CPUFloorTicks 10 ms ticks an observation of the
// paired ratio (here a rung: two rounds of one pair each); the decision
// is then an unresolved tie saying why, and not gated whatever its
// interval says. The same CPU read from a cgroup (nanoseconds) is
// decided as measured; so is /proc CPU well above the floor.
func TestCPUFloor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, src string
		cpu       float64 // CPU seconds a rung
		floor     bool
	}{
		{"proc, 2 ticks a rung", "proc", 0.02, true},
		{"proc, 50 ticks a rung", "proc", 0.5, false},
		{"cgroup, 2 ticks' worth", "cgroup", 0.02, false},
	} {
		r := results([2]string{c.src, c.src})
		r.Scenario.Gate.FailOn = []gate.Rule{{Metric: gate.CPUPerReq}}
		for i := range r.Rungs {
			r.Rungs[i].CPUSeconds = c.cpu
			if r.Rungs[i].Target == "candidate" {
				r.Rungs[i].CPUSeconds = 2 * c.cpu // a 100% rise: a regression when measured
			}
		}
		cmp, err := Results(r)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := cmp.Cells[0].Decision(gate.CPUPerReq)
		if got := d.Floor != ""; got != c.floor {
			t.Errorf("%s: floor %q, want one: %v", c.name, d.Floor, c.floor)
			continue
		}
		if c.floor {
			if d.Verdict != gate.Tie || !d.Unresolved || d.Open() || cmp.Outcome == gate.Fail ||
				!strings.Contains(d.Reason, "below its measurement floor: the baseline's CPU time, read from /proc in 10 ms ticks, was 2.0 ticks an observation (2 observations)") {
				t.Errorf("%s: %+v, outcome %s", c.name, d, cmp.Outcome)
			}
		} else if cmp.Outcome != gate.Fail {
			t.Errorf("%s: outcome %s, want fail (a 100%% rise measured)", c.name, cmp.Outcome)
		}
	}
	// A round in which a side used no tick at all is below the floor
	// however much CPU the others counted.
	r := results([2]string{"proc", "proc"})
	r.Scenario.Gate.FailOn = []gate.Rule{{Metric: gate.CPUPerReq}}
	for i := range r.Rungs {
		r.Rungs[i].CPUSeconds = 0.5
		if r.Rungs[i].Target == "baseline" && r.Rungs[i].Round == 0 {
			r.Rungs[i].CPUSeconds = 0
		}
	}
	cmp, err := Results(r)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := cmp.Cells[0].Decision(gate.CPUPerReq); !strings.Contains(d.Floor, "the baseline's CPU time, read from /proc in 10 ms ticks, was no tick at all in round 1") {
		t.Errorf("a round without a tick: %+v", d)
	}
	// Under the paired rule such a round has no ratio, which made the
	// metric inconclusive and failed an A/A gate (verdict-quality, 30%
	// duty: a 1 s rung of 12 requests with no tick): it is below the
	// floor, an unresolved tie, not gated.
	r = results([2]string{"proc", "proc"})
	r.Scenario.Gate.FailOn = []gate.Rule{{Metric: gate.CPUPerReq}}
	r.Scenario.Gate.Rule = gate.RulePaired
	for i := range r.Rungs {
		r.Rungs[i].CPUSeconds = 0.5
		if r.Rungs[i].Target == "candidate" && r.Rungs[i].Round == 0 {
			r.Rungs[i].CPUSeconds = 0
		}
	}
	cmp, err = Results(r)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := cmp.Cells[0].Decision(gate.CPUPerReq)
	if d.Verdict != gate.Tie || !d.Unresolved || cmp.Outcome != gate.Pass ||
		!strings.Contains(d.Floor, "the candidate's CPU time, read from /proc in 10 ms ticks, was no tick at all in round 1") {
		t.Errorf("paired, a round without a tick: %+v, outcome %s", d, cmp.Outcome)
	}
}
