//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gobench"
	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/process"
)

// PhaseBench names a *target.TargetError of a gobench test binary that failed
// while benchmarking (a failing or panicking benchmark, a timeout) or
// whose output could not be read.
const PhaseBench = "bench"

const (
	// defaultGoBenchTimeout is -test.timeout when the scenario gives
	// none: go test's own default.
	defaultGoBenchTimeout = 10 * time.Minute
	// goBenchKillAfter is how long after SIGQUIT (sent at the timeout)
	// benchgate waits for a binary to stop itself (the Go runtime prints
	// every goroutine's stack and exits) before it kills its process
	// group.
	goBenchKillAfter = 10 * time.Second
	// gitTimeout bounds the git commands that make and remove worktrees.
	gitTimeout = 2 * time.Minute
)

// RunGoBench measures a scenario of the gobench engine (engineOf):
// go test -bench of two versions of a Go module, interleaved. The contract
// is Run's: results are written to opts.OutDir/results.json as they are
// measured (after every test binary run, which gives one rung per
// benchmark result) and returned with the error when the run failed (a
// *target.TargetError: a build, a failing benchmark, unreadable output)
// or was cancelled (the error wraps ctx's). An unknown git ref, or a target
// whose module cannot be found, is refused before anything runs or is
// written, with nil results. opts.Budget bounds the whole run from then
// on, the worktrees, builds and rounds (a gobench run's length is known
// only as it runs, so no plan is refused): once it runs out, the run stops
// with a *BudgetOutError and keeps the rungs it measured.
//
// Each side's module is its Dir, or for a Ref the same path inside a
// temporary detached worktree of the repository holding GoBench.Module.
// Every package matching the side's packages (its own, else
// GoBench.Packages) that has tests is built once per side (go test -c,
// into opts.OutDir/gobench, removed afterwards). Rounds are the outer
// loop, packages in sorted order the inner one; each package runs on both
// sides, AB or BA by Order, each test binary in its own process group with
// the pin set's CPU affinity and memory cgroup where the machine allows,
// in the package's directory, without the CI runner's secrets in its
// environment. Packages with tests on one side only are paired with those
// of the other side in sorted order (two sides naming their own packages),
// and run alone when there are none left. A rung's cell is the result's
// gobench.Cell (package-qualified, GoBench.Rename applied); the plan's
// cells are added as they are first seen, and Results.RoundsDone counts
// the rounds that ran every package. Worktrees, binaries and cgroups are
// removed whatever ends the run, after the outcome has been written.
//
// Besides results.json, opts.OutDir gets <target>.log (every build's and
// run's output) and <target>.bench.txt (the test binaries' standard
// output as benchstat reads it).
func RunGoBench(ctx context.Context, sc *scenario.Scenario, opts Options) (*benchdata.Results, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, ok := engineOf(sc).(goBenchEngine); !ok || sc.GoBench == nil {
		return nil, errors.New("runner: not a gobench scenario")
	}
	progress, getenv := opts.Progress, opts.Getenv
	g := &goBench{sc: sc, gb: sc.GoBench, opts: opts, progress: progress, getenv: getenv, cells: map[benchdata.Cell]bool{}}
	g.sides[0] = &goSide{name: sc.Baseline.Name, spec: sc.Baseline}
	g.sides[1] = &goSide{name: sc.Candidate.Name, spec: sc.Candidate}
	for i, n := range []string{"baseline", "candidate"} {
		if g.sides[i].name == "" {
			g.sides[i].name = n
		}
	}
	// What cannot be found is the scenario's mistake: refused before
	// anything runs or is written, like a plan over budget.
	for _, s := range g.sides {
		if err := g.resolve(ctx, s); err != nil {
			return nil, target.RedactErr(sc, err)
		}
	}
	// The plan's estimate, and the refusal of one over the budget, as a
	// grid's plan is refused.
	est := g.estimate(ctx, 0)
	if err := est.over(opts.Budget); err != nil {
		return nil, err
	}
	// The plan line proper follows the builds, which find the packages.
	fmt.Fprintln(progress, "estimate: "+sc.Redact(est.text))
	ctx, budget, cancel := withBudget(ctx, opts.Budget, opts.noDeadline)
	defer cancel()
	g.budget = budget
	if opts.Budget > 0 {
		fmt.Fprintf(progress, "budget %v: bounds the whole run, worktrees, builds and rounds (the estimate counts the rounds only)\n", opts.Budget)
	}
	target.SweepLeftovers(progress)

	rounds := sc.Load.Repetitions
	res := &benchdata.Results{
		Version:  benchdata.FormatVersion,
		Tool:     strings.TrimSpace("benchgate " + opts.ToolVersion),
		Kind:     scenario.KindGoBench,
		Scenario: scenarioInfo(sc),
		Env:      environment(sc, opts.ToolVersion, runID()),
		Plan:     benchdata.Plan{Cells: []benchdata.Cell{}, Rounds: rounds},
		Rungs:    []benchdata.Rung{},
		Status:   "running",
	}
	for _, p := range sc.PinSets {
		res.Plan.PinSets = append(res.Plan.PinSets, p.Name)
	}
	res.Env.Baseline = g.sides[0].info(ctx, getenv)
	res.Env.Candidate = g.sides[1].info(ctx, getenv)
	g.res = res
	cleanup := func() { g.cleanup(ctx) }
	defer cleanup()
	if err := benchdata.Write(opts.OutDir, res); err != nil {
		return nil, err
	}

	// As in Run: the outcome goes to disk before the cleanup, which may
	// take a while (git, a cgroup to empty).
	// A side's error quotes its go commands and their output, either of
	// which may hold a ${VAR}'s value.
	return finish(ctx, res, opts, target.RedactErr(sc, g.run(ctx)), cleanup)
}

