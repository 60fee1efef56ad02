package runner

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
)

// Shard names one part of a split grid: Index of Count, 1-based.
type Shard struct{ Index, Count int }

// String is the -shard syntax, i/n; "" for the whole grid.
func (s *Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Set parses i/n with 1 <= i <= n, as a flag.Value.
func (s *Shard) Set(v string) error {
	i, n, ok := strings.Cut(v, "/")
	idx, err1 := strconv.Atoi(i)
	cnt, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || cnt < 1 || idx < 1 || idx > cnt {
		return fmt.Errorf("-shard %q: want i/n with 1 <= i <= n, e.g. 2/3", v)
	}
	*s = Shard{Index: idx, Count: cnt}
	return nil
}

// BudgetError refuses a run whose planned time exceeds the budget. Nothing
// has been started when it is returned.
type BudgetError struct {
	Estimate time.Duration
	Budget   time.Duration
	Plan     benchdata.Plan
	// GoBench is what a gobench plan's estimate counted ("6 rounds × 2
	// targets × 12 benchmarks × 1s"); "" for a grid's plan.
	GoBench string
}

func (e *BudgetError) Error() string {
	if e.GoBench != "" {
		return fmt.Sprintf("planned time at least %v (%s, builds not counted) exceeds the budget of %v: narrow the packages or the bench pattern, shorten benchtime, run fewer rounds, or raise -budget",
			e.Estimate, e.GoBench, e.Budget)
	}
	return fmt.Sprintf("planned time %v (%d cells × %d rounds × 2 targets) exceeds the budget of %v: reduce the grid, repetitions or duration, or raise -budget",
		e.Estimate, len(e.Plan.Cells), e.Plan.Rounds, e.Budget)
}

// PlanOf returns the grid of sc in schedule order: pin sets, then
// variants, then classes, then concurrency levels. Pin sets are outermost
// because the targets are restarted for each.
func PlanOf(sc *scenario.Scenario) benchdata.Plan {
	var p benchdata.Plan
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
					for _, rate := range sc.Load.Rates() {
						p.Cells = append(p.Cells, benchdata.Cell{Pins: pn, Variant: v.Name, Class: c.Name, Concurrency: n, Rate: rate})
					}
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

// planned is the plan Run follows for sc under opts: PlanOf, without
// MaxRounds for a fixed design (no opts.Open), cut to opts.Shard (the
// ShardInfo, nil for the whole grid, keeps the grid), with its estimate.
// It writes the plan's lines to w, as a run's first words, and refuses a
// plan over opts.Budget with a *BudgetError. Run and DryRun share it, so
// a dry run shows the very plan a run would follow.
func planned(sc *scenario.Scenario, opts Options, w io.Writer) (benchdata.Plan, *benchdata.ShardInfo, error) {
	plan := PlanOf(sc)
	if opts.Open == nil {
		plan.MaxRounds = 0
	}
	var shard *benchdata.ShardInfo
	if sh := opts.Shard; sh.Count > 0 {
		if sh.Index < 1 || sh.Index > sh.Count {
			return plan, nil, fmt.Errorf("runner: shard %d/%d does not exist", sh.Index, sh.Count)
		}
		shard = &benchdata.ShardInfo{Index: sh.Index, Count: sh.Count, Grid: plan.Cells}
		var mine []benchdata.Cell
		for i, c := range plan.Cells {
			if benchdata.ShardOf(i, sh.Count) == sh.Index {
				mine = append(mine, c)
			}
		}
		plan.Cells = mine
		plan.Estimate = estimate(sc, plan).Seconds()
		fmt.Fprintf(w, "shard %d/%d: %d of the grid's %d cells\n", sh.Index, sh.Count, len(mine), len(shard.Grid))
	}
	least := estimate(sc, plan)
	if opts.Budget > 0 && least > opts.Budget {
		return plan, nil, &BudgetError{Estimate: least, Budget: opts.Budget, Plan: plan}
	}
	// The budget bounds more than the plan counts: say so where the
	// plan is compared with it.
	within := ""
	if opts.Budget > 0 {
		within = fmt.Sprintf("; the budget of %v bounds the whole run, builds, start-up, correctness checks and rounds", opts.Budget)
	}
	if plan.MaxRounds > plan.Rounds {
		most := least * time.Duration(plan.MaxRounds) / time.Duration(plan.Rounds)
		fmt.Fprintf(w, "plan: %d cells × %d–%d rounds × 2 targets × %v = %v–%v%s\n", len(plan.Cells), plan.Rounds, plan.MaxRounds, perTarget(sc), least, most, within)
	} else {
		fmt.Fprintf(w, "plan: %d cells × %d rounds × 2 targets × %v = %v%s\n", len(plan.Cells), plan.Rounds, perTarget(sc), least, within)
	}
	if line := profilePlanLine(sc); line != "" && opts.Profile != nil {
		fmt.Fprintln(w, line)
	}
	if every := sc.Load.RestartEvery; every > 0 {
		when := "every round"
		if every > 1 {
			when = fmt.Sprintf("every %d rounds", every)
		}
		n := (plan.Rounds - 1) / every
		count := strconv.Itoa(n)
		if m := (plan.MaxRounds - 1) / every; m > n {
			count += "–" + strconv.Itoa(m)
		}
		fmt.Fprintf(w, "restart: fresh targets %s, %s restarts a pin set; their start-up is not in the plan's time\n", when, count)
	}
	return plan, shard, nil
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
func estimate(sc *scenario.Scenario, p benchdata.Plan) time.Duration {
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
