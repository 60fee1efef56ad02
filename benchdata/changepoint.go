package benchdata

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/benchgate/benchgate/gate"
)

// ChangePointOptions are the knobs of change-point detection. The zero
// value of a field means its default.
type ChangePointOptions struct {
	// MaxPValue: a change point stands only when a two-sample Student t
	// test between the segments around it gives a p-value below this.
	// Default 0.001.
	MaxPValue float64 `json:"max_pvalue"`
	// MinMagnitude: and only when the means of those segments differ by
	// at least this fraction of the mean before it. Default 0.05 (a
	// tiny value such as 1e-9 keeps every significant change).
	MinMagnitude float64 `json:"min_magnitude"`
	// MinWindow is the fewest points a segment may have, on each side of
	// a change point. Default 3; at least 2.
	MinWindow int `json:"min_window"`
}

// Defaults of ChangePointOptions.
const (
	DefaultMaxPValue    = 0.001
	DefaultMinMagnitude = 0.05
	DefaultMinWindow    = 3
)

// Check refuses options out of range, each named as the CLI's flag is.
// Unlike detection, it takes a zero for what was asked, not for the
// default: a flag's zero was typed.
func (o ChangePointOptions) Check() error {
	switch {
	case !(o.MaxPValue > 0 && o.MaxPValue <= 1):
		return errors.New("-max-pvalue: want a p-value in (0, 1]")
	case !(o.MinMagnitude > 0):
		return errors.New("-min-magnitude: want a fraction above 0 (a tiny value such as 1e-9 keeps every change)")
	case o.MinWindow < 2:
		return errors.New("-min-window: want at least 2 points")
	}
	return nil
}

// WithDefaults returns o with every unset field at its default.
func (o ChangePointOptions) WithDefaults() ChangePointOptions {
	if !(o.MaxPValue > 0) {
		o.MaxPValue = DefaultMaxPValue
	}
	if o.MaxPValue > 1 {
		o.MaxPValue = 1
	}
	if !(o.MinMagnitude > 0) {
		o.MinMagnitude = DefaultMinMagnitude
	}
	if o.MinWindow == 0 {
		o.MinWindow = DefaultMinWindow
	}
	o.MinWindow = max(o.MinWindow, 2)
	return o
}

// ChangePoint is a step in a series.
type ChangePoint struct {
	// Index is the first point after the change.
	Index int `json:"index"`
	// Before and After are the means of the segments around it: from the
	// previous change point (or the start) to this one, and from this one
	// to the next (or the end).
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// Change is (After - Before) / |Before|; from a mean of 0, ±1.
	Change float64 `json:"change"`
	// PValue is the two-sided p-value of the Student t test between the
	// two segments.
	PValue float64 `json:"pvalue"`
}

// ChangePoints finds the steps in a series, as Hunter (DataStax, now
// Apache Otava) does with E-divisive means:
//
//  1. Split: in a segment, the candidate split is the one that maximises
//     the E-divisive statistic of Matteson & James (2014) with α = 1,
//     q(τ) = m·k/(m+k) · (2/(m·k)·Σ|xᵢ−yⱼ| − Σ|xᵢ−xᵢ'|/C(m,2) − Σ|yⱼ−yⱼ'|/C(k,2))
//     over the m points left of τ and the k points from τ on, both at
//     least MinWindow. Instead of the paper's permutation test, the split
//     is tested with a two-sample Student t test between its two sides;
//     it is kept when p < 10·MaxPValue (a weak threshold, as Hunter's), and
//     both sides are split again in turn.
//  2. Merge: each kept point is tested again against its neighbours, by a
//     t test between the segments that end at the change points either
//     side of it. While one fails, the weakest is dropped (the highest
//     p-value when one is not below MaxPValue, else the smallest relative
//     change when one is below MinMagnitude) and its neighbours are
//     tested again over the merged segment.
//
// It is deterministic and needs no random permutations. A series shorter
// than 2·MinWindow has no change point; non-finite values are not
// allowed (the result is then unspecified).
func ChangePoints(values []float64, opt ChangePointOptions) []ChangePoint {
	opt = opt.WithDefaults()
	n := len(values)
	if n < 2*opt.MinWindow {
		return nil
	}
	weak := min(1, 10*opt.MaxPValue)
	var splits []int
	var split func(lo, hi int)
	split = func(lo, hi int) {
		tau, ok := bestSplit(values[lo:hi], opt.MinWindow)
		if !ok {
			return
		}
		tau += lo
		if studentT(values[lo:tau], values[tau:hi]) >= weak {
			return
		}
		splits = append(splits, tau)
		split(lo, tau)
		split(tau, hi)
	}
	split(0, n)
	slices.Sort(splits)

	for {
		cps := segmentStats(values, splits)
		if len(cps) == 0 {
			return nil
		}
		weakest := -1
		for i, c := range cps { // the highest p-value at or above the threshold
			if c.PValue >= opt.MaxPValue && (weakest < 0 || c.PValue > cps[weakest].PValue) {
				weakest = i
			}
		}
		if weakest < 0 {
			for i, c := range cps { // else the smallest change under the minimum
				if math.Abs(c.Change) < opt.MinMagnitude && (weakest < 0 || math.Abs(c.Change) < math.Abs(cps[weakest].Change)) {
					weakest = i
				}
			}
		}
		if weakest < 0 {
			return cps
		}
		splits = slices.Delete(splits, weakest, weakest+1)
	}
}

