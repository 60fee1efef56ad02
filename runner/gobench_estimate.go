//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/benchgate/benchgate/gobench"
	"github.com/benchgate/benchgate/internal/fsx"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
)

// A gobench run's length is known only as it runs: its cells are the
// benchmarks the binaries report. What can be known before is what the
// test files declare, read without building anything (from the
// directory, or from the ref's commit with git): how many benchmarks each
// side's bench pattern matches in the packages its patterns name. Each
// runs once a -test.cpu value a round for at least its benchtime (go test
// runs it until it lasts that long), so rounds × the sides' benchmarks ×
// the cpu values × benchtime is the least the rounds take: the estimate
// a plan prints and -budget refuses. It leaves out the builds, go test's
// ramp up to the benchtime, sub-benchmarks (each runs for the benchtime
// too), and the processes' start, all of which only add; it counts
// benchmarks a build constraint leaves out, and a benchmark that skips
// itself, which take less. A count benchtime (1000x) gives no estimate:
// a run's time is then its iterations' time, known only as it runs.

// Bounds of what an estimate reads: past one it gives no estimate rather
// than a wrong one.
const (
	maxEstimateEntries   = 200_000 // directory entries walked, files listed
	maxEstimateTestFiles = 20_000  // _test.go files read
	maxEstimateFileBytes = 4 << 20 // of one _test.go file (a larger one gives none)
	maxEstimateGoMod     = 16 << 20
)

// goEstimate is what a plan says of a gobench run's time.
type goEstimate struct {
	// benchmarks and binaries are each side's count of the benchmarks its
	// bench pattern matches and of the test binaries it builds (packages
	// with tests), as its test files declare them.
	benchmarks, binaries [2]int
	// least is the least time the rounds take; 0 when none is known, and
	// none says why.
	least time.Duration
	none  string
	// counted is what least counts ("6 rounds × 2 targets × 12
	// benchmarks × 1s"), text the plan's line without its "plan: ".
	counted, text string
}

// over is the refusal of a plan whose least time passes budget; nil when
// it does not, or without a budget or an estimate.
func (e goEstimate) over(budget time.Duration) error {
	if budget <= 0 || e.least <= budget {
		return nil
	}
	return &BudgetError{Estimate: e.least, Budget: budget, GoBench: e.counted}
}

// estimate counts what g's sides declare and makes the plan's line, with
// what budget (0: none) bounds.
func (g *goBench) estimate(ctx context.Context, budget time.Duration) goEstimate {
	var e goEstimate
	rounds := g.sc.Load.Repetitions
	for i, s := range g.sides {
		b, n, err := g.declared(ctx, s)
		if err != nil {
			e.none = fmt.Sprintf("the %s's benchmarks could not be counted: %v", s.name, err)
			break
		}
		e.benchmarks[i], e.binaries[i] = b, n
	}
	cpus := max(len(g.gb.CPU), 1)
	per, count := g.benchtime()
	switch {
	case e.none != "":
	case count:
		e.none = fmt.Sprintf("-test.benchtime %s counts iterations, whose time is known only as they run", g.gb.Benchtime)
	}
	benches := "2 targets × " + countOf(e.benchmarks[0], "benchmark", "benchmarks")
	if e.benchmarks[0] != e.benchmarks[1] {
		benches = fmt.Sprintf("(%d + %d) benchmarks", e.benchmarks[0], e.benchmarks[1])
	}
	if cpus > 1 {
		benches += fmt.Sprintf(" × %d -test.cpu values", cpus)
	}
	within := ""
	if budget > 0 {
		within = fmt.Sprintf("; the budget of %v bounds the whole run, worktrees, builds and rounds", budget)
	}
	if e.none != "" {
		e.text = fmt.Sprintf("go test -bench, %d rounds × 2 targets: no estimate (%s)%s", rounds, e.none, within)
		return e
	}
	e.least = time.Duration(rounds*(e.benchmarks[0]+e.benchmarks[1])*cpus) * per
	e.counted = fmt.Sprintf("%d rounds × %s × %v", rounds, benches, per)
	e.text = fmt.Sprintf("go test -bench, %s = at least %v, plus the builds of %s (an estimate from the benchmarks the test files declare)%s",
		e.counted, e.least, countOf(e.binaries[0]+e.binaries[1], "test binary", "test binaries"), within)
	return e
}

