package benchdata

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchgate/benchgate/gate"
)

func plan2x2() Plan {
	return Plan{Cells: []Cell{{Class: "Q01", Concurrency: 1}, {Class: "Q01", Concurrency: 4}}, Rounds: 3}
}

func rung(c Cell, round int, target string) Rung {
	return Rung{Cell: c, Round: round, Target: target, Requests: 10, Values: map[string]float64{"rps": 100}}
}

func TestCompleteRounds(t *testing.T) {
	t.Parallel()
	p := plan2x2()
	r := &Results{Plan: p}
	check := func(want int) {
		t.Helper()
		if got := r.CompleteRounds(); got != want {
			t.Errorf("after %d rungs: CompleteRounds() = %d, want %d", len(r.Rungs), got, want)
		}
	}
	check(0)
	for round := 0; round < 2; round++ {
		for i, c := range p.Cells {
			r.Rungs = append(r.Rungs, rung(c, round, "baseline"))
			// A round is complete only when its last rung has been written.
			check(round)
			r.Rungs = append(r.Rungs, rung(c, round, "candidate"))
			if i < len(p.Cells)-1 {
				check(round)
			}
		}
		check(round + 1)
	}
	// A partial third round does not count.
	r.Rungs = append(r.Rungs, rung(p.Cells[0], 2, "candidate"))
	check(2)
	// A plan without cells has no rounds.
	if got := (&Results{}).CompleteRounds(); got != 0 {
		t.Errorf("empty plan: %d complete rounds, want 0", got)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	in := &Results{
		Version: FormatVersion, Tool: "benchgate test", Status: "complete", Plan: plan2x2(),
		Scenario: ScenarioInfo{Name: "demo", Hash: "abc", Seed: 42, Gate: gate.Section{Confidence: 0.95, TieWithin: 0.1,
			FailOn: []gate.Rule{{Metric: "rps", Classes: []string{"Q*"}}}}},
		Env: Environment{CPUs: 2, Start: time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)},
		Rungs: []Rung{{Cell: Cell{Class: "Q01", Concurrency: 1}, Target: "baseline", Order: "AB",
			Requests: 100, Errors: map[string]int64{"status": 2, "timeout": 1}, Statuses: map[string]int64{"200": 98, "503": 2},
			Values: map[string]float64{"rps": 99.5, "p95": 0.012}}},
	}
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	out, err := Read(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip changed the results:\n in: %+v\nout: %+v", in, out)
	}
	if got := out.Rungs[0].ErrorCount(); got != 3 {
		t.Errorf("ErrorCount = %d, want 3", got)
	}
	if got := out.Rungs[0].ErrorRate(); got != 0.03 {
		t.Errorf("ErrorRate = %v, want 0.03", got)
	}
	// Write leaves no temporary file behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("output dir holds %d entries, want only results.json", len(entries))
	}
}

