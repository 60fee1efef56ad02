package importers

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gobench"
	"github.com/benchgate/benchgate/scenario"
)

func TestCommonPackage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pkgs []string
		want string
	}{
		{nil, "\x00"},
		{[]string{"example.com/m/a", "example.com/m/a"}, "\x00"},
		{[]string{"example.com/m/a", "example.com/m/b/c"}, "example.com/m"},
		// The root package is one of them: its parent, so it keeps its
		// last element.
		{[]string{"example.com/m", "example.com/m/store"}, "example.com"},
		{[]string{"m", "m/store"}, ""},
		{[]string{"a/x", "b/x"}, ""},
	} {
		if got := commonPackage(tc.pkgs); got != tc.want {
			t.Errorf("commonPackage(%q) = %q, want %q", tc.pkgs, got, tc.want)
		}
	}
}

func TestModulePath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ gomod, want string }{
		{"module example.com/m\n\ngo 1.26\n", "example.com/m"},
		{"// a comment\nmodule\t\"example.com/q\" // quoted\n", "example.com/q"},
		{"modulex example.com/no\nmodule example.com/yes\n", "example.com/yes"},
		{"go 1.26\n", ""},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(tc.gomod), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := modulePath(dir); got != tc.want {
			t.Errorf("modulePath of %q = %q, want %q", tc.gomod, got, tc.want)
		}
	}
	if got := modulePath(t.TempDir()); got != "" {
		t.Errorf("modulePath without a go.mod = %q", got)
	}
}

// writeBench writes a go test -bench output into dir and returns its path.
func writeBench(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	benchOld = `pkg: example.com/m
BenchmarkRoot-2   100   10 ns/op
BenchmarkRoot-2   100   12 ns/op
pkg: example.com/m/store
BenchmarkPut-2    100   20 ns/op
`
	benchNew = `pkg: example.com/m
BenchmarkRoot-2   100   11 ns/op
pkg: example.com/m/store
BenchmarkPut-2    100   30 ns/op
BenchmarkPut-2    100   31 ns/op
BenchmarkPut-2    100   32 ns/op
`
)

