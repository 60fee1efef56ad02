package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/numtext"
)

// The design in words: which rule decided, how the two sides were
// interleaved, whether rounds were adaptive, and the confidence every
// interval was made at. The identity line, the claims, the environment and
// the threats to validity say it from what the comparison and the results
// file record; nothing here decides.

// rule is the rule the comparison was decided by.
func (m *model) rule() gate.DecisionRule {
	if r := m.in.Comparison.Settings.Rule; r != "" {
		return r
	}
	return gate.RuleOverlap
}

// sliced says whether the two sides alternated in slices within a round.
func (m *model) sliced() bool {
	return m.in.Results.Scenario.Load.Interleave == "slice" || len(m.pairs) > 0
}

// adaptive says whether cells could take rounds beyond the planned ones.
func (m *model) adaptive() bool {
	p := m.in.Results.Plan
	return p.MaxRounds > p.Rounds
}

// looks is the number of looks the error rate was spent over.
func (m *model) looks() int { return max(1, m.in.Comparison.Settings.Looks) }

// confidenceText prints a confidence such as 0.9875 as "98.75%", without
// the float noise of 1 - 0.05/4.
func confidenceText(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e6)/1e4, 'f', -1, 64) + "%"
}

// lookText prints a look's confidence to 0.01%, rounded down so that it
// never reads 100%: 0.9944254 → "99.44%".
func lookText(c float64) string { return confidenceText(math.Floor(c*1e4) / 1e4) }

// lookConfidences are the looks' confidences of an adaptive design; nil
// for a fixed one.
func (m *model) lookConfidences() []float64 {
	if cs := m.in.Comparison.Settings.LookConfidences(); len(cs) > 1 {
		return cs
	}
	return nil
}

// lookConfidencesText is the confidence of the intervals: "95%", or with
// several looks the first look's and the last's, "99.44%–96.24% (by
// look)".
func (m *model) lookConfidencesText() string {
	cs := m.in.Comparison.Settings.LookConfidences()
	if len(cs) == 1 {
		return confidenceText(cs[0])
	}
	return lookText(cs[0]) + "–" + lookText(cs[len(cs)-1]) + " (by look)"
}

// intervalsText is the identity line's "95% intervals", or with several
// looks "99.44%–96.24% intervals by look (95% over 4 looks, O'Brien–Fleming)".
func (m *model) intervalsText() string {
	s := m.in.Comparison.Settings
	cs := s.LookConfidences()
	if len(cs) == 1 {
		return confidenceText(cs[0]) + " intervals"
	}
	return fmt.Sprintf("%s–%s intervals by look (%s over %d looks, O'Brien–Fleming)",
		lookText(cs[0]), lookText(cs[len(cs)-1]), confidenceText(s.Confidence), len(cs))
}

// designText is the identity line's design beyond the default: the paired
// rule, slice interleaving, adaptive rounds. "" for the seed's design.
func (m *model) designText() string {
	var parts []string
	if m.rule() == gate.RulePaired {
		parts = append(parts, "paired rule")
	}
	if m.sliced() {
		parts = append(parts, "slices of "+m.sliceText())
	}
	if m.adaptive() {
		parts = append(parts, "adaptive rounds "+m.adaptiveRange())
	}
	if r := m.restartText(); r != "" {
		parts = append(parts, r)
	}
	return strings.Join(parts, ", ")
}

// restartText is the identity line's "fresh targets every round (4
// restarts)" of a run under load.restart; "" for one that kept its
// targets up.
func (m *model) restartText() string {
	every := m.in.Results.Scenario.Load.RestartEvery
	if every <= 0 {
		return ""
	}
	return "fresh targets " + m.restartWhen() + " (" + plural(m.in.Results.Env.Restarts, "restart", "restarts") + ")"
}

// restartWhen is "every round" or "every 2 rounds".
func (m *model) restartWhen() string {
	if every := m.in.Results.Scenario.Load.RestartEvery; every > 1 {
		return "every " + strconv.Itoa(every) + " rounds"
	}
	return "every round"
}

