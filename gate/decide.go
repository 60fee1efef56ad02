package gate

import (
	"fmt"
	"math"
	"strconv"
)

// Validate reports settings the tie rule cannot use. Decide calls a metric
// decided under invalid settings inconclusive, with this error as its reason.
func (s Settings) Validate() error {
	if !(s.Confidence > 0 && s.Confidence < 1) {
		return fmt.Errorf("confidence %v is not between 0 and 1", s.Confidence)
	}
	if !(s.TieWithin >= 0) || math.IsInf(s.TieWithin, 1) {
		return fmt.Errorf("tie_within %v is not a finite fraction >= 0", s.TieWithin)
	}
	for m, t := range s.TieWithinFor {
		if !(t >= 0) || math.IsInf(t, 1) {
			return fmt.Errorf("tie_within of %s: %v is not a finite fraction >= 0", m, t)
		}
	}
	switch s.Rule {
	case "", RuleOverlap, RulePaired:
	default:
		return fmt.Errorf("rule %q is not %s or %s", s.Rule, RuleOverlap, RulePaired)
	}
	if s.Looks < 0 {
		return fmt.Errorf("looks %d is negative", s.Looks)
	}
	if s.Looks > 1 && s.MaxRounds < s.Looks {
		return fmt.Errorf("max rounds %d is fewer than the %d looks", s.MaxRounds, s.Looks)
	}
	if !(s.FalseFailure >= 0 && s.FalseFailure < 1) {
		return fmt.Errorf("false_failure %v is not a level in [0, 1)", s.FalseFailure)
	}
	if s.Batches < 0 {
		return fmt.Errorf("batches %d is negative", s.Batches)
	}
	return nil
}

// ConfidenceAt is the confidence every interval of a decision on `rounds`
// rounds is made at: Confidence for a fixed design; for an adaptive one,
// 1 minus the nominal level of the look after that many rounds under
// O'Brien–Fleming-type error spending (see spending.go). A decision on
// fewer rounds than the first look (a cancelled run) is at the first
// look's, on more than the last at the last's.
//
// An adaptive design decides a cell after round `repetitions` and after
// every round it adds, up to max_repetitions, and stops at the first look
// that settles it; the looks and their information fractions t_k = R_k /
// max_repetitions are fixed before any data. The boundaries are exact for
// the normal statistic: the chance that any look's interval excludes no
// change is α(1) = 1 − Confidence when there is none. A false verdict at
// the look a cell stopped at is such an exclusion, so the design's false
// verdicts stay within 1 − Confidence whatever the stopping rule
// (stopping on a settled tie only stops earlier). Three things the normal
// theory does not cover make the intervals wider than its boundaries ask,
// never narrower: the t quantile of the interval's own degrees of freedom
// in place of the normal one, the wider of the batches' and the rounds'
// intervals (PairedRatio), and the tie band, which a regression must also
// clear. TestAdaptiveControlsFalseFailures measures the result.
//
// Bonferroni over the looks (each at 1 − (1 − Confidence)/K), used before,
// holds without the normal theory but spends the error evenly: early looks,
// which decide little at 3 rounds' t quantiles, spent as much as the last,
// which is where the detections are.
func (s Settings) ConfidenceAt(rounds int) float64 {
	levels := s.lookLevels()
	if levels == nil {
		return s.Confidence
	}
	k := min(max(rounds-(s.MaxRounds-s.Looks+1), 0), s.Looks-1)
	return 1 - levels[k]
}

// LookConfidences are the confidences of the looks in order, after rounds
// MaxRounds - Looks + 1 … MaxRounds; one, Confidence, for a fixed design.
func (s Settings) LookConfidences() []float64 {
	levels := s.lookLevels()
	if levels == nil {
		return []float64{s.Confidence}
	}
	out := make([]float64, len(levels))
	for k, l := range levels {
		out[k] = 1 - l
	}
	return out
}

// Effective is the confidence of the last look, the least strict a
// decision is made at: Confidence for a fixed design.
func (s Settings) Effective() float64 { return s.ConfidenceAt(s.MaxRounds) }

