//go:build linux

package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/process"
)

// resolve finds a side's module: a Dir is checked, a Ref resolved to its
// commit in the repository holding GoBench.Module (the worktree is made
// later, by prepare).
func (g *goBench) resolve(ctx context.Context, s *goSide) error {
	if s.spec.Ref == "" {
		s.dir = s.spec.Dir
		field := "targets." + s.name + ".dir"
		if s.dir == "" {
			s.dir, field = g.gb.Module, "gobench.module"
		}
		if _, err := os.Stat(filepath.Join(s.dir, "go.mod")); err != nil {
			return g.sideErr(s, field, "no Go module in %s: %v", s.dir, err)
		}
		return nil
	}
	ref, field := s.spec.Ref, "targets."+s.name+".ref"
	if strings.HasPrefix(ref, "-") {
		return g.sideErr(s, field, "invalid git ref %q", ref)
	}
	top, err := target.Git(ctx, g.gb.Module, "rev-parse", "--show-toplevel")
	if err != nil {
		return g.sideErr(s, field, "ref %q: the module %s is not in a git repository: %v", ref, g.gb.Module, err)
	}
	commit, err := target.Git(ctx, top, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil || commit == "" {
		if ctx.Err() != nil {
			return fmt.Errorf("%s target: resolving ref %q: %w", s.name, ref, ctx.Err())
		}
		return g.sideErr(s, field, "unknown git ref %q: no such commit in %s", ref, top)
	}
	// git prints the top level with symlinks resolved; the module's path
	// may have some (a temporary directory under a symlink).
	mod, err := filepath.EvalSymlinks(g.gb.Module)
	if err != nil {
		return fmt.Errorf("%s target: %v", s.name, err)
	}
	rel, err := filepath.Rel(top, mod)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return g.sideErr(s, "gobench.module", "the module %s is not inside its repository %s", g.gb.Module, top)
	}
	s.top, s.rel, s.commit = top, rel, commit
	return nil
}

// sideErr is a side that cannot be as the scenario says: at the place the
// file wrote field (file, line, column), else naming the side.
func (g *goBench) sideErr(s *goSide, field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if err, ok := g.sc.ErrorAt(field, msg); ok {
		return err
	}
	return fmt.Errorf("%s target: %s", s.name, msg)
}

// info identifies a side for the results: the commit a Ref resolved to,
// else the override from the environment or the commit of a Dir's
// repository, as a command target's Info does.
func (s *goSide) info(ctx context.Context, getenv func(string) string) benchdata.TargetInfo {
	ti := benchdata.TargetInfo{Name: s.name, Kind: scenario.KindGoBench, Spec: s.spec.Shown}
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
		if c, dirty, err := target.GitCommit(ctx, s.dir); err == nil {
			ti.Commit, ti.Dirty = c, dirty
		}
	}
	return ti
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
func (g *goBench) prepare(ctx context.Context, s *goSide) error {
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
			g.untrackTmp = target.MarkDir(g.tmp)
		}
		wt := filepath.Join(g.tmp, s.name)
		// Recorded before git makes it: the sweep of a later run removes
		// it and prunes git's record should benchgate be killed.
		s.untrackWorktree = target.TrackWorktree(wt, s.top)
		out, err := target.Git(ctx, s.top, "worktree", "add", "--detach", wt, s.commit)
		if err != nil {
			return &target.TargetError{Target: s.name, Phase: target.PhaseBuild, Err: fmt.Errorf("git worktree add of %s (%s): %w", s.spec.Ref, s.commit, err)}
		}
		fmt.Fprintf(s.log, "# worktree of %s (%s) at %s\n%s\n", g.sc.Redact(s.spec.Ref), s.commit, wt, g.sc.Redact(out))
		s.worktree = wt
		s.dir = filepath.Join(wt, s.rel)
		if _, err := os.Stat(filepath.Join(s.dir, "go.mod")); err != nil {
			return &target.TargetError{Target: s.name, Phase: target.PhaseBuild, Err: fmt.Errorf("no Go module at %s in %s (%s)", s.rel, s.spec.Ref, short(s.commit))}
		}
		fmt.Fprintf(g.progress, "%s: %s is %s, checked out at %s\n", s.name, g.sc.Redact(s.spec.Ref), short(s.commit), g.sc.Redact(s.dir))
	}
	if v, err := g.goCmdOutput(ctx, s, "env", "GOVERSION"); err == nil {
		s.goVersion = strings.TrimSpace(v)
	}
	return g.list(ctx, s)
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// goCmdOutput runs go args in the side's module directory and returns
// its standard output; the error is a *target.TargetError of the build phase
// with the tail of what go said.
func (g *goBench) goCmdOutput(ctx context.Context, s *goSide, args ...string) (string, error) {
	var stdout bytes.Buffer
	tail := target.NewTail(target.BuildTailLines)
	shown := target.RedactedLine(g.sc, args)
	fmt.Fprintf(s.log, "# go %s\n", shown)
	stderr := target.NewRedactWriter(g.sc, io.MultiWriter(tail, s.log))
	err := process.ExecGroup(ctx, func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = s.dir
		cmd.Env = target.ChildEnv(os.Environ(), nil)
		cmd.Stdout = &stdout
		cmd.Stderr = stderr
		return cmd
	}, nil, nil, nil)
	stderr.Flush()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return "", &target.TargetError{Target: s.name, Phase: target.PhaseBuild, Err: fmt.Errorf("go %s: %w", shown, err), Output: tail.Lines()}
	}
	return stdout.String(), nil
}

// list finds the side's packages matching GoBench.Packages that have
// tests.
func (g *goBench) list(ctx context.Context, s *goSide) error {
	args := append([]string{"list", "-json=ImportPath,Dir,TestGoFiles,XTestGoFiles,Module", "--"}, g.patterns(s)...)
	out, err := g.goCmdOutput(ctx, s, args...)
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
			return &target.TargetError{Target: s.name, Phase: target.PhaseBuild, Err: fmt.Errorf("reading go list's output: %w", err)}
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
func (g *goBench) build(ctx context.Context, side int) error {
	s := g.sides[side]
	start := time.Now()
	n := 0
	for i, sl := range g.slots {
		p := sl.pkg[side]
		if p == nil {
			continue
		}
		if err := cancelled(ctx, g.res); err != nil {
			return err
		}
		bin := filepath.Join(g.binDir, s.name, strconv.Itoa(i)+".test")
		// No "--": go test would pass what follows to the test binary.
		if _, err := g.goCmdOutput(ctx, s, "test", "-c", "-o", bin, p.path); err != nil {
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
