package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
)

// design is what -replay decides the kept gates under: the rule, the
// rounds every cell takes, the most an open cell may take, and the gated
// metric. Each is "" or 0 where the gates' own scenario stands.
type design struct {
	// falseFailure is gate.false_failure to decide at; nil keeps the
	// gate's own, 0 is off.
	falseFailure *float64
	rule         string
	reps         int
	maxReps      int
	metric       string
}

// replay re-decides a gate from its results.json under d, as the runner
// and compare would have decided a gate of that design on the same rungs:
// the first reps rounds of every cell, then, while a cell is open (by
// gate.Open, the runner's own test), one more of its rounds at a time up
// to maxReps. It needs the gate to have run at least maxReps rounds of
// every cell. The verdicts are those the design's gate would have reached
// on these rungs; its wall time is estimated: the gate's own wall time
// less the sessions it ran that the design would not have run (each cell
// round's session lasts until the next one starts; the last one as long as
// the mean of the others).
func (r *gateRun) replay(d design) {
	if r.exit != 0 && r.exit != 1 {
		r.broken = fmt.Sprintf("exit %d", r.exit)
		return
	}
	res, err := benchdata.Read(filepath.Join(r.dir, "results.json"))
	if err != nil {
		r.broken = err.Error()
		return
	}
	load := &res.Scenario.Load
	if d.rule != "" {
		res.Scenario.Gate.Rule = gate.DecisionRule(d.rule)
	}
	if d.falseFailure != nil {
		res.Scenario.Gate.FalseFailure = d.falseFailure
	}
	if d.metric != "" {
		res.Scenario.Gate.FailOn = nil
		for _, m := range strings.Split(d.metric, ",") {
			res.Scenario.Gate.FailOn = append(res.Scenario.Gate.FailOn, gate.Rule{Metric: gate.Metric(m)})
		}
	}
	reps, maxReps := load.Repetitions, max(load.Repetitions, load.MaxRepetitions)
	if d.reps > 0 {
		reps, maxReps = d.reps, max(d.reps, maxReps)
	}
	if d.maxReps > 0 {
		maxReps = max(reps, d.maxReps)
	}
	type cellRound struct {
		cell  benchdata.Cell
		round int
	}
	starts := map[cellRound]time.Time{}
	for _, g := range res.Rungs {
		k := cellRound{g.Cell, g.Round}
		if s, ok := starts[k]; !ok || g.Start.Before(s) {
			starts[k] = g.Start
		}
	}
	for _, c := range res.Plan.Cells {
		if have := res.RoundsOfCell(c); have < maxReps {
			r.broken = fmt.Sprintf("%s has %d rounds, the design needs %d", c, have, maxReps)
			return
		}
	}
	// Each session's cost in seconds.
	keys := make([]cellRound, 0, len(starts))
	for k := range starts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b cellRound) int { return starts[a].Compare(starts[b]) })
	cost := map[cellRound]float64{}
	var spent float64
	for i := 1; i < len(keys); i++ {
		k := keys[i-1]
		cost[k] = starts[keys[i]].Sub(starts[k]).Seconds()
		spent += cost[k]
	}
	if n := len(keys) - 1; n > 0 {
		cost[keys[n]] = spent / float64(n)
		spent += cost[keys[n]]
	}
	overhead := max(0, r.wall-spent)

	all := res.Rungs
	load.Repetitions, load.MaxRepetitions = reps, maxReps
	res.Plan.Rounds, res.Plan.MaxRounds = reps, maxReps
	rounds := map[benchdata.Cell]int{} // rounds each cell takes
	for _, c := range res.Plan.Cells {
		rounds[c] = reps
	}
	var cmp gate.Comparison
	for look := reps; ; look++ {
		res.Rungs = slices.DeleteFunc(slices.Clone(all), func(g benchdata.Rung) bool { return g.Round >= rounds[g.Cell] })
		if cmp, err = decide.Results(res); err != nil {
			r.broken = err.Error()
			return
		}
		if look == maxReps {
			break
		}
		open := cmp.OpenCells()
		more := false
		for _, c := range res.Plan.Cells {
			if rounds[c] == look && slices.Contains(open, gate.CellKey(c)) {
				rounds[c]++
				more = true
			}
		}
		if !more {
			break
		}
	}
	r.wall = overhead
	for k, s := range cost {
		if k.round < rounds[k.cell] {
			r.wall += s
		}
	}
	r.exit = 0
	if cmp.Outcome != gate.Pass {
		r.exit = 1
	}
	r.fromComparison(cmp)
	r.rounds = 0
	for _, c := range res.Plan.Cells { // in the plan's order
		r.cellRounds = append(r.cellRounds, rounds[c])
		r.rounds = max(r.rounds, rounds[c])
	}
	r.replayed = "replayed as " + r.rule + " " + strconv.Itoa(reps) + "-" + strconv.Itoa(maxReps)
}

// fromComparison counts a decided comparison's gated decisions.
func (r *gateRun) fromComparison(c gate.Comparison) {
	for _, f := range c.Failures {
		if k := string(f.Kind); !slices.Contains(r.failKinds, k) {
			r.failKinds = append(r.failKinds, k)
		}
	}
	for _, cell := range c.Cells {
		for _, m := range cell.Gated {
			r.gated++
			d, ok := cell.Decision(m)
			if !ok {
				r.undecided++
				continue
			}
			if r.rule == "" {
				r.rule = string(d.Rule)
			}
			switch d.Verdict {
			case gate.Regression:
				r.regressed++
			case gate.Tie:
				r.ties++
				if d.Unresolved {
					r.open++
				}
			case gate.Inconclusive:
				r.undecided++
			}
		}
	}
}
