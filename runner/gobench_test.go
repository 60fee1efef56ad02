package runner

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/gobench"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/targettest"
)

// The test module's cells (see testdata/gobench/README.md) under
// -test.cpu=1,2.
var goBenchCells = []string{
	"BenchmarkSum", "BenchmarkSum-2", "BenchmarkConst", "BenchmarkConst-2",
	"store.BenchmarkConst", "store.BenchmarkConst-2",
}

// copyBenchModule copies testdata/gobench to dir with sum.go of version
// ("v1" or "v2") in place.
func copyBenchModule(t *testing.T, dir, version string) {
	t.Helper()
	src := filepath.Join("testdata", "gobench")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(src, version, "sum.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sum.go"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// benchModules makes two copies of the test module, of versions base and
// cand, and returns their directories.
func benchModules(t *testing.T, base, cand string) (string, string) {
	t.Helper()
	root := t.TempDir()
	a, b := filepath.Join(root, "base"), filepath.Join(root, "cand")
	copyBenchModule(t, a, base)
	copyBenchModule(t, b, cand)
	return a, b
}

func goBenchScenario(module string, base, cand scenario.Target, rounds int) *scenario.Scenario {
	base.Name, cand.Name = "baseline", "candidate"
	return &scenario.Scenario{
		File: "benchgate.yml", Hash: "0123", Source: "version: 1\n", Name: "gobench", Seed: 424242,
		Kind: scenario.KindGoBench,
		GoBench: &scenario.GoBench{
			Module: module, Packages: []string{"./..."}, Bench: ".",
			CPU: []int{1, 2}, Benchtime: "5ms", Timeout: time.Minute,
		},
		Baseline: base, Candidate: cand,
		Load: scenario.LoadSettings{Repetitions: rounds},
		Gate: gate.Section{Confidence: 0.95, TieWithin: 0.1,
			FailOn: []gate.Rule{{Metric: "sec/op", Classes: []string{"*"}}}},
	}
}

func dirTarget(dir string) scenario.Target { return scenario.Target{Dir: dir, Shown: dir} }

// rungsOf returns the rungs of a cell and target, by round.
func rungsOf(res *benchdata.Results, class, target string) []benchdata.Rung {
	var out []benchdata.Rung
	for _, r := range res.Rungs {
		if r.Class == class && r.Target == target {
			out = append(out, r)
		}
	}
	return out
}

func meanOf(rs []benchdata.Rung, unit string) float64 {
	s := 0.0
	for _, r := range rs {
		s += r.Values[unit]
	}
	return s / float64(len(rs))
}

func classes(cells []benchdata.Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, c.Class)
	}
	slices.Sort(out)
	return out
}

// checkCleaned fails when the run left its test binaries behind.
func checkCleaned(t *testing.T, out string) {
	t.Helper()
	if left, _ := filepath.Glob(filepath.Join(out, ".gobench-bin-*")); len(left) > 0 {
		t.Errorf("test binaries left in %v", left)
	}
}