// goBench is one gobench run.
type goBench struct {
	sc       *scenario.Scenario
	gb       *scenario.GoBench
	opts     Options
	res      *benchdata.Results
	progress io.Writer
	getenv   func(string) string

	sides  [2]*goSide // baseline, candidate
	slots  []goSlot   // what a round runs, in order
	tmp    string     // holds the worktrees; "" until one is made
	binDir string     // a fresh opts.OutDir/.gobench-bin-*, absolute
	cells  map[benchdata.Cell]bool
	// perRound is the number of rungs of the first round, which gives the
	// progress lines their total; 0 until it is known.
	perRound int
	pins     *goPins // of the current pin set; nil without pins
	cleaned  bool
	// budget is the run's deadline and the phase it is in; nil without
	// a budget.
	budget *budgetClock
	// untrackTmp and untrackBin drop tmp and binDir from the leftover
	// journal (see target.MarkDir); nil until they are made.
	untrackTmp, untrackBin func()
}

// goSide is one side of a gobench run.
type goSide struct {
	name string // "baseline" or "candidate"
	spec scenario.Target
	// top is the repository's top level and rel the module's path in it,
	// for a Ref; commit is what the Ref resolved to.
	top, rel, commit string
	worktree         string // the ref's worktree once made; "" for a Dir
	untrackWorktree  func() // drops it from the leftover journal
	dir              string // the module's directory on this side
	goVersion        string
	pkgs             map[string]*goPkg // by import path: packages with tests
	log, bench       *os.File
	// source is where each cell's results came from on this side
	// (package and benchmark name): two sources of one cell would mix
	// two benchmarks' samples.
	source map[string]string
	// raw is each cell's benchmark on this side, as its binary names it:
	// what a profiled run of the cell asks for.
	raw map[string]rawBench
}

// goSlot is one step of a round: a package's test binaries on both
// sides, or a package with tests on one side only (pkg of the other nil).
// Packages with tests on one side only are paired in sorted order with
// those of the other side, as two sides naming their own packages (two
// clients of one tree, paired by rename rules) want.
type goSlot struct {
	pkg [2]*goPkg
}

