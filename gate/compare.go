package gate

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Matches reports whether the rule applies to the cell: its class, variant
// and concurrency (as a decimal string) each match one of the rule's globs
// (path.Match syntax). An empty list matches every value. A malformed glob
// matches everything, so a typo can widen a rule but never silence it;
// Policy.Validate reports such globs.
func (r Rule) Matches(k CellKey) bool {
	return matchAny(r.Classes, k.Class) &&
		matchAny(r.Variants, k.Variant) &&
		matchAny(r.Concurrency, strconv.Itoa(k.Concurrency))
}

func matchAny(globs []string, v string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, err := path.Match(g, v); ok || err != nil {
			return true
		}
	}
	return false
}

// Validate reports malformed globs, rules without a metric and an unknown
// unresolved-tie policy.
func (p Policy) Validate() error {
	switch p.Unresolved {
	case "", UnresolvedWarn, UnresolvedFail, UnresolvedPass:
	default:
		return fmt.Errorf("unresolved %q is not %s, %s or %s", p.Unresolved, UnresolvedWarn, UnresolvedFail, UnresolvedPass)
	}
	for i, r := range p.FailOn {
		if r.Metric == "" {
			return fmt.Errorf("fail_on[%d]: no metric", i)
		}
		for _, list := range [][]string{r.Classes, r.Concurrency, r.Variants} {
			for _, g := range list {
				if _, err := path.Match(g, ""); err != nil {
					return fmt.Errorf("fail_on[%d]: glob %q: %w", i, g, err)
				}
			}
		}
	}
	return nil
}

// Compare decides every cell and the gate. Cells keep their input order.
// Each metric measured on either side is decided; one measured on one side
// only is inconclusive, so a cancelled run's cell can never pass by silence.
// The outcome is Fail on any regression of a gated metric or any candidate
// error rate above p.MaxErrorRate or more than p.MaxErrorIncrease above
// the baseline's (such a cell's headline is a regression); otherwise
// OutcomeUndecided when a gated metric is inconclusive or there is no cell
// at all; otherwise Pass. Every metric is decided by DecidePaired on the
// sides' summaries and the cell's pairs of that metric, at the confidence
// of the cell's look (s.ConfidenceAt the most rounds a metric of it has).
//
// A gated tie that could not resolve its band is listed in c.Unresolved
// (and its cell's Unresolved) under every policy; under UnresolvedFail it is
// also a failure of kind FailUnresolved, which makes a passing outcome
// inconclusive. Settings are not validated here: under invalid settings
// every metric is inconclusive (see DecidePaired).
func Compare(in []CellInput, s Settings, p Policy) Comparison {
	c := Comparison{
		Settings:   s,
		Policy:     p,
		Cells:      make([]CellResult, 0, len(in)),
		Failures:   []Failure{},
		Unresolved: []Failure{},
		Outcome:    Pass,
	}
	for _, ci := range in {
		c.Cells = append(c.Cells, decideCell(ci, s, p))
	}
	c.Family = controlFamily(c.Cells, s)
	for i, ci := range in {
		cell := judgeCell(c.Cells[i], ci, p)
		c.Cells[i] = cell
		c.Failures = append(c.Failures, cell.Failures...)
		for _, m := range cell.Unresolved {
			d, _ := cell.Decision(m)
			c.Unresolved = append(c.Unresolved, unresolvedFailure(ci.Key, d))
		}
		if len(cell.Unresolved) > 0 {
			c.Counts.Unresolved++
		}
		switch cell.Verdict {
		case Regression:
			c.Counts.Regressions++
		case Improvement:
			c.Counts.Improvements++
		case Tie:
			c.Counts.Ties++
		case Inconclusive:
			c.Counts.Inconclusive++
		}
	}
	if p.RuleMustApply {
		for _, r := range p.FailOn {
			applied := false
			for _, cell := range c.Cells {
				applied = applied || slices.Contains(cell.Gated, r.Metric) && r.Matches(cell.Key)
			}
			if !applied && len(in) > 0 {
				c.Failures = append(c.Failures, Failure{Metric: r.Metric, Kind: FailInconclusive,
					Reason: fmt.Sprintf("the fail_on rule on %s gates no cell: no cell it matches measured it", r.Metric)})
			}
		}
	}
	if len(in) == 0 {
		// Nothing measured is nothing shown: never a pass by silence.
		c.Failures = append(c.Failures, Failure{Kind: FailInconclusive, Reason: "no cell was measured"})
	}
	for _, f := range c.Failures {
		switch {
		case f.Kind == FailRegression || f.Kind == FailErrorRate || f.Kind == FailAgreement || f.Kind == FailPreflight || f.Kind == FailNoAnswers:
			c.Outcome = Fail
		case (f.Kind == FailInconclusive || f.Kind == FailUnresolved || f.Kind == FailUnmeasured) && c.Outcome == Pass:
			c.Outcome = OutcomeUndecided
		}
	}
	return c
}

