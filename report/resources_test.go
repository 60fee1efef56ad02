package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
)

func TestResourceUnits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		u    latencyUnit
		v    float64
		want string
	}{
		{"cpu ms", chooseCPUUnit([]float64{0.0016, 0.0021}), 0.0016, "ms 1.60"},
		{"cpu ms ≥ 10", chooseCPUUnit([]float64{0.0258, 0.3262}), 0.3262, "ms 326.2"},
		{"cpu below 1 ms", chooseCPUUnit([]float64{0.00045, 0.002}), 0.00045, "ms 0.450"},
		{"cpu all µs", chooseCPUUnit([]float64{0.0000452, 0.000081}), 0.0000452, "µs 45.2"},
		{"cpu none", chooseCPUUnit(nil), 0.0016, "ms 1.6"},
		{"mem MiB", chooseMemUnit([]float64{130 << 20, 1023 << 20}), 130 << 20, "MiB 130.0"},
		{"mem GiB", chooseMemUnit([]float64{130 << 20, 1024 << 20}), 130 << 20, "GiB 0.13"},
	} {
		if got := tc.u.name + " " + tc.u.plain(tc.v); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"0", 1}, {"0-3", 4}, {"0-3,5", 5}, {"1,3,5-6", 4}, {"", 0}, {"3-1", 0}, {"x", 0},
	} {
		if got := cpusetSize(tc.in); got != tc.want {
			t.Errorf("cpusetSize(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
	if got := share(0.13) + " " + share(1.4249) + " " + share(0); got != "13% 142% 0%" {
		t.Errorf("share = %q", got)
	}
}

func TestResVerdictText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		vs       []resVerdict
		md, term string
	}{
		{nil, "—", "—"},
		{[]resVerdict{{gate.CPUPerReq, gate.Tie, false, gate.Decision{}}, {gate.MemPeak, gate.Tie, false, gate.Decision{}}}, "tie", "tie"},
		{
			[]resVerdict{{gate.CPUPerReq, gate.Regression, true, gate.Decision{}}, {gate.MemMean, gate.Tie, false, gate.Decision{}}, {gate.MemPeak, gate.Regression, false, gate.Decision{}}},
			`**regression** (cpu\_per\_req); regression, not gated (mem\_peak)`,
			"REGRESSION (cpu_per_req); regression, not gated (mem_peak)",
		},
		{
			[]resVerdict{{gate.CPUPerReq, gate.Inconclusive, false, gate.Decision{}}, {gate.MemPeak, gate.Improvement, false, gate.Decision{}}},
			`inconclusive (cpu\_per\_req); improvement (mem\_peak)`,
			"inconclusive (cpu_per_req); improvement (mem_peak)",
		},
		{
			// Ties that could not resolve their band say what they could
			// not see, rounded up.
			[]resVerdict{{gate.CPUPerReq, gate.Tie, false, gate.Decision{Metric: gate.CPUPerReq, Verdict: gate.Tie, Unresolved: true, Resolution: 0.4, RulesOut: 0.3012}},
				{gate.MemMean, gate.Tie, false, gate.Decision{Metric: gate.MemMean, Verdict: gate.Tie, Resolution: 0.04}},
				{gate.MemPeak, gate.Tie, false, gate.Decision{Metric: gate.MemPeak, Verdict: gate.Tie, Unresolved: true, Resolution: 0.2, RulesOut: 0.1201}}},
			`tie (rules out > 31% in cpu\_per\_req, > 13% in mem\_peak)`,
			"tie (rules out > 31% in cpu_per_req, > 13% in mem_peak)",
		},
		{
			[]resVerdict{{gate.CPUPerReq, gate.Regression, true, gate.Decision{}},
				{gate.MemPeak, gate.Tie, false, gate.Decision{Metric: gate.MemPeak, Verdict: gate.Tie, Unresolved: true, Resolution: 0.06, RulesOut: 0.0512}}},
			`**regression** (cpu\_per\_req); tie (rules out > 5.2% in mem\_peak)`,
			"REGRESSION (cpu_per_req); tie (rules out > 5.2% in mem_peak)",
		},
	} {
		if got := resVerdictText(tc.vs, true); got != tc.md {
			t.Errorf("markdown %+v = %q, want %q", tc.vs, got, tc.md)
		}
		if got := resVerdictText(tc.vs, false); got != tc.term {
			t.Errorf("terminal %+v = %q, want %q", tc.vs, got, tc.term)
		}
	}
}