// TestGateSectionFormat: the gate section is written under the names and
// in the order results files have always had, and a section of a version
// 2 file, without rule and unresolved, reads and writes back as it was.
func TestGateSectionFormat(t *testing.T) {
	t.Parallel()
	inc := 0.002
	g := gate.Section{Confidence: 0.95, TieWithin: 0.1, MaxErrorRate: 0.001,
		TieWithinFor: map[gate.Metric]float64{"allocs/op": 0, "B/op": 0.05}, HigherBetterFor: map[gate.Metric]bool{"req/sec": true},
		MaxErrorIncrease: &inc, Rule: gate.RulePaired, Unresolved: gate.UnresolvedFail,
		FailOn: []gate.Rule{{Metric: "sec/op"}, {Metric: "rps", Classes: []string{"Q*"}, Concurrency: []string{"8"}, Variants: []string{"csv"}}}}
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"confidence":0.95,"tie_within":0.1,"max_error_rate":0.001,"tie_within_for":{"B/op":0.05,"allocs/op":0},` +
		`"higher_better_for":{"req/sec":true},"max_error_increase":0.002,` +
		`"fail_on":[{"metric":"sec/op"},{"metric":"rps","classes":["Q*"],"concurrency":["8"],"variants":["csv"]}],"rule":"paired","unresolved":"fail"}`
	if string(b) != want {
		t.Errorf("written as\n%s\nwant\n%s", b, want)
	}

	v2 := `{"confidence":0.9,"tie_within":0.05,"max_error_rate":0.01,"fail_on":[{"metric":"rps"}]}`
	var got gate.Section
	if err := json.Unmarshal([]byte(v2), &got); err != nil {
		t.Fatal(err)
	}
	if want := (gate.Section{Confidence: 0.9, TieWithin: 0.05, MaxErrorRate: 0.01, FailOn: []gate.Rule{{Metric: gate.RPS}}}); !reflect.DeepEqual(got, want) {
		t.Errorf("version 2 section read as %+v, want %+v", got, want)
	}
	if b, _ := json.Marshal(got); string(b) != v2 {
		t.Errorf("version 2 section written back as %s", b)
	}
}

// TestCorrectnessOfEarlierVersions: files before version 5 held the
// correctness checks' findings under "gates"; they read into Correctness
// as the same findings written by version 5 read, and are written back
// under "correctness". A version 5 file holding "gates" is refused: read
// without them, a failed pre-flight would pass.
func TestCorrectnessOfEarlierVersions(t *testing.T) {
	t.Parallel()
	c := &Correctness{
		Preflight: []PreflightResult{
			{Name: "lint", Target: "baseline", Command: "./lint {url}", Pass: true, Duration: 0.5, Classes: []string{"search"}},
			{Name: "lint", Target: "candidate", Command: "./lint {url}", ExitCode: 1, LastLine: "FAIL", Duration: 0.6,
				Classes: []string{"search"}, Log: "preflight/lint.candidate.log"},
		},
		Agreement: &AgreementResult{Classes: []ClassAgreement{
			{Class: "list", Mode: "required", Requests: 5, Agree: true, Format: "json"},
			{Variant: "csv", Class: "get", Mode: "warn", Requests: 2, Format: "csv", First: &Disagreement{Index: 1, Method: "GET",
				Target: "/get?id=2", BaselineStatus: 200, CandidateStatus: 200, Reason: "line 2: 1 vs 2", Baseline: "1", Candidate: "2"}},
		}},
		Absent: []AbsentClass{{Class: "search", Reason: "pre-flight lint failed on candidate"}},
	}
	findings, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	doc := func(version int, key string) []byte {
		return []byte(fmt.Sprintf(`{"version":%d,"tool":"benchgate test","status":"complete","plan":{"cells":[{"class":"list","concurrency":1}],"rounds":1},`+
			`%q:%s,"rungs":[{"cell":{"class":"list","concurrency":1},"target":"baseline","requests":10,"values":{"rps":100}}]}`, version, key, findings))
	}
	v5, err := Parse(doc(5, "correctness"), "v5.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v5.Correctness, c) {
		t.Fatalf("version 5 read as %+v, want %+v", v5.Correctness, c)
	}
	v4, err := Parse(doc(4, "gates"), "v4.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v4, v5) {
		t.Errorf("version 4 with gates read as\n%+v\nwant, as version 5 with correctness,\n%+v", v4, v5)
	}
	// Every earlier version: only the findings compared, as a rung's
	// measurements moved in version 4.
	for v := 1; v < 4; v++ {
		r, err := Parse(doc(v, "gates"), "old.json")
		if err != nil || r.Version != FormatVersion || !reflect.DeepEqual(r.Correctness, c) {
			t.Errorf("version %d with gates: %v, version %d, findings %+v", v, err, r.Version, r.Correctness)
		}
	}
	// Written back, an earlier file is a version 5 file.
	dir := t.TempDir()
	if err := Write(dir, v4); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"version": 5`) || !strings.Contains(string(b), `"correctness": {`) || strings.Contains(string(b), `"gates"`) {
		t.Errorf("version 4 written back as\n%s", b)
	}
	// In an earlier file "correctness" is no key of its format: the
	// findings are those under "gates", or none.
	both := strings.Replace(string(doc(4, "gates")), `"rungs":`, `"correctness":{"absent":[{"class":"forged"}]},"rungs":`, 1)
	if r, err := Parse([]byte(both), "both.json"); err != nil || !reflect.DeepEqual(r.Correctness, c) {
		t.Errorf("version 4 with gates and correctness: %v, %+v", err, r)
	}
	if r, err := Parse(doc(4, "correctness"), "v4c.json"); err != nil || r.Correctness != nil {
		t.Errorf("version 4 with correctness only: %v, %+v", err, r)
	}
	// A version 5 file with the old key is refused, naming it.
	for _, text := range []string{string(doc(5, "gates")), strings.Replace(string(doc(5, "correctness")), `"rungs":`, `"gates":{},"rungs":`, 1)} {
		if _, err := Parse([]byte(text), "v5g.json"); err == nil || !strings.Contains(err.Error(), `v5g.json: results format version 5`) || !strings.Contains(err.Error(), `"gates"`) {
			t.Errorf("version 5 with gates: %v, want refused", err)
		}
	}
	// null holds nothing to lose.
	if r, err := Parse([]byte(`{"version":5,"gates":null,"rungs":[]}`), "null.json"); err != nil || r.Correctness != nil {
		t.Errorf("version 5 with gates null: %v", err)
	}
}

func TestReadRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"garbage.json": "{not json",
		"v9.json":      `{"version": 9}`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		_, err := Read(p)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("Read(%s) = %v, want an error naming the file", name, err)
		}
	}
	if _, err := Read(filepath.Join(dir, "v9.json")); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Errorf("want the version named, got %v", err)
	}
}

func TestCompleteRoundsPerPinSet(t *testing.T) {
	t.Parallel()
	p := Plan{PinSets: []string{"cpus=0", "cpus=0-1"}, Rounds: 2, Cells: []Cell{
		{Pins: "cpus=0", Class: "Q", Concurrency: 1}, {Pins: "cpus=0-1", Class: "Q", Concurrency: 1},
	}}
	r := &Results{Plan: p}
	// The first pin set ran both rounds, the second only half of round 0.
	for round := range 2 {
		r.Rungs = append(r.Rungs, rung(p.Cells[0], round, "baseline"), rung(p.Cells[0], round, "candidate"))
	}
	r.Rungs = append(r.Rungs, rung(p.Cells[1], 0, "candidate"))
	if got := r.CompleteRoundsOf("cpus=0"); got != 2 {
		t.Errorf("CompleteRoundsOf(cpus=0) = %d, want 2", got)
	}
	if got := r.CompleteRoundsOf("cpus=0-1"); got != 0 {
		t.Errorf("CompleteRoundsOf(cpus=0-1) = %d, want 0", got)
	}
	if got := r.CompleteRounds(); got != 0 {
		t.Errorf("CompleteRounds() = %d, want the least, 0", got)
	}
	if got := r.CompleteRoundsOf("no such set"); got != 0 {
		t.Errorf("an unknown pin set has %d complete rounds, want 0", got)
	}
}