// label names the slot in progress lines: its package relative to the
// module, both when the sides' packages differ.
func (sl goSlot) label(side int) string {
	p := sl.pkg[side]
	return gobench.RelPackage(p.path, p.module)
}

// goPkg is one package with tests on one side.
type goPkg struct {
	path   string // import path
	module string // its module's path
	dir    string // its directory on this side
	bin    string // its test binary, once built
}

// run prepares both sides, builds them, then runs the rounds of every pin
// set.
func (g *goBench) run(ctx context.Context) error {
	dir, err := filepath.Abs(g.opts.OutDir)
	if err != nil {
		return err
	}
	// A directory of its own: the output directory may hold anything,
	// and cleanup removes this one only.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if g.binDir, err = os.MkdirTemp(dir, ".gobench-bin-"); err != nil {
		return err
	}
	g.untrackBin = target.MarkDir(g.binDir)
	for _, s := range g.sides {
		g.budget.enter("the preparation of the " + s.name)
		if err := g.prepare(ctx, s); err != nil {
			return cancelledOr(ctx, g.res, err)
		}
	}
	if a, b := g.sides[0].goVersion, g.sides[1].goVersion; a != b {
		g.res.Env.GoVersion = fmt.Sprintf("%s (%s), %s (%s)", a, g.sides[0].name, b, g.sides[1].name)
		fmt.Fprintf(g.progress, "warning: the two sides build with different Go toolchains: %s\n", g.res.Env.GoVersion)
	} else if a != "" {
		g.res.Env.GoVersion = a
	}
	if err := g.schedule(); err != nil {
		return err
	}
	for side := range g.sides {
		g.budget.enter("the build of the " + g.sides[side].name)
		if err := g.build(ctx, side); err != nil {
			return cancelledOr(ctx, g.res, err)
		}
	}
	if err := cancelled(ctx, g.res); err != nil {
		return err
	}
	bench := g.bench(g.sides[0])
	if b := g.bench(g.sides[1]); b != bench {
		bench = fmt.Sprintf("%s (%s), %s (%s)", bench, g.sides[0].name, b, g.sides[1].name)
	}
	fmt.Fprintf(g.progress, "plan: go test -bench %s, %s × %d rounds × 2 targets\n", g.sc.Redact(bench), countOf(len(g.slots), "package", "packages"), g.res.Plan.Rounds)
	if p := g.sc.Profiling; p.When != scenario.ProfileNever && g.opts.Profile != nil {
		which := "that regress"
		if p.When == scenario.ProfileAlways {
			which = "gated"
		}
		fmt.Fprintf(g.progress, "profiling: after the rounds, up to %d benchmarks %s, each run 4 times more (both sides, ABBA) under -test.cpuprofile (profiling.when: never turns it off)\n", p.Cells, which)
	}

	sets := g.sc.PinSets
	if len(sets) == 0 {
		sets = []scenario.Pins{{}}
	}
	for pi := range sets {
		g.pins = nil
		if len(g.sc.PinSets) > 0 {
			g.pins = g.preparePins(&sets[pi], &g.res.Env.Pins[pi])
		}
		err := g.rounds(ctx, pi)
		if err == nil {
			err = g.profileBenchmarks(ctx, pi)
		}
		g.releasePins()
		if err != nil {
			return err
		}
	}
	return nil
}

