//go:build linux

package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/scenario"
)

// TestPackageMatcher: go list patterns map to the module's directories
// ("" the root) as go list matches their packages; a pattern that names
// no directory of the module gives no matcher.
func TestPackageMatcher(t *testing.T) {
	t.Parallel()
	dirs := []string{"", "a", "a/b", "ab", "c/d"}
	for _, tc := range []struct {
		patterns []string
		want     []string
	}{
		{[]string{"./..."}, dirs},
		{[]string{"."}, []string{""}},
		{[]string{"./a/..."}, []string{"a", "a/b"}},
		{[]string{"./a"}, []string{"a"}},
		{[]string{"./a/", "./c/d"}, []string{"a", "c/d"}},
		{[]string{"./.../b"}, []string{"a/b"}},
		{[]string{"example.com/m/..."}, dirs},
		{[]string{"example.com/m"}, []string{""}},
		{[]string{"example.com/m/a/..."}, []string{"a", "a/b"}},
		{[]string{"/mod/a/..."}, []string{"a", "a/b"}},
		{[]string{"/mod"}, []string{""}},
	} {
		match, err := packageMatcher(tc.patterns, "example.com/m", true, "/mod")
		if err != nil {
			t.Errorf("%q: %v", tc.patterns, err)
			continue
		}
		got := []string{}
		for _, d := range dirs {
			if match(d) {
				got = append(got, d)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q matches %q, want %q", tc.patterns, got, tc.want)
		}
	}
	for _, p := range []string{"all", "std", "fmt", "example.com/other/...", "./..", "../x", "/elsewhere/..."} {
		if _, err := packageMatcher([]string{p}, "example.com/m", true, "/mod"); err == nil || !strings.Contains(err.Error(), "is not one of the module's directories") {
			t.Errorf("%q: %v", p, err)
		}
	}
	// An absolute path is a directory of this machine: not one of a ref's.
	if _, err := packageMatcher([]string{"/mod/..."}, "example.com/m", false, ""); err == nil {
		t.Error("an absolute path mapped at a ref")
	}
}

// TestGoBenchEstimate: a directory side's count, the least time and the
// plan's line; a count benchtime gives none; an unmappable pattern says
// why there is none.
func TestGoBenchEstimate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, src := range map[string]string{
		"go.mod":               "module example.com/m\n",
		"a_test.go":            "package m\nfunc BenchmarkA(b *testing.B) {}\nfunc BenchmarkAB(b *testing.B) {}\nfunc Benchmarkx(b *testing.B) {}\n",
		"s/s_test.go":          "package s\nfunc BenchmarkS(b *testing.B) {}\nfunc TestS(t *testing.T) {}\n",
		"t/t_test.go":          "package t\nfunc TestT(t *testing.T) {}\n",
		"s/testdata/x_test.go": "package x\nfunc BenchmarkX(b *testing.B) {}\n",
		"_skip/y_test.go":      "package y\nfunc BenchmarkY(b *testing.B) {}\n",
		"other/go.mod":         "module example.com/other\n",
		"other/o_test.go":      "package o\nfunc BenchmarkO(b *testing.B) {}\n",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := dirTestFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	dirs := slices.Sorted(func(yield func(string) bool) {
		for d := range files.dirs {
			if !yield(d) {
				return
			}
		}
	})
	if files.module != "example.com/m" || !reflect.DeepEqual(dirs, []string{"", "s", "t"}) ||
		!reflect.DeepEqual(files.benchmarks[""], []string{"BenchmarkA", "BenchmarkAB"}) || !reflect.DeepEqual(files.benchmarks["s"], []string{"BenchmarkS"}) {
		t.Errorf("test files %+v", files)
	}

	estimate := func(gb scenario.GoBench, budget time.Duration) goEstimate {
		sc := &scenario.Scenario{GoBench: &gb, Load: scenario.LoadSettings{Repetitions: 4}}
		g := &goBench{sc: sc, gb: sc.GoBench}
		for i, name := range []string{"baseline", "candidate"} {
			g.sides[i] = &goSide{name: name, spec: scenario.Target{Name: name, Dir: dir}, dir: dir}
		}
		return g.estimate(t.Context(), budget)
	}
	e := estimate(scenario.GoBench{Module: dir, Packages: []string{"./..."}, Bench: "."}, time.Minute)
	if e.least != 24*time.Second || e.benchmarks != [2]int{3, 3} || e.binaries != [2]int{3, 3} ||
		e.text != "go test -bench, 4 rounds × 2 targets × 3 benchmarks × 1s = at least 24s, plus the builds of 6 test binaries (an estimate from the benchmarks the test files declare); the budget of 1m0s bounds the whole run, worktrees, builds and rounds" {
		t.Errorf("estimate %+v", e)
	}
	if err := e.over(time.Minute); err != nil {
		t.Errorf("within the budget: %v", err)
	}
	if err := e.over(20 * time.Second); err == nil || err.Error() != "planned time at least 24s (4 rounds × 2 targets × 3 benchmarks × 1s, builds not counted) exceeds the budget of 20s: "+
		"narrow the packages or the bench pattern, shorten benchtime, run fewer rounds, or raise -budget" {
		t.Errorf("over the budget: %v", err)
	}
	e = estimate(scenario.GoBench{Module: dir, Packages: []string{"./s"}, Bench: "S|^BenchmarkA$/x", Benchtime: "250ms", CPU: []int{1, 2, 4}}, 0)
	if e.least != 4*2*1*3*250*time.Millisecond || !strings.Contains(e.text, "4 rounds × 2 targets × 1 benchmark × 3 -test.cpu values × 250ms = at least 6s") {
		t.Errorf("narrowed: %+v", e)
	}
	e = estimate(scenario.GoBench{Module: dir, Packages: []string{"./..."}, Bench: ".", Benchtime: "100x"}, 0)
	if e.least != 0 || e.over(time.Nanosecond) != nil || !strings.Contains(e.text, "no estimate (-test.benchtime 100x counts iterations") {
		t.Errorf("a count: %+v", e)
	}
	e = estimate(scenario.GoBench{Module: dir, Packages: []string{"all"}, Bench: "."}, 0)
	if e.least != 0 || !strings.Contains(e.text, `no estimate (the baseline's benchmarks could not be counted: package pattern "all" is not one of the module's directories`) {
		t.Errorf("all: %+v", e)
	}
}
