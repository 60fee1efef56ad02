//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gobench"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/google/pprof/profile"
)

// rawBench is a benchmark as one side's test binary names it.
type rawBench struct {
	pkg  *goPkg
	name string // "BenchmarkJoin/n=8-4", as go test prints it
}

// procsSuffix is the GOMAXPROCS suffix go test adds to a benchmark's name.
var procsSuffix = regexp.MustCompile(`-([0-9]+)$`)

// pattern is the -test.bench pattern that runs exactly b, and the
// -test.cpu its name's suffix asks for ("" for none).
func (b rawBench) pattern() (string, string) {
	name, cpu := b.name, ""
	if m := procsSuffix.FindStringSubmatch(name); m != nil {
		name, cpu = strings.TrimSuffix(name, m[0]), m[1]
	}
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/"), cpu
}

// profileBenchmarks profiles the benchmarks the run's decision names
// (Options.Profile) among pin set pi's, after its rounds: each runs once
// more on both sides, ABBA, under -test.cpuprofile, and the diff is per
// op. Like a service's, a profile that cannot be taken is said and
// recorded, never an error of the run.
func (g *goBench) profileBenchmarks(ctx context.Context, pi int) error {
	p := g.sc.Profiling
	if p.When == scenario.ProfileNever || g.opts.Profile == nil {
		return nil
	}
	pinName := ""
	if g.pins != nil {
		pinName = g.pins.set.Name
	}
	cells, err := g.opts.Profile(g.res, p.When == scenario.ProfileAlways)
	if err != nil {
		fmt.Fprintf(g.progress, "profiling: none: deciding which benchmarks to profile: %v\n", err)
		return nil
	}
	n := 0
	for _, cell := range cells {
		if cell.Pins != pinName {
			continue
		}
		if err := cancelled(ctx, g.res); err != nil {
			return err
		}
		cp := benchdata.CellProfile{Cell: cell, Source: "cpuprofile"}
		if n >= p.Cells {
			cp.Skipped = fmt.Sprintf("beyond profiling.cells (%d)", p.Cells)
		} else {
			n++
			g.budget.enter("profiling " + cell.String())
			if err := g.profileBenchmark(ctx, cell, len(g.res.Profiles)+1, &cp); err != nil {
				if cerr := cancelled(ctx, g.res); cerr != nil {
					return cerr
				}
				cp.Skipped = g.sc.Redact(err.Error())
			}
		}
		if cp.Skipped != "" {
			fmt.Fprintf(g.progress, "profiling %s: not profiled: %s\n", cell, cp.Skipped)
		} else {
			fmt.Fprintf(g.progress, "profiling %s: -test.cpuprofile, %d and %d ops profiled (%s, %s)\n", cell,
				cp.Baseline.Requests, cp.Candidate.Requests, cp.Baseline.File, cp.Candidate.File)
		}
		g.res.Profiles = append(g.res.Profiles, cp)
		if err := benchdata.Write(g.opts.OutDir, g.res); err != nil {
			return err
		}
	}
	return nil
}

// profileBenchmark runs cell's benchmark on both sides in ABBA order,
// each run under -test.cpuprofile, and writes each side's two profiles
// merged, with the ops they ran.
func (g *goBench) profileBenchmark(ctx context.Context, cell benchdata.Cell, index int, cp *benchdata.CellProfile) error {
	var raws [2]rawBench
	for i, s := range g.sides {
		r, ok := s.raw[cell.Class]
		if !ok {
			return fmt.Errorf("the %s has no benchmark %s", s.name, cell.Class)
		}
		raws[i] = r
	}
	// Absolute: the test binary runs in its package's directory.
	dir, err := filepath.Abs(filepath.Join(g.opts.OutDir, ProfileDir))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, ".cpuprofile-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var profs [2][]*profile.Profile
	var ops [2]int64
	round := g.res.Plan.Rounds
	for k, side := range []int{0, 1, 1, 0} {
		pattern, cpu := raws[side].pattern()
		file := filepath.Join(tmp, fmt.Sprintf("%d.prof", k))
		args := []string{"-test.run=^$", "-test.bench=" + pattern, "-test.count=1", "-test.cpuprofile=" + file}
		if cpu != "" {
			args = append(args, "-test.cpu="+cpu)
		}
		// A time, not the scenario's benchtime: a run of 50000x may last
		// milliseconds, too few samples for a profile.
		args = append(args, "-test.benchtime="+profileWindows(g.sc.Profiling).String())
		out, _, _, err := g.runBinary(ctx, side, raws[side].pkg, round+k, args, nil)
		if err != nil {
			var te *target.TargetError
			if errors.As(err, &te) {
				return fmt.Errorf("the %s's profiled run: %v", g.sides[side].name, te.Err)
			}
			return err
		}
		results, err := gobench.Parse(bytes.NewReader(out), nil)
		if err != nil || len(results) != 1 {
			return fmt.Errorf("the %s's profiled run of %s gave %d results (%v), want 1", g.sides[side].name, raws[side].name, len(results), err)
		}
		ops[side] += int64(results[0].Iters)
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("the %s's profile: %w", g.sides[side].name, err)
		}
		pr, err := profile.Parse(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("the %s's profile: %w", g.sides[side].name, err)
		}
		profs[side] = append(profs[side], pr)
	}
	var secs [2]float64
	for i := range profs {
		for _, p := range profs[i] {
			secs[i] += float64(p.DurationNanos) / 1e9
		}
	}
	return saveProfiles(g.opts.OutDir, index, profs, ops, secs, cp)
}