// rounds runs every round of one pin set. The order of a slot's pair is
// drawn as Run draws a cell's: Order of its index in the whole schedule,
// pin sets outermost.
//
// Results.RoundsDone counts, per pin set, the rounds in which every slot
// ran: a cell is decided on its own pin set's complete rounds, as a
// service's run's is.
func (g *goBench) rounds(ctx context.Context, pi int) error {
	plan := &g.res.Plan
	pinName := ""
	if g.pins != nil {
		pinName = g.pins.set.Name
	}
	sets := max(len(plan.PinSets), 1)
	if g.res.RoundsDone == nil {
		g.res.RoundsDone = map[string]int{}
	}
	g.res.RoundsDone[pinName] = 0
	for round := range plan.Rounds {
		for i, sl := range g.slots {
			order := Order(g.sc.Seed, round, pi*len(g.slots)+i)
			pair := [2]int{0, 1}
			if order == "BA" {
				pair = [2]int{1, 0}
			}
			pos := 0
			for _, si := range pair {
				s := g.sides[si]
				p := sl.pkg[si]
				if p == nil {
					continue
				}
				if err := cancelled(ctx, g.res); err != nil {
					return err
				}
				g.budget.enter(fmt.Sprintf("round %d, %s on the %s", round+1, sl.label(si), s.name))
				rungs, took, err := g.runPackage(ctx, si, p, round)
				if err != nil {
					return err
				}
				for j := range rungs {
					r := &rungs[j]
					r.Pins, r.Round, r.Target, r.Position, r.Order = pinName, round, s.name, pos, order
					if !g.cells[r.Cell] {
						g.cells[r.Cell] = true
						plan.Cells = append(plan.Cells, r.Cell)
					}
				}
				g.res.Rungs = append(g.res.Rungs, rungs...)
				if err := benchdata.Write(g.opts.OutDir, g.res); err != nil {
					return err
				}
				pos++
				// The rungs a round makes are known once the first round
				// has run every package on both sides.
				total := "/?, the total known after round 1"
				if g.perRound > 0 || round > 0 {
					total = "/" + strconv.Itoa(g.perRound*plan.Rounds*sets)
				}
				label := gobench.RelPackage(p.path, p.module)
				if pinName != "" {
					label = "[" + pinName + "] " + label
				}
				none := ""
				if len(rungs) == 0 {
					none = fmt.Sprintf(" (no benchmark of it matched -bench %s on the %s: a package with none at this ref measures nothing)",
						textsafe.Quote(g.bench(s), textsafe.QuoteRunes), s.name)
				}
				fmt.Fprintf(g.progress, "[round %d/%d] %s %s: %s%s in %.1fs (rung %d%s)\n",
					round+1, plan.Rounds, label, s.name, countOf(len(rungs), "result", "results"), none, took.Seconds(), len(g.res.Rungs), total)
			}
		}
		if round == 0 && pi == 0 {
			g.perRound = len(g.res.Rungs)
		}
		g.res.RoundsDone[pinName] = round + 1
		if err := benchdata.Write(g.opts.OutDir, g.res); err != nil {
			return err
		}
	}
	return nil
}

