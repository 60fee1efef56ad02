package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/report"
)

// decide turns a results file into the decided comparison. Only complete
// rounds count: a cancelled or failed run is decided on the rounds in which
// every cell ran on both targets, so the two sides always have the same
// number of repetitions measured under the same conditions.
func decide(res *baselines.Results) (report.Input, error) {
	rounds := map[string]int{}
	for _, c := range res.Plan.Cells {
		if _, ok := rounds[c.Pins]; !ok {
			rounds[c.Pins] = res.CompleteRoundsOf(c.Pins)
		}
	}
	idx := map[baselines.Cell]int{}
	sources := map[baselines.Cell][2]string{} // how each side's resources were read
	inputs := make([]gate.CellInput, len(res.Plan.Cells))
	for i, c := range res.Plan.Cells {
		idx[c] = i
		inputs[i] = gate.CellInput{
			Key:       gate.CellKey{Pins: c.Pins, Variant: c.Variant, Class: c.Class, Concurrency: c.Concurrency},
			Baseline:  gate.Side{Samples: map[gate.Metric][]float64{}},
			Candidate: gate.Side{Samples: map[gate.Metric][]float64{}},
		}
	}
	imported := strings.HasPrefix(res.Kind, "import:")
	for _, r := range res.Rungs {
		i, ok := idx[r.Cell]
		if !ok || r.Round >= rounds[r.Pins] {
			continue
		}
		side := &inputs[i].Baseline
		if r.Target == "candidate" {
			side = &inputs[i].Candidate
		}
		if r.Values != nil {
			// A Go benchmark's result: its units are its metrics.
			for unit, v := range r.Values {
				side.Samples[gate.Metric(unit)] = append(side.Samples[gate.Metric(unit)], v)
			}
			continue
		}
		side.Samples[gate.RPS] = append(side.Samples[gate.RPS], r.RPS)
		// A rung in which nothing was answered has no latency, and one in
		// which nothing ended has no error rate: their zeros would read as
		// perfect. Left out, they leave the metric short of samples, and a
		// gated metric short of samples is inconclusive, never a pass.
		if r.HasLatency() {
			for m, v := range map[gate.Metric]float64{
				gate.Mean: r.Mean, gate.P50: r.P50, gate.P90: r.P90, gate.P95: r.P95, gate.P99: r.P99,
			} {
				// An imported report stores a percentile its tool did
				// not record as 0: not measured, not a zero latency.
				if v == 0 && imported {
					continue
				}
				side.Samples[m] = append(side.Samples[m], v)
			}
		}
		if r.Requests > 0 {
			side.Samples[gate.ErrorRate] = append(side.Samples[gate.ErrorRate], r.ErrorRate())
		}
		t := 0
		if r.Target == "candidate" {
			t = 1
		}
		if src := sources[r.Cell]; r.ResourceSource != "" && src[t] != r.ResourceSource {
			if src[t] == "" {
				src[t] = r.ResourceSource
			} else {
				src[t] = "mixed"
			}
			sources[r.Cell] = src
		}
		if r.ResourceSource != "" {
			if r.Answered() > 0 {
				side.Samples[gate.CPUPerReq] = append(side.Samples[gate.CPUPerReq], r.CPUPerRequest())
			}
			side.Samples[gate.MemMean] = append(side.Samples[gate.MemMean], float64(r.MemMean))
			side.Samples[gate.MemPeak] = append(side.Samples[gate.MemPeak], float64(r.MemPeak))
		}
		side.Requests += r.Requests
		side.Errors += r.ErrorCount()
	}

	// Resources read two different ways (a cgroup's counters on one side,
	// the sum over /proc on the other) differ by definition, not by the
	// builds: such a cell's resource metrics are left undecided.
	for i, c := range res.Plan.Cells {
		if sources[c][0] != sources[c][1] {
			for _, side := range []*gate.Side{&inputs[i].Baseline, &inputs[i].Candidate} {
				for _, m := range []gate.Metric{gate.CPUPerReq, gate.MemMean, gate.MemPeak} {
					delete(side.Samples, m)
				}
			}
		}
	}

	g := res.Scenario.Gate
	settings := gate.DefaultSettings
	if g.Confidence > 0 {
		settings.Confidence = g.Confidence
	}
	settings.TieWithin = g.TieWithin
	for m, t := range g.TieWithinFor {
		if settings.TieWithinFor == nil {
			settings.TieWithinFor = map[gate.Metric]float64{}
		}
		settings.TieWithinFor[gate.Metric(m)] = t
	}
	for m, h := range g.HigherBetterFor {
		if settings.HigherBetterFor == nil {
			settings.HigherBetterFor = map[gate.Metric]bool{}
		}
		settings.HigherBetterFor[gate.Metric(m)] = h
	}
	policy := gate.Policy{MaxErrorRate: g.MaxErrorRate, MaxErrorIncrease: g.MaxErrorIncrease,
		// A benchmark reports the units it reports: a rule on a custom
		// unit applies to those that have it.
		OnlyMeasured: res.Kind == "gobench",
		// Cells found in the data, not declared in the scenario: a rule
		// that gates none of them is a mistake, not a pass.
		RuleMustApply: res.Kind == "gobench" || strings.HasPrefix(res.Kind, "import:")}
	for _, r := range g.FailOn {
		policy.FailOn = append(policy.FailOn, gate.Rule{
			Metric: gate.Metric(r.Metric), Classes: r.Classes,
			Concurrency: r.Concurrency, Variants: r.Variants,
		})
	}
	if err := errors.Join(settings.Validate(), policy.Validate()); err != nil {
		return report.Input{}, fmt.Errorf("gate settings of the results file: %w", err)
	}
	return report.Input{
		Results:    res,
		Comparison: gate.WithGateFailures(gate.Compare(inputs, settings, policy), gateFailures(res.Gates)),
		Rounds:     res.CompleteRounds(),
	}, nil
}

// gateFailures are the correctness gates' reasons to fail: a class whose
// answers disagree under mode required, and a pre-flight command the
// candidate fails where the baseline passed (or was not asked). A command
// both fail says something of the setup, not of the change: the report
// shows it, the gate does not fail on it.
func gateFailures(g *baselines.Gates) []gate.Failure {
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