// lookLevels are the looks' nominal levels; nil for a fixed design or
// settings Validate refuses.
func (s Settings) lookLevels() []float64 {
	if s.Looks <= 1 || s.MaxRounds < s.Looks || !(s.Confidence > 0 && s.Confidence < 1) {
		return nil
	}
	return lookLevels(1-s.Confidence, s.Looks, s.MaxRounds)
}

func (s Settings) batches() int {
	if s.Batches == 0 {
		return DefaultBatches
	}
	return s.Batches
}

// Decide applies the overlap rule to one metric of one cell (a tie when the
// two intervals overlap or the means are less than s.TieWithin apart; see
// docs/statistics.md), for callers that have no paired observations,
// whatever s.Rule says: it is DecidePaired without pairs under RuleOverlap.
// base and cand should be summarized at s.ConfidenceAt their rounds.
func Decide(m Metric, base, cand Summary, s Settings) Decision {
	s.Rule = RuleOverlap
	return DecidePaired(m, base, cand, nil, s)
}

// DecidePaired is the decision of one metric of one cell, the one every
// verdict comes from (Compare calls it for every metric). base and cand are
// the sides' summaries at s.ConfidenceAt(lookRounds(base, cand, pairs)) (the
// rounds a decision is at); pairs the metric's paired
// observations in time order, nil when there are none. When pairs are given
// the decision carries their ratio (Decision.Paired) whatever the rule.
//
// Under RuleOverlap, the default: inconclusive when either side has fewer
// than 2 repetitions; tie when the closed intervals overlap or the means are
// less than s.TieWithin apart relative to the baseline; otherwise the better
// side wins. With a baseline mean of 0 no relative band exists and the
// intervals alone decide.
//
// Under RulePaired: decided as under RuleOverlap (and recorded so) when a
// side measured 0 in every pair, which has no ratio (a benchmark's
// allocs/op going from 0 to 1); inconclusive when the ratio cannot
// otherwise be made (see PairedRatio); tie when its interval contains 1 or the ratio is less than
// s.TieWithin from 1; otherwise the better side wins, and Delta is the
// ratio - 1.
//
// The error rate is always decided by the overlap rule and has no paired
// ratio: its zeros (no error in a slice or a round, the common case) make a
// ratio of error rates 0/0 or infinite, and a ratio of sums over the few
// slices that erred says nothing useful.
//
// Every decision also records its Resolution and RulesOut, and a tie whose
// RulesOut (the regression side) exceeds the band is Unresolved.
func DecidePaired(m Metric, base, cand Summary, pairs []Pair, s Settings) Decision {
	return decide(m, base, cand, pairs, s, nil)
}

