package gate

import "math"

// Calibration is what a comparison of the baseline against a second
// instance of itself (an A/A run) says of one gated metric of one cell on
// the runner that measured it: how noisy a round and a paired batch are,
// what the configured design resolved, and what it would take to resolve
// the metric's tie band.
type Calibration struct {
	Key    CellKey      `json:"cell"`
	Metric Metric       `json:"metric"`
	Rule   DecisionRule `json:"rule"`
	// Rounds is how many rounds the A/A run measured (the smaller side).
	Rounds int `json:"rounds"`
	// Unpaired is the coefficient of variation of one round's value,
	// pooled over the two instances: sqrt((cv_b² + cv_c²) / 2).
	Unpaired float64 `json:"noise_unpaired"`
	// Paired is the standard deviation of one paired observation's log
	// ratio, and Batches how many observations the paired interval
	// rested on, and Spread what they were: batches of slice pairs, or
	// rounds where the rounds' means were the wider (Ratio.Spread); 0 and
	// "" when the metric has no paired ratio.
	Paired  float64 `json:"noise_paired,omitempty"`
	Batches int     `json:"batches,omitempty"`
	Spread  string  `json:"spread,omitempty"`
	// PairedRound is the standard deviation of one round's mean log
	// ratio that the projections of the paired rule use: Paired when the
	// rounds made the interval, else Paired / √(batches per round), which
	// assumes a round's batches independent; 0 without a paired ratio.
	PairedRound float64 `json:"noise_round_paired,omitempty"`
	// Resolution is what the configured rule resolved on this run (see
	// Decision.Resolution), RulesOut the regression its interval ruled
	// out (Decision.RulesOut: the interval's end on the metric's worse
	// side), TieWithin the band it must resolve; Resolves says RulesOut
	// is within the band: this run's tie was resolved for the gate.
	Resolution float64 `json:"resolution"`
	RulesOut   float64 `json:"rules_out"`
	TieWithin  float64 `json:"tie_within"`
	Resolves   bool    `json:"resolves"`
	// Detectable is the regression the configured rounds detect with 80%
	// power at the run's noise: the change whose interval excludes no
	// change on the regression side in 80% of gates, and equally the
	// rules-out that 80% of A/A ties stay within. A regression fails the
	// gate only beyond the band as well.
	Detectable float64 `json:"detectable"`
	// RoundsNeeded is the fewest rounds at which Detectable is within the
	// band: at the run's noise an A/A tie is resolved with 80% power (at
	// least 3 under the paired rule, which warns at 2): the repetitions to
	// ask for; 0 when even MaxRounds would not do.
	RoundsNeeded int `json:"rounds_needed"`
	// MaxRoundsNeeded is the same for an adaptive design that starts at
	// the run's rounds: the fewest max_repetitions whose last look, at the
	// confidence O'Brien–Fleming spending leaves it (Settings.ConfidenceAt),
	// has 80% power; a cell that stops earlier stops on a resolved tie.
	// RoundsNeeded when that is no more than the run's rounds; 0 when
	// none up to MaxRounds would do, or only a design of more than
	// maxLooks looks.
	MaxRoundsNeeded int `json:"max_rounds_needed"`
	// DurationFactor, for a paired metric whose pairs are slices, is by
	// how much load.duration would have to grow at the same rounds for
	// the same power, assuming slice pairs independent of each other (a
	// round's variance then falls as its pairs grow); 0 otherwise.
	DurationFactor float64 `json:"duration_factor,omitempty"`
	// FalseRegression is the projected probability that the run's design
	// (its rounds, at its confidence) calls this metric of an unchanged
	// build a regression at this noise.
	FalseRegression float64 `json:"false_regression"`
	// Reason says why nothing could be estimated ("inconclusive: …").
	Reason string `json:"reason,omitempty"`
}

// MaxRounds bounds Calibration.RoundsNeeded.
const MaxRounds = 1000

// maxLooks bounds the looks of the adaptive designs Calibrate projects:
// each candidate design's spending is a numerical integration over all its
// looks, and a design of more than a few dozen looks is not one anyone
// runs on a pull request.
const maxLooks = 40

// CalibrationPower is the power the calibration's projections are made
// for: Detectable, RoundsNeeded and DurationFactor.
const CalibrationPower = 0.8