// benchtime is how long go test runs each benchmark: the scenario's
// duration, go test's default of 1s, or count when it is a count (Nx).
func (g *goBench) benchtime() (per time.Duration, count bool) {
	bt := g.gb.Benchtime
	if bt == "" {
		return time.Second, false
	}
	if strings.HasSuffix(bt, "x") {
		return 0, true
	}
	d, err := time.ParseDuration(bt)
	if err != nil {
		return 0, true // the scenario checked it: a count's shape
	}
	return d, false
}

// declared counts side s's benchmarks that its bench pattern matches at
// the top level, in the packages its patterns name, and those packages
// with tests (each one test binary), as the side's test files declare
// them. s is resolved: a Ref's commit, a Dir's directory.
func (g *goBench) declared(ctx context.Context, s *goSide) (benchmarks, binaries int, err error) {
	var files testFiles
	if s.spec.Ref != "" {
		files, err = refTestFiles(ctx, s)
	} else {
		files, err = dirTestFiles(s.dir)
	}
	if err != nil {
		return 0, 0, err
	}
	match, err := packageMatcher(g.patterns(s), files.module, s.spec.Ref == "", s.dir)
	if err != nil {
		return 0, 0, err
	}
	top, err := topLevelMatcher(g.bench(s))
	if err != nil {
		return 0, 0, err
	}
	for dir, names := range files.benchmarks {
		if !match(dir) {
			continue
		}
		for _, n := range names {
			if top(n) {
				benchmarks++
			}
		}
	}
	for dir := range files.dirs {
		if match(dir) {
			binaries++
		}
	}
	return benchmarks, binaries, nil
}

// testFiles is what a module's test files declare: the directories that
// hold _test.go files and the benchmarks of each, by directory relative
// to the module's root ("" for the root), and the module's path.
type testFiles struct {
	module     string
	dirs       map[string]bool
	benchmarks map[string][]string
}

func newTestFiles() testFiles {
	return testFiles{dirs: map[string]bool{}, benchmarks: map[string][]string{}}
}

// add records file (slash-separated, relative to the module's root)
// with the benchmarks its text declares.
func (t testFiles) add(file string, src []byte) {
	dir := path.Dir(file)
	if dir == "." {
		dir = ""
	}
	t.dirs[dir] = true
	t.benchmarks[dir] = append(t.benchmarks[dir], gobench.Declared(src)...)
}

// dirTestFiles reads the test files of the module at root, as "./..."
// would find them.
func dirTestFiles(root string) (testFiles, error) {
	t := newTestFiles()
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil && len(b) <= maxEstimateGoMod {
		t.module = gobench.ModulePath(b)
	}
	entries, files := 0, 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if entries++; entries > maxEstimateEntries {
			return fmt.Errorf("more than %d files and directories in %s", maxEstimateEntries, root)
		}
		if d.IsDir() {
			if p != root && (gobench.SkippedDir(d.Name()) || regularFile(filepath.Join(p, "go.mod"))) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		if files++; files > maxEstimateTestFiles {
			return fmt.Errorf("more than %d test files in %s", maxEstimateTestFiles, root)
		}
		src, err := fsx.ReadFileLimited(p, maxEstimateFileBytes)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		t.add(filepath.ToSlash(rel), src)
		return nil
	})
	return t, err
}

func regularFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// refTestFiles reads the test files of side s's module at its commit,
// from git, without a checkout: the files under the module's path (git
// ls-tree), and the lines that declare benchmarks (git grep).
func refTestFiles(ctx context.Context, s *goSide) (testFiles, error) {
	t := newTestFiles()
	prefix := ""
	if s.rel != "." {
		prefix = filepath.ToSlash(s.rel) + "/"
	}
	if gomod, err := target.Git(ctx, s.top, "cat-file", "blob", s.commit+":"+prefix+"go.mod"); err == nil {
		t.module = gobench.ModulePath([]byte(gomod))
	}
	args := []string{"ls-tree", "-r", "-z", "--name-only", s.commit}
	if prefix != "" {
		args = append(args, "--", prefix)
	}
	list, err := target.Git(ctx, s.top, args...)
	if err != nil {
		return t, err
	}
	// The module's own files: not under a skipped directory or another
	// module (a directory below the root with a go.mod).
	var paths []string
	nested := map[string]bool{}
	for p := range strings.SplitSeq(list, "\x00") {
		p, ok := strings.CutPrefix(p, prefix)
		if !ok || p == "" {
			continue
		}
		if len(paths) == maxEstimateEntries {
			return t, fmt.Errorf("more than %d files in %s", maxEstimateEntries, s.commit)
		}
		paths = append(paths, p)
		if path.Base(p) == "go.mod" && path.Dir(p) != "." {
			nested[path.Dir(p)] = true
		}
	}
	ours := func(p string) bool {
		dir := path.Dir(p)
		for d := dir; d != "."; d = path.Dir(d) {
			if gobench.SkippedDir(path.Base(d)) || nested[d] {
				return false
			}
		}
		return true
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") && ours(p) {
			t.add(p, nil)
		}
	}
	// -z ends a name with NUL: "commit:path\x00line".
	grep := []string{"grep", "-I", "-z", "-e", "^func Benchmark", s.commit, "--", prefix + "*_test.go"}
	out, err := target.Git(ctx, s.top, grep...)
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 1 {
		return t, nil // no line matched
	}
	if err != nil {
		return t, err
	}
	for line := range strings.SplitSeq(out, "\n") {
		name, text, ok := strings.Cut(line, "\x00")
		if !ok {
			continue
		}
		p, ok := strings.CutPrefix(strings.TrimPrefix(name, s.commit+":"), prefix)
		if !ok || !ours(p) {
			continue
		}
		t.add(p, []byte(text))
	}
	return t, nil
}

// packageMatcher matches a module's directories (relative to its root,
// "" for the root) against go list patterns, as go list matches their
// packages: relative patterns ("./...", ".", "./internal/store/..."),
// import paths of the module (module path, "example.com/m/..."), and,
// for a directory side (onDisk), absolute paths below its root. Any
// other pattern (std, all, another module's) is an error: the estimate
// cannot map it without go list.
func packageMatcher(patterns []string, module string, onDisk bool, root string) (func(string) bool, error) {
	var res []*regexp.Regexp
	for _, p := range patterns {
		rel, ok := "", false
		switch {
		case p == "." || p == "./...":
			rel, ok = strings.TrimPrefix(strings.TrimPrefix(p, "."), "/"), true
		case strings.HasPrefix(p, "./"):
			// Clean keeps "..." (an element like any other) and drops
			// a trailing slash; a pattern above the root is not ours.
			switch rel = path.Clean(p[2:]); {
			case rel == ".":
				rel, ok = "", true
			case rel != ".." && !strings.HasPrefix(rel, "../"):
				ok = true
			}
		case module != "" && (p == module || strings.HasPrefix(p, module+"/")):
			rel, ok = strings.TrimPrefix(strings.TrimPrefix(p, module), "/"), true
		case onDisk && filepath.IsAbs(p):
			r, err := filepath.Rel(root, filepath.Clean(strings.TrimSuffix(p, "/...")))
			if err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				rel, ok = filepath.ToSlash(r), true
				if rel == "." {
					rel = ""
				}
				if strings.HasSuffix(p, "/...") {
					rel = strings.TrimPrefix(rel+"/...", "/")
				}
			}
		}
		if !ok {
			return nil, fmt.Errorf("package pattern %q is not one of the module's directories (./..., ./dir, or an import path of the module)", p)
		}
		re := regexp.QuoteMeta(rel)
		re = strings.ReplaceAll(re, `\.\.\.`, `.*`)
		if r, ok := strings.CutSuffix(re, `/.*`); ok {
			re = r + `(/.*)?`
		}
		res = append(res, regexp.MustCompile(`^`+re+`$`))
	}
	return anyMatch(res), nil
}

// topLevelMatcher matches top-level benchmark names against a
// -test.bench pattern as go test does: the first regexp of any of its
// alternatives (scenario.BenchLevels).
func topLevelMatcher(pattern string) (func(string) bool, error) {
	var res []*regexp.Regexp
	for _, alt := range scenario.BenchLevels(pattern) {
		re, err := regexp.Compile(alt[0])
		if err != nil {
			return nil, err
		}
		res = append(res, re)
	}
	return anyMatch(res), nil
}

// anyMatch says whether any of res matches.
func anyMatch(res []*regexp.Regexp) func(string) bool {
	return func(s string) bool {
		return slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(s) })
	}
}