// restartClaim says, for the claims, what restarting the targets makes of
// the intervals; "" for a run that kept its targets up.
// familyClaim says how the whole gate's error was held (gate.Family): ""
// when no gated decision was paired.
func (m *model) familyClaim() string {
	c := m.in.Comparison
	f := c.Family
	if f == nil {
		if m.rule() == gate.RulePaired && c.Settings.FalseFailure == 0 && m.in.Results.Scenario.Gate.FalseFailure != nil {
			return "Each gated decision stood on its own interval (`gate.false_failure: off`): the more decisions a gate holds, " +
				"the likelier a build compared with itself fails it (docs/statistics.md#the-whole-gate)."
		}
		return ""
	}
	s := fmt.Sprintf("Over its %s at once, the gate fails a build compared with itself in at most %s of runs "+
		"(`gate.false_failure`): ", plural(f.Decisions, "gated decision", "gated decisions"), fraction(f.Level))
	if f.Exposed == 0 {
		return s + "each was precise enough that the tie band alone kept a false regression unlikely, so each stood on " +
			"its own interval (docs/statistics.md#the-whole-gate)."
	}
	s += fmt.Sprintf("%d, noisier than the tie band protects, were judged together by Holm's step-down "+
		"at the level the rest left, and a regression among them failed the gate only if confirmed there "+
		"(docs/statistics.md#the-whole-gate)", f.Exposed)
	if f.Withheld > 0 {
		s += "; " + plural(f.Withheld, "regression was not confirmed and is shown as an unresolved tie",
			"regressions were not confirmed and are shown as unresolved ties")
	}
	return s + "."
}

func (m *model) restartClaim() string {
	l := m.in.Results.Scenario.Load
	if l.RestartEvery <= 0 {
		return ""
	}
	s := fmt.Sprintf("Both targets were stopped and fresh instances started %s (`load.restart`, %s), each health-checked "+
		"again and none measured while it started, so what one instance brings (its heap layout, a JIT's choices, "+
		"GC pacing, a cache warmed its own way) ", m.restartWhen(), plural(m.in.Results.Env.Restarts, "restart", "restarts"))
	if l.RestartEvery == 1 {
		return s + "is drawn anew each round and the rounds' spread, which the intervals hold, includes it."
	}
	return s + "is drawn anew for each block of rounds; the rounds of one block share it, so the rounds' spread holds it only in part."
}

// sliceText is "200ms", or "200ms after 50ms settle", and how many cells
// were cut otherwise: "50ms after 10ms settle (2 cells otherwise: their
// requests too slow)".
func (m *model) sliceText() string {
	l := m.in.Results.Scenario.Load
	if l.Slice <= 0 {
		return "unrecorded length"
	}
	s := seconds(l.Slice)
	if l.Settle > 0 {
		s += " after " + seconds(l.Settle) + " settle"
	}
	if len(m.cuts) > 0 {
		s += " (" + plural(len(m.cuts), "cell", "cells") + " otherwise: requests too slow for them)"
	}
	return s
}

// cellCut is a cell cut otherwise than the scenario's slices say.
type cellCut struct {
	cell benchdata.Cell
	cut  benchdata.Slicing
}

// buildCuts lists the cells whose rungs record a slicing of their own.
func (m *model) buildCuts() {
	seen := map[benchdata.Cell]bool{}
	for _, g := range m.in.Results.Rungs {
		if g.Slicing != nil && !seen[g.Cell] {
			seen[g.Cell] = true
			m.cuts = append(m.cuts, cellCut{g.Cell, *g.Slicing})
		}
	}
}

// cutLines say how each cell cut otherwise was measured and why, escaped
// by esc: "sleep c=1: a request takes 121ms: …".
func (m *model) cutLines(esc func(string) string) []string {
	var out []string
	for _, c := range m.cuts {
		out = append(out, esc(c.cell.String())+": "+esc(c.cut.Why))
	}
	return out
}

// adaptiveRange is "3–6": the planned rounds and the most a cell may take.
func (m *model) adaptiveRange() string {
	p := m.in.Results.Plan
	return strconv.Itoa(p.Rounds) + "–" + strconv.Itoa(p.MaxRounds)
}

// buildPairs counts each cell's paired slice observations over its decided
// rounds: a baseline slice and a candidate slice of the same pair in the
// same round, as the CLI pairs them.
func (m *model) buildPairs() {
	m.pairs = map[benchdata.Cell]int{}
	type roundKey struct {
		cell  benchdata.Cell
		round int
	}
	sides := map[roundKey][2]*benchdata.Rung{}
	var keys []roundKey
	rs := m.in.Results.Rungs
	for i := range rs {
		g := &rs[i]
		if len(g.Slices) == 0 || !m.decided(g.Cell, g.Round) {
			continue
		}
		k := roundKey{g.Cell, g.Round}
		s, seen := sides[k]
		if !seen {
			keys = append(keys, k)
		}
		switch g.Target {
		case "baseline":
			s[0] = g
		case "candidate":
			s[1] = g
		}
		sides[k] = s
	}
	for _, k := range keys {
		s := sides[k]
		if s[0] == nil || s[1] == nil {
			continue
		}
		cand := map[int]bool{}
		for _, sl := range s[1].Slices {
			cand[sl.Pair] = true
		}
		for _, sl := range s[0].Slices {
			if cand[sl.Pair] {
				m.pairs[k.cell]++
			}
		}
	}
}

