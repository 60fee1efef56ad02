//go:build linux

package runner

import (
	"os"

	"context"
	"errors"
	"fmt"
	"github.com/benchgate/benchgate/target/docker"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
)

// dryRunCells is how many cells a dry run names before it counts the rest.
const dryRunCells = 20

// DryRun is Measure up to the point where anything would start: it reads
// req's scenario and checks it against this machine exactly as Measure
// does (prepare), applies req.Override, and writes to w the plan a run
// would follow — the two targets, the cells, the rounds and the planned
// time, with the refusal of a plan over opts.Budget (the lines of
// planned, shared with Run). Of a gobench scenario it resolves the git
// refs (git rev-parse, as a run refuses an unknown ref before anything
// runs) and says what go test -bench would run: its cells are the
// benchmarks the binaries report, known only once they run, and its time
// an estimate from the benchmarks the test files declare (estimate). Nothing is
// built, started or written, and no leftover of an earlier run is swept.
// Its errors are Measure's for the same request: a *UsageError for what
// the input could make right. What it writes is a terminal's text: every
// string of the scenario in it (a target's command, a package pattern)
// has its control characters escaped (textsafe.Text).
//
// It gives one verdict: the first line says the scenario was loaded and
// checked only when every check passed, and the last that it is valid
// here; a refusal (an unknown ref, a plan over the budget) is the error
// alone, after the lines of the plan made so far.
func DryRun(ctx context.Context, req Request, opts Options, w io.Writer) error {
	var b strings.Builder
	head, err := dryRun(ctx, req, opts, &b)
	text := b.String()
	if err == nil {
		text = head + ": loaded and checked\n" + text
	}
	if _, werr := io.WriteString(w, textsafe.Text(text)); err == nil {
		err = werr
	}
	return err
}

// dryRun writes the plan to w and returns its heading, the scenario's
// file, profile and kind.
func dryRun(ctx context.Context, req Request, opts Options, w io.Writer) (string, error) {
	sc, _, eng, err := prepare(req, opts)
	if err != nil {
		return "", err
	}
	head := "scenario " + sc.File
	if sc.Profile != "" {
		head += ", profile " + sc.Profile
	}
	head += " (kind " + kindOf(sc) + ")"
	return head, eng.plan(ctx, sc, opts, w)
}

// plan of a load scenario: the targets, the pin sets, the cells and Run's
// own plan lines.
func (loadEngine) plan(ctx context.Context, sc *scenario.Scenario, opts Options, w io.Writer) error {
	for _, t := range []scenario.Target{sc.Baseline, sc.Candidate} {
		line := fmt.Sprintf("%-10s %s %s", t.Name+":", t.Kind(), t.Shown)
		switch t.Kind() {
		case "image":
			line += fmt.Sprintf(", port %d", t.Port)
		case "compose":
			line += fmt.Sprintf(", port %d", t.Port)
			if len(t.Memory) > 0 {
				var split []string
				for _, svc := range slices.Sorted(maps.Keys(t.MemoryText)) {
					split = append(split, svc+" "+t.MemoryText[svc])
				}
				line += ", memory " + strings.Join(split, ", ")
			}
			if t.Setup != nil {
				line += ", setup " + sc.Redact(strings.Join(t.Setup.Command, " ")) + " in service " + t.Setup.Service
			}
			// The files are read as the run reads them, without the
			// engine: what the target names must be in them.
			p, err := docker.LoadProject(ctx, t, os.Getenv)
			if err == nil {
				err = docker.CheckProject(t, p)
				line += ", services " + strings.Join(slices.Sorted(slices.Values(p.ServiceNames())), " ")
			}
			if err != nil {
				return &UsageError{fmt.Errorf("targets.%s: %s", t.Name, sc.Redact(err.Error()))}
			}
		}
		line += ", health " + t.Health
		if len(t.Build) > 0 {
			line += ", built first by " + sc.Redact(strings.Join(t.Build, " "))
		}
		fmt.Fprintln(w, line)
	}
	for _, ps := range sc.PinSets {
		fmt.Fprintf(w, "pins:      %s\n", ps.Name)
	}
	// The plan's lines (a shard's cut, the plan line) come after the
	// cells they count: those of the shard, when there is one.
	var lines strings.Builder
	plan, _, err := planned(sc, opts, &lines)
	fmt.Fprintf(w, "cells:     %d\n", len(plan.Cells))
	for i, c := range plan.Cells {
		if i == dryRunCells {
			fmt.Fprintf(w, "  … and %d more\n", len(plan.Cells)-i)
			break
		}
		fmt.Fprintf(w, "  %s\n", c)
	}
	io.WriteString(w, lines.String())
	if sliced(sc) {
		fmt.Fprintf(w, "slices:    %s\n", SlicingRule(sc.Load))
	}
	if be := (*BudgetError)(nil); errors.As(err, &be) {
		return &UsageError{err} // as Measure has it
	} else if err != nil {
		return err
	}
	fmt.Fprintln(w, dryRunDone)
	return nil
}

// dryRunDone is a dry run's last line, once everything has passed.
const dryRunDone = "dry run: the scenario is valid here; nothing was built, started or written"

// kindOf is the scenario's workload kind as a file names it.
func kindOf(sc *scenario.Scenario) string {
	if sc.Kind == "" {
		return scenario.KindHTTP
	}
	return sc.Kind
}

// plan of a gobench scenario: the sides resolved as RunGoBench resolves
// them, and what each round runs.
func (goBenchEngine) plan(ctx context.Context, sc *scenario.Scenario, opts Options, w io.Writer) error {
	g := &goBench{sc: sc, gb: sc.GoBench}
	for i, spec := range []scenario.Target{sc.Baseline, sc.Candidate} {
		s := &goSide{name: spec.Name, spec: spec}
		g.sides[i] = s
		if err := g.resolve(ctx, s); err != nil {
			// Measure's refusal of the same side: the scenario names
			// what cannot be.
			return &UsageError{fmt.Errorf("invalid scenario:\n%w", target.RedactErr(sc, err))}
		}
		line := fmt.Sprintf("%-10s %s", s.name+":", spec.Shown)
		if s.commit != "" {
			line += " (commit " + short(s.commit) + ")"
		}
		fmt.Fprintf(w, "%s, packages %s, bench %s\n", line, sc.Redact(strings.Join(g.patterns(s), " ")), sc.Redact(g.bench(s)))
	}
	gb := sc.GoBench
	cpu, benchtime := "the binary's GOMAXPROCS", "go test's default"
	if len(gb.CPU) > 0 {
		cpu = strings.Trim(strings.ReplaceAll(fmt.Sprint(gb.CPU), " ", ","), "[]")
	}
	if gb.Benchtime != "" {
		benchtime = gb.Benchtime
	}
	fmt.Fprintf(w, "run:       -test.cpu %s, -test.benchtime %s, -test.timeout %v a binary\n", cpu, benchtime, gb.Timeout)
	for _, ps := range sc.PinSets {
		fmt.Fprintf(w, "pins:      %s\n", ps.Name)
	}
	fmt.Fprintln(w, "cells:     the benchmarks the test binaries report, found as they run")
	est := g.estimate(ctx, opts.Budget)
	if err := est.over(opts.Budget); err != nil {
		return &UsageError{err} // as Measure has it
	}
	fmt.Fprintln(w, "plan: "+est.text)
	fmt.Fprintln(w, dryRunDone)
	return nil
}
