package main

import (
	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/report"
)

// decide turns a results file into the decided comparison. Only complete
// rounds count: a cancelled or failed run is decided on the rounds in which
// every cell ran on both targets, so the two sides always have the same
// number of repetitions measured under the same conditions.
func decide(res *baselines.Results) report.Input {
	rounds := res.CompleteRounds()
	idx := map[baselines.Cell]int{}
	inputs := make([]gate.CellInput, len(res.Plan.Cells))
	for i, c := range res.Plan.Cells {
		idx[c] = i
		inputs[i] = gate.CellInput{
			Key:       gate.CellKey{Variant: c.Variant, Class: c.Class, Concurrency: c.Concurrency},
			Baseline:  gate.Side{Samples: map[gate.Metric][]float64{}},
			Candidate: gate.Side{Samples: map[gate.Metric][]float64{}},
		}
	}
	for _, r := range res.Rungs {
		i, ok := idx[r.Cell]
		if !ok || r.Round >= rounds {
			continue
		}
		side := &inputs[i].Baseline
		if r.Target == "candidate" {
			side = &inputs[i].Candidate
		}
		for m, v := range map[gate.Metric]float64{
			gate.RPS: r.RPS, gate.Mean: r.Mean, gate.P50: r.P50, gate.P90: r.P90,
			gate.P95: r.P95, gate.P99: r.P99, gate.ErrorRate: r.ErrorRate(),
		} {
			side.Samples[m] = append(side.Samples[m], v)
		}
		side.Requests += r.Requests
		side.Errors += r.ErrorCount()
	}

	g := res.Scenario.Gate
	settings := gate.DefaultSettings
	if g.Confidence > 0 {
		settings.Confidence = g.Confidence
	}
	settings.TieWithin = g.TieWithin
	policy := gate.Policy{MaxErrorRate: g.MaxErrorRate}
	for _, r := range g.FailOn {
		policy.FailOn = append(policy.FailOn, gate.Rule{
			Metric: gate.Metric(r.Metric), Classes: r.Classes,
			Concurrency: r.Concurrency, Variants: r.Variants,
		})
	}
	return report.Input{
		Results:    res,
		Comparison: gate.Compare(inputs, settings, policy),
		Rounds:     rounds,
	}
}
