package importers

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/scenario"
)

// suiteCase is what a suite's test data must import to.
type suiteCase struct {
	format      string
	base, cand  []string
	cells       []string                 // in order
	metrics     map[string][]gate.Metric // cell → metrics, in rung order
	samples     map[string][2]int        // cell → samples a side (of its first metric)
	first       map[string]float64       // cell → first baseline sample of its first metric
	higher      map[gate.Metric]bool     // the results' HigherBetterFor
	failOn      []gate.Rule
	regressions int // regressed cells under the default gate
}

func td(dir string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join("testdata", dir, n)
	}
	return out
}

// TestReadSuite: every format's recorded (or schema-written) files import
// to the cells, metrics, samples and first values the files hold, and the
// slower candidate regresses under the default gate.
func TestReadSuite(t *testing.T) {
	t.Parallel()
	cases := []suiteCase{{
		format: "hyperfine",
		base:   td("hyperfine", "baseline-1.json", "baseline-2.json"),
		cand:   td("hyperfine", "candidate-1.json", "candidate-2.json"),
		cells:  []string{"sleep $WORK", "sh -c true"},
		metrics: map[string][]gate.Metric{
			"sleep $WORK": {"sec/op"}, "sh -c true": {"sec/op"},
		},
		samples:     map[string][2]int{"sleep $WORK": {20, 20}},
		first:       map[string]float64{"sleep $WORK": 0.01759453628},
		failOn:      []gate.Rule{{Metric: "sec/op"}},
		regressions: 1,
	}, {
		format: "pytest-benchmark",
		base:   td("pytest-benchmark", "baseline-1.json", "baseline-2.json"),
		cand:   td("pytest-benchmark", "candidate-1.json", "candidate-2.json"),
		cells:  []string{"test_bench.py::test_fib", "test_bench.py::test_sleep", "test_bench.py::test_join"},
		metrics: map[string][]gate.Metric{
			"test_bench.py::test_fib": {"sec/op"},
		},
		first:       map[string]float64{"test_bench.py::test_fib": 4.298200002494923e-05, "test_bench.py::test_sleep": 0.0031809359999783737},
		failOn:      []gate.Rule{{Metric: "sec/op"}},
		regressions: 3,
	}, {
		format: "googlebenchmark",
		base:   td("googlebenchmark", "baseline-1.json"),
		cand:   td("googlebenchmark", "candidate-1.json"),
		cells:  []string{"BM_Sum/1024", "BM_Sum/4096", "BM_Concat"},
		metrics: map[string][]gate.Metric{
			"BM_Sum/1024": {"sec/op", "cpu-sec/op", "B/s", "items/s"},
			"BM_Concat":   {"sec/op", "cpu-sec/op", "strings"},
		},
		samples:     map[string][2]int{"BM_Sum/1024": {5, 5}, "BM_Concat": {5, 5}},
		first:       map[string]float64{"BM_Sum/1024": 365.6011615081157e-9},
		failOn:      []gate.Rule{{Metric: "sec/op"}},
		regressions: 3,
	}, {
		format:      "criterion",
		base:        td("criterion", "baseline"),
		cand:        td("criterion", "candidate"),
		cells:       []string{"fold/small", "sum 1000"},
		metrics:     map[string][]gate.Metric{"sum 1000": {"sec/op"}},
		samples:     map[string][2]int{"sum 1000": {10, 10}},
		first:       map[string]float64{"sum 1000": 8377305.0 / 25289 * 1e-9},
		failOn:      []gate.Rule{{Metric: "sec/op"}},
		regressions: 2,
	}, {
		format:      "criterion",
		base:        td("criterion", "messages-baseline.json"),
		cand:        td("criterion", "messages-candidate.json"),
		cells:       []string{"sum 1000", "fold/small"},
		metrics:     map[string][]gate.Metric{"sum 1000": {"sec/op", "elements/s"}, "fold/small": {"sec/op"}},
		samples:     map[string][2]int{"sum 1000": {10, 10}},
		first:       map[string]float64{"sum 1000": 8377305.0 / 25289 * 1e-9},
		failOn:      []gate.Rule{{Metric: "sec/op"}},
		regressions: 2,
	}, {
		format: "jmh",
		base:   td("jmh", "baseline-1.json"),
		cand:   td("jmh", "candidate-1.json"),
		cells:  []string{"org.example.bench.MapBench.put", "org.example.bench.MapBench.get:kind=hash,size=10", "org.example.bench.MapBench.get:kind=hash,size=1000"},
		metrics: map[string][]gate.Metric{
			"org.example.bench.MapBench.put":                   {"ops/s"},
			"org.example.bench.MapBench.get:kind=hash,size=10": {"sec/op", "B/op"},
		},
		samples: map[string][2]int{"org.example.bench.MapBench.put": {6, 6}},
		first: map[string]float64{
			"org.example.bench.MapBench.put":                   1250.1 * 1000,
			"org.example.bench.MapBench.get:kind=hash,size=10": 3.41e-6,
		},
		failOn: []gate.Rule{
			{Metric: "ops/s", Classes: []string{"org.example.bench.MapBench.put"}},
			{Metric: "sec/op", Classes: []string{"org.example.bench.MapBench.get:kind=hash,size=10", "org.example.bench.MapBench.get:kind=hash,size=1000"}},
		},
		regressions: 3,
	}, {
		format:  FormatGABSmaller,
		base:    td("gab", "smaller-baseline-1.json", "smaller-baseline-2.json"),
		cand:    td("gab", "smaller-candidate-1.json", "smaller-candidate-2.json"),
		cells:   []string{"parse/small", "parse/large"},
		metrics: map[string][]gate.Metric{"parse/small": {"sec/op"}, "parse/large": {"ms", "B"}},
		samples: map[string][2]int{"parse/small": {2, 2}},
		first:   map[string]float64{"parse/small": 803.9e-9, "parse/large": 41.28},
		higher:  map[gate.Metric]bool{"sec/op": false, "ms": false, "B": false},
		failOn: []gate.Rule{
			{Metric: "sec/op", Classes: []string{"parse/small"}},
			{Metric: "ms", Classes: []string{"parse/large"}},
			{Metric: "B", Classes: []string{"parse/large"}},
		},
		regressions: 2,
	}, {
		format:      FormatGABBigger,
		base:        td("gab", "bigger-baseline-1.json", "bigger-baseline-2.json"),
		cand:        td("gab", "bigger-candidate-1.json", "bigger-candidate-2.json"),
		cells:       []string{"serve", "encode"},
		metrics:     map[string][]gate.Metric{"serve": {"req/s"}, "encode": {"B/s"}},
		first:       map[string]float64{"encode": 407.9e6},
		higher:      map[gate.Metric]bool{"req/s": true, "B/s": true},
		regressions: 2,
		failOn: []gate.Rule{
			{Metric: "req/s", Classes: []string{"serve"}},
			{Metric: "B/s", Classes: []string{"encode"}},
		},
	}, {
		// gab, as benchgate export -format gab names it: either
		// direction's files, each metric in its own (a unit ending in
		// /s better higher), as the export split them. Nothing recorded.
		format: FormatGAB,
		base:   td("gab", "smaller-baseline-1.json", "smaller-baseline-2.json", "bigger-baseline-1.json", "bigger-baseline-2.json"),
		cand:   td("gab", "smaller-candidate-1.json", "smaller-candidate-2.json", "bigger-candidate-1.json", "bigger-candidate-2.json"),
		cells:  []string{"parse/small", "parse/large", "serve", "encode"},
		metrics: map[string][]gate.Metric{
			"parse/small": {"sec/op"}, "parse/large": {"ms", "B"}, "serve": {"req/s"}, "encode": {"B/s"},
		},
		samples: map[string][2]int{"parse/small": {2, 2}, "serve": {2, 2}},
		first:   map[string]float64{"parse/small": 803.9e-9, "encode": 407.9e6},
		higher:  map[gate.Metric]bool{},
		failOn: []gate.Rule{
			{Metric: "sec/op", Classes: []string{"parse/small"}},
			{Metric: "ms", Classes: []string{"parse/large"}},
			{Metric: "B", Classes: []string{"parse/large"}},
			{Metric: "req/s", Classes: []string{"serve"}},
			{Metric: "B/s", Classes: []string{"encode"}},
		},
		regressions: 4,
	}, {
		format: "bmf",
		base:   td("bmf", "baseline-1.json", "baseline-2.json"),
		cand:   td("bmf", "candidate-1.json", "candidate-2.json"),
		cells:  []string{"parse::small", "/bin/sh -c ./build.sh", "my_binary"},
		metrics: map[string][]gate.Metric{
			"parse::small": {"sec/op", "ops/s"}, "/bin/sh -c ./build.sh": {"build-time"}, "my_binary": {"file-size"},
		},
		samples:     map[string][2]int{"parse::small": {2, 2}},
		first:       map[string]float64{"parse::small": 803.9e-9, "my_binary": 42000},
		higher:      map[gate.Metric]bool{"sec/op": false, "ops/s": true},
		regressions: 2,
		failOn: []gate.Rule{
			{Metric: "sec/op", Classes: []string{"parse::small"}},
			{Metric: "ops/s", Classes: []string{"parse::small"}},
			{Metric: "build-time", Classes: []string{"/bin/sh -c ./build.sh"}},
			{Metric: "file-size", Classes: []string{"my_binary"}},
		},
	}}
	for _, tc := range cases {
		t.Run(tc.format+"/"+filepath.Base(tc.base[0]), func(t *testing.T) {
			t.Parallel()
			res, err := ReadSources(Sources{Tool: tc.format, Baseline: tc.base, Candidate: tc.cand}, Options{}, "benchgate v1")
			if err != nil {
				t.Fatal(err)
			}
			checkSuite(t, res, tc)
		})
	}
}