// TestMachineOf: the machine of saved outputs is what their header lines
// and their benchmarks' GOMAXPROCS say; what the files disagree on holds
// each value.
func TestMachineOf(t *testing.T) {
	t.Parallel()
	r := func(name, goos, cpu string) gobench.Result {
		return gobench.Result{Name: name, GOOS: goos, GOARCH: "amd64", CPU: cpu}
	}
	for _, tc := range []struct {
		name  string
		sides [2][]gobench.Result
		want  benchdata.Environment
	}{
		{"one machine", [2][]gobench.Result{{r("BenchmarkA-4", "linux", "Xeon"), r("BenchmarkB/n=2-4", "linux", "Xeon")}, {r("BenchmarkA-4", "linux", "Xeon")}},
			benchdata.Environment{OS: "linux", Arch: "amd64", CPUModel: "Xeon", CPUs: 4}},
		{"GOMAXPROCS 1: no suffix", [2][]gobench.Result{{r("BenchmarkA", "linux", "")}, {r("BenchmarkA", "linux", "")}},
			benchdata.Environment{OS: "linux", Arch: "amd64", CPUs: 1}},
		{"a -cpu list", [2][]gobench.Result{{r("BenchmarkA", "linux", "Xeon"), r("BenchmarkA-4", "linux", "Xeon")}, {r("BenchmarkA-4", "linux", "Xeon")}},
			benchdata.Environment{OS: "linux", Arch: "amd64", CPUModel: "Xeon", CPUs: 0}},
		{"two machines", [2][]gobench.Result{{r("BenchmarkA-2", "linux", "Xeon")}, {r("BenchmarkA-8", "darwin", "M2")}},
			benchdata.Environment{OS: "linux vs darwin", Arch: "amd64", CPUModel: "Xeon vs M2", CPUs: 0}},
		{"many", [2][]gobench.Result{{r("BenchmarkA-2", "linux", "a"), r("BenchmarkA-2", "linux", "b"), r("BenchmarkA-2", "linux", "c")},
			{r("BenchmarkA-2", "linux", "d"), r("BenchmarkA-2", "linux", "e")}},
			benchdata.Environment{OS: "linux", Arch: "amd64", CPUModel: "a vs b vs c vs …", CPUs: 2}},
		{"no header lines", [2][]gobench.Result{{r("BenchmarkA-2", "", "")}, {r("BenchmarkA-2", "", "")}},
			benchdata.Environment{Arch: "amd64", CPUs: 2}},
	} {
		if got := machineOf(tc.sides); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestGoBench(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old, new := writeBench(t, dir, "old.txt", benchOld), writeBench(t, dir, "new.txt", benchNew)
	res, err := GoBench(old, new, "benchgate v1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Named relative to the packages' common prefix, example.com: the
	// root package keeps its last element.
	wantCells := []benchdata.Cell{{Class: "m.BenchmarkRoot-2"}, {Class: "m/store.BenchmarkPut-2"}}
	if !reflect.DeepEqual(res.Plan.Cells, wantCells) || res.Plan.Rounds != 3 || res.RoundsDone[""] != 3 {
		t.Errorf("plan %+v, rounds done %v", res.Plan, res.RoundsDone)
	}
	if res.Tool != "benchgate v1" || res.Kind != "gobench" || res.Status != "complete" ||
		res.Env.Baseline.Spec != old || res.Env.Candidate.Spec != new {
		t.Errorf("results %q %q %q, env %+v", res.Tool, res.Kind, res.Status, res.Env)
	}
	if want := defaultGate("sec/op"); !reflect.DeepEqual(res.Scenario.Gate, want) || res.Scenario.Name != DefaultGoBenchName {
		t.Errorf("scenario %+v", res.Scenario)
	}
	var got []string
	for _, r := range res.Rungs {
		got = append(got, r.Target+" "+r.Class+" "+string(rune('0'+r.Round)))
	}
	want := []string{
		"baseline m.BenchmarkRoot-2 0", "baseline m.BenchmarkRoot-2 1", "baseline m/store.BenchmarkPut-2 0",
		"candidate m.BenchmarkRoot-2 0", "candidate m/store.BenchmarkPut-2 0", "candidate m/store.BenchmarkPut-2 1", "candidate m/store.BenchmarkPut-2 2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rungs %q\nwant %q", got, want)
	}
	if v := res.Rungs[6].Values["sec/op"]; v != 32e-9 {
		t.Errorf("last rung sec/op %g, want 32e-9", v)
	}

	// A scenario names the cells relative to its module and renames them;
	// its gate section decides.
	mod := t.TempDir()
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := &Scenario{Scenario: &scenario.Scenario{GoBench: &scenario.GoBench{Module: mod, Rename: []scenario.Rename{
		{Pattern: regexp.MustCompile(`^store\.BenchmarkPut-2$`), Replace: "put"},
	}}}, Info: benchdata.ScenarioInfo{Name: "bench", Gate: defaultGate("B/op")}}
	res, err = GoBench(old, new, "benchgate v1", Options{Scenario: sc})
	if err != nil {
		t.Fatal(err)
	}
	if want := []benchdata.Cell{{Class: "BenchmarkRoot-2"}, {Class: "put"}}; !reflect.DeepEqual(res.Plan.Cells, want) || !reflect.DeepEqual(res.Scenario, sc.Info) {
		t.Errorf("with a scenario: cells %v, scenario %+v", res.Plan.Cells, res.Scenario)
	}

	// Two benchmarks renamed to one cell would mix their samples.
	sc.GoBench.Rename = []scenario.Rename{{Pattern: regexp.MustCompile(`.*`), Replace: "all"}}
	if _, err := GoBench(old, new, "benchgate v1", Options{Scenario: sc}); err == nil || !strings.Contains(err.Error(), "are both named all") {
		t.Errorf("rename collision: %v", err)
	}
	empty := writeBench(t, dir, "empty.txt", "PASS\n")
	if _, err := GoBench(old, empty, "benchgate v1", Options{}); err == nil || !strings.Contains(err.Error(), empty+": no benchmark results") {
		t.Errorf("empty output: %v", err)
	}
}

// TestReadScenario: a scenario given to an import names the results and
// the cell (its only class) and decides with its gate section.
func TestReadScenario(t *testing.T) {
	t.Parallel()
	gate := defaultGate("p99")
	sc := &Scenario{
		Scenario: &scenario.Scenario{Name: "api", Classes: []*scenario.Class{{Name: "sleep"}}},
		Info:     benchdata.ScenarioInfo{Name: "ignored", File: "bench.yml", Hash: "abc", Source: "src", Gate: gate},
	}
	r := read(t, "vegeta", files("vegeta", threeBase...), files("vegeta", threeCand...), Options{Scenario: sc})
	if r.Scenario.Name != "api" || r.Plan.Cells[0].Class != "sleep" || !reflect.DeepEqual(r.Scenario.Gate, gate) ||
		r.Scenario.File != "bench.yml" || r.Scenario.Hash != "abc" || r.Scenario.Source != "src" {
		t.Errorf("scenario %+v, cells %v", r.Scenario, r.Plan.Cells)
	}
	// An explicit class wins; so does a scenario of several classes
	// leaving the default.
	r = read(t, "vegeta", files("vegeta", threeBase...), files("vegeta", threeCand...), Options{Scenario: sc, Class: "mine"})
	if r.Plan.Cells[0].Class != "mine" {
		t.Errorf("class %q, want mine", r.Plan.Cells[0].Class)
	}
	sc.Classes = append(sc.Classes, &scenario.Class{Name: "other"})
	r = read(t, "vegeta", files("vegeta", threeBase...), files("vegeta", threeCand...), Options{Scenario: sc})
	if r.Plan.Cells[0].Class != DefaultClass {
		t.Errorf("class %q, want %s", r.Plan.Cells[0].Class, DefaultClass)
	}
}
