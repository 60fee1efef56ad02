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
	// Resolution is what the configured rule resolved on this run (see
	// Decision.Resolution), TieWithin the band it must resolve.
	Resolution float64 `json:"resolution"`
	TieWithin  float64 `json:"tie_within"`
	Resolves   bool    `json:"resolves"`
	// RoundsNeeded is the fewest rounds at which the configured rule's
	// expected resolution of an unchanged build is within the band, at
	// the run's noise: the repetitions to ask for; 0 when even MaxRounds
	// would not do.
	RoundsNeeded int `json:"rounds_needed"`
	// DurationFactor, for a paired metric whose pairs are slices, is by
	// how much load.duration would have to grow at the same rounds for
	// the same, assuming slice pairs independent of each other (a batch's
	// variance then falls as its pairs grow); 0 otherwise.
	DurationFactor float64 `json:"duration_factor,omitempty"`
	// Reason says why nothing could be estimated ("inconclusive: …").
	Reason string `json:"reason,omitempty"`
}

// MaxRounds bounds Calibration.RoundsNeeded.
const MaxRounds = 1000

// Calibrate turns a decided A/A comparison into a Calibration for every
// gated metric of every cell, in the comparison's order.
//
// The projections assume the two instances do not differ (an A/A run:
// the mean change is 0), so the expected resolution at R rounds is the
// interval's half-width: under the overlap rule
// t(R-1) · (cv_b + cv_c) / √R, under the paired rule
// exp(t(N-1) · sd / √N) - 1 with N = R · (batches per round). Each is at
// the run's effective confidence.
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
			cal.Resolution = d.Resolution
			cal.Resolves = d.Resolution <= d.TieWithin
			var perRound float64
			if p := d.Paired; p != nil && p.N >= 2 && p.Ratio > 0 {
				h := math.Log(p.Hi / p.Ratio)
				cal.Paired = h * math.Sqrt(float64(p.N)) / TQuantile((1+conf)/2, float64(p.N-1))
				cal.Batches, cal.Spread = p.N, p.Spread
				perRound = float64(p.N) / float64(max(1, cal.Rounds))
			}
			band := d.TieWithin
			expected := func(r int) float64 {
				if d.Rule == RulePaired {
					n := perRound * float64(r)
					if n < 2 {
						return math.Inf(1)
					}
					return math.Expm1(TQuantile((1+conf)/2, n-1) * cal.Paired / math.Sqrt(n))
				}
				if r < 2 {
					return math.Inf(1)
				}
				return TQuantile((1+conf)/2, float64(r-1)) * (cvb + cvc) / math.Sqrt(float64(r))
			}
			if d.Rule != RulePaired || cal.Batches > 0 {
				for r := 2; r <= MaxRounds; r++ {
					if expected(r) <= band {
						cal.RoundsNeeded = r
						break
					}
				}
			}
			if d.Rule == RulePaired && cal.Batches > 0 && perRound > 1 && cal.Paired > 0 && band > 0 {
				// The slice pairs of a batch average out: its sd falls
				// with the square root of its length.
				n := float64(cal.Batches)
				need := TQuantile((1+conf)/2, n-1) * cal.Paired / (math.Sqrt(n) * math.Log1p(band))
				cal.DurationFactor = need * need
			}
			out = append(out, cal)
		}
	}
	return out
}

// cv is a summary's coefficient of variation; 0 for a mean of 0.
func cv(s Summary) float64 {
	if s.Mean == 0 {
		return 0
	}
	return s.SD / math.Abs(s.Mean)
}