func checkSuite(t *testing.T, res *benchdata.Results, tc suiteCase) {
	t.Helper()
	if res.Kind != "import:"+tc.format || res.Tool != "benchgate v1" || res.Status != "complete" {
		t.Errorf("kind %q, tool %q, status %q", res.Kind, res.Tool, res.Status)
	}
	var cells []string
	for _, c := range res.Plan.Cells {
		cells = append(cells, c.Class)
	}
	if !slices.Equal(cells, tc.cells) {
		t.Errorf("cells %q, want %q", cells, tc.cells)
	}
	type key struct {
		cell   string
		target string
	}
	count := map[key]int{}
	firsts := map[string]map[string]float64{}
	metrics := map[string][]gate.Metric{}
	for _, r := range res.Rungs {
		k := key{r.Cell.Class, r.Target}
		if r.Round != count[k] || r.Order != "AB" || r.Position != map[string]int{"baseline": 0, "candidate": 1}[r.Target] {
			t.Errorf("%s %s: round %d (want %d), order %q, position %d", r.Cell.Class, r.Target, r.Round, count[k], r.Order, r.Position)
		}
		count[k]++
		if r.Target == "baseline" && firsts[r.Cell.Class] == nil {
			firsts[r.Cell.Class] = r.Values
		}
		for m := range r.Values {
			if !slices.Contains(metrics[r.Cell.Class], gate.Metric(m)) {
				metrics[r.Cell.Class] = append(metrics[r.Cell.Class], gate.Metric(m))
			}
		}
	}
	for cell, want := range tc.metrics {
		got := slices.Clone(metrics[cell])
		slices.Sort(got)
		want = slices.Clone(want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: metrics %q, want %q", cell, got, want)
		}
	}
	for cell, n := range tc.samples {
		if got := [2]int{count[key{cell, "baseline"}], count[key{cell, "candidate"}]}; got != n {
			t.Errorf("%s: %v samples a side, want %v", cell, got, n)
		}
	}
	for cell, want := range tc.first {
		m := gate.Metric("sec/op")
		if ms := tc.metrics[cell]; len(ms) > 0 {
			m = ms[0]
		}
		if got := firsts[cell][string(m)]; math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("%s: first %s %v, want %v", cell, m, got, want)
		}
	}
	g := res.Scenario.Gate
	if tc.higher != nil && !mapsEqual(g.HigherBetterFor, tc.higher) {
		t.Errorf("higher_better_for %v, want %v", g.HigherBetterFor, tc.higher)
	}
	if fmt.Sprint(g.FailOn) != fmt.Sprint(tc.failOn) {
		t.Errorf("fail_on %v, want %v", g.FailOn, tc.failOn)
	}
	// The results are a file benchgate reads back, and decide as the
	// CLI does.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	back, err := benchdata.Parse(b, "results.json")
	if err != nil {
		t.Fatalf("does not read back: %v", err)
	}
	cmp, err := decide.Results(back)
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Counts.Regressions != tc.regressions || cmp.Outcome != gate.Fail {
		t.Errorf("%d regressions, outcome %s; want %d, fail\n%+v", cmp.Counts.Regressions, cmp.Outcome, tc.regressions, cmp.Failures)
	}
	// Each side against itself passes: nothing to fail on.
	same, err := ReadSources(Sources{Tool: tc.format, Baseline: tc.base, Candidate: tc.base}, Options{}, "benchgate v1")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := decide.Results(same); err != nil || c.Counts.Regressions != 0 {
		t.Errorf("baseline against itself: %d regressions, %v", c.Counts.Regressions, err)
	}
}