func TestGoBenchDirs(t *testing.T) {
	t.Parallel()
	base, cand := benchModules(t, "v1", "v2")
	out := t.TempDir()
	sc := goBenchScenario(base, dirTarget(base), dirTarget(cand), 3)
	var progress syncBuffer
	start := time.Now()
	res, err := RunGoBench(context.Background(), sc, Options{OutDir: out, Progress: &progress, ToolVersion: "test"})
	t.Logf("run took %v\n%s", time.Since(start), progress.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "complete" || res.Kind != "gobench" {
		t.Fatalf("status %q kind %q", res.Status, res.Kind)
	}
	if got := classes(res.Plan.Cells); !slices.Equal(got, slices.Sorted(slices.Values(goBenchCells))) {
		t.Fatalf("cells %q, want %q", got, goBenchCells)
	}
	if res.Plan.Rounds != 3 || len(res.Rungs) != 3*2*len(goBenchCells) || res.CompleteRounds() != 3 {
		t.Fatalf("rounds %d, %d rungs, %d complete rounds", res.Plan.Rounds, len(res.Rungs), res.CompleteRounds())
	}
	for _, c := range res.Plan.Cells {
		if c.Concurrency != 0 || c.Pins != "" || c.Variant != "" || c.String() != c.Class {
			t.Errorf("cell %+v (%s)", c, c)
		}
		for _, target := range []string{"baseline", "candidate"} {
			rs := rungsOf(res, c.Class, target)
			if len(rs) != 3 {
				t.Fatalf("%s %s: %d rungs", c.Class, target, len(rs))
			}
			for round, r := range rs {
				if r.Round != round {
					t.Errorf("%s %s: rung %d is of round %d", c.Class, target, round, r.Round)
				}
				for _, u := range []string{"sec/op", "B/op", "allocs/op"} {
					if _, ok := r.Values[u]; !ok {
						t.Errorf("%s %s round %d: no %s in %v", c.Class, target, round, u, r.Values)
					}
				}
				if _, ok := r.Values["ns/op"]; ok {
					t.Errorf("untidied ns/op kept")
				}
				if r.Duration <= 0 || r.Start.IsZero() || r.Requests != 0 || r.Value(gate.RPS) != 0 {
					t.Errorf("%s %s: duration %v start %v requests %d rps %v", c.Class, target, r.Duration, r.Start, r.Requests, r.Value(gate.RPS))
				}
				if strings.HasPrefix(c.Class, "BenchmarkSum") && (r.Values["items/op"] != 1024 || r.Values["B/s"] <= 0) {
					t.Errorf("%s %s: custom unit or B/s missing: %v", c.Class, target, r.Values)
				}
			}
		}
	}

	// AB/BA: drawn from the seed per package, alternating by round; each
	// pair's first rung ran first.
	for i, pkg := range []string{".", "store"} {
		var prev string
		for round := range 3 {
			want := Order(sc.Seed, round, i)
			if round > 0 && want == prev {
				t.Errorf("package %s: order %s in rounds %d and %d", pkg, want, round-1, round)
			}
			prev = want
			var seq []string
			for _, r := range res.Rungs {
				// The root package's cells are the benchmarks' names alone.
				inPkg := strings.HasPrefix(r.Class, pkg+".") || pkg == "." && strings.HasPrefix(r.Class, "Benchmark")
				if r.Round == round && inPkg {
					if r.Order != want {
						t.Errorf("%s round %d: order %s, want %s", r.Class, round, r.Order, want)
					}
					if (r.Target == "baseline") != (r.Position == 0) == (want == "AB") {
						t.Errorf("%s round %d: %s at position %d in %s", r.Class, round, r.Target, r.Position, want)
					}
					if len(seq) == 0 || seq[len(seq)-1] != r.Target {
						seq = append(seq, r.Target)
					}
				}
			}
			first := "baseline"
			if want == "BA" {
				first = "candidate"
			}
			if len(seq) != 2 || seq[0] != first {
				t.Errorf("package %s round %d ran %v, want %s first", pkg, round, seq, first)
			}
		}
	}

	// The injected regression: deterministic in B/op and allocs/op, and
	// 3× or more in time, which 3 rounds of 5ms see in the mean.
	for _, class := range []string{"BenchmarkSum", "BenchmarkSum-2"} {
		b, c := rungsOf(res, class, "baseline"), rungsOf(res, class, "candidate")
		for i := range b {
			if b[i].Values["allocs/op"] != 0 || c[i].Values["allocs/op"] < 1 {
				t.Errorf("%s round %d: allocs/op %v → %v", class, i, b[i].Values["allocs/op"], c[i].Values["allocs/op"])
			}
			if b[i].Values["B/op"] >= 1024 || c[i].Values["B/op"] < 8192 {
				t.Errorf("%s round %d: B/op %v → %v", class, i, b[i].Values["B/op"], c[i].Values["B/op"])
			}
		}
		if mb, mc := meanOf(b, "sec/op"), meanOf(c, "sec/op"); !(mc > 1.5*mb) {
			t.Errorf("%s: mean sec/op %.3g → %.3g, want the candidate slower", class, mb, mc)
		}
	}
	for _, class := range []string{"BenchmarkConst", "store.BenchmarkConst-2"} {
		if b, c := meanOf(rungsOf(res, class, "baseline"), "allocs/op"), meanOf(rungsOf(res, class, "candidate"), "allocs/op"); b != 0 || c != 0 {
			t.Errorf("%s: allocs/op %v → %v, want 0 on both", class, b, c)
		}
	}

	if res.Env.Baseline.Kind != "gobench" || res.Env.Baseline.Spec != base || res.Env.Candidate.Spec != cand || res.Env.GoVersion == "" {
		t.Errorf("environment %+v", res.Env)
	}
	if !regexp.MustCompile(`(?m)^\[round 2/3\] store candidate: 2 results in \d+\.\ds \(rung \d+/36\)$`).MatchString(progress.String()) {
		t.Errorf("no progress line of store in round 2")
	}
	if !strings.Contains(progress.String(), "baseline: built 2 test binaries") {
		t.Errorf("no build line")
	}
	disk, err := benchdata.Read(filepath.Join(out, "results.json"))
	if err != nil || disk.Status != "complete" || len(disk.Rungs) != len(res.Rungs) {
		t.Fatalf("results.json: %v %+v", err, disk)
	}
	// Each side's standard output is kept as benchstat reads it.
	for _, side := range []string{"baseline", "candidate"} {
		f, err := os.Open(filepath.Join(out, side+".bench.txt"))
		if err != nil {
			t.Fatal(err)
		}
		rs, err := gobench.Parse(f, nil)
		f.Close()
		if err != nil || len(rs) != 3*len(goBenchCells) {
			t.Errorf("%s.bench.txt: %d results, %v", side, len(rs), err)
		}
	}
	checkCleaned(t, out)
}

// gitRun runs git in dir with an identity for commits.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, b)
	}
	return strings.TrimSpace(string(b))
}