// Failure kinds.
const (
	FailRegression   = "regression"
	FailErrorRate    = "error_rate"
	FailInconclusive = "inconclusive"
	// A gated tie that could not resolve its band, under
	// Policy.Unresolved fail.
	FailUnresolved = "unresolved"
	// The correctness checks run before any load: a class whose answers
	// disagree under mode required, a pre-flight command the candidate
	// fails and the baseline passes.
	FailAgreement = "agreement"
	FailPreflight = "preflight"
	// The candidate answered no request in a cell the baseline answered
	// in (Policy.RequireAnswers): a failure.
	FailNoAnswers = "no_answers"
	// The baseline answered no request in a cell (Policy.RequireAnswers):
	// nothing was measured to compare with, so the cell is inconclusive,
	// never a regression.
	FailUnmeasured = "unmeasured"
)

// WithCorrectnessFailures adds the correctness checks' failures to a
// decided comparison: each fails the gate, whatever the cells say.
func WithCorrectnessFailures(c Comparison, fs []Failure) Comparison {
	if len(fs) == 0 {
		return c
	}
	c.Failures = append(slices.Clone(fs), c.Failures...)
	c.Outcome = Fail
	return c
}

// decideCell decides every measured metric of a cell and lists the gated
// ones; judgeCell does the rest.
func decideCell(ci CellInput, s Settings, p Policy) CellResult {
	cell := CellResult{
		Key:       ci.Key,
		Decisions: []Decision{},
		Baseline:  totals(ci.Baseline),
		Candidate: totals(ci.Candidate),
		Gated:     []Metric{},
	}
	// The cell is at the look of its rounds: every metric's intervals at
	// that look's confidence.
	rounds := 0
	for _, m := range measured(ci) {
		rounds = max(rounds, lookRounds(Summary{N: len(ci.Baseline.Samples[m])},
			Summary{N: len(ci.Candidate.Samples[m])}, ci.Pairs[m]))
	}
	conf := s.ConfidenceAt(rounds)
	q := newQuantiles(conf)
	for _, m := range measured(ci) {
		// DecidePaired, sharing the cell's t quantiles.
		cell.Decisions = append(cell.Decisions, decide(m,
			summarize(ci.Baseline.Samples[m], conf, q),
			summarize(ci.Candidate.Samples[m], conf, q), ci.Pairs[m], s.For(m), q))
	}
	for i, d := range cell.Decisions {
		// Below its measurement floor: no verdict its interval gives can
		// be trusted, so none is gated. That holds for a paired ratio
		// made impossible by the floor itself (a side that counted no
		// tick in a round has no ratio there): only a metric short of
		// samples stays inconclusive.
		if why := ci.Floors[d.Metric]; why != "" && (d.Verdict != Inconclusive || d.Baseline.N >= 2 && d.Candidate.N >= 2) {
			d.Verdict, d.Unresolved, d.Floor = Tie, true, why
			d.Reason = "below its measurement floor: " + why
			cell.Decisions[i] = d
		}
	}
	for _, r := range p.FailOn {
		if p.OnlyMeasured {
			// Applies where both sides measured the metric: a benchmark
			// added or removed by the change is shown, not failed.
			d, ok := cell.Decision(r.Metric)
			if !ok || d.Baseline.N == 0 || d.Candidate.N == 0 {
				continue
			}
		}
		if r.Matches(ci.Key) && !slices.Contains(cell.Gated, r.Metric) {
			cell.Gated = append(cell.Gated, r.Metric)
		}
	}
	slices.SortStableFunc(cell.Gated, func(a, b Metric) int {
		return metricRank(a) - metricRank(b)
	})
	return cell
}

