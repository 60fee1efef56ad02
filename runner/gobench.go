package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/gobench"
	"github.com/benchgate/benchgate/scenario"
)

// PhaseBench names a *TargetError of a gobench test binary that failed
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

// RunGoBench measures a gobench scenario (sc.Kind scenario.KindGoBench):
// go test -bench of two versions of a Go module, interleaved. The contract
// is Run's: results are written to opts.OutDir/results.json as they are
// measured (after every test binary run, which gives one rung per
// benchmark result) and returned with the error when the run failed (a
// *TargetError: a build, a failing benchmark, unreadable output) or was
// cancelled (the error wraps ctx's). An unknown git ref, or a target
// whose module cannot be found, is refused before anything runs or is
// written, with nil results. opts.Budget is not checked: a gobench run's
// time is only known as it runs.
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
func RunGoBench(ctx context.Context, sc *scenario.Scenario, opts Options) (*baselines.Results, error) {
	if opts.OutDir == "" {
		return nil, errors.New("runner: no output directory")
	}
	if sc.Kind != scenario.KindGoBench || sc.GoBench == nil {
		return nil, errors.New("runner: not a gobench scenario")
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	g := &goBench{ctx: ctx, sc: sc, gb: sc.GoBench, opts: opts, progress: progress, getenv: getenv, cells: map[baselines.Cell]bool{}}
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
		if err := g.resolve(s); err != nil {
			return nil, redactErr(sc, err)
		}
	}
	if opts.Budget > 0 {
		fmt.Fprintf(progress, "budget %v: not checked, a gobench run's time is known only as it runs\n", opts.Budget)
	}
	sweepLeftovers(progress)

	rounds := sc.Load.Repetitions
	res := &baselines.Results{
		Version:  baselines.FormatVersion,
		Tool:     strings.TrimSpace("benchgate " + opts.ToolVersion),
		Kind:     scenario.KindGoBench,
		Scenario: scenarioInfo(sc),
		Env:      environment(sc, opts.ToolVersion, runID()),
		Plan:     baselines.Plan{Cells: []baselines.Cell{}, Rounds: rounds},
		Rungs:    []baselines.Rung{},
		Status:   "running",
	}
	for _, p := range sc.PinSets {
		res.Plan.PinSets = append(res.Plan.PinSets, p.Name)
	}
	res.Env.Baseline = g.sides[0].info(ctx, getenv)
	res.Env.Candidate = g.sides[1].info(ctx, getenv)
	g.res = res
	defer g.cleanup()
	if err := baselines.Write(opts.OutDir, res); err != nil {
		return nil, err
	}

	// As in Run: the outcome goes to disk before the cleanup, which may
	// take a while (git, a cgroup to empty).
	// A side's error quotes its go commands and their output, either of
	// which may hold a ${VAR}'s value.
	return finish(ctx, res, opts, redactErr(sc, g.run()), g.cleanup)
}