// pairsText counts the paired observations per cell: "30 slice pairs",
// "30–50 slice pairs" where cells differ, or under round interleaving
// "one pair per round".
func (m *model) pairsText() string {
	lo, hi := -1, 0
	for _, c := range m.in.Comparison.Cells {
		n, ok := m.pairs[cellOf(c.Key)]
		if !ok {
			continue
		}
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	if lo < 0 {
		return "one pair per round, the round's two rungs"
	}
	return roundsRange(lo, hi, "slice pair", "slice pairs")
}

// ruleClaim states the rule that decided, for the claims. better says which
// way each kind of metric improves.
func (m *model) ruleClaim(better string) string {
	s := m.in.Comparison.Settings
	conf := m.lookConfidencesText()
	if m.rule() == gate.RulePaired {
		return fmt.Sprintf("The paired rule (`gate.rule: paired`) was fixed before the run: per cell and metric, a **tie** "+
			"when the %s Student-t interval of the paired ratio candidate/baseline contains 1 or the ratio is under %s from 1; "+
			"otherwise the better side wins (%s). The interval is over batch means of the paired observations, %s per cell: "+
			"each round's pairs are split into up to %d contiguous batches, a batch's observation the logarithm of its "+
			"candidate sum over its baseline sum, so that noise neighbouring pairs share does not narrow it. "+
			"The error rate is decided by the overlap rule.",
			conf, m.bandText(md), better, m.pairsText(), batchesOf(s))
	}
	return fmt.Sprintf("The overlap rule (`gate.rule: overlap`) was fixed before the run: per cell and metric, a **tie** when the two "+
		"%s Student-t intervals overlap or the means are under %s apart relative to the baseline; "+
		"otherwise the better side wins (%s).", conf, m.bandText(md), better)
}

// orderText says how the rounds were scheduled, for the claims.
func (m *model) orderText() string {
	every := "every cell"
	if !m.uniformRounds() {
		every = "every cell of its pin set"
	}
	if m.adaptive() {
		every += " (an adaptive round only those still open)"
	}
	rounds := m.roundsText("complete round", "complete rounds", md)
	switch {
	case !m.interleaved():
		return fmt.Sprintf("The intervals rest on %s per side, read from files: how the two sides were scheduled is not known to this report, so drift of the machine between them is not cancelled.",
			m.roundsText("repetition", "repetitions", md))
	case m.sliced():
		l := m.in.Results.Scenario.Load
		slice := "slices"
		if l.Slice > 0 {
			slice += " of " + seconds(l.Slice)
		}
		if l.Settle > 0 {
			slice += ", each measured after a " + seconds(l.Settle) + " settle that is not counted"
		}
		pairs := ""
		if m.rule() != gate.RulePaired {
			// The paired rule's sentence counts them.
			pairs = ": " + m.pairsText() + " per cell"
		}
		cuts := ""
		if lines := m.cutLines(md); len(lines) > 0 {
			cuts = " A slice counts the requests that end in it, so a cell whose requests take a good share of a slice was cut " +
				"from its first warm-up into slices many requests long, or measured by round interleaving where too few of " +
				"those fit the duration: " + strings.Join(lines, "; ") + "."
		}
		return fmt.Sprintf("The intervals rest on %s. In each, %s ran on both targets, each warmed first, then alternating "+
			"between them in %s, the slice pairs in seeded, balanced AB/BA order%s.%s", rounds, every, slice, pairs, cuts)
	}
	return fmt.Sprintf("The intervals rest on %s, each running %s once on each target in seeded AB/BA order.", rounds, every)
}

// adaptiveText explains adaptive rounds and what they cost, for the
// claims; "" for a fixed design.
func (m *model) adaptiveText() string {
	if !m.adaptive() {
		return ""
	}
	p := m.in.Results.Plan
	s := m.in.Comparison.Settings
	here := ""
	if lo, hi := m.in.Rounds, m.mostOverall(); hi > lo {
		here = fmt.Sprintf(" (here %d–%d)", lo, hi)
	} else {
		here = fmt.Sprintf(" (here none needed more than %d)", lo)
	}
	cs := s.LookConfidences()
	looks := make([]string, len(cs))
	for k, c := range cs {
		looks[k] = fmt.Sprintf("%s after %d", lookText(c), s.MaxRounds-len(cs)+1+k)
	}
	looks[0] = strings.Replace(looks[0], "after", "after round", 1)
	return fmt.Sprintf("Adaptive rounds %s (`load.max_repetitions`): cells whose verdict was still open after %s ran more, "+
		"alone, until it settled or %s were done%s. The error rate %s is spent over the %s by O'Brien–Fleming-type "+
		"(Lan–DeMets) spending, little at the early looks and most at the last: a cell's intervals are at the "+
		"confidence of its look, %s, so stopping a cell at whichever look settles it keeps the chance of a false "+
		"verdict within %s.",
		m.adaptiveRange(), plural(p.Rounds, "round", "rounds"), strconv.Itoa(p.MaxRounds), here,
		confidenceText(1-s.Confidence), plural(len(cs), "look", "looks"), strings.Join(looks, ", "),
		confidenceText(1-s.Confidence))
}

// mostOverall is the most rounds any cell was decided on.
func (m *model) mostOverall() int {
	n := m.in.Rounds
	for _, p := range m.rounds {
		n = max(n, p.most)
	}
	return n
}

// anyPaired says whether some decision was made on a paired ratio, whose
// interval the Δ columns show.
func (m *model) anyPaired() bool {
	for _, c := range m.in.Comparison.Cells {
		for _, d := range c.Decisions {
			if onRatio(d) {
				return true
			}
		}
	}
	return false
}

// designThreats are the threats to validity of the design: an overlap rule
// that left ties unresolved, a paired rule that still did, and the
// assumption the paired interval rests on.
func (m *model) designThreats() []string {
	var out []string
	n := m.unresolvedCells()
	switch {
	case n > 0 && m.rule() == gate.RuleOverlap:
		out = append(out, fmt.Sprintf("Under the overlap rule a noisy runner leaves ties unresolved (%s here): each side's "+
			"interval holds all of the runner's noise from round to round. The paired rule with slice interleaving "+
			"(`gate.rule: paired`, `load.interleave: slice`) compares the two sides back to back, so noise slower than a "+
			"slice reaches both alike, and resolves smaller changes on the same runner: docs/statistics.md has the measured figures.",
			plural(n, "gated cell", "gated cells")))
	case n > 0:
		out = append(out, fmt.Sprintf("Even under the paired rule %s could not rule out %s: `benchgate calibrate` on this "+
			"runner says what it can resolve and what that would take (docs/statistics.md).",
			plural(n, "gated cell", "gated cells"), m.unresolvedBand()))
	}
	if m.rule() == gate.RulePaired && m.sliced() {
		out = append(out, "The paired interval is the wider of two, the batches' (neighbouring slices, which share noise) "+
			"and the rounds' (which held its coverage from 3 rounds in simulation); noise that stays with one side "+
			"for the whole run, a process's own state, is in neither (load.restart; docs/statistics.md).")
	}
	return out
}

// deltaText is a Δ column: the change the decision was made on
// (gate.Decision.Delta), the figure its reason and a failure's line give.
// Decided on a paired ratio it is the ratio's change with its interval
// ("+28.2% [+1.4%, +62.1%]": a ratio's interval is symmetric on the log
// scale, so lopsided as a change, and a ± of either side would misstate
// the other); decided by the overlap rule, the change of the means, even
// where the cell had pairs: their ratio is another estimate, and beside a
// verdict and a reason of the means it would be a second figure for one
// change (the JSON report keeps it). A dash when there is nothing to
// compare.
func deltaText(d gate.Decision) string {
	if onRatio(d) {
		p := d.Paired
		return numtext.PercentInterval(d.Delta, p.Lo-1, p.Hi-1)
	}
	if d.Baseline.N > 0 && d.Candidate.N > 0 && d.Baseline.Mean != 0 {
		return percent(d.Delta)
	}
	return dash
}

// onRatio says whether d was decided on its paired ratio: its Delta is
// then the ratio's change.
func onRatio(d gate.Decision) bool {
	return d.Rule == gate.RulePaired && d.Paired != nil && d.Paired.Ratio > 0
}