// Calibrate turns a decided A/A comparison into a Calibration for every
// gated metric of every cell, in the comparison's order.
//
// The projections assume the two instances do not differ (an A/A run)
// and the run's noise the truth. Let s be the standard deviation of the
// estimated change at R rounds (paired: σ_round / √R of the mean log
// ratio; overlap: √(cv_b² + cv_c²) / √R of the means' relative
// difference) and L the band on the metric's worse side (paired: ln(1 +
// band) for a metric better lower, −ln(1 − band) for one better higher;
// overlap: the band). An A/A tie is resolved when its estimate plus the
// interval's half-width h is within L, so its probability is
// P(Z + h/s ≤ L/s), Z standard normal, over the distribution of h, which
// rests on a sample standard deviation: h/s = t(R−1)·V under the paired
// rule's rounds' interval, V = √(χ²_{R−1}/(R−1)), but never less than
// the batches' interval's t(RB−1) (B batches a round: the interval is the
// wider of the two, PairedRatio); under overlap h/s = t(R−1)·(cv_b +
// cv_c)/√(cv_b² + cv_c²)·V, V with 2(R−1) degrees of freedom (the two
// sides' standard deviations, averaged). That is the expected value of
// Φ(L/s − h/s), computed by quadrature over V: the power of the formula
// (t(R−1) + z_power)·s ≤ L with the spread of the standard deviation
// counted. A false regression is the estimate beyond L on the worse side
// with the interval clear of no change: the expected value of
// Φ(−max(L/s, h/s)).
func Calibrate(c Comparison) []Calibration {
	s := c.Settings
	conf := s.Effective()
	var out []Calibration
	for _, cell := range c.Cells {
		for _, m := range cell.Gated {
			d, ok := cell.Decision(m)
			cal := Calibration{Key: cell.Key, Metric: m}
			if !ok {
				cal.Reason = "not measured"
				out = append(out, cal)
				continue
			}
			cal.Rule, cal.TieWithin = d.Rule, d.TieWithin
			cal.Rounds = min(d.Baseline.N, d.Candidate.N)
			if d.Verdict == Inconclusive {
				cal.Reason = "inconclusive: " + d.Reason
				out = append(out, cal)
				continue
			}
			cvb, cvc := cv(d.Baseline), cv(d.Candidate)
			cal.Unpaired = math.Sqrt((cvb*cvb + cvc*cvc) / 2)
			cal.Resolution, cal.RulesOut = d.Resolution, d.RulesOut
			cal.Resolves = d.RulesOut <= d.TieWithin
			p := projection{band: d.TieWithin}
			if r := d.Paired; r != nil && r.N >= 2 && r.Ratio > 0 {
				h := math.Log(r.Hi / r.Ratio)
				cal.Paired = h * math.Sqrt(float64(r.N)) / TQuantile((1+d.Confidence)/2, float64(r.N-1))
				cal.Batches, cal.Spread = r.N, r.Spread
				if r.Spread == SpreadRounds {
					// The rounds' spread made the interval; the batches'
					// interval, narrower, still floors it.
					p.perRound = min(float64(s.batches()), float64(r.Pairs)/float64(r.N))
					cal.PairedRound = cal.Paired
				} else {
					p.perRound = float64(r.N) / float64(max(1, cal.Rounds))
					cal.PairedRound = cal.Paired / math.Sqrt(p.perRound)
				}
			}
			if d.Rule == RulePaired {
				if cal.Batches == 0 {
					out = append(out, cal)
					continue
				}
				p.sd, p.minRounds, p.log, p.higher = cal.PairedRound, 3, true, s.HigherIsBetter(m)
				p.limit = math.Log1p(d.TieWithin)
				if p.higher {
					p.limit = -math.Log1p(-d.TieWithin)
				}
			} else {
				p.sd, p.limit, p.minRounds = math.Hypot(cvb, cvc), d.TieWithin, 2
				if p.sd > 0 {
					p.ratio = (cvb + cvc) / p.sd
				}
			}
			switch {
			case !(p.limit > 0):
				out = append(out, cal)
				continue
			case p.sd == 0:
				// No noise: the fewest rounds the rule takes decide.
				cal.RoundsNeeded, cal.MaxRoundsNeeded = p.minRounds, p.minRounds
				out = append(out, cal)
				continue
			}
			if cal.Rounds >= 2 {
				cal.Detectable = p.detectable(cal.Rounds, conf)
				cal.FalseRegression = p.falseRegression(cal.Rounds, conf)
			}
			for r := p.minRounds; r <= MaxRounds; r++ {
				if p.resolved(r, s.Confidence) >= CalibrationPower {
					cal.RoundsNeeded = r
					break
				}
			}
			cal.MaxRoundsNeeded = cal.RoundsNeeded
			if reps := cal.Rounds; cal.RoundsNeeded > reps && reps >= 1 {
				// The last look of reps…r is the least strict, and
				// stricter than a fixed design's: at least as many rounds.
				cal.MaxRoundsNeeded = 0
				for r := cal.RoundsNeeded; r <= MaxRounds && r-reps+1 <= maxLooks; r++ {
					a := s
					a.Looks, a.MaxRounds = r-reps+1, r
					if conf := a.ConfidenceAt(r); conf >= s.Confidence && p.resolved(r, conf) >= CalibrationPower {
						cal.MaxRoundsNeeded = r
						break
					}
				}
			}
			if d.Rule == RulePaired && p.perRound > 1 && cal.Rounds >= 2 {
				// A round's slice pairs average out: its sd falls with
				// the square root of its length.
				need := p.sdFor(cal.Rounds, conf)
				cal.DurationFactor = (p.sd / need) * (p.sd / need)
			}
			out = append(out, cal)
		}
	}
	return out
}

