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
	return nil
}

// Decide applies the pre-registered rule of DESIGN.md to one metric of one
// cell. Inconclusive when either side has fewer than 2 repetitions; tie when
// the closed intervals overlap or the means are less than s.TieWithin apart
// relative to the baseline; otherwise the better side wins. With a baseline
// mean of 0 no relative band exists and the intervals alone decide.
func Decide(m Metric, base, cand Summary, s Settings) Decision {
	d := Decision{Metric: m, Baseline: base, Candidate: cand}
	if base.Mean != 0 {
		d.Delta = (cand.Mean - base.Mean) / base.Mean
	}
	decided := func(v Verdict, reason string) Decision {
		d.Verdict, d.Reason = v, reason
		return d
	}

	if err := s.Validate(); err != nil {
		return decided(Inconclusive, err.Error())
	}
	if base.N < 2 || cand.N < 2 {
		return decided(Inconclusive, tooFew(base.N, cand.N))
	}
	for _, v := range []float64{base.Mean, base.HalfWidth, cand.Mean, cand.HalfWidth} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return decided(Inconclusive, "a sample is not a finite number")
		}
	}

	if base.Lo() <= cand.Hi() && cand.Lo() <= base.Hi() {
		return decided(Tie, "intervals overlap")
	}
	band := percent(s.TieWithin)
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
	limit, _ := strconv.ParseFloat(band, 64)
	var s string
	for prec := 1; prec <= 6; prec++ {
		s = strconv.FormatFloat(rel*100, 'f', prec, 64)
		v, _ := strconv.ParseFloat(s, 64)
		if (v < limit) == below {
			break
		}
	}
	return s
}
