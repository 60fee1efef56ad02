package gate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/benchgate/benchgate/internal/numtext"
)

// DefaultFalseFailure is the whole gate's error a scenario gets when its
// gate section sets none: at most 1% of gates that compare a build with
// itself fail.
const DefaultFalseFailure = 0.01

// Family is what the whole gate's error control did to a comparison's
// gated paired decisions (controlFamily); nil when it did not apply.
type Family struct {
	// Level is the most probability that the gate fails, over all its
	// gated decisions, when nothing changed (Settings.FalseFailure).
	Level float64 `json:"level"`
	// Decisions is how many gated paired decisions the family holds;
	// Exposed how many of them the tie band alone does not protect.
	Decisions int `json:"decisions"`
	Exposed   int `json:"exposed"`
	// BandRisk is the chance, summed over the protected decisions, that
	// one of them crosses the band with nothing changed: the part of Level
	// the band spends; the exposed share Level - BandRisk.
	BandRisk float64 `json:"band_risk"`
	// RoundsFactor is the ratio of the rounds' variance of the mean log
	// ratio to the batches', pooled over the family (at least 1), and DF
	// the degrees of freedom of the pooled standard errors.
	RoundsFactor float64 `json:"rounds_factor"`
	DF           float64 `json:"df"`
	// Withheld is how many regressions of their own intervals the control
	// did not let fail the gate (each now an unresolved tie, marked
	// Decision.Withheld).
	Withheld int `json:"withheld"`
}

// member is one gated paired decision of the family.
type member struct {
	cell, dec int
	z         float64 // mean log ratio over its standard error, > 0 towards a regression
	se, df    float64 // the standard error it is judged by
	risk      float64 // P(crossing the band) with nothing changed
	p         float64 // one-sided p-value towards a regression, over the look's share
}