// segmentStats describes each split of values (sorted indexes) against
// the segments between its neighbours.
func segmentStats(values []float64, splits []int) []ChangePoint {
	cps := make([]ChangePoint, len(splits))
	for i, tau := range splits {
		lo, hi := 0, len(values)
		if i > 0 {
			lo = splits[i-1]
		}
		if i+1 < len(splits) {
			hi = splits[i+1]
		}
		left, right := values[lo:tau], values[tau:hi]
		before, after := mean(left), mean(right)
		cps[i] = ChangePoint{Index: tau, Before: before, After: after,
			Change: relChange(before, after), PValue: studentT(left, right)}
	}
	return cps
}

// relChange is (after - before) / |before|, and ±1 from 0.
func relChange(before, after float64) float64 {
	switch {
	case before != 0:
		return (after - before) / math.Abs(before)
	case after > 0:
		return 1
	case after < 0:
		return -1
	}
	return 0
}

// bestSplit returns the τ in [w, len(z)-w] that maximises the E-divisive
// statistic q(τ) of z[:τ] against z[τ:] (α = 1); false when z is shorter
// than 2w. Ties go to the first. It takes O(n²) time: the three sums of
// distances are updated as τ moves.
func bestSplit(z []float64, w int) (int, bool) {
	n := len(z)
	if n < 2*w {
		return 0, false
	}
	// within[τ] sums |zᵢ−zⱼ| over pairs i < j < τ; rowAfter[i] sums
	// |zᵢ−zⱼ| over j > i; total over all pairs.
	var total float64
	rowAfter := make([]float64, n)
	rowBefore := make([]float64, n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			d := math.Abs(z[i] - z[j])
			rowAfter[i] += d
			rowBefore[j] += d
			total += d
		}
	}
	var left, right float64 = 0, total // pairs within z[:τ] and within z[τ:]
	best, bestQ := -1, math.Inf(-1)
	for tau := 1; tau < n; tau++ {
		// Move point τ-1 from the right side to the left.
		left += rowBefore[tau-1]
		right -= rowAfter[tau-1]
		m, k := tau, n-tau
		if m < w || k < w {
			continue
		}
		fm, fk := float64(m), float64(k)
		cross := total - left - right
		e := 2*cross/(fm*fk) - left/(fm*(fm-1)/2) - right/(fk*(fk-1)/2)
		q := fm * fk / (fm + fk) * e
		if q > bestQ {
			best, bestQ = tau, q
		}
	}
	return best, best > 0
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// studentT is the two-sided p-value of the two-sample Student t test
// (pooled variance) of a against b. Two constant samples give 1 when
// their means are equal and 0 when they differ.
func studentT(a, b []float64) float64 {
	m, k := float64(len(a)), float64(len(b))
	if m < 1 || k < 1 || m+k < 3 {
		return 1
	}
	ma, mb := mean(a), mean(b)
	var ss float64
	for _, x := range a {
		ss += (x - ma) * (x - ma)
	}
	for _, x := range b {
		ss += (x - mb) * (x - mb)
	}
	df := m + k - 2
	se := math.Sqrt(ss / df * (1/m + 1/k))
	diff := math.Abs(ma - mb)
	switch {
	case diff == 0:
		return 1
	case se == 0 || diff/se > 1e150:
		return 0
	}
	return gate.TTwoSided(diff/se, df)
}

// SeriesKey names one series of the history: one metric of one target in
// one cell of one scenario and profile, on one machine.
type SeriesKey struct {
	Fingerprint string `json:"fingerprint"`
	Scenario    string `json:"scenario"`
	Profile     string `json:"profile,omitempty"`
	Cell        Cell   `json:"cell"`
	Target      string `json:"target"`
	Metric      string `json:"metric"`
}