// TestPinSetNamesEscaped: a pin set's name comes from the pull request's
// scenario file, and lands in headings, table cells, prose and the
// terminal.
func TestPinSetNamesEscaped(t *testing.T) {
	t.Parallel()
	const hostile = "cpus=1|<img src=x>`@team\x1b[2J"
	in := pinsInput()
	rename := func(s string) string {
		if s == "cpus=1" {
			return hostile
		}
		return s
	}
	for i := range in.Comparison.Cells {
		c := &in.Comparison.Cells[i]
		c.Key.Pins = rename(c.Key.Pins)
		for j := range c.Failures {
			c.Failures[j].Key.Pins = rename(c.Failures[j].Key.Pins)
		}
	}
	for i := range in.Comparison.Failures {
		in.Comparison.Failures[i].Key.Pins = rename(in.Comparison.Failures[i].Key.Pins)
	}
	for i := range in.Results.Rungs {
		in.Results.Rungs[i].Pins = rename(in.Results.Rungs[i].Pins)
	}
	for i := range in.Results.Plan.Cells {
		in.Results.Plan.Cells[i].Pins = rename(in.Results.Plan.Cells[i].Pins)
	}
	in.Results.Env.Pins[0].Name = hostile
	in.Results.Env.Pins[0].NotApplied = []string{"generator cpuset 0: <b>denied</b>"}

	var b strings.Builder
	if err := Markdown(&b, in); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	esc := EscapeMarkdown(hostile)
	for _, want := range []string{
		"### " + esc + " · csv\n",
		"### Resources · " + esc + " · csv\n",
		"| " + esc + " | csv | Q01 | 8 | candidate |",
		"in \\[" + esc + "\\] csv/Q01 c=8",
		"- Pin set " + esc + " was not fully applied (generator cpuset 0: &lt;b&gt;denied&lt;/b&gt;)",
		"(1 pinned CPU in pin set " + esc + ")",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	for _, bad := range []string{"<img", "@team", "\x1b", "=1|"} {
		if strings.Contains(out, bad) {
			t.Errorf("markdown has raw %q", bad)
		}
	}
	b.Reset()
	if err := Terminal(&b, in, TerminalOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(b.String(), '\x1b') {
		t.Errorf("terminal output has an escape byte:\n%q", b.String())
	}
	if !strings.Contains(b.String(), `cpus=1|<img src=x>`+"`"+`@team\x1b[2J · csv`) {
		t.Errorf("terminal heading does not show the escaped name:\n%s", b.String())
	}
}

// TestResourcesUndecided: resources measured but not fed to the gate show
// the rungs' means without an interval, and a side with some rungs
// unmeasured averages only the measured ones.
func TestResourcesUndecided(t *testing.T) {
	t.Parallel()
	in := pinsInput()
	for i := range in.Comparison.Cells {
		c := &in.Comparison.Cells[i]
		var keep []gate.Decision
		for _, d := range c.Decisions {
			if d.Metric == gate.RPS || d.Metric == gate.P95 {
				keep = append(keep, d)
			}
		}
		c.Decisions = keep
	}
	// Round 0's baseline rung of the first cell was not measured.
	for i, g := range in.Results.Rungs {
		if g.Cell == in.Results.Plan.Cells[0] && g.Target == "baseline" && g.Round == 0 {
			in.Results.Rungs[i].ResourceSource = ""
			in.Results.Rungs[i].CPUSeconds = 0
		}
	}
	m := newModel(in)
	r := m.tables[0].res.rows[0]
	// Rounds 1 and 2: 500 and 505 rps at 1.60 and 1.616 ms/req.
	want := resCells{cores: "0.81", cpu: "1.61", memMean: "120.6", memPeak: "130.6"}
	if r.base != want {
		t.Errorf("baseline = %+v, want %+v", r.base, want)
	}
	if r.dCPU != dash || r.verdicts != nil {
		t.Errorf("undecided row has Δ %q and verdicts %v", r.dCPU, r.verdicts)
	}
	if got := m.perCore.rows[0]; got.rps != "502.5" || got.cores != "0.81" {
		t.Errorf("per-core row = %+v", got)
	}
}

func TestSourceThreat(t *testing.T) {
	t.Parallel()
	in := pinsInput()
	for i, g := range in.Results.Rungs {
		if g.Target == "candidate" {
			in.Results.Rungs[i].ResourceSource = "proc"
		}
	}
	want := "The targets' resources were read by different means (baseline: cgroup; candidate: proc)"
	if got := newModel(in).sourceThreat(); !strings.HasPrefix(got, want) {
		t.Errorf("sourceThreat = %q, want prefix %q", got, want)
	}
	for i, g := range in.Results.Rungs {
		if g.Target == "candidate" {
			in.Results.Rungs[i].ResourceSource = ""
		}
	}
	if got := newModel(in).sourceThreat(); !strings.HasPrefix(got, "Only the baseline's resources were measured") {
		t.Errorf("sourceThreat = %q", got)
	}
	if got := newModel(fullInput()).sourceThreat(); got != "" {
		t.Errorf("unmeasured run: sourceThreat = %q", got)
	}
}

func TestGeneratorText(t *testing.T) {
	t.Parallel()
	g := &generatorUsage{peakCores: 0.13}
	if got := g.text(md); got != "peak CPU 13% of one core; the CPUs available to it were not recorded" {
		t.Errorf("unknown CPUs: %q", got)
	}
	g = &generatorUsage{peakCores: 0.5, peakShare: 0.125, shareCPUs: 4}
	if got := g.text(md); got != "peak CPU 50% of one core, at most 13% of the CPUs available to it (the runner's 4 CPUs)" {
		t.Errorf("unpinned: %q", got)
	}
	var cells []benchdata.Cell
	for i := range 7 {
		cells = append(cells, benchdata.Cell{Class: "Q", Concurrency: i + 1})
	}
	g.saturated = cells
	want := "the load generator was near saturation (90% or more of the CPUs available to it, or both sides at one throughput with it at its peak) in cells " +
		"Q c=1, Q c=2, Q c=3, Q c=4, Q c=5, and 2 more; throughput there may be the generator's limit, not the target's"
	if got := g.saturationText(md); got != want {
		t.Errorf("saturationText = %q, want %q", got, want)
	}
	// Unmeasured rungs say nothing about the generator.
	if m := newModel(fullInput()); m.generator != nil || m.perCore != nil || m.tables[0].res != nil {
		t.Error("a run without resources has a generator, per-core or resources table")
	}
}

func TestJSONPins(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := JSON(&b, pinsInput()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cells []struct {
			Cell      struct{ Pins string }
			Resources struct {
				Baseline struct {
					Source string
					Rungs  int
					Cores  float64
				}
			}
		}
		Failures []struct {
			Cell struct{ Pins string }
		}
		Generator struct {
			ShareCPUs int `json:"share_cpus"`
			Saturated []struct {
				Pins        string
				Concurrency int
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Cells[1]
	if c.Cell.Pins != "cpus=1" || c.Resources.Baseline.Source != "cgroup" || c.Resources.Baseline.Rungs != 3 {
		t.Errorf("cell 1 = %+v", c)
	}
	// 620 rps × (0.99², 1, 1.01²) × 1.6 ms: mean 0.99206…
	if got := c.Resources.Baseline.Cores; got < 0.99206 || got > 0.99207 {
		t.Errorf("cell 1 baseline cores = %v", got)
	}
	if doc.Failures[0].Cell.Pins != "cpus=1" {
		t.Errorf("failure key lacks pins: %+v", doc.Failures[0])
	}
	g := doc.Generator
	if g.ShareCPUs != 1 || len(g.Saturated) != 1 || g.Saturated[0].Pins != "cpus=1" || g.Saturated[0].Concurrency != 8 {
		t.Errorf("generator = %+v", g)
	}
	// Without pins the key has no pins field at all, so older documents
	// read the same.
	b.Reset()
	if err := JSON(&b, fullInput()); err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{`"pins": ""`, `"resources"`, `"generator"`} {
		if bytes.Contains(b.Bytes(), []byte(absent)) {
			t.Errorf("unpinned, unmeasured document has %s", absent)
		}
	}
}

// TestPinSetRounds: a run cancelled in its second pin set is decided on the
// first's complete rounds. The report says so per pin set, and its
// resources, per-core and error tables keep the first pin set's rungs.
func TestPinSetRounds(t *testing.T) {
	t.Parallel()
	in := pinsCancelledInput()
	if got := in.Results.CompleteRounds(); got != 0 {
		t.Fatalf("fixture: CompleteRounds = %d, want 0", got)
	}
	var b strings.Builder
	if err := Markdown(&b, in); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"> ⚠️ **Run cancelled**: decided on 2 complete rounds of pin set cpus=1, none of cpus=2 (3 planned), " +
			"so the cells of cpus=2 could not be decided.",
		"4 cells × 2 rounds of pin set cpus=1, none of cpus=2 ·",
		"| timeout ×2 |",
		"1 rung of the incomplete round not counted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	for _, absent := range []string{"nothing could be decided", "connect ×3"} {
		if strings.Contains(out, absent) {
			t.Errorf("markdown has %q", absent)
		}
	}

	m := newModel(in)
	if len(m.tables) != 2 || m.tables[0].pins != "cpus=1" || m.tables[0].res == nil {
		t.Fatalf("tables = %+v", m.tables)
	}
	for _, r := range m.tables[0].res.rows {
		if r.base.cores == dash || r.cand.cores == dash || r.base.cpu == dash {
			t.Errorf("cpus=1 resources row %v = %+v", r.key, r)
		}
	}
	for _, c := range in.Results.Plan.Cells {
		for _, target := range []string{"baseline", "candidate"} {
			u := m.usage[sideKey{c, target}]
			switch {
			case c.Pins == "cpus=1" && (u == nil || u.rungs != 2):
				t.Errorf("%v %s: usage %+v, want 2 rungs", c, target, u)
			case c.Pins == "cpus=2" && u != nil:
				t.Errorf("%v %s: undecided rungs counted: %+v", c, target, u)
			}
		}
	}
	if m.perCore == nil {
		t.Fatal("no per-core table")
	}
	for _, r := range m.perCore.rows {
		if r.key.Pins != "cpus=1" {
			t.Errorf("per-core row of %v", r.key)
		}
	}
	if len(m.perCore.rows) != 4 { // two cells of cpus=1, two targets each
		t.Errorf("per-core has %d rows, want 4", len(m.perCore.rows))
	}

	var j bytes.Buffer
	if err := JSON(&j, in); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rounds struct {
			Decided, Planned int
			PinSets          []struct {
				Pins    string
				Decided int
			} `json:"pin_sets"`
		}
	}
	if err := json.Unmarshal(j.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Rounds
	if r.Decided != 0 || r.Planned != 3 || len(r.PinSets) != 2 ||
		r.PinSets[0].Pins != "cpus=1" || r.PinSets[0].Decided != 2 ||
		r.PinSets[1].Pins != "cpus=2" || r.PinSets[1].Decided != 0 {
		t.Errorf("rounds = %+v", r)
	}

	// Pin sets that agree read as before: one number.
	b.Reset()
	if err := Markdown(&b, pinsInput()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "4 cells × 3 rounds ·") {
		t.Errorf("agreeing pin sets: header lacks %q", "4 cells × 3 rounds ·")
	}
}

// TestGeneratorCeiling: a cell where both sides meet one throughput while
// the generator uses most of its CPUs, as much as anywhere in the run, is
// marked as the generator's; one whose sides differ is not.
func TestGeneratorCeiling(t *testing.T) {
	t.Parallel()
	res := fullInput().Results
	res.Env.CPUs, res.Env.Pins = 2, nil
	same := benchdata.Cell{Variant: "csv", Class: "Q01", Concurrency: 8}
	apart := benchdata.Cell{Variant: "csv", Class: "Q01", Concurrency: 1}
	res.Plan.Cells = []benchdata.Cell{apart, same}
	res.Rungs = nil
	for round := range 3 {
		for _, c := range res.Plan.Cells {
			for pos, target := range []string{"baseline", "candidate"} {
				rps := 1000.0
				if c == apart && target == "candidate" {
					rps = 800
				}
				g := benchdata.Rung{Cell: c, Round: round, Target: target, Position: pos, Order: "AB", Start: t0,
					Duration: 5, Values: map[string]float64{"rps": rps}, Requests: int64(5 * rps), ResourceSource: "cgroup", CPUSeconds: 2,
					GenCPUSeconds: 0.8 * 2 * 5} // 80% of the runner's two CPUs
				g.Statuses = map[string]int64{"200": g.Requests}
				res.Rungs = append(res.Rungs, g)
			}
		}
	}
	c, err := decide.Results(res)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Results: res, Comparison: c}
	m := newModel(in)
	if m.generator == nil || !slices.Equal(m.generator.saturated, []benchdata.Cell{same}) {
		t.Fatalf("saturated %v, want only %v", m.generator.saturated, same)
	}
	for _, r := range m.tables[0].rows {
		if r.generatorBound != (cellOf(r.key) == same) {
			t.Errorf("%s: generatorBound %v", r.key, r.generatorBound)
		}
	}
	if got := markdown(t, in); !strings.Contains(got, "**load generator saturated**") {
		t.Errorf("the verdict table does not say so:\n%s", got)
	}
}