// judgeCell gives a decided cell its verdict and failures from its gated
// decisions, its error rates and its answers.
func judgeCell(cell CellResult, ci CellInput, p Policy) CellResult {
	var regressed, undecided, improved bool
	for _, m := range cell.Gated {
		d, ok := cell.Decision(m)
		if !ok {
			d = Decision{Metric: m, Verdict: Inconclusive, Reason: "not measured"}
		}
		switch d.Verdict {
		case Regression:
			regressed = true
			cell.Failures = append(cell.Failures, Failure{Key: ci.Key, Metric: m, Kind: FailRegression, Reason: d.Reason})
		case Inconclusive:
			undecided = true
			cell.Failures = append(cell.Failures, Failure{Key: ci.Key, Metric: m, Kind: FailInconclusive, Reason: d.Reason})
		case Improvement:
			improved = true
		case Tie:
			if d.Unresolved {
				cell.Unresolved = append(cell.Unresolved, m)
				if p.Unresolved == UnresolvedFail {
					cell.Failures = append(cell.Failures, unresolvedFailure(ci.Key, d))
				}
			}
		}
	}
	switch {
	case len(cell.Gated) == 0:
		cell.Verdict = Inconclusive
		if d, ok := cell.Decision(RPS); ok {
			cell.Verdict = d.Verdict
		}
	case regressed:
		cell.Verdict = Regression
	case undecided:
		cell.Verdict = Inconclusive
	case improved:
		cell.Verdict = Improvement
	default:
		cell.Verdict = Tie
	}

	errs := func() string {
		return fmt.Sprintf("candidate error rate %s (%d of %d), baseline %s (%d of %d)",
			ratePercent(cell.Candidate.ErrorRate), cell.Candidate.Errors, cell.Candidate.Requests,
			ratePercent(cell.Baseline.ErrorRate), cell.Baseline.Errors, cell.Baseline.Requests)
	}
	var errFail string
	switch {
	case p.MaxErrorRate >= 0 && cell.Candidate.ErrorRate > p.MaxErrorRate:
		errFail = errs() + ", limit " + ratePercent(p.MaxErrorRate)
	case p.MaxErrorIncrease != nil && cell.Candidate.ErrorRate-cell.Baseline.ErrorRate > *p.MaxErrorIncrease:
		errFail = errs() + ", more than " + ratePercent(*p.MaxErrorIncrease) + " above the baseline"
	}
	if errFail != "" {
		// Errors are a regression of the cell whatever its speed: a
		// candidate that fails requests fast must not read as faster.
		cell.Verdict = Regression
		cell.Failures = append(cell.Failures, Failure{Key: ci.Key, Metric: ErrorRate, Kind: FailErrorRate, Reason: errFail})
	}
	if p.RequireAnswers {
		var silent []string
		for _, sd := range []struct {
			name string
			side Side
		}{{"baseline", ci.Baseline}, {"candidate", ci.Candidate}} {
			if sd.side.Rungs > 0 && sd.side.Answered == 0 {
				silent = append(silent, noAnswers(sd.name, sd.side))
			}
		}
		switch {
		case len(silent) == 0:
		case ci.Baseline.Answered > 0:
			// The candidate stopped answering what the baseline answers:
			// the worst regression there is.
			cell.Verdict = Regression
			cell.Failures = append(cell.Failures, Failure{Key: ci.Key, Metric: RPS, Kind: FailNoAnswers, Reason: strings.Join(silent, "; ")})
		default:
			// Nothing answered on the baseline is nothing measured: its
			// zeros would read as a tie, as a pass with fail_on empty, or
			// as a regression of every metric. The cell is unmeasured,
			// with the reason, and nothing else of it is decided.
			// Its error rate included: with no baseline to go by (both
			// sides timing out is the usual case), the candidate's
			// failures say nothing of the change either.
			why := "unmeasured: " + strings.Join(silent, "; ")
			for i := range cell.Decisions {
				cell.Decisions[i].Verdict, cell.Decisions[i].Reason = Inconclusive, why
				cell.Decisions[i].Unresolved = false
			}
			cell.Unresolved = nil
			cell.Verdict = Inconclusive
			cell.Failures = []Failure{{Key: ci.Key, Metric: RPS, Kind: FailUnmeasured, Reason: strings.Join(silent, "; ")}}
		}
	}
	return cell
}

