// Package decide turns a results file into the decided comparison: the one
// decision path of benchgate. The CLI's compare, gate, calibrate, history
// and the action decide with it, and so do the report's golden fixtures and
// scripts/verdict-quality.sh's replays, so no test decides a way the
// product does not.
package decide

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// Results decides a results file with the gate section it records (the
// rule declared before the run). Only complete rounds count: a cancelled
// or failed run is decided on the rounds in which every cell ran on both
// targets (under adaptive rounds, on each cell's own rounds), so the two
// sides always have the same number of repetitions measured under the same
// conditions. Bad gate settings in the file are an error.
func Results(res *benchdata.Results) (gate.Comparison, error) {
	idx := map[benchdata.Cell]int{}
	counted := make([]int, len(res.Plan.Cells))    // rounds of each cell that count
	sources := map[benchdata.Cell][2]string{}      // how each side's resources were read
	cpu := make([][2]float64, len(res.Plan.Cells)) // each side's CPU seconds in counted rungs
	inputs := make([]gate.CellInput, len(res.Plan.Cells))
	cellRounds := res.CellRounds() // RoundsOfCell of each, in one pass
	for i, c := range res.Plan.Cells {
		idx[c] = i
		counted[i] = cellRounds[c]
		inputs[i] = gate.CellInput{
			Key:       gate.CellKey(c),
			Baseline:  gate.Side{Samples: map[gate.Metric][]float64{}},
			Candidate: gate.Side{Samples: map[gate.Metric][]float64{}},
			Pairs:     map[gate.Metric][]gate.Pair{},
		}
	}
	bench := res.Benchmarks()
	// Each counted round's two rungs of a cell, for the paired
	// observations: the two sides of a round ran back to back.
	type roundKey struct {
		cell  int
		round int
	}
	var rounds []roundKey
	pair := map[roundKey]*[2]*benchdata.Rung{}
	for ri := range res.Rungs {
		r := &res.Rungs[ri]
		i, ok := idx[r.Cell]
		if !ok || r.Round >= counted[i] {
			continue
		}
		t := 0
		side := &inputs[i].Baseline
		if r.Target == "candidate" {
			side, t = &inputs[i].Candidate, 1
		}
		k := roundKey{i, r.Round}
		if pair[k] == nil {
			pair[k] = &[2]*benchdata.Rung{}
			rounds = append(rounds, k)
		}
		pair[k][t] = r
		for m, v := range rungValues(r, bench) {
			side.Samples[m] = append(side.Samples[m], v)
		}
		if bench {
			continue
		}
		if src := sources[r.Cell]; r.ResourceSource != "" && src[t] != r.ResourceSource {
			if src[t] == "" {
				src[t] = r.ResourceSource
			} else {
				src[t] = "mixed"
			}
			sources[r.Cell] = src
		}
		cpu[i][t] += r.CPUSeconds
		side.Requests += r.Requests
		side.Errors += r.ErrorCount()
		side.Answered += r.Answered()
		side.InFlight += r.InFlight
		side.Rungs++
	}
	// Rounds in the order they ran, so a cell's pairs are in time order.
	slices.SortStableFunc(rounds, func(a, b roundKey) int { return a.round - b.round })
	for _, k := range rounds {
		b, c := pair[k][0], pair[k][1]
		if b == nil || c == nil {
			continue
		}
		addPairs(inputs[k.cell].Pairs, k.round, b, c, bench)
	}

	// Resources read two different ways (a cgroup's counters on one side,
	// the sum over /proc on the other) differ by definition, not by the
	// builds: such a cell's resource metrics are left undecided.
	for i, c := range res.Plan.Cells {
		if sources[c][0] != sources[c][1] {
			for _, m := range gate.ResourceMetrics {
				delete(inputs[i].Baseline.Samples, m)
				delete(inputs[i].Candidate.Samples, m)
				delete(inputs[i].Pairs, m)
			}
		}
	}

	settings, policy := Rules(res)
	if err := errors.Join(settings.Validate(), policy.Validate()); err != nil {
		return gate.Comparison{}, fmt.Errorf("gate settings of the results file: %w", err)
	}
	for i, c := range res.Plan.Cells {
		if sources[c][0] == "proc" {
			if why := cpuFloor(inputs[i].Pairs[gate.CPUPerReq], cpu[i], settings.Batches); why != "" {
				inputs[i].Floors = map[gate.Metric]string{gate.CPUPerReq: why}
			}
		}
	}
	return gate.WithCorrectnessFailures(gate.Compare(inputs, settings, policy), correctnessFailures(res.Correctness)), nil
}