// runPackage runs one package's test binary on one side and returns a
// rung per benchmark result, with the cell and the values set.
func (g *goBench) runPackage(run context.Context, side int, p *goPkg, round int) ([]benchdata.Rung, time.Duration, error) {
	s := g.sides[side]
	args := []string{"-test.run=^$", "-test.bench=" + g.bench(s), "-test.benchmem", "-test.count=1"}
	if len(g.gb.CPU) > 0 {
		cpu := make([]string, len(g.gb.CPU))
		for i, c := range g.gb.CPU {
			cpu[i] = strconv.Itoa(c)
		}
		args = append(args, "-test.cpu="+strings.Join(cpu, ","))
	}
	if g.gb.Benchtime != "" {
		args = append(args, "-test.benchtime="+g.gb.Benchtime)
	}
	label := gobench.RelPackage(p.path, p.module)
	out, tail, took, err := g.runBinary(run, side, p, round, args, s.bench)
	if err != nil {
		return nil, took, err
	}
	start := time.Now().Add(-took)
	fail := func(err error) error {
		return &target.TargetError{Target: s.name, Phase: PhaseBench, Err: fmt.Errorf("%s (round %d): %w", p.path, round+1, err), Output: tail}
	}
	// Rename rules match cell names, not bare ones: applied by Cell.
	results, err := gobench.Parse(bytes.NewReader(out), nil)
	if err != nil {
		return nil, took, fail(fmt.Errorf("its output could not be read (a benchmark that writes to standard output breaks its own result line; b.Log and standard error do not): %w", err))
	}
	rungs := make([]benchdata.Rung, 0, len(results))
	seen := map[string]string{}
	for _, r := range results {
		pkg := r.Pkg
		if pkg == "" {
			pkg = p.path
		}
		class := gobench.Cell(pkg, p.module, r.Name, g.gb.Rename)
		if prev, ok := seen[class]; ok {
			return nil, took, fmt.Errorf("%s %s: the rename rules give %s and %s, of one run, the one name %s", label, s.name, prev, r.Name, class)
		}
		seen[class] = r.Name
		src := pkg + "." + r.Name
		if s.source == nil {
			s.source = map[string]string{}
		}
		if prev, ok := s.source[class]; ok && prev != src {
			return nil, took, fmt.Errorf("%s %s: %s and %s are both named %s (by the rename rules, or as packages of two modules): their samples would mix", label, s.name, prev, src, class)
		}
		s.source[class] = src
		if s.raw == nil {
			s.raw = map[string]rawBench{}
		}
		s.raw[class] = rawBench{pkg: p, name: r.Name}
		rungs = append(rungs, benchdata.Rung{
			Cell:     benchdata.Cell{Class: class},
			Start:    start,
			Duration: took.Seconds(),
			Values:   r.Values,
		})
	}
	return rungs, took, nil
}

// runBinary runs one package's test binary on one side with args (the
// timeout's added), its output kept in the side's log and in keep (the
// side's bench file; nil for none), and returns its standard output and
// the last lines of its output, for an error.
func (g *goBench) runBinary(run context.Context, side int, p *goPkg, round int, args []string, keep io.Writer) ([]byte, []string, time.Duration, error) {
	s := g.sides[side]
	timeout := g.gb.Timeout
	if timeout <= 0 {
		timeout = defaultGoBenchTimeout
	}
	// -test.paniconexit0, as go test passes it: a benchmark that calls
	// os.Exit(0) would otherwise end the binary "successfully" with
	// results missing. -test.timeout covers tests only, not benchmarks:
	// benchgate enforces the timeout itself, as go test does.
	args = append(args, "-test.timeout="+timeout.String(), "-test.paniconexit0")

	fmt.Fprintf(s.log, "# round %d: %s: %s\n", round+1, p.path, target.RedactedLine(g.sc, append([]string{p.bin}, args...)))
	// A benchmark that writes without end fills no more than what the
	// parser would read.
	stdout := cappedBuffer{max: gobench.MaxOutputBytes}
	tail := target.NewTail(target.BuildTailLines)
	// What is parsed is the output as it is; what is kept (the log, the
	// bench file, the tail of an error) is redacted, one writer a stream.
	keeps := []io.Writer{s.log, tail}
	if keep != nil {
		keeps = append(keeps, keep)
	}
	kept := target.NewRedactWriter(g.sc, io.MultiWriter(keeps...))
	keptErr := target.NewRedactWriter(g.sc, io.MultiWriter(s.log, tail))
	ctx, cancel := context.WithCancel(run)
	defer cancel()
	var timer *time.Timer
	timedOut := make(chan struct{})
	start := time.Now()
	err := process.ExecGroup(ctx, func(ctx context.Context) *exec.Cmd {
		stdout.Reset()
		cmd := exec.CommandContext(ctx, p.bin, args...)
		cmd.Dir = p.dir
		cmd.Env = target.ChildEnv(os.Environ(), nil)
		cmd.Stdout = io.MultiWriter(&stdout, kept)
		cmd.Stderr = keptErr
		return cmd
	}, g.pinCPUs(), g.pinCgroup(side), func(cmd *exec.Cmd, r process.ForkResult) {
		g.pinStarted(side, cmd.Process.Pid, r)
		// At the timeout, SIGQUIT: the Go runtime prints every
		// goroutine's stack, which shows where the benchmark is stuck.
		// Process.Signal cannot reach another process that reused the
		// pid once this one has been reaped.
		timer = time.AfterFunc(timeout, func() {
			close(timedOut)
			cmd.Process.Signal(syscall.SIGQUIT)
			time.AfterFunc(goBenchKillAfter, cancel)
		})
	})
	if timer != nil {
		timer.Stop()
	}
	kept.Flush()
	keptErr.Flush()
	took := time.Since(start)
	if cerr := cancelled(run, g.res); cerr != nil {
		return nil, nil, took, cerr
	}
	fail := func(err error) error {
		return &target.TargetError{Target: s.name, Phase: PhaseBench, Err: fmt.Errorf("%s (round %d): %w", p.path, round+1, err), Output: tail.Lines()}
	}
	select {
	case <-timedOut:
		how := "stopped with SIGQUIT"
		if ctx.Err() != nil {
			how = fmt.Sprintf("killed %v after SIGQUIT", goBenchKillAfter)
		}
		return nil, tail.Lines(), took, fail(fmt.Errorf("still running after the timeout of %v: %s (%v); its goroutines' stacks are in %s.log", timeout, how, process.ExitText(err), s.name))
	default:
	}
	if err != nil {
		return nil, tail.Lines(), took, fail(err)
	}
	if stdout.over {
		return nil, tail.Lines(), took, fail(fmt.Errorf("its standard output passed %d MiB, more than a benchmark's results can be", gobench.MaxOutputBytes>>20))
	}
	return stdout.Bytes(), tail.Lines(), took, nil
}