// controlFamily keeps the chance that the gate fails when nothing changed
// within s.FalseFailure over all its gated decisions at once, not only
// each decision's own (docs/statistics.md#the-whole-gate). It applies to
// the paired rule's gated decisions that have a ratio, and changes only
// regressions: one the control does not confirm becomes an unresolved tie
// with the reason, marked Withheld. nil when it does not apply.
//
// Why: a decision fails the gate when its interval excludes no change and
// its ratio is beyond the band. While a decision's standard error is small
// against the band, the band alone makes a false regression very unlikely
// (the ratio would have to stray 4 standard errors); once the runner is
// noisy enough that it is not, each decision fails alone at up to half its
// interval's level, and a gate of 24 such decisions at 95% fails about a
// quarter of its A/A runs. So the decisions are split: those whose chance
// to cross the band by noise, summed, stays within half the level are
// protected by the band and keep their verdicts; the rest are exposed and
// a regression among them stands only if Holm's step-down over the exposed
// confirms it at the level the protected left (Holm holds whatever the
// dependence between decisions).
//
// The standard errors: a decision's own rounds' spread rests on rounds - 1
// degrees of freedom (4 at the defaults), whose t quantile at the small
// levels Holm asks for is far too wide (t₄ at 0.02% is 11); its batches'
// spread rests on many but misses what lasts a round. So the batches'
// standard error is scaled by the ratio of the rounds' variance to the
// batches', pooled over the family (the runner's noise shapes it, not the
// cell), which keeps the rounds' information with the batches' degrees of
// freedom. A decision whose own ratio is far above the pooled (an F test
// at 1%) is not pooled: it is judged by its own rounds.
//
// Adaptive designs: a decision made at an earlier look counts its p-value
// over that look's share of the level (its 1 - Confidence over the
// design's), as its own interval does.
func controlFamily(cells []CellResult, s Settings) *Family {
	if !(s.FalseFailure > 0 && s.FalseFailure < 1) || s.rule() != RulePaired || s.Validate() != nil {
		return nil
	}
	var ms []member
	var sumR, sumB, dfPool float64
	for ci, cell := range cells {
		for di, d := range cell.Decisions {
			if !slices.Contains(cell.Gated, d.Metric) || d.Rule != RulePaired || d.Paired == nil ||
				d.Verdict == Inconclusive || d.Floor != "" || d.Paired.Log.Batches < 2 || !(d.Paired.Log.SEBatches >= 0) {
				continue
			}
			l := d.Paired.Log
			ms = append(ms, member{cell: ci, dec: di})
			if l.Rounds >= 2 && l.Rounds < l.Batches {
				sumR += l.SERounds * l.SERounds
				sumB += l.SEBatches * l.SEBatches
				dfPool += float64(l.Rounds - 1)
			}
		}
	}
	if len(ms) == 0 {
		return nil
	}
	f := &Family{Level: s.FalseFailure, Decisions: len(ms), RoundsFactor: 1}
	if sumB > 0 {
		f.RoundsFactor = max(sumR/sumB, 1)
	}
	for i := range ms {
		m := &ms[i]
		d := cells[m.cell].Decisions[m.dec]
		l := d.Paired.Log
		dfB := float64(l.Batches - 1)
		m.se, m.df = l.SEBatches, dfB
		if l.Rounds >= 2 && l.Rounds < l.Batches {
			m.se, m.df = l.SEBatches*math.Sqrt(f.RoundsFactor), 1/(1/dfB+1/dfPool)
			dfR := float64(l.Rounds - 1)
			if l.SEBatches > 0 && fTail(l.SERounds*l.SERounds/(l.SEBatches*l.SEBatches)/f.RoundsFactor, dfR, dfPool) < 0.01 {
				m.se, m.df = max(m.se, l.SERounds), dfR // not like the rest: its own rounds
			}
		}
		f.DF = max(f.DF, m.df)
		lr := math.Log(d.Paired.Ratio)
		band := math.Log1p(d.TieWithin)
		if s.HigherIsBetter(d.Metric) {
			lr, band = -lr, -math.Log1p(-min(d.TieWithin, 0.999999))
		}
		share := 1.0
		if d.Confidence > s.Confidence {
			share = (1 - d.Confidence) / (1 - s.Confidence)
		}
		m.z = lr / m.se
		m.risk = tUpper(band/(m.se*riskMargin), m.df)
		m.p = min(tUpper(m.z, m.df)/share, 1)
		if m.se == 0 {
			m.risk, m.p = 0, 1
			if lr > 0 {
				m.p = 0
			}
		}
	}
	// Protected: the least exposed first, while their risks sum within
	// half the level.
	slices.SortStableFunc(ms, func(a, b member) int { return cmp.Compare(a.risk, b.risk) })
	k := 0
	for k < len(ms) && f.BandRisk+ms[k].risk <= s.FalseFailure/2 {
		f.BandRisk += ms[k].risk
		k++
	}
	exposed := ms[k:]
	f.Exposed = len(exposed)
	if len(exposed) == 0 {
		return f
	}
	level := s.FalseFailure - f.BandRisk
	slices.SortStableFunc(exposed, func(a, b member) int { return cmp.Compare(a.p, b.p) })
	for j, m := range exposed {
		need := level / float64(len(exposed)-j)
		if m.p <= need {
			continue
		}
		// Holm stops at the first it cannot confirm: this one and every
		// later regression stand withheld.
		for _, m := range exposed[j:] {
			d := &cells[m.cell].Decisions[m.dec]
			if d.Verdict != Regression {
				continue
			}
			f.Withheld++
			d.Verdict, d.Unresolved, d.Withheld = Tie, true, true
			d.Reason = fmt.Sprintf("%s; not confirmed for the whole gate: p %s one-sided, Holm needs <= %s (%d of %d gated decisions exposed, whole gate's false failure <= %s%%)",
				d.Reason, numtext.PValue(m.p), numtext.PValue(level/float64(len(exposed)-j)), len(exposed), len(ms), percent(s.FalseFailure))
		}
		break
	}
	return f
}

// riskMargin is the factor on a decision's standard error its risk of
// crossing the band by noise is reckoned at. The protected are chosen as
// those that look least noisy, and a standard error on ~20 degrees of
// freedom that looks small is, among 24, often small by chance: at the
// standard error itself the protected leaked (simulated, 12 cells × 2
// metrics at ×1.5 the measured noise: 1.2–1.45% of A/A gates failed);
// at 1.2× none of the noise levels reaches 1% (docs/statistics.md).
const riskMargin = 1.2

// tUpper is P(T > t) of Student's t with df degrees of freedom, any t.
func tUpper(t, df float64) float64 {
	switch {
	case math.IsNaN(t):
		return 1
	case t >= 0:
		return tTail(t, df)
	}
	return 1 - tTail(-t, df)
}

// fTail is P(F > x) of Snedecor's F with (d1, d2) degrees of freedom.
func fTail(x, d1, d2 float64) float64 {
	if !(x > 0) {
		return 1
	}
	return regIncBeta(d2/2, d1/2, d2/(d2+d1*x), d1*x/(d2+d1*x))
}