// GateFalseFailure is the projected probability that the gate of an A/A
// comparison fails on a false regression, from its calibrations: at most
// the sum of its metrics' FalseRegression (a union bound, which needs no
// assumption about how the cells' noise is related), at most 1; and under
// the paired rule with the whole gate's error control (s.FalseFailure),
// at most that level (controlFamily).
func GateFalseFailure(cals []Calibration, s Settings) float64 {
	var sum float64
	for _, c := range cals {
		sum += c.FalseRegression
	}
	if s.rule() == RulePaired && s.FalseFailure > 0 {
		return math.Min(sum, s.FalseFailure)
	}
	return math.Min(sum, 1)
}

// projection is one gated metric's noise, as Calibrate projects it.
type projection struct {
	band  float64
	limit float64 // L: the band on the worse side, on the estimate's scale
	sd    float64 // of one round's estimate: s = sd / √R
	// ratio is the interval's sd over sd (overlap: (cv_b+cv_c)/√(cv_b²+cv_c²)).
	ratio     float64
	perRound  float64 // paired: batches a round (B)
	minRounds int
	log       bool // the estimate is a log ratio
	higher    bool // the metric is better higher (a fall is a regression)
}

// halfWidth is h/s at R rounds and confidence conf for a given V, and the
// degrees of freedom of V.
func (p projection) halfWidth(r int, conf float64) (func(v float64) float64, float64) {
	t := TQuantile((1+conf)/2, float64(r-1))
	if !p.log {
		return func(v float64) float64 { return t * p.ratio * v }, float64(2 * (r - 1))
	}
	floor := 0.0
	if p.perRound > 1 {
		floor = TQuantile((1+conf)/2, float64(r)*p.perRound-1)
	}
	return func(v float64) float64 { return math.Max(t*v, floor) }, float64(r - 1)
}

// resolved is the probability that an A/A tie at r rounds rules out a
// regression beyond the band.
func (p projection) resolved(r int, conf float64) float64 {
	return p.resolvedAt(r, conf, p.limit*math.Sqrt(float64(r))/p.sd)
}

func (p projection) resolvedAt(r int, conf, lambda float64) float64 {
	hw, df := p.halfWidth(r, conf)
	return expectChi(df, func(v float64) float64 { return normCDF(lambda - hw(v)) })
}

// falseRegression is the probability that an A/A gate at r rounds calls
// the metric a regression.
func (p projection) falseRegression(r int, conf float64) float64 {
	hw, df := p.halfWidth(r, conf)
	lambda := p.limit * math.Sqrt(float64(r)) / p.sd
	return expectChi(df, func(v float64) float64 { return normCDF(-math.Max(lambda, hw(v))) })
}

// lambdaFor is the L/s at which resolved reaches CalibrationPower.
func (p projection) lambdaFor(r int, conf float64) float64 {
	lo, hi := 0.0, 1.0
	for p.resolvedAt(r, conf, hi) < CalibrationPower && hi < 1e6 {
		lo, hi = hi, 2*hi
	}
	for range 60 {
		mid := (lo + hi) / 2
		if p.resolvedAt(r, conf, mid) < CalibrationPower {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// detectable is the change on the metric's worse side that 80% of A/A
// ties rule out at r rounds: the limit at which resolved is 80%.
func (p projection) detectable(r int, conf float64) float64 {
	l := p.lambdaFor(r, conf) * p.sd / math.Sqrt(float64(r))
	switch {
	case !p.log:
		return l
	case p.higher:
		return -math.Expm1(-l)
	}
	return math.Expm1(l)
}

// sdFor is the sd of a round's estimate at which r rounds resolve the
// band with 80% power.
func (p projection) sdFor(r int, conf float64) float64 {
	return p.limit * math.Sqrt(float64(r)) / p.lambdaFor(r, conf)
}

// expectChi is E[f(V)] for V = √(χ²_df / df), by Simpson's rule over V.
func expectChi(df float64, f func(v float64) float64) float64 {
	const n = 400
	top := 1 + 12/math.Sqrt(2*df)
	lg, _ := math.Lgamma(df / 2)
	density := func(v float64) float64 {
		if v <= 0 {
			if df == 1 {
				return math.Sqrt(2 / math.Pi)
			}
			return 0
		}
		x := df * v * v
		return math.Exp((df/2-1)*math.Log(x) - x/2 - df/2*math.Ln2 - lg + math.Log(2*df*v))
	}
	h := top / n
	var sum float64
	for i := 0; i <= n; i++ {
		v := float64(i) * h
		sum += simpson(i, n+1) * density(v) * f(v)
	}
	return sum * h / 3
}

// cv is a summary's coefficient of variation; 0 for a mean of 0.
func cv(s Summary) float64 {
	if s.Mean == 0 {
		return 0
	}
	return s.SD / math.Abs(s.Mean)
}
