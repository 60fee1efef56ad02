// Package runner measures a scenario: it builds and starts both targets,
// then runs the interleaved schedule of DESIGN.md — rounds outside, cells
// inside, the baseline/candidate order of each pair drawn from the seed in
// the first round and alternating after it (see Order) — putting
// closed-loop load on one target at a time. Under slice interleaving a
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
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/scenario"
)

// Options are the settings of a run that do not come from the scenario.
type Options struct {
	OutDir      string    // results.json and the targets' logs go here
	Progress    io.Writer // the plan and a line per rung; nil for none
	Budget      time.Duration
	ToolVersion string
	// Shard, when Count > 0, runs only the cells baselines.ShardOf deals
	// to shard Index (1-based) of Count; each pair keeps the order it has
	// in the whole grid, so merged shards decide as one run.
	Shard Shard
	// Getenv reads the commit overrides; nil means os.Getenv.
	Getenv func(string) string
	// Open says which cells' verdicts are still open given the results so
	// far: the adaptive rounds (load.max_repetitions above repetitions)
	// ask it before each round after the minimum, and run that round for
	// the open cells only. The CLI supplies its one decision; nil means a
	// fixed design, repetitions rounds for every cell, whatever
	// max_repetitions says (Plan.MaxRounds is then not recorded).
	Open func(res *baselines.Results) ([]baselines.Cell, error)

	// source replaces sc.Stream; only tests set it.
	source func(cell baselines.Cell, round, worker int) Source
	// beforeStop, when set, runs after a failed or cancelled run's status
	// was written and before the targets are stopped; only tests set it.
	beforeStop func()
}

// Shard names one part of a split grid: Index of Count, 1-based.
type Shard struct{ Index, Count int }

// BudgetError refuses a run whose planned time exceeds the budget. Nothing
// has been started when it is returned.
type BudgetError struct {
	Estimate time.Duration
	Budget   time.Duration
	Plan     baselines.Plan
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("planned time %v (%d cells × %d rounds × 2 targets) exceeds the budget of %v: reduce the grid, repetitions or duration, or raise -budget",
		e.Estimate, len(e.Plan.Cells), e.Plan.Rounds, e.Budget)
}

// PlanOf returns the grid of sc in schedule order: pin sets, then
// variants, then classes, then concurrency levels. Pin sets are outermost
// because the targets are restarted for each.
func PlanOf(sc *scenario.Scenario) baselines.Plan {
	var p baselines.Plan
	pinNames := []string{""}
	if len(sc.PinSets) > 0 {
		pinNames = pinNames[:0]
		for _, ps := range sc.PinSets {
			pinNames = append(pinNames, ps.Name)
			p.PinSets = append(p.PinSets, ps.Name)
		}
	}
	for _, pn := range pinNames {
		for _, v := range sc.Variants {
			for _, c := range sc.Classes {
				for _, n := range sc.Load.Concurrency {
					p.Cells = append(p.Cells, baselines.Cell{Pins: pn, Variant: v.Name, Class: c.Name, Concurrency: n})
				}
			}
		}
	}
	p.Rounds = sc.Load.Repetitions
	if sc.Load.MaxRepetitions > p.Rounds {
		p.MaxRounds = sc.Load.MaxRepetitions
	}
	p.Estimate = estimate(sc, p).Seconds()
	return p
}

// What a rung costs beyond its measured time, for the estimate. Measured
// on examples/demo's binary on a 2-core machine (docs/scenario.md#limits):
// 2.5 to 3.3 ms between one rung's window and the next, beyond the
// rewrite of results.json, which ran at about 90 MB/s; a rung took 500 to
// 800 bytes of results.json, a slice 174. The figures below round those
// up. The start of the targets (110 ms for both of the demo's, once per
// pin set, builds excluded) is left out, as the budget's count of the
// time spent leaves it out (see schedule.rounds).
const (
	// rungCost is a rung's own cost: its transport and workers, the
	// usage sampler, the progress line.
	rungCost = 5 * time.Millisecond
	// results.json is rewritten whole after every rung: the i-th rung
	// writes i rungs of rungBytes (and sliceBytes a slice) at writeRate.
	rungBytes  = 1 << 10
	sliceBytes = 192
	writeRate  = 50 << 20 // bytes a second
)