// goBench is one gobench run.
type goBench struct {
	ctx      context.Context
	sc       *scenario.Scenario
	gb       *scenario.GoBench
	opts     Options
	res      *baselines.Results
	progress io.Writer
	getenv   func(string) string

	sides  [2]*goSide // baseline, candidate
	slots  []goSlot   // what a round runs, in order
	tmp    string     // holds the worktrees; "" until one is made
	binDir string     // a fresh opts.OutDir/.gobench-bin-*, absolute
	cells  map[baselines.Cell]bool
	// perRound is the number of rungs of the first round, which gives the
	// progress lines their total; 0 until it is known.
	perRound int
	pins     *goPins // of the current pin set; nil without pins
	cleaned  bool
	// untrackTmp and untrackBin drop tmp and binDir from the leftover
	// journal (see sweep.go); nil until they are made.
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

// git runs git -C dir args and returns its standard output, trimmed; the
// error holds what git said. git needs none of the runner's credentials.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = childEnv(os.Environ(), nil)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// resolve finds a side's module: a Dir is checked, a Ref resolved to its
// commit in the repository holding GoBench.Module (the worktree is made
// later, by prepare).
func (g *goBench) resolve(s *goSide) error {
	if s.spec.Ref == "" {
		s.dir = s.spec.Dir
		if s.dir == "" {
			s.dir = g.gb.Module
		}
		if _, err := os.Stat(filepath.Join(s.dir, "go.mod")); err != nil {
			return fmt.Errorf("%s target: no Go module in %s: %v", s.name, s.dir, err)
		}
		return nil
	}
	ref := s.spec.Ref
	if strings.HasPrefix(ref, "-") {
		return fmt.Errorf("%s target: invalid git ref %q", s.name, ref)
	}
	top, err := git(g.ctx, g.gb.Module, "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("%s target: ref %q: the module %s is not in a git repository: %v", s.name, ref, g.gb.Module, err)
	}
	commit, err := git(g.ctx, top, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil || commit == "" {
		if g.ctx.Err() != nil {
			return fmt.Errorf("%s target: resolving ref %q: %w", s.name, ref, g.ctx.Err())
		}
		return fmt.Errorf("%s target: unknown git ref %q: no such commit in %s", s.name, ref, top)
	}
	// git prints the top level with symlinks resolved; the module's path
	// may have some (a temporary directory under a symlink).
	mod, err := filepath.EvalSymlinks(g.gb.Module)
	if err != nil {
		return fmt.Errorf("%s target: %v", s.name, err)
	}
	rel, err := filepath.Rel(top, mod)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s target: the module %s is not inside its repository %s", s.name, g.gb.Module, top)
	}
	s.top, s.rel, s.commit = top, rel, commit
	return nil
}

// info identifies a side for the results: the commit a Ref resolved to,
// else the override from the environment or the commit of a Dir's
// repository, as Target.Info does.
func (s *goSide) info(ctx context.Context, getenv func(string) string) baselines.TargetInfo {
	ti := baselines.TargetInfo{Name: s.name, Kind: scenario.KindGoBench, Spec: s.spec.Shown}
	if ti.Spec == "" {
		if s.spec.Ref != "" {
			ti.Spec = "ref " + s.spec.Ref
		} else {
			ti.Spec = s.dir
		}
	}
	switch {
	case s.commit != "":
		ti.Commit = s.commit
	case getenv("BENCHGATE_"+strings.ToUpper(s.name)+"_COMMIT") != "":
		ti.Commit = getenv("BENCHGATE_" + strings.ToUpper(s.name) + "_COMMIT")
	default:
		if c, err := git(ctx, s.dir, "rev-parse", "HEAD"); err == nil {
			ti.Commit = c
		}
	}
	return ti
}

func (g *goBench) ctxErr() error {
	if err := g.ctx.Err(); err != nil {
		return fmt.Errorf("run cancelled after %d rungs: %w", len(g.res.Rungs), err)
	}
	return nil
}

func (g *goBench) cancelledOr(err error) error {
	if cerr := g.ctxErr(); cerr != nil {
		return cerr
	}
	return err
}

// run prepares both sides, builds them, then runs the rounds of every pin
// set.
func (g *goBench) run() error {
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
	g.untrackBin = markDir(g.binDir)
	for _, s := range g.sides {
		if err := g.prepare(s); err != nil {
			return g.cancelledOr(err)
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
		if err := g.build(side); err != nil {
			return g.cancelledOr(err)
		}
	}
	if err := g.ctxErr(); err != nil {
		return err
	}
	bench := g.bench(g.sides[0])
	if b := g.bench(g.sides[1]); b != bench {
		bench = fmt.Sprintf("%s (%s), %s (%s)", bench, g.sides[0].name, b, g.sides[1].name)
	}
	fmt.Fprintf(g.progress, "plan: go test -bench %s, %s × %d rounds × 2 targets\n", g.sc.Redact(bench), countOf(len(g.slots), "package", "packages"), g.res.Plan.Rounds)

	sets := g.sc.PinSets
	if len(sets) == 0 {
		sets = []scenario.Pins{{}}
	}
	for pi := range sets {
		g.pins = nil
		if len(g.sc.PinSets) > 0 {
			g.pins = g.preparePins(&sets[pi], &g.res.Env.Pins[pi])
		}
		err := g.rounds(pi)
		g.releasePins()
		if err != nil {
			return err
		}
	}
	return nil
}

// patterns are a side's go list patterns: its own, else the scenario's.
func (g *goBench) patterns(s *goSide) []string {
	switch {
	case len(s.spec.Packages) > 0:
		return s.spec.Packages
	case len(g.gb.Packages) > 0:
		return g.gb.Packages
	}
	return []string{"./..."}
}

// bench is a side's -test.bench pattern: its own, else the scenario's.
func (g *goBench) bench(s *goSide) string {
	switch {
	case s.spec.Bench != "":
		return s.spec.Bench
	case g.gb.Bench != "":
		return g.gb.Bench
	}
	return "."
}

// schedule makes the slots of a round from the sides' packages: those
// with tests on both sides by import path, then the rest of each side
// paired in sorted order, the rest of the longer list alone; in the order
// of their (first) package's path.
func (g *goBench) schedule() error {
	base, cand := g.sides[0].pkgs, g.sides[1].pkgs
	if len(base)+len(cand) == 0 {
		return fmt.Errorf("no package with tests matches %s on either side", strings.Join(g.patterns(g.sides[0]), " "))
	}
	var onlyBase, onlyCand []string
	for _, p := range slices.Sorted(maps.Keys(base)) {
		if cand[p] != nil {
			g.slots = append(g.slots, goSlot{pkg: [2]*goPkg{base[p], cand[p]}})
		} else {
			onlyBase = append(onlyBase, p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(cand)) {
		if base[p] == nil {
			onlyCand = append(onlyCand, p)
		}
	}
	for i := 0; i < max(len(onlyBase), len(onlyCand)); i++ {
		var sl goSlot
		if i < len(onlyBase) {
			sl.pkg[0] = base[onlyBase[i]]
		}
		if i < len(onlyCand) {
			sl.pkg[1] = cand[onlyCand[i]]
		}
		switch {
		case sl.pkg[0] != nil && sl.pkg[1] != nil:
			fmt.Fprintf(g.progress, "%s (%s) and %s (%s) have tests on one side each: they run as a pair\n",
				sl.label(0), g.sides[0].name, sl.label(1), g.sides[1].name)
		default:
			side := 0
			if sl.pkg[0] == nil {
				side = 1
			}
			fmt.Fprintf(g.progress, "%s: tests on %s only: it runs there only, and its benchmarks have no counterpart unless a rename rule gives them one\n",
				sl.label(side), g.sides[side].name)
		}
		g.slots = append(g.slots, sl)
	}
	key := func(sl goSlot) string {
		if sl.pkg[0] != nil {
			return sl.pkg[0].path
		}
		return sl.pkg[1].path
	}
	slices.SortStableFunc(g.slots, func(a, b goSlot) int { return strings.Compare(key(a), key(b)) })
	return nil
}

// prepare opens a side's logs, makes its worktree (for a Ref) and lists
// its packages with tests.
func (g *goBench) prepare(s *goSide) error {
	if err := os.MkdirAll(g.opts.OutDir, 0o755); err != nil {
		return err
	}
	var err error
	if s.log, err = os.Create(filepath.Join(g.opts.OutDir, s.name+".log")); err != nil {
		return err
	}
	if s.bench, err = os.Create(filepath.Join(g.opts.OutDir, s.name+".bench.txt")); err != nil {
		return err
	}
	if s.spec.Ref != "" {
		if g.tmp == "" {
			if g.tmp, err = os.MkdirTemp("", "benchgate-gobench-"); err != nil {
				return err
			}
			g.untrackTmp = markDir(g.tmp)
		}
		wt := filepath.Join(g.tmp, s.name)
		// Recorded before git makes it: the sweep of a later run removes
		// it and prunes git's record should benchgate be killed.
		s.untrackWorktree = track(leftover{Kind: leftWorktree, Path: wt, Repo: s.top})
		out, err := git(g.ctx, s.top, "worktree", "add", "--detach", wt, s.commit)
		if err != nil {
			return &TargetError{Target: s.name, Phase: PhaseBuild, Err: fmt.Errorf("git worktree add of %s (%s): %w", s.spec.Ref, s.commit, err)}
		}
		fmt.Fprintf(s.log, "# worktree of %s (%s) at %s\n%s\n", g.sc.Redact(s.spec.Ref), s.commit, wt, g.sc.Redact(out))
		s.worktree = wt
		s.dir = filepath.Join(wt, s.rel)
		if _, err := os.Stat(filepath.Join(s.dir, "go.mod")); err != nil {
			return &TargetError{Target: s.name, Phase: PhaseBuild, Err: fmt.Errorf("no Go module at %s in %s (%s)", s.rel, s.spec.Ref, short(s.commit))}
		}
		fmt.Fprintf(g.progress, "%s: %s is %s, checked out at %s\n", s.name, g.sc.Redact(s.spec.Ref), short(s.commit), g.sc.Redact(s.dir))
	}
	if v, err := g.goCmdOutput(s, "env", "GOVERSION"); err == nil {
		s.goVersion = strings.TrimSpace(v)
	}
	return g.list(s)
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// goCmdOutput runs go args in the side's module directory and returns
// its standard output; the error is a *TargetError of the build phase
// with the tail of what go said.
func (g *goBench) goCmdOutput(s *goSide, args ...string) (string, error) {
	var stdout bytes.Buffer
	tail := newLineTail(buildTailLines)
	shown := redactedLine(g.sc, args)
	fmt.Fprintf(s.log, "# go %s\n", shown)
	stderr := newRedactWriter(g.sc, io.MultiWriter(tail, s.log))
	err := execGroup(g.ctx, func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = s.dir
		cmd.Env = childEnv(os.Environ(), nil)
		cmd.Stdout = &stdout
		cmd.Stderr = stderr
		return cmd
	}, nil, nil, nil)
	stderr.Flush()
	if err != nil {
		if g.ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", g.ctx.Err(), err)
		}
		return "", &TargetError{Target: s.name, Phase: PhaseBuild, Err: fmt.Errorf("go %s: %w", shown, err), Output: tail.Lines()}
	}
	return stdout.String(), nil
}

// list finds the side's packages matching GoBench.Packages that have
// tests.
func (g *goBench) list(s *goSide) error {
	args := append([]string{"list", "-json=ImportPath,Dir,TestGoFiles,XTestGoFiles,Module", "--"}, g.patterns(s)...)
	out, err := g.goCmdOutput(s, args...)
	if err != nil {
		return err
	}
	s.pkgs = map[string]*goPkg{}
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		var p struct {
			ImportPath, Dir           string
			TestGoFiles, XTestGoFiles []string
			Module                    *struct{ Path string }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return &TargetError{Target: s.name, Phase: PhaseBuild, Err: fmt.Errorf("reading go list's output: %w", err)}
		}
		if len(p.TestGoFiles)+len(p.XTestGoFiles) == 0 {
			continue
		}
		pkg := &goPkg{path: p.ImportPath, dir: p.Dir}
		if p.Module != nil {
			pkg.module = p.Module.Path
		}
		s.pkgs[p.ImportPath] = pkg
	}
	return nil
}

// build compiles the side's test binaries, one per package.
func (g *goBench) build(side int) error {
	s := g.sides[side]
	start := time.Now()
	n := 0
	for i, sl := range g.slots {
		p := sl.pkg[side]
		if p == nil {
			continue
		}
		if err := g.ctxErr(); err != nil {
			return err
		}
		bin := filepath.Join(g.binDir, s.name, strconv.Itoa(i)+".test")
		// No "--": go test would pass what follows to the test binary.
		if _, err := g.goCmdOutput(s, "test", "-c", "-o", bin, p.path); err != nil {
			return err
		}
		if _, err := os.Stat(bin); err != nil {
			// go test -c writes nothing for a package whose test files
			// all fall to build constraints: nothing to run.
			fmt.Fprintf(s.log, "# %s: no test binary: %v\n", p.path, err)
			g.slots[i].pkg[side] = nil
			continue
		}
		p.bin = bin
		n++
	}
	fmt.Fprintf(g.progress, "%s: built %s in %.1fs\n", s.name, countOf(n, "test binary", "test binaries"), time.Since(start).Seconds())
	return nil
}

// execGroup runs the command newCmd makes in a process group of its own,
// pinned to cpus and started in cg when they are given, and waits for it.
// Cancelling ctx kills the group; so does the command's exit, for
// whatever it left behind. newCmd may be called twice (a start into a
// cgroup that the kernel refuses is retried without it); it gets the
// context its command must be made with. started, when given, is called
// once the command runs.
func execGroup(ctx context.Context, newCmd func(context.Context) *exec.Cmd, cpus *unix.CPUSet, cg *targetCgroup, started func(cmd *exec.Cmd, r forkResult)) error {
	mk := func() *exec.Cmd {
		cmd := newCmd(ctx)
		cmd.SysProcAttr = childAttr()
		cmd.Env = withOwnerEnv(cmd.Env)
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		// Once the group is killed its pipes close; the delay only guards
		// against a process that escaped the group with one of them.
		cmd.WaitDelay = time.Second
		return cmd
	}
	exited := make(chan struct{})
	defer close(exited)
	cmd := mk()
	r := forkPinned(cmd, cpus, cg, true, exited)
	if r.err != nil && cmd.SysProcAttr.UseCgroupFD {
		cmd = mk()
		r = forkPinned(cmd, cpus, cg, false, exited)
	}
	if r.err != nil {
		return r.err
	}
	pgid := cmd.Process.Pid
	untrack := trackGroup(pgid)
	if started != nil {
		started(cmd, r)
	}
	err := cmd.Wait()
	syscall.Kill(-pgid, syscall.SIGKILL)
	if waitGroupGone(pgid) {
		untrack()
	}
	return err
}

// goPins is a pin set as a gobench run applies it to the test binaries.
type goPins struct {
	set     *scenario.Pins
	info    *baselines.PinInfo
	cpus    *unix.CPUSet     // nil: no CPU pin, or it cannot be had
	cg      [2]*targetCgroup // per side; nil: no memory pin, or none could be made
	checked [2]bool          // the side's first start under the set was checked
	applied [2][]string
}

// preparePins resolves a pin set for the test binaries: the CPU set they
// are started with and a memory cgroup per side. What cannot be had is
// recorded as not applied, for both sides.
func (g *goBench) preparePins(set *scenario.Pins, info *baselines.PinInfo) *goPins {
	ps := &goPins{set: set, info: info}
	if c := strings.TrimSpace(set.CPUs); c != "" {
		cpus, err := parseCPUSet(c)
		if err == nil {
			err = checkOnline(cpus)
		}
		if err != nil {
			for _, s := range g.sides {
				g.notApplied(ps, s.name, "cpuset "+c+": "+err.Error())
			}
		} else {
			ps.cpus = &cpus
		}
	}
	if set.Memory > 0 {
		for i, s := range g.sides {
			cg, err := newTargetCgroup(s.name, set.Memory)
			if err != nil {
				g.notApplied(ps, s.name, "memory "+set.MemoryText+": "+err.Error())
				continue
			}
			ps.cg[i] = cg
		}
	}
	if set.GeneratorCPUs != "" {
		fmt.Fprintf(g.progress, "pins %s: generator_cpus %s does not apply: a gobench run has no load generator\n", set.Name, set.GeneratorCPUs)
	}
	return ps
}

func (g *goBench) notApplied(ps *goPins, side, what string) {
	ps.info.NotApplied = append(ps.info.NotApplied, side+": "+what)
	fmt.Fprintf(g.progress, "pins %s: not applied: %s: %s\n", ps.set.Name, side, what)
}

// pinStarted checks what a side's first test binary under the pin set
// really got, as Target.checkPins does for a service, and moves every
// binary that could not start inside its cgroup into it.
func (g *goBench) pinStarted(side int, pid int, r forkResult) {
	ps := g.pins
	if ps == nil {
		return
	}
	var cgErr error
	cg := ps.cg[side]
	if cg != nil && !r.joined {
		cgErr = cg.joinAfterStart(pid)
	}
	if ps.checked[side] {
		return
	}
	ps.checked[side] = true
	name := g.sides[side].name
	applied := func(what string) {
		ps.applied[side] = append(ps.applied[side], what)
		ps.info.Applied = append(ps.info.Applied, name+": "+what)
	}
	if ps.cpus != nil {
		c := strings.TrimSpace(ps.set.CPUs)
		var got unix.CPUSet
		switch err := unix.SchedGetaffinity(pid, &got); {
		case r.cpuErr != nil:
			g.notApplied(ps, name, "cpuset "+c+": setting the affinity: "+r.cpuErr.Error())
		case err != nil:
			g.notApplied(ps, name, "cpuset "+c+": reading the test binary's affinity: "+err.Error())
		case got != *ps.cpus:
			g.notApplied(ps, name, "cpuset "+c+": the test binary's affinity is "+formatCPUSet(got))
		default:
			applied("cpuset " + c + " (affinity)")
		}
	}
	if cg != nil {
		if cgErr == nil && !cg.contains(pid) {
			cgErr = errors.New("the test binary is not in it")
		}
		if cgErr != nil {
			g.notApplied(ps, name, fmt.Sprintf("memory %s: moving the test binary into cgroup v%d: %v", ps.set.MemoryText, cg.version, cgErr))
		} else {
			applied(fmt.Sprintf("memory %s (cgroup v%d)", ps.set.MemoryText, cg.version))
		}
	}
	if ps.checked[0] && ps.checked[1] {
		for _, d := range differentLimits(ps.set, g.sides[0].name, ps.applied[0], g.sides[1].name, ps.applied[1]) {
			g.notApplied(ps, "both", d)
		}
	}
}

// releasePins removes the pin set's cgroups; the binaries in them have
// all exited.
func (g *goBench) releasePins() {
	if g.pins == nil {
		return
	}
	for i, cg := range g.pins.cg {
		if cg != nil {
			if err := cg.remove(); err != nil {
				fmt.Fprintf(g.progress, "warning: removing the cgroup of the %s test binaries: %v\n", g.sides[i].name, err)
			}
			g.pins.cg[i] = nil
		}
	}
}

// rounds runs every round of one pin set. The order of a slot's pair is
// drawn as Run draws a cell's: Order of its index in the whole schedule,
// pin sets outermost.
//
// Results.RoundsDone counts, per pin set, the rounds in which every slot
// ran: a cell is decided on its own pin set's complete rounds, as a
// service's run's is.
func (g *goBench) rounds(pi int) error {
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
				if err := g.ctxErr(); err != nil {
					return err
				}
				rungs, took, err := g.runPackage(si, p, round)
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
				if err := baselines.Write(g.opts.OutDir, g.res); err != nil {
					return err
				}
				pos++
				total := "?"
				if g.perRound > 0 {
					total = strconv.Itoa(g.perRound * plan.Rounds * sets)
				}
				label := gobench.RelPackage(p.path, p.module)
				if pinName != "" {
					label = "[" + pinName + "] " + label
				}
				fmt.Fprintf(g.progress, "[round %d/%d] %s %s: %s in %.1fs (rung %d/%s)\n",
					round+1, plan.Rounds, label, s.name, countOf(len(rungs), "result", "results"), took.Seconds(), len(g.res.Rungs), total)
			}
		}
		if round == 0 && pi == 0 {
			g.perRound = len(g.res.Rungs)
		}
		g.res.RoundsDone[pinName] = round + 1
		if err := baselines.Write(g.opts.OutDir, g.res); err != nil {
			return err
		}
	}
	return nil
}