// Rules are the tie rule and the policy of the results file's gate
// section, for the kind of results the file holds.
func Rules(res *benchdata.Results) (gate.Settings, gate.Policy) {
	g := res.Scenario.Gate
	settings := gate.DefaultSettings
	if g.Confidence > 0 {
		settings.Confidence = g.Confidence
	}
	settings.TieWithin, settings.TieWithinFor, settings.HigherBetterFor = g.TieWithin, g.TieWithinFor, g.HigherBetterFor
	settings.Rule = g.Rule
	settings.FalseFailure = gate.DefaultFalseFailure
	if g.FalseFailure != nil {
		settings.FalseFailure = *g.FalseFailure
	}
	// Every look of an adaptive design spends part of the error rate,
	// by its information fraction: its rounds of the most.
	settings.Looks = res.Scenario.Load.Looks()
	settings.MaxRounds = max(res.Scenario.Load.MaxRepetitions, res.Scenario.Load.Repetitions)
	_, imported := res.Imported()
	policy := gate.Policy{FailOn: g.FailOn, MaxErrorRate: g.MaxErrorRate, MaxErrorIncrease: g.MaxErrorIncrease,
		Unresolved: g.Unresolved,
		// A benchmark reports the units it reports: a rule on a custom
		// unit applies to those that have it.
		OnlyMeasured: res.Benchmarks(),
		// Cells found in the data, not declared in the scenario: a rule
		// that gates none of them is a mistake, not a pass.
		RuleMustApply: res.Benchmarks() || imported,
		// Load results count requests; benchmarks and imports do not.
		RequireAnswers: !res.Benchmarks() && !imported}
	return settings, policy
}

// CPUFloorTicks is the fewest clock ticks of CPU time a side must have
// used in each observation of a paired CPU ratio (a batch of slices, or a
// rung) for CPU per request to be gated when it is read from /proc.
const CPUFloorTicks = 3

// userHZ is the unit of /proc's CPU times on Linux (USER_HZ, 100 on every
// architecture Go supports).
const userHZ = 100

// cpuFloor says why a cell's CPU per request, read from /proc, is below
// its measurement floor ("" when it is not): /proc counts a process's CPU
// in whole clock ticks of 10 ms, so an endpoint that waits rather than
// computes (a sleep, a call to a database) uses a tick now and then, and
// the ratio of two such counts over a batch of slices is a ratio of small
// integers, mostly noise and quantisation however the interval looks
// (measured: the demo's sleep endpoint under load failed a gate on
// cpu_per_req +20.1% ±11.9%, an endpoint the change did not touch). The
// floor: a side that measured no tick in a whole round, or either side
// under CPUFloorTicks ticks an observation (a tick's
// rounding, sd 0.29 of a tick, is then a tenth of the observation or
// more: as wide as the band on its own), the
// observations being the batches the paired ratio is made of (each
// round's pairs in min(batches, pairs) batches), or its rounds.
func cpuFloor(pairs []gate.Pair, cpu [2]float64, batches int) string {
	if len(pairs) == 0 {
		return ""
	}
	if batches <= 0 {
		batches = gate.DefaultBatches
	}
	perRound := map[int]int{}
	ticked := map[int][2]bool{} // rounds in which each side measured some CPU
	for _, p := range pairs {
		perRound[p.Round]++
		t := ticked[p.Round]
		t[0], t[1] = t[0] || p.Base > 0, t[1] || p.Cand > 0
		ticked[p.Round] = t
	}
	// The first such round, so the reason is the same at every reading.
	for _, r := range slices.Sorted(maps.Keys(ticked)) {
		t := ticked[r]
		for i, name := range []string{"baseline", "candidate"} {
			if !t[i] {
				return fmt.Sprintf("the %s's CPU time, read from /proc in 10 ms ticks, was no tick at all in round %d: "+
					"its CPU per request is below what /proc can count there. An endpoint that waits rather than computes, "+
					"or a rung too short on a loaded machine, uses little CPU: gate it on rps or latency, run longer rungs, "+
					"or measure a container or stack target, whose CPU a cgroup counts in nanoseconds", name, r+1)
			}
		}
	}
	obs := 0
	for _, n := range perRound {
		obs += min(n, batches)
	}
	for t, name := range []string{"baseline", "candidate"} {
		if ticks := cpu[t] * userHZ / float64(obs); ticks < CPUFloorTicks {
			return fmt.Sprintf("the %s's CPU time, read from /proc in 10 ms ticks, was %.1f ticks an observation (%d observations); "+
				"at least %d are needed for a ratio of CPU times to mean more than the ticks' rounding. An endpoint that "+
				"waits rather than computes uses little CPU: gate it on rps or latency, or measure a container or stack "+
				"target, whose CPU a cgroup counts in nanoseconds", name, ticks, obs, CPUFloorTicks)
		}
	}
	return ""
}