// estimate is the planned time of p's minimum of rounds, for the budget,
// the plan line and Plan.Estimate alike: every rung's perTarget and the
// rewrites of results.json. It saturates at the longest time.Duration
// rather than wrap, so that a plan too long to count is refused by any
// budget.
func estimate(sc *scenario.Scenario, p baselines.Plan) time.Duration {
	rungs := satMul(satMul(int64(max(0, p.Rounds)), int64(len(p.Cells))), 2)
	d := satMul(rungs, int64(perTarget(sc)))
	// Σ i·b/rate for i = 1..rungs, in floating point: it is quadratic.
	b := float64(rungBytes)
	if sliced(sc) {
		b += float64(sliceBytes) * float64(sc.Load.SlicePairs())
	}
	// Rounded up to the millisecond, as nothing here is finer.
	writes := math.Ceil(float64(rungs)*float64(rungs+1)/2*b/writeRate*1e3) * float64(time.Millisecond)
	return time.Duration(satAdd(d, durationOf(writes)))
}

// perTarget is the planned time of one target in one cell's round: warmup
// plus duration for a rung; under slice interleaving the warmup plus the
// target's slices, settle included; and rungCost. It saturates, as
// estimate does.
func perTarget(sc *scenario.Scenario) time.Duration {
	ls := sc.Load
	d := satAdd(int64(max(0, ls.Warmup)), int64(rungCost))
	if sliced(sc) {
		slice := satAdd(int64(max(0, ls.Settle)), int64(max(0, ls.Slice)))
		return time.Duration(satAdd(d, satMul(int64(ls.SlicePairs()), slice)))
	}
	return time.Duration(satAdd(d, int64(max(0, ls.Duration))))
}