func TestHasLatency(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		r    Rung
		want bool
	}{
		{"answered", Rung{Statuses: map[string]int64{"200": 5}, Values: map[string]float64{"p50": 0.001}}, true},
		{"nothing answered", Rung{Requests: 5, Errors: map[string]int64{"connect": 5}}, false},
		{"imported without status codes", Rung{Requests: 5, Values: map[string]float64{"p50": 0.002}}, true},
		{"imported, every request failed", Rung{Requests: 5, Values: map[string]float64{"p50": 0.002}, Errors: map[string]int64{"connect": 5}}, false},
		{"imported, nothing measured", Rung{Requests: 5}, false},
		{"a Go benchmark", Rung{Values: map[string]float64{"sec/op": 1e-6}}, false},
	}
	for _, c := range cases {
		if got := c.r.HasLatency(); got != c.want {
			t.Errorf("%s: HasLatency %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	e := Environment{CPUModel: "AMD EPYC 7763", CPUs: 4, Kernel: "6.8.0", OS: "linux", Arch: "amd64", Host: "runner-1",
		Pins: []PinInfo{{Name: "cpus=1", CPUs: "1"}}}
	f := e.Fingerprint()
	if len(f) != 12 {
		t.Fatalf("fingerprint %q", f)
	}
	same := e
	same.Host, same.Start = "runner-2", same.Start.Add(1) // another machine of the same kind
	if same.Fingerprint() != f {
		t.Error("host or time changed the fingerprint")
	}
	for name, change := range map[string]func(*Environment){
		"kernel": func(e *Environment) { e.Kernel = "6.9.0" },
		"cpus":   func(e *Environment) { e.CPUs = 8 },
		"pins":   func(e *Environment) { e.Pins = []PinInfo{{Name: "cpus=1-2", CPUs: "1-2"}} },
	} {
		o := e
		o.Pins = slices.Clone(e.Pins)
		change(&o)
		if o.Fingerprint() == f {
			t.Errorf("a different %s kept the fingerprint", name)
		}
	}
	if got := e.FingerprintText(); got != "AMD EPYC 7763 × 4, linux/amd64, kernel 6.8.0; pins cpus=1" {
		t.Errorf("text %q", got)
	}
}

// TestImported: Kind's "import:" prefix is read in one place.
func TestImported(t *testing.T) {
	for _, c := range []struct {
		kind, tool string
		suite      bool
		ok, bench  bool
	}{
		{ImportedKind("k6"), "k6", false, true, false},
		{ImportedKind("hyperfine"), "hyperfine", true, true, true},
		{"gobench", "", false, false, true},
		{"grpc", "", false, false, false},
		{"", "", false, false, false},
	} {
		r := &Results{Kind: c.kind, Suite: c.suite}
		tool, ok := r.Imported()
		if tool != c.tool && ok || ok != c.ok || r.Benchmarks() != c.bench {
			t.Errorf("%q: Imported %q %v, Benchmarks %v", c.kind, tool, ok, r.Benchmarks())
		}
	}
}

// TestSetLatencyEveryRegistryMetric: a rung and a slice store every
// latency metric of gate.Registry from their histogram, each percentile
// at its quantile and the mean, and nothing from an empty histogram.
func TestSetLatencyEveryRegistryMetric(t *testing.T) {
	t.Parallel()
	h := hdrhistogram.New(1, 60_000_000, 3)
	for v := int64(1); v <= 10_000; v++ { // 1 µs … 10 ms, one of each
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	var r Rung
	if err := r.SetLatency(h); err != nil {
		t.Fatal(err)
	}
	var s Slice
	s.SetLatency(h)
	for _, d := range gate.Registry {
		if d.Source != gate.FromLatency {
			if _, ok := r.Values[string(d.Metric)]; ok {
				t.Errorf("%s stored from a histogram", d.Metric)
			}
			continue
		}
		want := d.Quantile * 100e-6 // the q-th percentile of 1..10,000 µs, in s
		if d.Quantile == 0 {
			want = 5000.5e-6
		}
		for what, got := range map[string]float64{"rung": r.Value(d.Metric), "slice": s.Value(d.Metric)} {
			if math.Abs(got-want) > want*1e-3 {
				t.Errorf("%s %s = %v, want %v", what, d.Metric, got, want)
			}
		}
	}
	var empty Rung
	if err := empty.SetLatency(hdrhistogram.New(1, 60_000_000, 3)); err != nil || len(empty.Values) != 0 {
		t.Errorf("an empty histogram stored %v, %v", empty.Values, err)
	}
}

// TestSuiteMarked: a benchmark harness's import says it holds benchmarks
// in the file (suite), not by its name in a list of formats here; before
// format 4 its kind said it, and an earlier file reads as marked.
func TestSuiteMarked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		json  string
		bench bool
	}{
		{`{"version":3,"kind":"import:hyperfine","rungs":[]}`, true},
		{`{"version":2,"kind":"import:customSmallerIsBetter","rungs":[]}`, true},
		{`{"version":3,"kind":"import:vegeta","rungs":[{"rps":10}]}`, false},
		{`{"version":4,"kind":"import:anything","suite":true,"rungs":[]}`, true},
		{`{"version":4,"kind":"import:hyperfine","rungs":[]}`, false},
		{`{"version":4,"kind":"gobench","rungs":[]}`, true},
	} {
		r, err := Parse([]byte(c.json), "r.json")
		if err != nil || r.Benchmarks() != c.bench {
			t.Errorf("%s: benchmarks %v, %v; want %v", c.json, r != nil && r.Benchmarks(), err, c.bench)
		}
	}
}