func mapsEqual(a, b map[gate.Metric]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestReadSuiteOneValueFiles: formats or files with one value a
// benchmark give one repetition a file: pytest-benchmark without
// --benchmark-save-data, Google Benchmark with only aggregates (their
// mean), criterion's estimates.json without sample.json.
func TestReadSuiteOneValueFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, file, cell string
		want               float64
	}{
		{"pytest-benchmark", "testdata/pytest-benchmark/no-data.json", "test_bench.py::test_sleep", 0.0012668796249926118},
		{"googlebenchmark", "testdata/googlebenchmark/aggregates-only.json", "BM_Sum/1024", 422.9291306486096e-9},
		{"criterion", "testdata/criterion/estimates-only", "sum 1000", 391.4202255176908e-9},
	} {
		f := &file{path: tc.file, format: tc.format}
		benches, err := parseSuite(formatNamed(tc.format).suite, f)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		i := slices.IndexFunc(benches, func(b suiteBench) bool { return b.name == tc.cell })
		if i < 0 {
			t.Errorf("%s: no benchmark %q", tc.file, tc.cell)
			continue
		}
		xs := benches[i].samples["sec/op"]
		if len(xs) != 1 || math.Abs(xs[0]-tc.want) > 1e-12*tc.want {
			t.Errorf("%s: %s sec/op %v, want [%v]", tc.file, tc.cell, xs, tc.want)
		}
	}
}