// SeriesPoint is one run's value in a series.
type SeriesPoint struct {
	Date            time.Time `json:"date"`
	RunID           string    `json:"run_id,omitempty"`
	BaselineCommit  string    `json:"baseline_commit,omitempty"`
	CandidateCommit string    `json:"candidate_commit,omitempty"`
	Mean            float64   `json:"mean"`
	HalfWidth       float64   `json:"half_width"`
	N               int       `json:"n"`
}

// Series is one series of the history, its points in date order.
type Series struct {
	Key    SeriesKey     `json:"key"`
	Points []SeriesPoint `json:"points"`
	// HigherIsBetter is the metric's direction as the newest record of
	// the series has it (Record.HigherIsBetter).
	HigherIsBetter bool `json:"higher_is_better"`
}

// Means are the series' values, as ChangePoints takes them.
func (s Series) Means() []float64 {
	v := make([]float64, len(s.Points))
	for i, p := range s.Points {
		v[i] = p.Mean
	}
	return v
}

// HistorySeries cuts records into series: by fingerprint, scenario,
// profile, cell, target and metric. Points are in date order (records of
// the same date in the order given); series are sorted by their key.
func HistorySeries(records []Record) []Series {
	recs := slices.Clone(records)
	slices.SortStableFunc(recs, func(a, b Record) int { return a.Date.Compare(b.Date) })
	idx := map[SeriesKey]int{}
	var out []Series
	for _, r := range recs {
		for _, c := range r.Cells {
			k := SeriesKey{Fingerprint: r.Fingerprint, Scenario: r.Scenario, Profile: r.Profile,
				Cell: c.Cell, Target: c.Target, Metric: c.Metric}
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, Series{Key: k})
			}
			out[i].HigherIsBetter = r.HigherIsBetter(c.Metric) // the newest record's, in date order
			out[i].Points = append(out[i].Points, SeriesPoint{
				Date: r.Date, RunID: r.RunID, BaselineCommit: r.BaselineCommit, CandidateCommit: r.CandidateCommit,
				Mean: c.Mean, HalfWidth: c.HalfWidth, N: c.N,
			})
		}
	}
	slices.SortStableFunc(out, func(a, b Series) int { return compareKeys(a.Key, b.Key) })
	return out
}

func compareKeys(a, b SeriesKey) int {
	return cmp.Or(
		strings.Compare(a.Fingerprint, b.Fingerprint),
		strings.Compare(a.Scenario, b.Scenario),
		strings.Compare(a.Profile, b.Profile),
		strings.Compare(a.Cell.Pins, b.Cell.Pins),
		strings.Compare(a.Cell.Variant, b.Cell.Variant),
		strings.Compare(a.Cell.Class, b.Cell.Class),
		cmp.Compare(a.Cell.Concurrency, b.Cell.Concurrency),
		cmp.Compare(a.Cell.Rate, b.Cell.Rate),
		strings.Compare(a.Target, b.Target),
		compareMetrics(a.Metric, b.Metric),
	)
}