// runPackage runs one package's test binary on one side and returns a
// rung per benchmark result, with the cell and the values set.
func (g *goBench) runPackage(side int, p *goPkg, round int) ([]baselines.Rung, time.Duration, error) {
	s := g.sides[side]
	timeout := g.gb.Timeout
	if timeout <= 0 {
		timeout = defaultGoBenchTimeout
	}
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
	// -test.paniconexit0, as go test passes it: a benchmark that calls
	// os.Exit(0) would otherwise end the binary "successfully" with
	// results missing. -test.timeout covers tests only, not benchmarks:
	// benchgate enforces the timeout itself, as go test does.
	args = append(args, "-test.timeout="+timeout.String(), "-test.paniconexit0")

	label := gobench.RelPackage(p.path, p.module)
	fmt.Fprintf(s.log, "# round %d: %s: %s\n", round+1, p.path, redactedLine(g.sc, append([]string{p.bin}, args...)))
	// A benchmark that writes without end fills no more than what the
	// parser would read.
	stdout := cappedBuffer{max: gobench.MaxOutputBytes}
	tail := newLineTail(buildTailLines)
	// What is parsed is the output as it is; what is kept (the log, the
	// bench file, the tail of an error) is redacted, one writer a stream.
	kept := newRedactWriter(g.sc, io.MultiWriter(s.bench, s.log, tail))
	keptErr := newRedactWriter(g.sc, io.MultiWriter(s.log, tail))
	ctx, cancel := context.WithCancel(g.ctx)
	defer cancel()
	var timer *time.Timer
	timedOut := make(chan struct{})
	start := time.Now()
	err := execGroup(ctx, func(ctx context.Context) *exec.Cmd {
		stdout.Reset()
		cmd := exec.CommandContext(ctx, p.bin, args...)
		cmd.Dir = p.dir
		cmd.Env = childEnv(os.Environ(), nil)
		cmd.Stdout = io.MultiWriter(&stdout, kept)
		cmd.Stderr = keptErr
		return cmd
	}, g.pinCPUs(), g.pinCgroup(side), func(cmd *exec.Cmd, r forkResult) {
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
	if cerr := g.ctxErr(); cerr != nil {
		return nil, took, cerr
	}
	fail := func(err error) error {
		return &TargetError{Target: s.name, Phase: PhaseBench, Err: fmt.Errorf("%s (round %d): %w", p.path, round+1, err), Output: tail.Lines()}
	}
	select {
	case <-timedOut:
		how := "stopped with SIGQUIT"
		if ctx.Err() != nil {
			how = fmt.Sprintf("killed %v after SIGQUIT", goBenchKillAfter)
		}
		return nil, took, fail(fmt.Errorf("still running after the timeout of %v: %s (%v); its goroutines' stacks are in %s.log", timeout, how, exitText(err), s.name))
	default:
	}
	if err != nil {
		return nil, took, fail(err)
	}
	if stdout.over {
		return nil, took, fail(fmt.Errorf("its standard output passed %d MiB, more than a benchmark's results can be", gobench.MaxOutputBytes>>20))
	}
	// Rename rules match cell names, not bare ones: applied by Cell.
	results, err := gobench.Parse(bytes.NewReader(stdout.Bytes()), nil)
	if err != nil {
		return nil, took, fail(fmt.Errorf("its output could not be read (a benchmark that writes to standard output breaks its own result line; b.Log and standard error do not): %w", err))
	}
	rungs := make([]baselines.Rung, 0, len(results))
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
		rungs = append(rungs, baselines.Rung{
			Cell:     baselines.Cell{Class: class},
			Start:    start,
			Duration: took.Seconds(),
			Values:   r.Values,
		})
	}
	return rungs, took, nil
}

func (g *goBench) pinCPUs() *unix.CPUSet {
	if g.pins == nil {
		return nil
	}
	return g.pins.cpus
}

func (g *goBench) pinCgroup(side int) *targetCgroup {
	if g.pins == nil {
		return nil
	}
	return g.pins.cg[side]
}

// cleanup removes what the run made outside the results: worktrees (and
// git's record of them), test binaries, cgroups; and closes the logs. It
// runs once, uncancelled: a cancelled run must still clean up.
func (g *goBench) cleanup() {
	if g.cleaned {
		return
	}
	g.cleaned = true
	g.releasePins()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(g.ctx), gitTimeout)
	defer cancel()
	pruned := map[string]bool{}
	for _, s := range g.sides {
		if s.worktree != "" {
			if _, err := git(ctx, s.top, "worktree", "remove", "--force", s.worktree); err != nil {
				fmt.Fprintf(g.progress, "warning: removing the %s worktree: %v\n", s.name, err)
			}
		}
		if s.top != "" && !pruned[s.top] && g.tmp != "" {
			pruned[s.top] = true
			defer func(top string) {
				// After the directory is gone: prune drops the records
				// of worktrees whose directory no longer exists.
				if _, err := git(ctx, top, "worktree", "prune"); err != nil {
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