// noAnswers says that a side answered no request in a cell.
func noAnswers(name string, sd Side) string {
	unit := "rungs"
	if sd.Rungs == 1 {
		unit = "rung"
	}
	why := fmt.Sprintf("the %s answered no request in %d %s", name, sd.Rungs, unit)
	var parts []string
	if sd.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", sd.Requests))
	}
	if sd.InFlight > 0 {
		parts = append(parts, fmt.Sprintf("%d still in flight when the windows closed", sd.InFlight))
	}
	if len(parts) > 0 {
		why += " (" + strings.Join(parts, ", ") + ")"
	}
	return why
}

// unresolvedFailure says what regression an unresolved tie cannot rule out.
func unresolvedFailure(k CellKey, d Decision) Failure {
	what := "intervals"
	if d.Rule == RulePaired {
		what = "interval"
	}
	band := percent(d.TieWithin)
	return Failure{Key: k, Metric: d.Metric, Kind: FailUnresolved, Reason: fmt.Sprintf(
		"tie, but the %s cannot rule out a regression of up to %s%% (band %s%%)",
		what, strings.TrimSuffix(ResolutionPercent(d.RulesOut), "%"), band)}
}

// ResolutionPercent prints a resolution as a percentage rounded up, to one
// decimal below 10% and to a whole percent above ("31%"), so it is never
// understated: reasons and reports print it alike.
func ResolutionPercent(f float64) string {
	p := 100 * f
	if p < 10 {
		return strconv.FormatFloat(math.Ceil(p*10-1e-9)/10, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(math.Ceil(p-1e-9), 'f', 0, 64) + "%"
}

// Open reports whether a cell's gated verdict is still open: one of its
// gated metrics is inconclusive (or not measured), an unresolved tie, or a
// regression or improvement whose interval still reaches inside the band
// (Decision.Open). A cell no rule gates is never open, and an error-rate
// failure neither opens nor settles a cell. An adaptive design measures
// open cells again.
func Open(c CellResult) bool {
	if slices.ContainsFunc(c.Failures, func(f Failure) bool { return f.Kind == FailUnmeasured }) {
		// More rounds of a baseline that answers nothing measure
		// nothing more.
		return false
	}
	for _, m := range c.Gated {
		if d, ok := c.Decision(m); !ok || d.Open() {
			return true
		}
	}
	return false
}

// OpenCells lists the keys of the open cells, in the comparison's order.
func (c Comparison) OpenCells() []CellKey {
	var keys []CellKey
	for _, cell := range c.Cells {
		if Open(cell) {
			keys = append(keys, cell.Key)
		}
	}
	return keys
}

func totals(sd Side) SideTotals {
	t := SideTotals{Requests: sd.Requests, Errors: sd.Errors}
	if sd.Requests > 0 {
		t.ErrorRate = float64(sd.Errors) / float64(sd.Requests)
	}
	return t
}

// measured lists the metrics with samples on either side: those of
// AllMetrics in its order, then any others by name, so a metric the gate
// does not know yet is still decided rather than dropped.
func measured(ci CellInput) []Metric {
	has := func(m Metric) bool {
		return len(ci.Baseline.Samples[m]) > 0 || len(ci.Candidate.Samples[m]) > 0
	}
	var ms []Metric
	for _, m := range slices.Concat(AllMetrics, GoUnits) {
		if has(m) {
			ms = append(ms, m)
		}
	}
	var extra []Metric
	for _, samples := range []map[Metric][]float64{ci.Baseline.Samples, ci.Candidate.Samples} {
		for m := range samples {
			if has(m) && !slices.Contains(AllMetrics, m) && !slices.Contains(GoUnits, m) && !slices.Contains(extra, m) {
				extra = append(extra, m)
			}
		}
	}
	slices.Sort(extra)
	return append(ms, extra...)
}

// metricRank orders metrics as AllMetrics then GoUnits do, unknown ones
// last.
func metricRank(m Metric) int {
	if i := slices.Index(slices.Concat(AllMetrics, GoUnits), m); i >= 0 {
		return i
	}
	return len(AllMetrics) + len(GoUnits)
}

// ratePercent formats an error rate so that small rates stay visible:
// 0.00002 → "0.002%", 0.05 → "5%".
func ratePercent(r float64) string {
	return strconv.FormatFloat(r*100, 'g', 3, 64) + "%"
}
