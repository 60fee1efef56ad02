//go:build linux

// Package runner measures a scenario: it builds and starts both targets
// (target/process, target/docker), then runs the interleaved schedule of
// docs/statistics.md — rounds outside, cells inside, the
// baseline/candidate order of each pair drawn from the seed in the first
// round and alternating after it (see Order) — putting closed-loop load
// on one target at a time. Under slice interleaving a
// cell's round is one session over both targets in which the load
// alternates between them in short slices (see sliceRound and
// SliceOrder); with adaptive rounds, the rounds after the minimum run
// only for the cells whose verdict Options.Open says is still open. After
// every rung (every session's pair of rungs) the whole results file is
// rewritten, so whatever ends the run (success, cancellation, a dead
// target) leaves every finished rung on disk, and the targets' process
// groups are always gone when Run returns.
//
// The load generator is built to stay out of the measurement: per-worker
// state and histograms, one reused request per worker for requests without
// a body, no locks, goroutines or avoidable allocations per request, and
// monotonic time stamps.
package runner

import (
	"context"
	"errors"
	"fmt"
	"github.com/benchgate/benchgate/internal/numtext"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/docker"
)

// withDefaults checks o and fills in its defaults: no progress shown, the
// process's environment.
func (o Options) withDefaults() (Options, error) {
	if o.OutDir == "" {
		return o, errors.New("runner: no output directory")
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	return o, nil
}

// Run measures sc and returns the results, also written to
// opts.OutDir/results.json after every rung. The results are returned with
// the error when the run was cancelled (the error wraps ctx's), its budget
// ran out (a *BudgetOutError) or a target failed (a *target.TargetError);
// a *BudgetError, a plan longer than the budget, comes with nil results.
// opts.Budget bounds the whole run from here on, every phase of it.
func Run(ctx context.Context, sc *scenario.Scenario, opts Options) (*benchdata.Results, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, budget, cancel := withBudget(ctx, opts.Budget, opts.noDeadline)
	defer cancel()
	progress, getenv := opts.Progress, opts.Getenv

	plan, shard, err := planned(sc, opts, progress)
	if err != nil {
		return nil, err
	}
	// Each pair's order is drawn from its index in the whole grid.
	grid := plan.Cells
	if shard != nil {
		grid = shard.Grid
	}
	orderIndex := map[benchdata.Cell]int{}
	for i, c := range grid {
		orderIndex[c] = i
	}

	target.SweepLeftovers(progress) // of killed runs, before anything starts
	res := &benchdata.Results{
		Version:  benchdata.FormatVersion,
		Tool:     strings.TrimSpace("benchgate " + opts.ToolVersion),
		Scenario: scenarioInfo(sc),
		Env:      environment(sc, opts.ToolVersion, runID()),
		Plan:     plan,
		Shard:    shard,
		Rungs:    []benchdata.Rung{},
		Status:   "running",
	}
	s := &schedule{sc: sc, opts: opts, res: res, progress: progress, getenv: getenv, orderIndex: orderIndex,
		slicing: maps.Clone(opts.slicing), budget: budget}
	s.proto = protocolOf(s)
	res.Kind = s.proto.kind()
	if s.slicing == nil {
		s.slicing = map[benchdata.Cell]Slicing{}
	}
	defer s.stopTargets()
	if err := benchdata.Write(opts.OutDir, res); err != nil {
		return nil, err
	}

	if usesDocker(sc) {
		budget.enter("the connection to Docker")
		s.docker, err = docker.NewEnv(ctx, res.Env.RunID, progress)
		if s.docker != nil {
			// Close removes every container and the network of this run,
			// whatever ended it: it runs uncancelled, with its own
			// deadline. Whatever it could not remove is said, not fatal:
			// the results are on disk, and the next run's sweep retries.
			defer func() {
				if cerr := s.docker.Close(ctx); cerr != nil {
					fmt.Fprintf(progress, "warning: %v\n", cerr)
				}
			}()
		}
	}
	if err == nil {
		err = s.pinSets(ctx)
	}
	if bo := budgetOut(ctx, len(res.Rungs)); err != nil && bo != nil && !isTargetError(err) {
		// Whatever a phase made of its cut wait (a request's error, an
		// engine's), the run ended because the budget ran out.
		if be := (*BudgetOutError)(nil); !errors.As(err, &be) {
			err = bo
		}
	}
	if res.Env.Baseline.Name == "" {
		// Identify what was meant to run even when it never did.
		base, cand := s.services(nil)
		res.Env.Baseline = base.Info(context.WithoutCancel(ctx), getenv)
		res.Env.Candidate = cand.Info(context.WithoutCancel(ctx), getenv)
	}
	// A target's error quotes its commands and its output, either of
	// which may hold a ${VAR}'s value; so may a request's.
	return finish(ctx, res, opts, target.RedactErr(sc, err), func() { s.proto.close(); s.stopTargets() })
}

// finish records how a run ended and stops what it started. The outcome
// goes to disk before stop runs: stopping may take the whole grace period,
// and a CI system that sent SIGTERM sends SIGKILL a few seconds later. End
// is rewritten once stop is done.
func finish(ctx context.Context, res *benchdata.Results, opts Options, err error, stop func()) (*benchdata.Results, error) {
	if err == nil {
		stop()
		res.Status = "complete"
		res.Env.End = time.Now()
		if werr := benchdata.Write(opts.OutDir, res); werr != nil {
			return res, werr
		}
		return res, nil
	}
	res.Status = "failed"
	if ctx.Err() != nil && !isTargetError(err) {
		res.Status = "cancelled"
	}
	res.Error = err.Error()
	res.Env.End = time.Now()
	werr := benchdata.Write(opts.OutDir, res)
	if opts.beforeStop != nil {
		opts.beforeStop()
	}
	stop()
	res.Env.End = time.Now()
	if werr == nil {
		werr = benchdata.Write(opts.OutDir, res)
	}
	if werr != nil {
		return res, errors.Join(err, werr)
	}
	return res, err
}

func isTargetError(err error) bool {
	var te *target.TargetError
	return errors.As(err, &te)
}

type schedule struct {
	sc         *scenario.Scenario
	opts       Options
	res        *benchdata.Results
	progress   io.Writer
	getenv     func(string) string
	docker     *docker.Env    // nil unless a target is an image
	base, cand target.Service // of the current pin set
	// orderIndex is each cell's index in the whole grid, which its pair's
	// order is drawn from: a shard's pairs run as in an unsharded run.
	orderIndex map[benchdata.Cell]int
	// proto is how requests reach the targets, chosen once (protocolOf).
	proto protocol
	// slicing is each sliced cell's cut, chosen in its first round
	// (ChooseSlicing) and kept for the others; a pin set is a cell
	// dimension, so its cells are its own.
	slicing map[benchdata.Cell]Slicing
	// budget is the run's deadline and the phase it is in; nil without
	// a budget.
	budget *budgetClock
	// restartCost is what the last restart took (load.restart), for the
	// budget's look ahead at an adaptive round; 0 before the first.
	restartCost time.Duration
	// window, when set, is the length of the next rung's window instead
	// of load.duration (a profiled rung's).
	window time.Duration
}

// cancelled is the error a run of either engine ends with once ctx is
// done: the cancellation, or the budget that ran out (*BudgetOutError),
// after the rungs res holds; nil until then.
func cancelled(ctx context.Context, res *benchdata.Results) error {
	if err := ctx.Err(); err != nil {
		if bo := budgetOut(ctx, len(res.Rungs)); bo != nil {
			return bo
		}
		return fmt.Errorf("run cancelled after %d rungs: %w", len(res.Rungs), err)
	}
	return nil
}

// cancelledOr reports a failure caused by cancellation as the
// cancellation, not as a broken target.
func cancelledOr(ctx context.Context, res *benchdata.Results, err error) error {
	if cerr := cancelled(ctx, res); cerr != nil {
		return cerr
	}
	return err
}

// stopped is the error the schedule ends with once the run is cancelled
// or a target of the current pin set died; nil while neither is.
func (s *schedule) stopped(ctx context.Context) error {
	if err := cancelled(ctx, s.res); err != nil {
		return err
	}
	for _, t := range []target.Service{s.base, s.cand} {
		if err := t.Died(); err != nil {
			return err
		}
	}
	return nil
}

// rounds runs the rounds of one pin set's cells (all cells without pins):
// the plan's minimum for every cell, then, when the plan has a maximum
// above it, adaptive rounds. Before each of those, Options.Open says which
// cells are still open and the round runs for them alone, each pair in
// its usual order. A cell that was settled at one look stays settled, so
// the set of active cells only shrinks and a cell's rounds follow each
// other (benchdata.RoundsOfCell relies on it). Under load.restart both
// targets are replaced by fresh instances before every RestartEvery-th
// round (see restart). The rounds end when no cell
// is open, at the maximum, or when the next round would take the run past
// the deadline of Options.Budget: the round's estimate plus the minimum
// rounds of the pin sets still to come is more than the budget has left.
func (s *schedule) rounds(ctx context.Context, pins *scenario.Pins) error {
	plan := s.res.Plan
	name := ""
	if pins != nil {
		name = pins.Name
	}
	var active []benchdata.Cell
	later := 0 // cells of the pin sets after this one
	after := false
	for _, ps := range plan.PinSets {
		if after {
			for _, c := range plan.Cells {
				if c.Pins == ps {
					later++
				}
			}
		}
		after = after || ps == name
	}
	for _, c := range plan.Cells {
		if c.Pins == name {
			active = append(active, c)
		}
	}
	cells := len(active)
	last := max(plan.Rounds, plan.MaxRounds)
	for round := 0; round < last; round++ {
		if round >= plan.Rounds {
			if err := cancelled(ctx, s.res); err != nil {
				return err
			}
			open, err := s.opts.Open(s.res)
			if err != nil {
				return fmt.Errorf("after round %d: deciding which cells are still open: %w", round, err)
			}
			active = slices.DeleteFunc(active, func(c benchdata.Cell) bool { return !slices.Contains(open, c) })
			var names []string
			for _, c := range active {
				names = append(names, c.String())
			}
			line := fmt.Sprintf("look after round %d: %d of %d cells open", round, len(active), cells)
			if len(names) > 0 {
				line += ": " + strings.Join(names, ", ")
			}
			fmt.Fprintln(s.progress, line)
			if len(active) == 0 {
				break
			}
			next := time.Duration(len(active)*2) * perTarget(s.sc)
			if s.restarts(round) {
				next += s.restartCost
			}
			reserve := time.Duration(plan.Rounds*later*2) * perTarget(s.sc)
			if s.budget != nil && next+reserve > s.budget.left() {
				fmt.Fprintf(s.progress, "budget: round %d would take %v with %v of the budget of %v left: no more rounds\n",
					round+1, next, s.budget.left().Round(time.Millisecond), s.opts.Budget)
				break
			}
		}
		if s.restarts(round) {
			if err := s.restart(ctx, pins, round); err != nil {
				return err
			}
		}
		for _, cell := range active {
			if err := s.cellRound(ctx, cell, round); err != nil {
				return err
			}
		}
	}
	return nil
}

// restarts says whether fresh targets start before round (load.restart):
// every RestartEvery rounds, the first round's being the pin set's own
// start.
func (s *schedule) restarts(round int) bool {
	every := s.sc.Load.RestartEvery
	return every > 0 && round > 0 && round%every == 0
}

// cellRound runs one cell's round on both targets, in the pair's order,
// and records its two rungs.
func (s *schedule) cellRound(ctx context.Context, cell benchdata.Cell, round int) error {
	order := Order(s.sc.Seed, round, s.orderIndex[cell])
	pair := [2]target.Service{s.base, s.cand}
	if order == "BA" {
		pair = [2]target.Service{s.cand, s.base}
	}
	if sliced(s.sc) && !s.slicing[cell].Round {
		if err := s.stopped(ctx); err != nil {
			return err
		}
		s.budget.enter(fmt.Sprintf("round %d, cell %s", round+1, cell))
		rungs, err := s.sliceRound(ctx, cell, round, order)
		if errors.Is(err, errRoundInterleave) {
			return s.cellRound(ctx, cell, round)
		}
		if err != nil {
			return err
		}
		for pos, r := range rungs {
			r.Cell, r.Round, r.Target, r.Position, r.Order = cell, round, pair[pos].Name(), pos, order
			s.res.Rungs = append(s.res.Rungs, r)
		}
		if err := benchdata.Write(s.opts.OutDir, s.res); err != nil {
			return err
		}
		for pos, r := range rungs {
			s.rungLine(round, cell, pair[pos], r, len(s.res.Rungs)-1+pos, fmt.Sprintf(", %d slices", len(r.Slices)))
		}
		return nil
	}
	for pos, t := range pair {
		if err := s.stopped(ctx); err != nil {
			return err
		}
		s.budget.enter(fmt.Sprintf("round %d, cell %s, on the %s", round+1, cell, t.Name()))
		r, err := s.rung(ctx, t, cell, round)
		if err != nil {
			return err
		}
		r.Cell, r.Round, r.Target, r.Position, r.Order = cell, round, t.Name(), pos, order
		r.Slicing = s.slicing[cell].info()
		s.res.Rungs = append(s.res.Rungs, r)
		if err := benchdata.Write(s.opts.OutDir, s.res); err != nil {
			return err
		}
		s.rungLine(round, cell, t, r, len(s.res.Rungs), "")
	}
	return nil
}

// rungLine is the progress line of the n-th rung.
func (s *schedule) rungLine(round int, cell benchdata.Cell, t target.Service, r benchdata.Rung, n int, extra string) {
	plan := s.res.Plan
	rounds, total := strconv.Itoa(plan.Rounds), strconv.Itoa(plan.Rounds*len(plan.Cells)*2)
	if plan.MaxRounds > plan.Rounds {
		rounds += "–" + strconv.Itoa(plan.MaxRounds)
		total += "–" + strconv.Itoa(plan.MaxRounds*len(plan.Cells)*2)
	}
	fmt.Fprintf(s.progress, "[round %d/%s] %s %s: %.1f rps, p95 %s, %d errors (rung %d/%s%s)\n",
		round+1, rounds, cell, t.Name(), r.Value(gate.RPS), numtext.Seconds(r.Value(gate.P95)), r.ErrorCount(), n, total, extra)
}

// source is where worker w of a cell's rung in a round gets its requests:
// the scenario's stream, or the test's.
func (s *schedule) source() func(cell benchdata.Cell, round, worker int) Source {
	if s.opts.source != nil {
		return s.opts.source
	}
	return func(c benchdata.Cell, round, worker int) Source {
		return s.sc.Stream(c.Variant, c.Class, c.Concurrency, round, worker)
	}
}

// rung loads t for one cell. A target that dies under load ends the rung
// at once rather than letting it count connection errors: the load runs
// in a child of run, cancelled then.
func (s *schedule) rung(run context.Context, t target.Service, cell benchdata.Cell, round int) (benchdata.Rung, error) {
	ctx, cancel := context.WithCancel(run)
	defer cancel()
	if done := t.Done(); done != nil {
		go func() {
			select {
			case <-done:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	source := s.source()
	// Generate asks for every worker's source before it starts them, from
	// its own goroutine, so sources needs no lock.
	var sources []Source
	// The sampler measures exactly Generate's window: Generate hands over
	// the times it fixed once its transport and workers were built, before
	// any request, so the sampler's edges are the latencies' edges.
	var usage <-chan windowUsage
	parts := partsOf(t)
	partUsage := make([]<-chan windowUsage, len(parts))
	started := func(_, warmupEnd, windowEnd time.Time) {
		usage = sampleUsage(ctx, t, warmupEnd, windowEnd, sampleEvery)
		for i, p := range parts {
			partUsage[i] = sampleUsage(ctx, p.Service, warmupEnd, windowEnd, sampleEvery)
		}
	}
	r, err := s.generate(ctx, t, cell, round, source, started, &sources)
	if cerr := cancelled(run, s.res); cerr != nil {
		return r, cerr
	}
	if derr := t.Died(); derr != nil {
		return r, derr
	}
	if err != nil {
		return r, fmt.Errorf("%s %s: %w", cell, t.Name(), err)
	}
	var u windowUsage
	if usage != nil {
		u = <-usage
	}
	if u.ok {
		r.ResourceSource, r.CPUSeconds, r.MemMean, r.MemPeak = u.source, u.cpu, u.memMean, u.memPeak
	}
	r.GenCPUSeconds = u.genCPU
	for i, ch := range partUsage {
		if ch == nil {
			continue
		}
		pu := <-ch
		pr := benchdata.PartResources{Name: parts[i].Name}
		if pu.ok {
			pr.Source, pr.CPUSeconds, pr.MemMean, pr.MemPeak = pu.source, pu.cpu, pu.memMean, pu.memPeak
		}
		r.Parts = append(r.Parts, pr)
	}
	// A template that failed at run time left part of its requests empty:
	// the rung measured something other than the scenario, and so would
	// every later one.
	for _, src := range sources {
		if e, ok := src.(interface{ Err() error }); ok {
			if serr := e.Err(); serr != nil {
				return r, target.ShownErr(s.sc, fmt.Errorf("%s %s: class %q: a request template failed: %w", cell, t.Name(), cell.Class, serr))
			}
		}
	}
	return r, nil
}

// Order is the order of a cell's pair in a round, "AB" (baseline first) or
// "BA": a pure function of the seed, the round and the cell's index in the
// plan, so a rerun interleaves identically.
//
// The first round's order of each cell is drawn from the seed; later rounds
// alternate (odd rounds take the other order). Independent draws per round
// would give a cell the same order in every round often enough (a quarter
// of the cells with three rounds) that an advantage of going first or
// second would turn into a bias; alternating balances it within each cell.
func Order(seed uint64, round, cell int) string {
	x := seed ^ uint64(cell)*0xc2b2ae3d27d4eb4f
	// splitmix64 finaliser: every input bit reaches the bit we read.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	if (x^uint64(round))&1 == 0 {
		return "AB"
	}
	return "BA"
}

// usesDocker says whether a target of sc runs in the Docker Engine: an
// image or a compose stack.
func usesDocker(sc *scenario.Scenario) bool {
	for _, t := range []scenario.Target{sc.Baseline, sc.Candidate} {
		if t.Image != "" || len(t.Compose) > 0 {
			return true
		}
	}
	return false
}

// partsOf are the parts of a target made of several (a compose stack's
// services), each measured on its own too; nil for any other.
func partsOf(t target.Service) []target.Part {
	if p, ok := t.(target.Parted); ok {
		return p.Parts()
	}
	return nil
}