// compareMetrics orders metrics as reports do: the gate's metrics, then
// Go's standard units, then the others by name.
func compareMetrics(a, b string) int {
	rank := func(m string) int {
		for i, x := range gate.AllMetrics {
			if string(x) == m {
				return i
			}
		}
		for i, x := range gate.GoUnits {
			if string(x) == m {
				return len(gate.AllMetrics) + i
			}
		}
		return len(gate.AllMetrics) + len(gate.GoUnits)
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
}

// DriftFinding is a change point in one series of the history, with the
// runs either side of it.
type DriftFinding struct {
	Fingerprint string      `json:"fingerprint"`
	Scenario    string      `json:"scenario"`
	Profile     string      `json:"profile,omitempty"`
	Cell        Cell        `json:"cell"`
	Target      string      `json:"target"`
	Metric      string      `json:"metric"`
	Change      ChangePoint `json:"change"`
	// FromCommit and ToCommit are the candidate commits of the last run
	// before the change and the first run after it: the change came in
	// FromCommit..ToCommit. FromDate and ToDate are those runs' dates.
	FromCommit string    `json:"from_commit"`
	ToCommit   string    `json:"to_commit"`
	FromDate   time.Time `json:"from_date"`
	ToDate     time.Time `json:"to_date"`
	// FromBaseline and ToBaseline are the baseline commits of the same two
	// runs. When they are equal, the baseline's code did not change: with
	// a pinned reference, a step in the baseline's own series is the
	// machine's or the environment's, not the code's.
	FromBaseline string `json:"from_baseline,omitempty"`
	ToBaseline   string `json:"to_baseline,omitempty"`
	// Worse says the change is for the worse by the metric's direction:
	// rps and rates ("/s") are better higher, everything else lower.
	Worse bool `json:"worse"`
}

// FingerprintGroup is what drift detection did with the records of one
// machine fingerprint.
type FingerprintGroup struct {
	Fingerprint string    `json:"fingerprint"`
	Machine     string    `json:"machine,omitempty"` // of its newest record
	Records     int       `json:"records"`
	First       time.Time `json:"first"`
	Last        time.Time `json:"last"`
	// Series counts the series that were tested; Short those with fewer
	// than 2·MinWindow points, which were not.
	Series int `json:"series"`
	Short  int `json:"short"`
	// Skipped says why no series of this fingerprint was tested; "" when
	// some were.
	Skipped string `json:"skipped,omitempty"`
}

// DriftResult is drift detection over a history.
type DriftResult struct {
	Options      ChangePointOptions `json:"options"` // defaults applied
	Findings     []DriftFinding     `json:"findings"`
	Fingerprints []FingerprintGroup `json:"fingerprints"` // by newest record first
}

// Worse counts the findings that are for the worse.
func (d DriftResult) Worse() int {
	n := 0
	for _, f := range d.Findings {
		if f.Worse {
			n++
		}
	}
	return n
}

// AnalyzeDrift groups the records by machine fingerprint (only records of
// the same fingerprint are ever compared: a new runner type or kernel
// starts new series rather than reading as a step), cuts each group into
// series by scenario, profile, cell, target and metric in date order
// (records of merged runs whose shards ran on different machines are
// skipped: see MixedPrefix),
// and runs ChangePoints over each series' means. Each change point is
// named by the commit range and dates of the runs either side of it. It
// also says, per fingerprint, how many series were tested and why a
// fingerprint was skipped (too few records).
func AnalyzeDrift(records []Record, opt ChangePointOptions) DriftResult {
	opt = opt.WithDefaults()
	res := DriftResult{Options: opt, Findings: []DriftFinding{}, Fingerprints: []FingerprintGroup{}}
	groups := map[string]*FingerprintGroup{}
	for _, r := range records {
		g := groups[r.Fingerprint]
		if g == nil {
			g = &FingerprintGroup{Fingerprint: r.Fingerprint, First: r.Date, Last: r.Date, Machine: r.Machine}
			groups[r.Fingerprint] = g
		}
		g.Records++
		if r.Date.Before(g.First) {
			g.First = r.Date
		}
		if !r.Date.Before(g.Last) {
			g.Last, g.Machine = r.Date, r.Machine
		}
	}
	need := 2 * opt.MinWindow
	for _, s := range HistorySeries(records) {
		g := groups[s.Key.Fingerprint]
		if strings.HasPrefix(g.Fingerprint, MixedPrefix) {
			continue
		}
		if len(s.Points) < need {
			g.Short++
			continue
		}
		g.Series++
		higher := s.HigherIsBetter
		for _, cp := range ChangePoints(s.Means(), opt) {
			from, to := s.Points[cp.Index-1], s.Points[cp.Index]
			res.Findings = append(res.Findings, DriftFinding{
				Fingerprint: s.Key.Fingerprint, Scenario: s.Key.Scenario, Profile: s.Key.Profile,
				Cell: s.Key.Cell, Target: s.Key.Target, Metric: s.Key.Metric, Change: cp,
				FromCommit: from.CandidateCommit, ToCommit: to.CandidateCommit,
				FromDate: from.Date, ToDate: to.Date,
				FromBaseline: from.BaselineCommit, ToBaseline: to.BaselineCommit,
				Worse: cp.Change != 0 && (cp.Change < 0) == higher,
			})
		}
	}
	for _, g := range groups {
		if g.Series == 0 {
			switch {
			case strings.HasPrefix(g.Fingerprint, MixedPrefix):
				g.Skipped = "the shards of these runs ran on machines of different fingerprints, so which one measured a cell is not known"
			case g.Records < need:
				g.Skipped = fmt.Sprintf("%d record(s); change points need at least %d (2 × min window %d)", g.Records, need, opt.MinWindow)
			default:
				g.Skipped = fmt.Sprintf("no series with at least %d points (2 × min window %d)", need, opt.MinWindow)
			}
		}
		res.Fingerprints = append(res.Fingerprints, *g)
	}
	slices.SortFunc(res.Fingerprints, func(a, b FingerprintGroup) int {
		return cmp.Or(b.Last.Compare(a.Last), strings.Compare(a.Fingerprint, b.Fingerprint))
	})
	return res
}