// cappedBuffer keeps the first max bytes written to it and notes that more
// came; it never fails a write, so the writer beside it in a MultiWriter
// (the log) goes on.
type cappedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		b.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

func (b *cappedBuffer) Reset() { b.Buffer.Reset(); b.over = false }

// cleanup removes what the run made outside the results: worktrees (and
// git's record of them), test binaries, cgroups; and closes the logs. It
// runs once, uncancelled: a cancelled run must still clean up.
func (g *goBench) cleanup(ctx context.Context) {
	if g.cleaned {
		return
	}
	g.cleaned = true
	g.releasePins()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gitTimeout)
	defer cancel()
	pruned := map[string]bool{}
	for _, s := range g.sides {
		if s.worktree != "" {
			if _, err := target.Git(ctx, s.top, "worktree", "remove", "--force", s.worktree); err != nil {
				fmt.Fprintf(g.progress, "warning: removing the %s worktree: %v\n", s.name, err)
			}
		}
		if s.top != "" && !pruned[s.top] && g.tmp != "" {
			pruned[s.top] = true
			defer func(top string) {
				// After the directory is gone: prune drops the records
				// of worktrees whose directory no longer exists.
				if _, err := target.Git(ctx, top, "worktree", "prune"); err != nil {
					fmt.Fprintf(g.progress, "warning: git worktree prune: %v\n", err)
				}
			}(s.top)
		}
		for _, f := range []*os.File{s.log, s.bench} {
			if f != nil {
				f.Close()
			}
		}
	}
	if g.tmp != "" {
		if err := os.RemoveAll(g.tmp); err != nil {
			fmt.Fprintf(g.progress, "warning: %v\n", err)
		} else {
			for _, s := range g.sides {
				if s.untrackWorktree != nil {
					s.untrackWorktree()
				}
			}
			g.untrackTmp()
		}
	}
	if g.binDir != "" {
		if err := os.RemoveAll(g.binDir); err != nil {
			fmt.Fprintf(g.progress, "warning: %v\n", err)
		} else {
			g.untrackBin()
		}
	}
}

// countOf is "1 package", "2 packages".
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