// decide is DecidePaired at the confidence of q, which the cell's metrics
// share; nil takes the confidence of the decision's own rounds.
func decide(m Metric, base, cand Summary, pairs []Pair, s Settings, q *quantiles) Decision {
	rule := s.rule()
	if m == ErrorRate {
		rule, pairs = RuleOverlap, nil
	}
	if q == nil {
		q = newQuantiles(s.ConfidenceAt(lookRounds(base, cand, pairs)))
	}
	d := Decision{Metric: m, Baseline: base, Candidate: cand, Rule: rule,
		Confidence: q.confidence, TieWithin: s.TieWithin}
	if base.Mean != 0 {
		d.Delta = (cand.Mean - base.Mean) / base.Mean
	}
	decided := func(v Verdict, reason string) Decision {
		d.Verdict, d.Reason = v, reason
		if v == Tie && d.RulesOut > d.TieWithin {
			d.Unresolved = true
		}
		return d
	}

	if err := s.Validate(); err != nil {
		return decided(Inconclusive, err.Error())
	}
	var ratioErr error
	if len(pairs) > 0 || rule == RulePaired {
		r, err := pairedRatio(pairs, d.Confidence, s.batches(), q)
		if err == nil {
			d.Paired = &r
		}
		ratioErr = err
	}
	band := percent(s.TieWithin)

	if rule == RulePaired && ratioErr != nil && zeroSide(pairs) {
		// A side that measured 0 in every observation (a Go benchmark's
		// B/op and allocs/op when it allocates nothing) has no ratio,
		// however the other side changed: 0 → 1 allocation is the
		// commonest of regressions. The two sides' intervals decide it,
		// as under the overlap rule, whose baseline mean of 0 lets the
		// intervals alone decide.
		rule = RuleOverlap
		d.Rule = RuleOverlap
	}
	if rule == RulePaired {
		if ratioErr != nil {
			reason := ratioErr.Error()
			if len(pairs) == 0 && (base.N == 0) != (cand.N == 0) {
				reason = tooFew(base.N, cand.N) // says which side is missing
			}
			return decided(Inconclusive, reason)
		}
		r := *d.Paired
		d.Delta = r.Ratio - 1
		d.Resolution = math.Max(math.Abs(r.Lo-1), math.Abs(r.Hi-1))
		d.RulesOut = math.Max(r.Hi-1, 0)
		if s.HigherIsBetter(m) {
			d.RulesOut = math.Max(1-r.Lo, 0)
		}
		if r.Lo <= 1 && 1 <= r.Hi {
			return decided(Tie, "ratio interval contains 1")
		}
		rel := math.Abs(r.Ratio - 1)
		if rel < s.TieWithin {
			return decided(Tie, fmt.Sprintf("ratio %s%% from 1 (< %s%%)",
				percentAgainst(rel, band, true), band))
		}
		v, dir := Regression, "lower"
		if r.Ratio > 1 {
			dir = "higher"
		}
		if (r.Ratio > 1) == s.HigherIsBetter(m) {
			v = Improvement
		}
		return decided(v, fmt.Sprintf("candidate %s%% %s, ratio interval %s",
			percentAgainst(rel, band, false), dir, ratioInterval(r.Lo, r.Hi)))
	}

	if base.N < 2 || cand.N < 2 {
		return decided(Inconclusive, tooFew(base.N, cand.N))
	}
	for _, v := range []float64{base.Mean, base.HalfWidth, cand.Mean, cand.HalfWidth} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return decided(Inconclusive, "a sample is not a finite number")
		}
	}
	if base.Mean != 0 {
		mb := math.Abs(base.Mean)
		d.Resolution = (math.Abs(cand.Mean-base.Mean) + base.HalfWidth + cand.HalfWidth) / mb
		// The difference's interval is Δ ± w, relative to the baseline.
		w := (base.HalfWidth + cand.HalfWidth) / mb
		d.RulesOut = math.Max((cand.Mean-base.Mean)/mb+w, 0)
		if s.HigherIsBetter(m) {
			d.RulesOut = math.Max(w-(cand.Mean-base.Mean)/mb, 0)
		}
	}

	if base.Lo() <= cand.Hi() && cand.Lo() <= base.Hi() {
		return decided(Tie, "intervals overlap")
	}
	if base.Mean == 0 {
		return decided(winner(m, base, cand, s), fmt.Sprintf(
			"candidate %s, intervals apart (baseline mean 0: intervals alone decide)",
			direction(base, cand)))
	}
	rel := math.Abs(cand.Mean-base.Mean) / math.Abs(base.Mean)
	if rel < s.TieWithin {
		return decided(Tie, fmt.Sprintf("means %s%% apart (< %s%%)",
			percentAgainst(rel, band, true), band))
	}
	return decided(winner(m, base, cand, s), fmt.Sprintf("candidate %s%% %s, intervals apart",
		percentAgainst(rel, band, false), direction(base, cand)))
}

// lookRounds is the number of rounds a decision is made on: those both
// sides measured, or that the pairs span.
func lookRounds(base, cand Summary, pairs []Pair) int {
	return max(min(base.N, cand.N), len(groupRounds(pairs)))
}

