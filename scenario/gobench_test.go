package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/benchgate/benchgate/gate"
)

const goBenchFile = `version: 1
name: client
kind: gobench
targets:
  baseline: {ref: origin/main}
  candidate: {dir: ., packages: [./ncorest], bench: NcoRest}
gobench:
  packages: [./..., ./internal/store]
  bench: 'Insert/rows=(10|100)$'
  cpu: [1, 4]
  benchtime: 200ms
  timeout: 2m
  rename:
    - {match: '^BenchmarkQoordinator(.*)', replace: 'BenchmarkInsert$1'}
    - {match: '^BenchmarkNcoRest(.*)', replace: 'BenchmarkInsert$1'}
load: {repetitions: 6}
gate:
  tie_within: 0.05
  metrics:
    allocs/op: {tie_within: 0}
  fail_on:
    - {metric: sec/op}
    - {metric: allocs/op, classes: ["store.Benchmark*"]}
profiles:
  pr: {repetitions: 3, benchtime: 1000x, bench: Insert}
`

func TestLoadGoBench(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644)
	path := filepath.Join(dir, "benchgate.yml")
	os.WriteFile(path, []byte(goBenchFile), 0o644)
	s, err := Load(path, "", mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != KindGoBench || s.Load.Repetitions != 6 || len(s.Classes) != 0 {
		t.Errorf("kind %q, repetitions %d, classes %v", s.Kind, s.Load.Repetitions, s.Classes)
	}
	if b, c := s.Baseline, s.Candidate; b.Ref != "origin/main" || b.Shown != "ref origin/main" || b.Dir != "" ||
		c.Dir != s.Dir || c.Shown != "dir ." || c.Ref != "" || !reflect.DeepEqual(c.Packages, []string{"./ncorest"}) || c.Bench != "NcoRest" || b.Packages != nil || b.Bench != "" {
		t.Errorf("targets %+v %+v", b, c)
	}
	gb := *s.GoBench
	rules := gb.Rename
	gb.Rename = nil
	want := GoBench{Module: s.Dir, Packages: []string{"./...", "./internal/store"}, Bench: "Insert/rows=(10|100)$",
		CPU: []int{1, 4}, Benchtime: "200ms", Timeout: 2 * time.Minute}
	if !reflect.DeepEqual(gb, want) {
		t.Errorf("gobench %+v\nwant %+v", gb, want)
	}
	if len(rules) != 2 || ApplyRename(rules, "BenchmarkNcoRestInsert_SingleThread_100rows") != "BenchmarkInsertInsert_SingleThread_100rows" ||
		ApplyRename(rules, "BenchmarkQoordinator_100rows-4") != "BenchmarkInsert_100rows-4" || ApplyRename(rules, "BenchmarkOther") != "BenchmarkOther" {
		t.Errorf("rename rules %v", rules)
	}
	wantGate := gate.Section{Confidence: 0.95, TieWithin: 0.05, MaxErrorRate: 0.001, TieWithinFor: map[gate.Metric]float64{"allocs/op": 0},
		FailOn: []gate.Rule{{Metric: "sec/op"}, {Metric: "allocs/op", Classes: []string{"store.Benchmark*"}}}, Rule: "paired", Unresolved: "warn"}
	if !reflect.DeepEqual(s.Gate, wantGate) {
		t.Errorf("gate %+v", s.Gate)
	}

	s, err = Load(path, "pr", mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if s.Load.Repetitions != 3 || s.GoBench.Benchtime != "1000x" || s.GoBench.Bench != "Insert" || !reflect.DeepEqual(s.GoBench.CPU, []int{1, 4}) {
		t.Errorf("profile pr: %d %+v", s.Load.Repetitions, s.GoBench)
	}

	// The defaults: ./..., every benchmark, sec/op gated.
	os.WriteFile(path, []byte("version: 1\nname: m\nkind: gobench\ntargets: {baseline: {ref: HEAD~1}, candidate: {dir: .}}\n"), 0o644)
	if s, err = Load(path, "", mapEnv(nil)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.GoBench, &GoBench{Module: s.Dir, Packages: []string{"./..."}, Bench: ".", Timeout: DefaultGoBenchTimeout}) ||
		!reflect.DeepEqual(s.Gate.FailOn, []gate.Rule{{Metric: "sec/op"}}) || s.Load.Repetitions != DefaultRepetitions {
		t.Errorf("defaults: %+v %+v %d", s.GoBench, s.Gate.FailOn, s.Load.Repetitions)
	}
}

func TestLoadGoBenchErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src, want string }{
		{"unknown kind", "version: 1\nname: m\nkind: grpc\n",
			`s.yml:3:7: kind: unknown kind "grpc" (want http, the default, or gobench)`},
		{"gobench section without the kind", minimal + "gobench: {bench: .}\n",
			"s.yml:9:1: gobench: only for a gobench scenario (add kind: gobench)"},
		{"http sections and target fields", `version: 1
name: m
kind: gobench
targets:
  baseline: {ref: main, dir: .}
  candidate: {url: "http://127.0.0.1:1"}
load: {concurrency: [1]}
classes: []
gobench: {bench: "Insert/(", benchtime: 10 s, cpu: [0], rename: [{match: "(", replace: x}, {replace: y}]}
gate:
  fail_on: [{metric: allocs/op, concurrency: [1]}]
profiles:
  pr: {duration: 1s}
`, "s.yml:5:25: targets.baseline.dir: ref and dir are exclusive\n" +
			`s.yml:6:15: targets.candidate.url: unknown field "url" (want one of ref, dir, packages, bench)` + "\n" +
			"s.yml:6:15: targets.candidate: want ref (a git commit-ish, e.g. origin/main) or dir (a directory holding the module)\n" +
			`s.yml:7:8: load.concurrency: unknown field "concurrency" (want one of repetitions)` + "\n" +
			"s.yml:8:1: classes: not for a gobench scenario (its cells are the benchmarks the test binaries report)\n" +
			"s.yml:9:18: gobench.bench: not a -test.bench pattern: error parsing regexp: missing closing ): `(`\n" +
			`s.yml:9:41: gobench.benchtime: "10 s" is not a benchtime (want a duration such as 500ms or a count such as 1000x)` + "\n" +
			"s.yml:9:53: gobench.cpu[0]: 0 is out of range (want 1..10000)\n" +
			"s.yml:9:74: gobench.rename[0].match: not a regular expression: error parsing regexp: missing closing ): `(`\n" +
			"s.yml:9:93: gobench.rename[1].match: missing (want a regular expression, e.g. ^BenchmarkQoordinator(.*))\n" +
			"s.yml:11:33: gate.fail_on[0].concurrency: not for a gobench scenario (a benchmark has no concurrency; name the -cpu suffix in classes)\n" +
			`s.yml:13:8: profiles.pr.duration: unknown field "duration" (want one of repetitions, bench, cpu, benchtime)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, tt.src, "", nil); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestLoadGoBenchUnits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "benchgate.yml")
	os.WriteFile(path, []byte(`version: 1
name: m
kind: gobench
targets: {baseline: {ref: HEAD~1}, candidate: {dir: .}}
gate:
  metrics:
    ns/op: {tie_within: 0.05}
    req/sec: {better: higher}
  fail_on: [{metric: ns/op}, {metric: MB/s}, {metric: req/sec}]
`), 0o644)
	s, err := Load(path, "", mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := gate.Section{Confidence: 0.95, TieWithin: 0.10, MaxErrorRate: 0.001,
		TieWithinFor: map[gate.Metric]float64{"sec/op": 0.05}, HigherBetterFor: map[gate.Metric]bool{"req/sec": true},
		FailOn: []gate.Rule{{Metric: "sec/op"}, {Metric: "B/s"}, {Metric: "req/sec"}}, Rule: "paired", Unresolved: "warn"}
	if !reflect.DeepEqual(s.Gate, want) {
		t.Errorf("gate %+v\nwant %+v", s.Gate, want)
	}
}

// TestLoadDecide: a gobench scenario read to decide results it did not
// run needs no targets and no variable of a field compare does not use;
// the fields it uses are checked as ever, and an unset gobench.module is
// a warning. Another kind loads as without Decide, and a run's load of
// the same file refuses what Decide lets pass.
func TestLoadDecide(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644)
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(src), 0o644)
		return p
	}
	decide := LoadOptions{Getenv: mapEnv(nil), Decide: true}

	noTargets := write("bare.yml", "version: 1\nname: sums\nkind: gobench\ngate: {fail_on: [{metric: allocs/op}]}\n")
	s, err := LoadWith(noTargets, "", decide)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "sums" || s.GoBench.Module != s.Dir || len(s.Gate.FailOn) != 1 || s.Gate.FailOn[0].Metric != "allocs/op" || len(s.Warnings) != 0 {
		t.Errorf("without targets: %+v, warnings %v", s, s.Warnings)
	}
	if _, err := LoadWith(noTargets, "", LoadOptions{Getenv: mapEnv(nil)}); err == nil || err.Error() != noTargets+":1:1: targets: missing (want baseline and candidate: each a ref or a dir)" {
		t.Errorf("a run's load: %v", err)
	}

	unused := write("vars.yml", `version: 1
name: nightly
kind: gobench
targets:
  baseline: {ref: "${BASE_SHA}"}
  candidate: {dir: "${REPO}/nowhere"}
gobench: {module: "${REPO}", packages: ["${PKGS}"], benchtime: "${BT}"}
load: {repetitions: 1}
`)
	s, err = LoadWith(unused, "", decide)
	if err != nil {
		t.Fatal(err)
	}
	want := unused + ":7:19: gobench.module: REPO is not set: the benchmarks are named relative to the module in the scenario's directory, " +
		"or to their packages' common prefix without a go.mod there, which may not be the names a run gives them (set REPO to name them as a run does)"
	if len(s.Warnings) != 1 || s.Warnings[0].Error() != want || s.GoBench.Module != s.Dir {
		t.Errorf("warnings %v, module %s\nwant %s", s.Warnings, s.GoBench.Module, want)
	}
	// Set, the module is read and checked as ever.
	if _, err := LoadWith(unused, "", LoadOptions{Getenv: mapEnv(map[string]string{"REPO": "/nonexistent"}), Decide: true}); err == nil ||
		err.Error() != unused+":7:19: gobench.module: /nonexistent holds no go.mod" {
		t.Errorf("module set: %v", err)
	}

	used := write("gate.yml", "version: 1\nname: \"${NAME}\"\nkind: gobench\ngate: {fail_on: [{metric: \"${METRIC}\"}]}\ngobench: {rename: [{match: \"${RE}\", replace: x}]}\n")
	_, err = LoadWith(used, "", decide)
	wantErr := used + ":2:7: name: environment variable NAME is not set (write ${NAME:-default} for a default)\n" +
		used + ":4:27: gate.fail_on[0].metric: environment variable METRIC is not set (write ${METRIC:-default} for a default)\n" +
		used + ":5:28: gobench.rename[0].match: environment variable RE is not set (write ${RE:-default} for a default)"
	if err == nil || err.Error() != wantErr {
		t.Errorf("used fields:\n%v\nwant\n%s", err, wantErr)
	}

	http := write("http.yml", "version: 1\nname: h\ntargets: {baseline: {url: \"${URL}\"}, candidate: {url: \"http://127.0.0.1:2\"}}\nclasses: [{name: a, request: GET /}]\n")
	if _, err := LoadWith(http, "", decide); err == nil || err.Error() != http+":3:27: targets.baseline.url: environment variable URL is not set (write ${URL:-default} for a default)" {
		t.Errorf("an http scenario: %v", err)
	}
}

// TestBenchLevels: a -test.bench pattern splits as testing's splitRegexp
// splits it.
func TestBenchLevels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want [][]string
	}{
		{".", [][]string{{"."}}},
		{"Insert/rows=10", [][]string{{"Insert", "rows=10"}}},
		{"Insert/rows=10|Lookup", [][]string{{"Insert", "rows=10"}, {"Lookup"}}},
		{"(A|B)/x", [][]string{{"(A|B)", "x"}}},
		{"[/|]x", [][]string{{"[/|]x"}}},
		{`A\/B|C`, [][]string{{`A\/B`}, {"C"}}},
		{"A||B/", [][]string{{"A"}, {""}, {"B", ""}}},
	} {
		if got := BenchLevels(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("BenchLevels(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