// benchRepo makes a repository holding the test module in mod/, v1 in the
// first commit and v2 in the second, and returns the module's directory.
func benchRepo(t *testing.T) (repo, module string) {
	t.Helper()
	repo = t.TempDir()
	module = filepath.Join(repo, "mod")
	gitRun(t, repo, "init", "-q", "-b", "main")
	copyBenchModule(t, module, "v1")
	gitRun(t, repo, "add", ".")
	gitRun(t, repo, "commit", "-q", "-m", "v1")
	copyBenchModule(t, module, "v2")
	gitRun(t, repo, "commit", "-q", "-am", "v2")
	return repo, module
}

func worktrees(t *testing.T, repo string) []string {
	t.Helper()
	var dirs []string
	for _, l := range strings.Split(gitRun(t, repo, "worktree", "list", "--porcelain"), "\n") {
		if d, ok := strings.CutPrefix(l, "worktree "); ok {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

func TestGoBenchRefs(t *testing.T) {
	t.Parallel()
	repo, module := benchRepo(t)
	out := t.TempDir()
	sc := goBenchScenario(module, scenario.Target{Ref: "HEAD~1", Shown: "HEAD~1"}, scenario.Target{Ref: "HEAD", Shown: "HEAD"}, 2)
	sc.PinSets = []scenario.Pins{{Name: "cpu0", CPUs: "0"}}
	var progress syncBuffer
	var during []string
	opts := Options{OutDir: out, Progress: &progress}
	start := time.Now()
	res, err := RunGoBench(context.Background(), sc, opts)
	t.Logf("run took %v\n%s", time.Since(start), progress.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "complete" || res.CompleteRounds() != 2 || len(res.Rungs) != 2*2*len(goBenchCells) {
		t.Fatalf("status %s, %d complete rounds, %d rungs", res.Status, res.CompleteRounds(), len(res.Rungs))
	}
	if c := gitRun(t, repo, "rev-parse", "HEAD~1"); res.Env.Baseline.Commit != c {
		t.Errorf("baseline commit %q, want %q", res.Env.Baseline.Commit, c)
	}
	if c := gitRun(t, repo, "rev-parse", "HEAD"); res.Env.Candidate.Commit != c {
		t.Errorf("candidate commit %q, want %q", res.Env.Candidate.Commit, c)
	}
	if res.Env.Baseline.Spec != "HEAD~1" || res.Env.Candidate.Kind != "gobench" {
		t.Errorf("targets %+v %+v", res.Env.Baseline, res.Env.Candidate)
	}
	for _, r := range res.Rungs {
		if r.Pins != "cpu0" {
			t.Fatalf("rung %+v: pins %q", r.Cell, r.Pins)
		}
	}
	if !slices.Equal(res.Plan.PinSets, []string{"cpu0"}) {
		t.Errorf("plan pin sets %v", res.Plan.PinSets)
	}
	b, c := rungsOf(res, "BenchmarkSum", "baseline"), rungsOf(res, "BenchmarkSum", "candidate")
	if len(b) != 2 || len(c) != 2 || b[0].Values["allocs/op"] != 0 || c[0].Values["allocs/op"] < 1 {
		t.Errorf("BenchmarkSum allocs/op: %v → %v", b, c)
	}
	// CPU 0 is always online: the affinity takes unless the machine
	// refuses, and either way both sides say which.
	pins := res.Env.Pins[0]
	for _, side := range []string{"baseline", "candidate"} {
		all := strings.Join(append(slices.Clone(pins.Applied), pins.NotApplied...), "\n")
		if !strings.Contains(all, side+": cpuset 0") {
			t.Errorf("pins of %s not recorded: %+v", side, pins)
		}
	}
	if len(pins.NotApplied) == 0 && !slices.Contains(pins.Applied, "baseline: cpuset 0 (affinity)") {
		t.Errorf("pins %+v", pins)
	}

	// No worktree left, in git's records or on disk.
	if wts := worktrees(t, repo); len(wts) != 1 {
		t.Errorf("worktrees left: %v", wts)
	}
	for _, m := range regexp.MustCompile(`checked out at (\S+)`).FindAllStringSubmatch(progress.String(), -1) {
		during = append(during, m[1])
		if _, err := os.Stat(m[1]); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("worktree directory %s left (stat: %v)", m[1], err)
		}
	}
	if len(during) != 2 {
		t.Errorf("progress names %d worktrees", len(during))
	}
	checkCleaned(t, out)
}

func TestGoBenchUnknownRef(t *testing.T) {
	t.Parallel()
	repo, module := benchRepo(t)
	out := filepath.Join(t.TempDir(), "out")
	sc := goBenchScenario(module, scenario.Target{Ref: "HEAD"}, scenario.Target{Ref: "no-such-branch"}, 2)
	res, err := RunGoBench(context.Background(), sc, Options{OutDir: out})
	if err == nil || !strings.Contains(err.Error(), `candidate target: unknown git ref "no-such-branch"`) {
		t.Fatalf("error %v", err)
	}
	if res != nil {
		t.Errorf("results %+v", res)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("output directory made (stat: %v)", err)
	}
	if wts := worktrees(t, repo); len(wts) != 1 {
		t.Errorf("worktrees: %v", wts)
	}

	sc.Candidate.Ref = "--output=x"
	if _, err := RunGoBench(context.Background(), sc, Options{OutDir: out}); err == nil || !strings.Contains(err.Error(), `invalid git ref "--output=x"`) {
		t.Errorf("error %v", err)
	}
	sc.Candidate = scenario.Target{Name: "candidate", Dir: filepath.Join(repo, "nowhere")}
	if _, err := RunGoBench(context.Background(), sc, Options{OutDir: out}); err == nil || !strings.Contains(err.Error(), "candidate target: no Go module in") {
		t.Errorf("error %v", err)
	}
}

// inject makes the at-th test binary process of the run (0-based) do
// what: "fail" or "hang" (see testdata/gobench/internal/inject).
func inject(t *testing.T, what string, at int) string {
	dir := t.TempDir()
	t.Setenv("BENCHMOD_INJECT", what)
	t.Setenv("BENCHMOD_INJECT_AT", strconv.Itoa(at))
	t.Setenv("BENCHMOD_INJECT_DIR", dir)
	return dir
}

func TestGoBenchFailingBenchmark(t *testing.T) {
	base, cand := benchModules(t, "v1", "v2")
	// 4 processes per round: the first of round 2 fails.
	inject(t, "fail", 4)
	out := t.TempDir()
	sc := goBenchScenario(base, dirTarget(base), dirTarget(cand), 3)
	sc.GoBench.Benchtime = "20x"
	res, err := RunGoBench(context.Background(), sc, Options{OutDir: out})
	var te *target.TargetError
	if !errors.As(err, &te) || te.Phase != PhaseBench {
		t.Fatalf("error %v, want a *TargetError of phase %s", err, PhaseBench)
	}
	for _, want := range []string{"target: bench: ", "(round 2): exit status 1", "--- FAIL: BenchmarkConst", "injected failure"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if res == nil || res.Status != "failed" || res.CompleteRounds() != 1 || len(res.Rungs) != 2*len(goBenchCells) {
		t.Fatalf("results %+v", res)
	}
	disk, err := benchdata.Read(filepath.Join(out, "results.json"))
	if err != nil || disk.Status != "failed" || !strings.Contains(disk.Error, "injected failure") || disk.CompleteRounds() != 1 {
		t.Fatalf("results.json: %v %+v", err, disk)
	}
	checkCleaned(t, out)
}

func TestGoBenchCancel(t *testing.T) {
	base, cand := benchModules(t, "v1", "v2")
	dir := inject(t, "hang", 4)
	out := t.TempDir()
	sc := goBenchScenario(base, dirTarget(base), dirTarget(cand), 3)
	sc.GoBench.Benchtime = "20x"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var atStop *benchdata.Results
	binsAtStop := false
	opts := Options{OutDir: out, beforeStop: func() {
		// The outcome is on disk before anything is removed.
		atStop, _ = benchdata.Read(filepath.Join(out, "results.json"))
		bins, _ := filepath.Glob(filepath.Join(out, ".gobench-bin-*"))
		binsAtStop = len(bins) > 0
	}}
	type ret struct {
		res *benchdata.Results
		err error
	}
	done := make(chan ret, 1)
	go func() {
		res, err := RunGoBench(ctx, sc, opts)
		done <- ret{res, err}
	}()
	pid := 0
	for deadline := time.Now().Add(time.Minute); pid == 0; {
		if b, err := os.ReadFile(filepath.Join(dir, "hang.pid")); err == nil {
			pid, _ = strconv.Atoi(string(b))
		}
		select {
		case r := <-done:
			t.Fatalf("run ended before the hang: %v", r.err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no benchmark hung")
		}
	}
	cancel()
	var r ret
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("RunGoBench did not return after cancellation")
	}
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("error %v", r.err)
	}
	targettest.GroupGone(t, pid)
	if r.res.Status != "cancelled" || r.res.CompleteRounds() != 1 || len(r.res.Rungs) != 2*len(goBenchCells) {
		t.Fatalf("status %s, %d complete rounds, %d rungs", r.res.Status, r.res.CompleteRounds(), len(r.res.Rungs))
	}
	if atStop == nil || atStop.Status != "cancelled" || !binsAtStop {
		t.Errorf("before cleanup: results %+v, binaries there %v", atStop, binsAtStop)
	}
	checkCleaned(t, out)
}

// A package with tests on one side only runs there only, and the run says
// so; two sides naming their own packages pair them, and rename rules
// make their benchmarks one cell; a build failure is the build's error
// with the compiler's output.
func TestGoBenchOneSidedRenameBuildFailure(t *testing.T) {
	t.Parallel()
	base, cand := benchModules(t, "v1", "v1")
	extra := filepath.Join(cand, "extra")
	if err := os.MkdirAll(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package extra\n\nimport \"testing\"\n\nfunc BenchmarkConst(b *testing.B) {\n\tfor range b.N {\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(extra, "extra_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sc := goBenchScenario(base, dirTarget(base), dirTarget(cand), 2)
	sc.GoBench.Bench, sc.GoBench.CPU, sc.GoBench.Benchtime = "Const", []int{1}, "20x"
	var progress syncBuffer
	res, err := RunGoBench(context.Background(), sc, Options{OutDir: out, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "extra: tests on candidate only: it runs there only") {
		t.Errorf("progress:\n%s", progress.String())
	}
	if got := classes(res.Plan.Cells); !slices.Equal(got, []string{"BenchmarkConst", "extra.BenchmarkConst", "store.BenchmarkConst"}) {
		t.Errorf("cells %q", got)
	}
	if n := len(rungsOf(res, "extra.BenchmarkConst", "candidate")); n != 2 {
		t.Errorf("extra.BenchmarkConst: %d candidate rungs", n)
	}
	if n := len(rungsOf(res, "extra.BenchmarkConst", "baseline")); n != 0 {
		t.Errorf("extra.BenchmarkConst: %d baseline rungs", n)
	}
	for _, r := range rungsOf(res, "extra.BenchmarkConst", "candidate") {
		if r.Position != 0 {
			t.Errorf("one-sided rung at position %d", r.Position)
		}
	}
	if res.CompleteRounds() != 2 || res.RoundsDone[""] != 2 {
		t.Errorf("%d complete rounds, %v done", res.CompleteRounds(), res.RoundsDone)
	}

	// Two clients in one tree: each side names its package, and the rename
	// rules pair their benchmarks.
	sc.Baseline.Packages, sc.Candidate.Packages = []string{"./store"}, []string{"./extra"}
	sc.GoBench.Rename = []scenario.Rename{{Pattern: regexp.MustCompile(`^(store|extra)\.BenchmarkConst`), Replace: "client.BenchmarkConst"}}
	progress = syncBuffer{}
	res, err = RunGoBench(context.Background(), sc, Options{OutDir: out, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "store (baseline) and extra (candidate) have tests on one side each: they run as a pair") {
		t.Errorf("progress:\n%s", progress.String())
	}
	if got := classes(res.Plan.Cells); !slices.Equal(got, []string{"client.BenchmarkConst"}) {
		t.Errorf("cells %q", got)
	}
	for round := range 2 {
		var seq []string
		for _, r := range res.Rungs {
			if r.Round == round {
				seq = append(seq, r.Target)
				if r.Order != Order(sc.Seed, round, 0) {
					t.Errorf("round %d: order %s", round, r.Order)
				}
			}
		}
		if len(seq) != 2 || seq[0] == seq[1] {
			t.Errorf("round %d ran %v", round, seq)
		}
	}
	if res.CompleteRounds() != 2 {
		t.Errorf("%d complete rounds", res.CompleteRounds())
	}

	// Rename rules that give two benchmarks of one run one name.
	sc.Baseline.Packages, sc.Candidate.Packages = nil, nil
	sc.GoBench.Bench = "."
	sc.GoBench.Rename = []scenario.Rename{{Pattern: regexp.MustCompile(`^Benchmark(Sum|Const)$`), Replace: "BenchmarkAny"}}
	sc.Candidate = dirTarget(base)
	sc.Candidate.Name = "candidate"
	if _, err := RunGoBench(context.Background(), sc, Options{OutDir: out}); err == nil || !strings.Contains(err.Error(), "the one name BenchmarkAny") {
		t.Errorf("error %v", err)
	}
	sc.GoBench.Rename, sc.GoBench.Bench = nil, "Const"

	if err := os.WriteFile(filepath.Join(base, "store", "broken.go"), []byte("package store\n\nvar x int = \"not an int\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc.Candidate = dirTarget(cand)
	sc.Candidate.Name = "candidate"
	res, err = RunGoBench(context.Background(), sc, Options{OutDir: out})
	var te *target.TargetError
	if !errors.As(err, &te) || te.Phase != target.PhaseBuild || te.Target != "baseline" {
		t.Fatalf("error %v", err)
	}
	if !strings.Contains(err.Error(), "go test -c") || !strings.Contains(err.Error(), "broken.go:3") {
		t.Errorf("error lacks the command or the compiler's output:\n%v", err)
	}
	if res == nil || res.Status != "failed" || len(res.Rungs) != 0 {
		t.Errorf("results %+v", res)
	}
	checkCleaned(t, out)
}

// A benchmark that runs past the timeout (which -test.timeout does not
// cover) is stopped with SIGQUIT, and the run fails saying so.
func TestGoBenchTimeout(t *testing.T) {
	base, _ := benchModules(t, "v1", "v1")
	inject(t, "hang", 0)
	out := t.TempDir()
	sc := goBenchScenario(base, dirTarget(base), dirTarget(base), 1)
	sc.GoBench.Packages, sc.GoBench.Timeout, sc.GoBench.CPU = []string{"./store"}, time.Second, nil
	start := time.Now()
	res, err := RunGoBench(context.Background(), sc, Options{OutDir: out})
	var te *target.TargetError
	if !errors.As(err, &te) || te.Phase != PhaseBench || !strings.Contains(err.Error(), "still running after the timeout of 1s: stopped with SIGQUIT (exit status 2)") {
		t.Fatalf("error %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
	if res.Status != "failed" || len(res.Rungs) != 0 {
		t.Errorf("status %s, %d rungs", res.Status, len(res.Rungs))
	}
	checkCleaned(t, out)
}

// The budget bounds a gobench run too: a benchmark that hangs, under a
// test binary timeout of an hour, ends the run when the budget runs out,
// with a *BudgetOutError naming the phase, the results kept as cancelled,
// the hung process gone and nothing left behind.
func TestGoBenchBudget(t *testing.T) {
	base, cand := benchModules(t, "v1", "v2")
	dir := inject(t, "hang", 0)
	out := t.TempDir()
	sc := goBenchScenario(base, dirTarget(base), dirTarget(cand), 3)
	sc.GoBench.Benchtime, sc.GoBench.Timeout = "20x", time.Hour
	var progress syncBuffer
	res, err := RunGoBench(t.Context(), sc, Options{OutDir: out, Budget: 10 * time.Second, Progress: &progress})
	var bo *BudgetOutError
	if !errors.As(err, &bo) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v (%T), want a *BudgetOutError", err, err)
	}
	// A loaded machine may still be building when the budget runs out;
	// either way the phase is named.
	if !strings.HasPrefix(bo.Phase, "round 1, ") && !strings.HasPrefix(bo.Phase, "the build of the ") {
		t.Errorf("phase %q, want the first round's or a build", bo.Phase)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hang.pid")); err == nil {
		pid, _ := strconv.Atoi(string(b))
		targettest.GroupGone(t, pid)
	}
	if res == nil || res.Status != "cancelled" || res.Error != err.Error() {
		t.Fatalf("results %+v", res)
	}
	if !strings.Contains(progress.String(), "budget 10s: bounds the whole run") {
		t.Errorf("progress does not say what the budget bounds:\n%s", progress.String())
	}
	checkCleaned(t, out)
}