// correctnessFailures are the correctness checks' reasons to fail: a
// class whose answers disagree under mode required, and a pre-flight
// command the candidate fails where the baseline passed (or was not
// asked). A command both fail says something of the setup, not of the
// change: the report shows it, the gate does not fail on it.
func correctnessFailures(g *benchdata.Correctness) []gate.Failure {
	if g == nil {
		return nil
	}
	var fs []gate.Failure
	baseFailed, baseRan := map[string]bool{}, map[string]bool{}
	for _, p := range g.Preflight {
		if p.Target == "baseline" {
			baseRan[p.Name], baseFailed[p.Name] = true, !p.Pass
		}
	}
	for _, p := range g.Preflight {
		if p.Target != "candidate" || p.Pass || baseFailed[p.Name] {
			continue
		}
		why := p.Error
		if why == "" {
			why = fmt.Sprintf("exit %d", p.ExitCode)
		}
		if p.LastLine != "" {
			why += ": " + p.LastLine
		}
		reason := fmt.Sprintf("pre-flight %s fails on the candidate (%s)", p.Name, why)
		if baseRan[p.Name] {
			reason += " and passes on the baseline"
		}
		fs = append(fs, gate.Failure{Kind: gate.FailPreflight, Reason: reason})
	}
	if g.Agreement != nil {
		for _, c := range g.Agreement.Classes {
			// Only warn is let through: a mode this code does not know,
			// or none, fails closed.
			if c.Agree || c.Mode == "warn" {
				continue
			}
			reason := "answers differ"
			if d := c.First; d != nil {
				reason = fmt.Sprintf("answers differ at request %d (%s %s): %s", d.Index+1, d.Method, d.Target, d.Reason)
			}
			fs = append(fs, gate.Failure{Key: gate.CellKey{Variant: c.Variant, Class: c.Class}, Kind: gate.FailAgreement, Reason: reason})
		}
	}
	return fs
}

// rungValues are a rung's measurements by metric. A rung in which nothing
// was answered has no latency, and one in which nothing ended has no error
// rate: their zeros would read as perfect. Left out, they leave the metric
// short of samples, and a gated metric short of samples is inconclusive,
// never a pass.
func rungValues(r *benchdata.Rung, bench bool) map[gate.Metric]float64 {
	v := map[gate.Metric]float64{}
	if bench {
		// A Go benchmark's result: its units are its metrics.
		for unit, x := range r.Values {
			v[gate.Metric(unit)] = x
		}
		return v
	}
	for _, m := range gate.AllMetrics {
		if x, ok := r.Metric(m); ok {
			v[m] = x
		}
	}
	return v
}

// sliceValues are a slice's measurements by metric, as rungValues: what
// the generator measured (throughput, and latency where something was
// answered), and CPU per request where the target's CPU was read at the
// slice's edges.
func sliceValues(s benchdata.Slice) map[gate.Metric]float64 {
	v := map[gate.Metric]float64{}
	for _, m := range gate.Measured {
		if x, ok := s.Values[string(m)]; ok && (m == gate.RPS || s.Answered > 0) {
			v[m] = x
		}
	}
	if s.Answered > 0 && s.CPUSeconds > 0 {
		v[gate.CPUPerReq] = s.CPUSeconds / float64(s.Answered)
	}
	return v
}

// addPairs adds a round's paired observations of a cell: the slice pairs
// when both rungs were sliced, else the round's two rungs as one pair. A
// metric is paired where both sides measured it; metrics measured only
// per rung (memory, and CPU where a slice could not read it) are paired
// by round.
func addPairs(pairs map[gate.Metric][]gate.Pair, round int, b, c *benchdata.Rung, bench bool) {
	bv, cv := rungValues(b, bench), rungValues(c, bench)
	sliced := map[gate.Metric]bool{}
	if len(b.Slices) > 0 && len(c.Slices) > 0 {
		byPair := map[int]benchdata.Slice{}
		for _, s := range c.Slices {
			byPair[s.Pair] = s
		}
		var bs, cs []map[gate.Metric]float64
		for _, s := range b.Slices {
			if o, ok := byPair[s.Pair]; ok {
				bs, cs = append(bs, sliceValues(s)), append(cs, sliceValues(o))
			}
		}
		for m := range bv {
			// A metric is paired by slice only when every slice pair
			// has it: a slice without it (nothing answered) would
			// otherwise drop out of one metric's pairs and not another's.
			all := len(bs) > 0
			for j := range bs {
				_, okb := bs[j][m]
				_, okc := cs[j][m]
				all = all && okb && okc
			}
			if !all {
				continue
			}
			sliced[m] = true
			for j := range bs {
				pairs[m] = append(pairs[m], gate.Pair{Round: round, Base: bs[j][m], Cand: cs[j][m]})
			}
		}
	}
	for m, x := range bv {
		if y, ok := cv[m]; ok && !sliced[m] {
			pairs[m] = append(pairs[m], gate.Pair{Round: round, Base: x, Cand: y})
		}
	}
}