// TestReadSuiteScenario: a gobench scenario's gate section decides, its
// better: overrides a format's direction and its rename rules name the
// cells; other kinds are refused.
func TestReadSuiteScenario(t *testing.T) {
	t.Parallel()
	sc := &Scenario{
		Scenario: &scenario.Scenario{File: "s.yml", Kind: scenario.KindGoBench, Name: "suite",
			GoBench: &scenario.GoBench{Rename: []scenario.Rename{mustRename(t, `^parse::(.*)$`, "p/$1")}}},
		Info: benchdata.ScenarioInfo{Name: "suite", File: "s.yml", Gate: gate.Section{
			Confidence: 0.95, TieWithin: 0.1, FailOn: []gate.Rule{{Metric: "ops/s"}},
			HigherBetterFor: map[gate.Metric]bool{"ops/s": false},
		}},
	}
	src := Sources{Tool: "bmf", Baseline: td("bmf", "baseline-1.json"), Candidate: td("bmf", "candidate-1.json")}
	res, err := ReadSources(src, Options{Scenario: sc}, "benchgate v1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.Cells[0].Class != "p/small" || res.Scenario.Name != "suite" || res.Scenario.File != "s.yml" {
		t.Errorf("cell %q, scenario %q %q", res.Plan.Cells[0].Class, res.Scenario.Name, res.Scenario.File)
	}
	g := res.Scenario.Gate
	if fmt.Sprint(g.FailOn) != "[{ops/s [] [] []}]" || g.HigherBetterFor["ops/s"] || g.HigherBetterFor["sec/op"] {
		t.Errorf("gate %+v", g)
	}
	for _, kind := range []string{scenario.KindHTTP, scenario.KindGRPC} {
		_, err := ReadSources(src, Options{Scenario: &Scenario{Scenario: &scenario.Scenario{File: "s.yml", Kind: kind}}}, "")
		want := "s.yml: a " + kind + " scenario cannot decide bmf files (want kind: gobench)"
		if err == nil || err.Error() != want {
			t.Errorf("%s scenario: %v, want %s", kind, err, want)
		}
	}
	if _, err := ReadSources(Sources{Tool: "wrk", Baseline: src.Baseline, Candidate: src.Candidate}, Options{}, ""); err == nil ||
		!strings.Contains(err.Error(), `unknown tool or format "wrk": want one of vegeta, ghz, oha, k6, customSmallerIsBetter, customBiggerIsBetter, gab, bmf, pytest-benchmark, googlebenchmark, criterion, hyperfine, jmh`) {
		t.Errorf("unknown format: %v", err)
	}
	if _, err := ReadSources(Sources{Tool: "bmf", Baseline: src.Baseline, Candidate: src.Candidate}, Options{Class: "x"}, ""); err == nil || !strings.Contains(err.Error(), "-class") {
		t.Errorf("-class: %v", err)
	}
}