// satAdd and satMul are + and × of non-negative int64s that stop at
// math.MaxInt64 instead of wrapping.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// durationOf is x nanoseconds as an int64, saturated.
func durationOf(x float64) int64 {
	if !(x < math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(max(0, x))
}

// sliced says the scenario's rounds are slice-interleaved.
func sliced(sc *scenario.Scenario) bool { return sc.Load.Interleave == scenario.InterleaveSlice }

// Run measures sc and returns the results, also written to
// opts.OutDir/results.json after every rung. The results are returned with
// the error when the run was cancelled (the error wraps ctx's) or a target
// failed (a *TargetError); a *BudgetError comes with nil results.
func Run(ctx context.Context, sc *scenario.Scenario, opts Options) (*baselines.Results, error) {
	if opts.OutDir == "" {
		return nil, errors.New("runner: no output directory")
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}

	if sliced(sc) && sc.Kind == scenario.KindGRPC {
		// scenario.Load refuses it; a scenario built otherwise is told.
		return nil, errors.New("runner: slice interleaving is not available for gRPC classes")
	}
	plan := PlanOf(sc)
	if opts.Open == nil {
		plan.MaxRounds = 0
	}
	// Each pair's order is drawn from its index in the whole grid.
	orderIndex := map[baselines.Cell]int{}
	for i, c := range plan.Cells {
		orderIndex[c] = i
	}
	var shard *baselines.ShardInfo
	if sh := opts.Shard; sh.Count > 0 {
		if sh.Index < 1 || sh.Index > sh.Count {
			return nil, fmt.Errorf("runner: shard %d/%d does not exist", sh.Index, sh.Count)
		}
		shard = &baselines.ShardInfo{Index: sh.Index, Count: sh.Count, Grid: plan.Cells}
		var mine []baselines.Cell
		for i, c := range plan.Cells {
			if baselines.ShardOf(i, sh.Count) == sh.Index {
				mine = append(mine, c)
			}
		}
		plan.Cells = mine
		plan.Estimate = estimate(sc, plan).Seconds()
		fmt.Fprintf(progress, "shard %d/%d: %d of the grid's %d cells\n", sh.Index, sh.Count, len(mine), len(shard.Grid))
	}
	planned := estimate(sc, plan)
	if opts.Budget > 0 && planned > opts.Budget {
		return nil, &BudgetError{Estimate: planned, Budget: opts.Budget, Plan: plan}
	}
	if plan.MaxRounds > plan.Rounds {
		most := planned * time.Duration(plan.MaxRounds) / time.Duration(plan.Rounds)
		fmt.Fprintf(progress, "plan: %d cells × %d–%d rounds × 2 targets × %v = %v–%v\n", len(plan.Cells), plan.Rounds, plan.MaxRounds, perTarget(sc), planned, most)
	} else {
		fmt.Fprintf(progress, "plan: %d cells × %d rounds × 2 targets × %v = %v\n", len(plan.Cells), plan.Rounds, perTarget(sc), planned)
	}

	sweepLeftovers(progress) // of killed runs, before anything starts (sweep.go)
	res := &baselines.Results{
		Version:  baselines.FormatVersion,
		Tool:     strings.TrimSpace("benchgate " + opts.ToolVersion),
		Kind:     map[bool]string{true: "grpc"}[sc.Kind == scenario.KindGRPC],
		Scenario: scenarioInfo(sc),
		Env:      environment(sc, opts.ToolVersion, runID()),
		Plan:     plan,
		Shard:    shard,
		Rungs:    []baselines.Rung{},
		Status:   "running",
	}
	s := &schedule{ctx: ctx, sc: sc, opts: opts, res: res, progress: progress, getenv: getenv, orderIndex: orderIndex}
	defer s.stopTargets()
	if err := baselines.Write(opts.OutDir, res); err != nil {
		return nil, err
	}

	var err error
	if sc.Baseline.Image != "" || sc.Candidate.Image != "" {
		s.docker, err = newDockerEnv(ctx, res.Env.RunID, progress)
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
		err = s.pinSets()
	}
	if res.Env.Baseline.Name == "" {
		// Identify what was meant to run even when it never did.
		base, cand := s.services(nil)
		res.Env.Baseline = base.Info(context.WithoutCancel(ctx), getenv)
		res.Env.Candidate = cand.Info(context.WithoutCancel(ctx), getenv)
	}
	// A target's error quotes its commands and its output, either of
	// which may hold a ${VAR}'s value; so may a request's.
	return finish(ctx, res, opts, redactErr(sc, err), func() { s.grpcClose(); s.stopTargets() })
}

// finish records how a run ended and stops what it started. The outcome
// goes to disk before stop runs: stopping may take the whole grace period,
// and a CI system that sent SIGTERM sends SIGKILL a few seconds later. End
// is rewritten once stop is done.
func finish(ctx context.Context, res *baselines.Results, opts Options, err error, stop func()) (*baselines.Results, error) {
	if err == nil {
		stop()
		res.Status = "complete"
		res.Env.End = time.Now()
		if werr := baselines.Write(opts.OutDir, res); werr != nil {
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
	werr := baselines.Write(opts.OutDir, res)
	if opts.beforeStop != nil {
		opts.beforeStop()
	}
	stop()
	res.Env.End = time.Now()
	if werr == nil {
		werr = baselines.Write(opts.OutDir, res)
	}
	if werr != nil {
		return res, errors.Join(err, werr)
	}
	return res, err
}

func isTargetError(err error) bool {
	var te *TargetError
	return errors.As(err, &te)
}

type schedule struct {
	ctx        context.Context
	sc         *scenario.Scenario
	opts       Options
	res        *baselines.Results
	progress   io.Writer
	getenv     func(string) string
	docker     *dockerEnv // nil unless a target is an image
	base, cand service    // of the current pin set
	// orderIndex is each cell's index in the whole grid, which its pair's
	// order is drawn from: a shard's pairs run as in an unsharded run.
	orderIndex map[baselines.Cell]int
	// grpc are the current pin set's targets as gRPC services (baseline,
	// candidate); nil unless the scenario's classes are gRPC calls.
	grpc [2]*grpcSide
	// measuring is the time spent in the rounds of the pin sets before
	// the current one: what the adaptive rounds' budget check adds to
	// the current pin set's.
	measuring time.Duration
}

// runID names a run's containers and network: unique per run, and sortable
// by time when an engine holds leftovers of several.
func runID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// services makes the two services for a pin set (nil for none).
func (s *schedule) services(pins *scenario.Pins) (base, cand service) {
	mk := func(spec scenario.Target) service {
		if spec.Image != "" && s.docker != nil {
			d := newDockerTarget(s.docker, spec, pins, s.opts.OutDir)
			d.redact = s.sc
			return d
		}
		t := NewPinnedTarget(spec, s.opts.OutDir, pins)
		t.redact = s.sc
		return t
	}
	return mk(s.sc.Baseline), mk(s.sc.Candidate)
}

// pinSets runs every round of every cell under each pin set in turn,
// starting fresh targets for each, so a pin set's measurements never share
// a process (its caches, its JIT, its heap) with another's. On error the
// targets are left running for Run, which records the outcome first.
func (s *schedule) pinSets() error {
	sets := s.sc.PinSets
	if len(sets) == 0 {
		sets = []scenario.Pins{{}}
	}
	for pi := range sets {
		var pins *scenario.Pins
		if len(s.sc.PinSets) > 0 {
			pins = &sets[pi]
		}
		if pi > 0 {
			s.stopTargets()
		}
		s.base, s.cand = s.services(pins)
		if err := s.startTargets(pi == 0); err != nil {
			return err
		}
		if s.sc.Kind == scenario.KindGRPC {
			if err := s.grpcPrepare(); err != nil {
				return err
			}
		}
		if pi == 0 {
			s.res.Env.Baseline = s.base.Info(s.ctx, s.getenv)
			s.res.Env.Candidate = s.cand.Info(s.ctx, s.getenv)
			// Answers do not depend on pins: the gates run once.
			if err := s.gates(); err != nil {
				return err
			}
		}
		restore := func() {}
		if pins != nil {
			info := &s.res.Env.Pins[pi]
			var sides [2][]string
			for i, t := range []service{s.base, s.cand} {
				applied, not := t.Pins()
				sides[i] = applied
				for _, a := range applied {
					info.Applied = append(info.Applied, t.Name()+": "+a)
				}
				for _, n := range not {
					info.NotApplied = append(info.NotApplied, t.Name()+": "+n)
				}
			}
			info.NotApplied = append(info.NotApplied, differentLimits(pins, s.base.Name(), sides[0], s.cand.Name(), sides[1])...)
			if pins.GeneratorCPUs != "" {
				r, applied, err := pinGenerator(pins.GeneratorCPUs)
				if err != nil {
					info.NotApplied = append(info.NotApplied, "generator: "+err.Error())
				} else {
					restore = r
					info.Applied = append(info.Applied, "generator: "+applied)
				}
			}
			for _, n := range info.NotApplied {
				fmt.Fprintf(s.progress, "pins %s: not applied: %s\n", pins.Name, n)
			}
		}
		err := s.rounds(pins)
		restore()
		if err != nil {
			return err
		}
	}
	return nil
}

// differentLimits says which of the pin set's limits held on one side
// only (memory applied by docker to an image target, not applicable to a
// url target on the other side), given each side's applied pins, which
// begin with the pin's kind ("cpuset ...", "memory ..."). Listed with the
// pins that did not apply, it makes the report's threats say plainly that
// the two sides were not measured under the same conditions: each side's
// own lines only say what it got.
func differentLimits(p *scenario.Pins, baseName string, baseApplied []string, candName string, candApplied []string) []string {
	has := func(applied []string, kind string) bool {
		return slices.ContainsFunc(applied, func(a string) bool { return strings.HasPrefix(a, kind+" ") })
	}
	var kinds []string
	if strings.TrimSpace(p.CPUs) != "" {
		kinds = append(kinds, "cpuset")
	}
	if p.Memory > 0 {
		kinds = append(kinds, "memory")
	}
	var out []string
	for _, k := range kinds {
		b, c := has(baseApplied, k), has(candApplied, k)
		switch {
		case b && !c:
			out = append(out, fmt.Sprintf("%s and %s ran under different limits: %s applied to %s only", baseName, candName, k, baseName))
		case c && !b:
			out = append(out, fmt.Sprintf("%s and %s ran under different limits: %s applied to %s only", baseName, candName, k, candName))
		}
	}
	return out
}

// startTargets builds both (the first time only: a pin set changes how a
// build runs, not what it builds), then starts both, so a slow build of one
// side does not keep the other idling under measurement conditions.
func (s *schedule) startTargets(build bool) error {
	for _, t := range []service{s.base, s.cand} {
		if !build {
			break
		}
		if err := s.ctxErr(); err != nil {
			return err
		}
		if err := t.Build(s.ctx); err != nil {
			return s.cancelledOr(err)
		}
	}
	for _, t := range []service{s.base, s.cand} {
		if err := s.ctxErr(); err != nil {
			return err
		}
		if err := t.Start(s.ctx); err != nil {
			return s.cancelledOr(err)
		}
	}
	return nil
}

// stopTargets stops both at once: each may take the whole grace period.
func (s *schedule) stopTargets() {
	if s.base == nil {
		return
	}
	done := make(chan struct{})
	go func() { s.base.Stop(); close(done) }()
	s.cand.Stop()
	<-done
}

func (s *schedule) ctxErr() error {
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("run cancelled after %d rungs: %w", len(s.res.Rungs), err)
	}
	return nil
}

// cancelledOr reports a failure caused by cancellation as the
// cancellation, not as a broken target.
func (s *schedule) cancelledOr(err error) error {
	if cerr := s.ctxErr(); cerr != nil {
		return cerr
	}
	return err
}

// rounds runs the rounds of one pin set's cells (all cells without pins):
// the plan's minimum for every cell, then, when the plan has a maximum
// above it, adaptive rounds. Before each of those, Options.Open says which
// cells are still open and the round runs for them alone, each pair in
// its usual order. A cell that was settled at one look stays settled, so
// the set of active cells only shrinks and a cell's rounds follow each
// other (baselines.RoundsOfCell relies on it). The rounds end when no cell
// is open, at the maximum, or when the next round would take the run past
// Options.Budget: the time measured so far (start-up excluded, as in the
// plan's estimate), plus the round's estimate, plus the minimum rounds of
// the pin sets still to come.
func (s *schedule) rounds(pins *scenario.Pins) error {
	plan := s.res.Plan
	name := ""
	if pins != nil {
		name = pins.Name
	}
	var active []baselines.Cell
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
	began := time.Now()
	defer func() { s.measuring += time.Since(began) }()
	for round := 0; round < last; round++ {
		if round >= plan.Rounds {
			if err := s.ctxErr(); err != nil {
				return err
			}
			open, err := s.opts.Open(s.res)
			if err != nil {
				return fmt.Errorf("after round %d: deciding which cells are still open: %w", round, err)
			}
			active = slices.DeleteFunc(active, func(c baselines.Cell) bool { return !slices.Contains(open, c) })
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
			reserve := time.Duration(plan.Rounds*later*2) * perTarget(s.sc)
			if spent := s.measuring + time.Since(began); s.opts.Budget > 0 && spent+next+reserve > s.opts.Budget {
				fmt.Fprintf(s.progress, "budget: round %d would take %v after %v measured, past the budget of %v: no more rounds\n",
					round+1, next, spent.Round(time.Millisecond), s.opts.Budget)
				break
			}
		}
		for _, cell := range active {
			if err := s.cellRound(cell, round); err != nil {
				return err
			}
		}
	}
	return nil
}

// cellRound runs one cell's round on both targets, in the pair's order,
// and records its two rungs.
func (s *schedule) cellRound(cell baselines.Cell, round int) error {
	order := Order(s.sc.Seed, round, s.orderIndex[cell])
	pair := [2]service{s.base, s.cand}
	if order == "BA" {
		pair = [2]service{s.cand, s.base}
	}
	check := func() error {
		if err := s.ctxErr(); err != nil {
			return err
		}
		for _, u := range []service{s.base, s.cand} {
			if err := u.Died(); err != nil {
				return err
			}
		}
		return nil
	}
	if sliced(s.sc) {
		if err := check(); err != nil {
			return err
		}
		rungs, err := s.sliceRound(cell, round, order)
		if err != nil {
			return err
		}
		for pos, r := range rungs {
			r.Cell, r.Round, r.Target, r.Position, r.Order = cell, round, pair[pos].Name(), pos, order
			s.res.Rungs = append(s.res.Rungs, r)
		}
		if err := baselines.Write(s.opts.OutDir, s.res); err != nil {
			return err
		}
		for pos, r := range rungs {
			s.rungLine(round, cell, pair[pos], r, len(s.res.Rungs)-1+pos, fmt.Sprintf(", %d slices", len(r.Slices)))
		}
		return nil
	}
	for pos, t := range pair {
		if err := check(); err != nil {
			return err
		}
		r, err := s.rung(t, cell, round)
		if err != nil {
			return err
		}
		r.Cell, r.Round, r.Target, r.Position, r.Order = cell, round, t.Name(), pos, order
		s.res.Rungs = append(s.res.Rungs, r)
		if err := baselines.Write(s.opts.OutDir, s.res); err != nil {
			return err
		}
		s.rungLine(round, cell, t, r, len(s.res.Rungs), "")
	}
	return nil
}

// rungLine is the progress line of the n-th rung.
func (s *schedule) rungLine(round int, cell baselines.Cell, t service, r baselines.Rung, n int, extra string) {
	plan := s.res.Plan
	rounds, total := strconv.Itoa(plan.Rounds), strconv.Itoa(plan.Rounds*len(plan.Cells)*2)
	if plan.MaxRounds > plan.Rounds {
		rounds += "–" + strconv.Itoa(plan.MaxRounds)
		total += "–" + strconv.Itoa(plan.MaxRounds*len(plan.Cells)*2)
	}
	fmt.Fprintf(s.progress, "[round %d/%s] %s %s: %.1f rps, p95 %s, %d errors (rung %d/%s%s)\n",
		round+1, rounds, cell, t.Name(), r.RPS, fmtSeconds(r.P95), r.ErrorCount(), n, total, extra)
}

// source is where worker w of a cell's rung in a round gets its requests:
// the scenario's stream, or the test's.
func (s *schedule) source() func(cell baselines.Cell, round, worker int) Source {
	if s.opts.source != nil {
		return s.opts.source
	}
	return func(c baselines.Cell, round, worker int) Source {
		return s.sc.Stream(c.Variant, c.Class, c.Concurrency, round, worker)
	}
}

// rung loads t for one cell. A target that dies under load ends the rung
// at once rather than letting it count connection errors.
func (s *schedule) rung(t service, cell baselines.Cell, round int) (baselines.Rung, error) {
	ctx, cancel := context.WithCancel(s.ctx)
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
	started := func(_, warmupEnd, windowEnd time.Time) {
		usage = sampleUsage(ctx, t, warmupEnd, windowEnd, sampleEvery)
	}
	var r baselines.Rung
	var err error
	if s.sc.Kind == scenario.KindGRPC {
		r, err = s.grpcRung(ctx, t, cell, round, source, started, &sources)
	} else {
		r, err = Generate(ctx, Load{
			URL:         t.URL(),
			Concurrency: cell.Concurrency,
			Warmup:      s.sc.Load.Warmup,
			Duration:    s.sc.Load.Duration,
			Timeout:     s.sc.Load.Timeout,
			Source: func(worker int) Source {
				src := source(cell, round, worker)
				sources = append(sources, src)
				return src
			},
			StatusOK: s.sc.StatusOK,
			Started:  started,
		})
	}
	if cerr := s.ctxErr(); cerr != nil {
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
	// A template that failed at run time left part of its requests empty:
	// the rung measured something other than the scenario, and so would
	// every later one.
	for _, src := range sources {
		if e, ok := src.(interface{ Err() error }); ok {
			if serr := e.Err(); serr != nil {
				return r, shownErr(s.sc, fmt.Errorf("%s %s: class %q: a request template failed: %w", cell, t.Name(), cell.Class, serr))
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

// fmtSeconds renders a latency with three significant digits in a unit
// that keeps it readable: 456µs, 1.23ms, 12.3s.
func fmtSeconds(s float64) string {
	unit, v := "s", s
	switch {
	case s == 0:
		return "0"
	case s < 1e-3:
		unit, v = "µs", s*1e6
	case s < 1:
		unit, v = "ms", s*1e3
	}
	dec := 0
	switch {
	case v < 10:
		dec = 2
	case v < 100:
		dec = 1
	}
	return strconv.FormatFloat(v, 'f', dec, 64) + unit
}

// ScenarioInfo is what a results file records of sc: its identity, its
// load settings and its gate section, so a file compared later is decided
// by the rule declared before the run.
func ScenarioInfo(sc *scenario.Scenario) baselines.ScenarioInfo { return scenarioInfo(sc) }

func scenarioInfo(sc *scenario.Scenario) baselines.ScenarioInfo {
	info := baselines.ScenarioInfo{
		Name: sc.Name, File: sc.File, Hash: sc.Hash, Profile: sc.Profile, Seed: sc.Seed, Source: sc.Source,
		Gate: baselines.GateConfig{
			Confidence:       sc.Gate.Confidence,
			TieWithin:        sc.Gate.TieWithin,
			MaxErrorRate:     sc.Gate.MaxErrorRate,
			MaxErrorIncrease: sc.Gate.MaxErrorIncrease,
			TieWithinFor:     sc.Gate.TieWithinFor,
			HigherBetterFor:  sc.Gate.HigherBetterFor,
			FailOn:           []baselines.RuleInfo{},
			Rule:             sc.Gate.Rule,
			Unresolved:       sc.Gate.Unresolved,
		},
		Load: baselines.LoadInfo{
			Concurrency: sc.Load.Concurrency,
			Duration:    sc.Load.Duration.Seconds(),
			Warmup:      sc.Load.Warmup.Seconds(),
			Repetitions: sc.Load.Repetitions,
			Timeout:     sc.Load.Timeout.Seconds(),
			Interleave:  sc.Load.Interleave,
			// What is not in force is not recorded: a round-interleaved
			// run has no slices, a fixed design no maximum.
			MaxRepetitions: max(sc.Load.MaxRepetitions, sc.Load.Repetitions),
		},
	}
	if sc.Load.Interleave == scenario.InterleaveSlice {
		info.Load.Slice, info.Load.Settle = sc.Load.Slice.Seconds(), sc.Load.Settle.Seconds()
	}
	for _, r := range sc.Gate.FailOn {
		info.Gate.FailOn = append(info.Gate.FailOn, baselines.RuleInfo{
			Metric: r.Metric, Classes: r.Classes, Concurrency: r.Concurrency, Variants: r.Variants,
		})
	}
	return info
}

func environment(sc *scenario.Scenario, toolVersion, runID string) baselines.Environment {
	env := baselines.Environment{
		RunID:       runID,
		CPUModel:    cpuModel(),
		CPUs:        runtime.NumCPU(),
		Kernel:      kernelRelease(),
		OS:          runtime.GOOS,
		Arch:        runtime.GOARCH,
		GoVersion:   runtime.Version(),
		ToolVersion: toolVersion,
		Start:       time.Now(),
	}
	env.Host, _ = os.Hostname()
	for _, p := range sc.PinSets {
		env.Pins = append(env.Pins, baselines.PinInfo{
			Name: p.Name, CPUs: p.CPUs, Memory: p.MemoryText, GeneratorCPUs: p.GeneratorCPUs,
		})
	}
	return env
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func kernelRelease() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return ""
	}
	b := make([]byte, 0, len(u.Release))
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