// Open reports whether more data could still change or settle the
// decision: it is inconclusive, a tie that is Unresolved (its interval
// reaches beyond the band on the regression side, or it is a regression
// the whole gate's control withheld; a tie that rules out any regression
// beyond the band is settled for the gate, though it could still become
// an improvement: more rounds would not change the gate), or a regression or
// improvement whose interval still reaches inside the band. Under the
// paired rule that is a ratio interval whose end nearer 1 is less than the
// band from 1; under overlap, intervals whose nearest ends are less than
// the band (relative to the baseline's mean) apart. A resolved tie, and a
// regression or improvement wholly beyond the band, are settled.
func (d Decision) Open() bool {
	switch d.Verdict {
	case Tie:
		// Below its measurement floor more rounds measure no better.
		return d.Unresolved && d.Floor == ""
	case Regression, Improvement:
	default:
		return true
	}
	if d.Rule == RulePaired {
		if d.Paired == nil {
			return true
		}
		near := d.Paired.Lo - 1 // the interval lies above 1
		if d.Paired.Hi < 1 {
			near = 1 - d.Paired.Hi
		}
		return near < d.TieWithin
	}
	b, c := d.Baseline, d.Candidate
	if b.Mean == 0 {
		return false // no band: the intervals apart decide alone
	}
	gap := c.Lo() - b.Hi()
	if c.Mean < b.Mean {
		gap = b.Lo() - c.Hi()
	}
	return gap/math.Abs(b.Mean) < d.TieWithin
}

// zeroSide says whether one side of pairs measured 0 in every one of them.
func zeroSide(pairs []Pair) bool {
	if len(pairs) == 0 {
		return false
	}
	base, cand := true, true
	for _, p := range pairs {
		base, cand = base && p.Base == 0, cand && p.Cand == 0
	}
	return base || cand
}

func winner(m Metric, base, cand Summary, s Settings) Verdict {
	if (cand.Mean > base.Mean) == s.HigherIsBetter(m) {
		return Improvement
	}
	return Regression
}

func direction(base, cand Summary) string {
	if cand.Mean > base.Mean {
		return "higher"
	}
	return "lower"
}

func tooFew(nb, nc int) string {
	switch {
	case nb == 0 && nc > 0:
		return fmt.Sprintf("measured by the candidate only (%d repetitions, none of the baseline)", nc)
	case nc == 0 && nb > 0:
		return fmt.Sprintf("measured by the baseline only (%d repetitions, none of the candidate)", nb)
	case nb == nc:
		return fmt.Sprintf("need >= 2 repetitions, have %d", nb)
	}
	return fmt.Sprintf("need >= 2 repetitions, have %d (baseline) and %d (candidate)", nb, nc)
}

// percent formats a fraction as a percentage without trailing zeros:
// 0.1 → "10", 0.075 → "7.5".
func percent(f float64) string {
	return strconv.FormatFloat(f*100, 'g', 4, 64)
}

// percentAgainst formats the fraction rel as a percentage with one decimal,
// or more when one decimal would contradict the verdict beside the band
// ("means 10.0% apart (< 10%)" for a rel of 0.09996).
func percentAgainst(rel float64, band string, below bool) string {
	return percentFrom(1, rel, band, below)
}

// percentFrom is percentAgainst starting at minPrec decimals.
func percentFrom(minPrec int, rel float64, band string, below bool) string {
	limit, _ := strconv.ParseFloat(band, 64)
	var s string
	for prec := minPrec; prec <= 6; prec++ {
		s = strconv.FormatFloat(rel*100, 'f', prec, 64)
		v, _ := strconv.ParseFloat(s, 64)
		if (v < limit) == below {
			break
		}
	}
	return s
}

// ratioInterval formats an interval that excludes 1 with two decimals, or
// more when two would make its ends equal or let it seem to touch 1
// ("1.00–1.01" for [1.004, 1.012]).
func ratioInterval(lo, hi float64) string {
	var a, b string
	for prec := 2; prec <= 6; prec++ {
		a, b = strconv.FormatFloat(lo, 'f', prec, 64), strconv.FormatFloat(hi, 'f', prec, 64)
		pa, _ := strconv.ParseFloat(a, 64)
		pb, _ := strconv.ParseFloat(b, 64)
		if a != b && (pa > 1 || pb < 1) {
			break
		}
	}
	return a + "–" + b
}