func mustRename(t *testing.T, pattern, replace string) scenario.Rename {
	t.Helper()
	return scenario.Rename{Pattern: regexp.MustCompile(pattern), Replace: replace}
}

// TestReadSuiteRefusals: a file of another format, a field of the wrong
// type, a missing field, a hostile name: each refused with the file and
// the benchmark or field named.
func TestReadSuiteRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, data, want string
	}{
		{"hyperfine", `{"results":[{"command":"a","times":[1,"x"]}]}`,
			`f.json:1:39: hyperfine JSON export: benchmark "a": field "times[1]" is not a number: "x"`},
		{"hyperfine", `{"results":[{"command":"a"}]}`,
			`f.json:1:13: hyperfine JSON export: benchmark "a": no field "mean"`},
		{"hyperfine", `{"results":[{"mean":1}]}`,
			`f.json:1:13: hyperfine JSON export: no field "results[0].command"`},
		{"hyperfine", `{"results":[{"command":"a\u001b[31m","mean":1}]}`,
			`f.json: hyperfine JSON export: benchmark "a\x1b[31m": the name holds the control character U+001B`},
		{"hyperfine", `{"results":[{"command":"a\u202e","mean":1}]}`,
			`f.json: hyperfine JSON export: benchmark "a\u202e": the name holds the bidi control U+202E`},
		{"hyperfine", `{"results":[{"command":"false","times":[0.1,0.1],"exit_codes":[0,1]}]}`,
			`f.json: hyperfine JSON export: benchmark "false": exited non-zero in 1 of 2 runs: the times of a failing command are not the work's`},
		{"hyperfine", `{"benchmarks":[],"machine_info":{}}`,
			`f.json: not a hyperfine JSON export: no field "results" (it looks like a pytest-benchmark JSON)`},
		{"hyperfine", `[1]`, `f.json: not a hyperfine JSON export: the file holds an array, not an object`},
		{"hyperfine", `{"results":[]}`, `f.json: hyperfine JSON export: no benchmarks in the file`},
		{"hyperfine", ``, `f.json: empty file, not a hyperfine JSON export`},
		{"pytest-benchmark", `{"machine_info":{},"benchmarks":[{"fullname":"t::a","stats":{"mean":"fast"}}]}`,
			`f.json:1:69: pytest-benchmark JSON: benchmark "t::a": field "stats.mean" is not a number: "fast"`},
		{"pytest-benchmark", `{"machine_info":{},"benchmarks":[{"fullname":"t::a"}]}`,
			`f.json:1:34: pytest-benchmark JSON: benchmark "t::a": no field "stats"`},
		{"googlebenchmark", `{"context":{},"benchmarks":[{"name":"BM_A","run_type":"iteration","real_time":1,"time_unit":"fortnights"}]}`,
			`f.json:1:93: Google Benchmark JSON: benchmark "BM_A": field "time_unit" is "fortnights", not ns, us, ms or s`},
		{"googlebenchmark", `{"context":{},"benchmarks":[{"name":"BM_A","error_occurred":true,"error_message":"boom"}]}`,
			`f.json: Google Benchmark JSON: benchmark "BM_A": failed: "boom"`},
		{"jmh", `[{"benchmark":"a.B.c","mode":"avgt","primaryMetric":{"score":1,"scoreUnit":"furlongs"}}]`,
			`f.json:1:76: JMH JSON result: benchmark "a.B.c": field "primaryMetric.scoreUnit" is "furlongs", not ops/TIME or TIME/op`},
		{"jmh", `[{"benchmark":"a.B.c","mode":"avgt","primaryMetric":{"scoreUnit":"us/op","rawData":[[1,null]]}}]`,
			`f.json:1:88: JMH JSON result: benchmark "a.B.c": field "primaryMetric.rawData[0][1]" is not a number: null`},
		{"jmh", `{"benchmark":"a"}`, `f.json: not a JMH JSON result: the file holds an object, not an array of benchmarks`},
		{"bmf", `{"a":{"latency":{"value":"1"}}}`,
			`f.json:1:26: Bencher Metric Format JSON: benchmark "a": field "latency.value" is not a number: "1"`},
		{"bmf", `{"a":{"latency":{"lower_value":1}}}`,
			`f.json:1:17: Bencher Metric Format JSON: benchmark "a": no field "latency.value"`},
		{"bmf", `{"a\nb":{"latency":{"value":1}}}`,
			`f.json: Bencher Metric Format JSON: benchmark "a\nb": the name holds the control character U+000A`},
		{"bmf", `{"a":{"lat\tency":{"value":1}}}`,
			`f.json: Bencher Metric Format JSON: benchmark "a": metric "lat\tency" holds the control character U+0009`},
		{"bmf", `{"a":{}}`, `f.json: Bencher Metric Format JSON: benchmark "a": no measures`},
		{FormatGABSmaller, `[{"name":"a","unit":"ms","value":"12"}]`,
			`f.json:1:34: github-action-benchmark custom JSON: benchmark "a": field "value" is not a number: "12"`},
		{FormatGABSmaller, `[{"name":"a","value":12}]`,
			`f.json:1:2: github-action-benchmark custom JSON: benchmark "a": no field "unit"`},
		{FormatGABSmaller, `[{"name":"","unit":"ms","value":12}]`,
			`f.json: github-action-benchmark custom JSON: a benchmark without a name`},
		{FormatGABSmaller, `{"a":1}`,
			`f.json: not a github-action-benchmark custom JSON: the file holds an object, not an array of {name, unit, value}`},
		{"criterion", `{"reason":"benchmark-complete","id":"a","iteration_count":[1,2],"measured_values":[5]}`,
			`f.json:1:1: criterion output: benchmark "a": 2 iteration counts but 1 times`},
		{"criterion", "not json\n", `f.json:1:2: not a criterion output: invalid character 'o' in literal null (expecting 'u') (want a criterion directory, or cargo-criterion --message-format=json output: one JSON object a line)`},
	} {
		f := &file{path: "f.json", format: tc.format, data: []byte(tc.data)}
		_, err := parseSuite(formatNamed(tc.format).suite, f)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %s:\n got %v\nwant %s", tc.format, tc.data, err, tc.want)
		}
	}
}

// TestReadSuiteLimits: more benchmarks than a results file holds cells,
// and more samples than a benchmark may have, are refused.
func TestReadSuiteLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("{")
	for i := range benchdata.MaxCells + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"b%d":{"latency":{"value":1}}`, i)
	}
	b.WriteString("}")
	many := filepath.Join(dir, "many.json")
	if err := os.WriteFile(many, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadSuite("bmf", []string{many}, []string{many}, Options{}, "")
	want := fmt.Sprintf(`%s: Bencher Metric Format JSON: benchmark "b%d": more than %d distinct benchmarks in the files, more than a results file can hold`, many, benchdata.MaxCells, benchdata.MaxCells)
	if err == nil || err.Error() != want {
		t.Errorf("too many cells: %v\nwant %s", err, want)
	}

	times := strings.Repeat("1,", MaxSuiteSamples) + "1"
	f := &file{path: "f.json", format: "hyperfine", data: []byte(`{"results":[{"command":"a","times":[` + times + `]}]}`)}
	_, err = parseSuite(parseHyperfine, f)
	want = fmt.Sprintf(`f.json:1:36: hyperfine JSON export: benchmark "a": field "times" has %d elements, more than %d`, MaxSuiteSamples+1, MaxSuiteSamples)
	if err == nil || err.Error() != want {
		t.Errorf("too many samples: %v\nwant %s", err, want)
	}

	long := strings.Repeat("x", maxNameChars+1)
	f = &file{path: "f.json", format: "bmf", data: []byte(`{"` + long + `":{"latency":{"value":1}}}`)}
	if _, err := parseSuite(parseBMF, f); err == nil || !strings.Contains(err.Error(), "the name is 1025 characters long, more than 1024") {
		t.Errorf("long name: %v", err)
	}
}

// TestReadSuiteJMHSampleMode: sample mode's histogram gives each
// iteration's mean.
func TestReadSuiteJMHSampleMode(t *testing.T) {
	t.Parallel()
	f := &file{path: "f.json", format: "jmh", data: []byte(`[{"benchmark":"a.B.c","mode":"sample","primaryMetric":{"score":2,"scoreUnit":"ms/op",
		"rawDataHistogram":[[[[1,3],[5,1]],[[2,2]]],[[[4,1]]]]}}]`)}
	benches, err := parseSuite(parseJMH, f)
	if err != nil {
		t.Fatal(err)
	}
	if got := benches[0].samples["sec/op"]; !slices.Equal(got, []float64{2e-3, 2e-3, 4e-3}) {
		t.Errorf("samples %v, want [0.002 0.002 0.004]", got)
	}
}

// TestEscapeGlob: a class named with glob characters matches itself only.
func TestEscapeGlob(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"a*b", "x?[1]", `back\slash`, "plain"} {
		r := gate.Rule{Metric: "sec/op", Classes: []string{escapeGlob(name)}}
		if !r.Matches(gate.CellKey{Class: name}) || (name != "plain" && r.Matches(gate.CellKey{Class: "plain"})) {
			t.Errorf("%q: escaped %q", name, escapeGlob(name))
		}
	}
}
