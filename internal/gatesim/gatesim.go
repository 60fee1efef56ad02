// Package gatesim simulates whole gates through the product's own decision
// path (gate.Compare) on a synthetic runner: how often a gate fails
// against the true change, the operating curve of
// docs/statistics.md#the-whole-gate (internal/cmd/gatesim prints it; the
// gate's tests hold it).
//
// The runner: a slice's value is exp(round level + side's round level +
// side's slice noise), the slice noise AR(1) in time (phi 0.15), at the
// noise of the noisy runner measured in docs/statistics.md (sd of a slice
// pair's log ratio 0.231, of a round's mean 0.059) scaled by the noise
// factor; "spread" scales each cell's noise by its own factor, uniform on
// the log scale between ×0.5 and ×2. Each cell has two gated metrics, rps
// and cpu_per_req, with independent noise (the worst case for the whole
// gate: correlated metrics fail together less often), measured as the
// defaults measure: 20 slice pairs a round in 5 batches, 5 rounds. A true
// change of c% makes every cell's candidate take c% more time: rps ÷
// (1+c), cpu_per_req × (1+c). Each row is seeded, so a row is the same on
// every machine.
package gatesim

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/benchgate/benchgate/gate"
)

// Noise is a synthetic runner at one level.
type Noise struct {
	Factor float64 // × the measured noisy runner; 0 with Spread
	Spread bool    // each cell its own factor in [0.5, 2], log-uniform
}

func (n Noise) String() string {
	if n.Spread {
		return "spread ×0.5–×2"
	}
	return "×" + strconv.FormatFloat(n.Factor, 'g', -1, 64)
}

// The runner's noise at ×1 (see the package doc).
const (
	phi       = 0.15
	sliceSD   = 0.163 // each side's slice noise: pair log ratio sd 0.231
	sideSD    = 0.005 // each side's own level in a round
	roundSD   = 0.03  // the round's level, common to both sides
	pairs     = 20
	baseValue = 1000.0
)

// Design is what a simulated gate is decided with: Rounds, and for an
// adaptive design MaxRounds > Rounds (Settings' looks are set to match).
type Design struct {
	Settings          gate.Settings
	Cells             int
	Rounds, MaxRounds int
}

// DefaultDesign is the defaults of an HTTP scenario: the paired rule at
// 95%, a 10% band, 5 batches, 5 rounds, the whole gate's error at its
// default.
func DefaultDesign(cells int) Design {
	return Design{Cells: cells, Rounds: 5, MaxRounds: 5, Settings: gate.Settings{Confidence: 0.95, TieWithin: 0.10,
		Rule: gate.RulePaired, Batches: gate.DefaultBatches, FalseFailure: gate.DefaultFalseFailure}}
}

// Adaptive is d as an adaptive design: rounds, then one more for each
// cell still open (gate.Open), up to maxRounds, with the looks' error
// spending as a scenario's load.max_repetitions sets it.
func (d Design) Adaptive(rounds, maxRounds int) Design {
	d.Rounds, d.MaxRounds = rounds, maxRounds
	d.Settings.Looks, d.Settings.MaxRounds = maxRounds-rounds+1, maxRounds
	return d
}

// Result counts one row's gates.
type Result struct {
	Gates, Failed     int // gates that failed (a gated regression)
	Cells, CellsFound int // cell decisions and those that regressed
	Withheld          int // regressions the whole gate's control withheld
	Rounds            int // cell rounds measured, over all gates
}

// Row is Simulate at the seed of its row: made of seed, the noise and
// the change, so a row is the same whatever other rows are simulated.
func Row(d Design, n Noise, change float64, gates int, seed uint64) Result {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d %s %g", seed, n, change)
	return Simulate(d, n, change, gates, h.Sum64())
}

// Simulate decides gates whole gates of d on the runner n at a true
// change, seeded.
func Simulate(d Design, n Noise, change float64, gates int, seed uint64) Result {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	policy := gate.Policy{FailOn: []gate.Rule{{Metric: gate.RPS}, {Metric: gate.CPUPerReq}}, MaxErrorRate: -1}
	var res Result
	for range gates {
		// Every cell's rounds are drawn up front: an adaptive design
		// decides on a prefix of them.
		drawn := make([]gate.CellInput, d.Cells)
		for c := range drawn {
			k := n.Factor
			if n.Spread {
				k = math.Exp(math.Log(0.5) + rng.Float64()*math.Log(4))
			}
			drawn[c] = gate.CellInput{
				Key:       gate.CellKey{Class: "c" + strconv.Itoa(c), Concurrency: 1},
				Baseline:  gate.Side{Samples: map[gate.Metric][]float64{}},
				Candidate: gate.Side{Samples: map[gate.Metric][]float64{}},
				Pairs:     map[gate.Metric][]gate.Pair{},
			}
			for _, m := range []gate.Metric{gate.RPS, gate.CPUPerReq} {
				f := 1 + change
				if m == gate.RPS {
					f = 1 / f
				}
				draw(rng, k, f, m, max(d.Rounds, d.MaxRounds), &drawn[c])
			}
		}
		have := make([]int, d.Cells)
		for c := range have {
			have[c] = d.Rounds
		}
		var cmp gate.Comparison
		for look := d.Rounds; ; look++ {
			in := make([]gate.CellInput, d.Cells)
			for c := range in {
				in[c] = prefix(drawn[c], have[c])
			}
			cmp = gate.Compare(in, d.Settings, policy)
			if look >= d.MaxRounds {
				break
			}
			more := false
			for c, cell := range cmp.Cells {
				if have[c] == look && gate.Open(cell) {
					have[c]++
					more = true
				}
			}
			if !more {
				break
			}
		}
		res.Gates++
		for _, h := range have {
			res.Rounds += h
		}
		if cmp.Outcome == gate.Fail {
			res.Failed++
		}
		if cmp.Family != nil {
			res.Withheld += cmp.Family.Withheld
		}
		for _, cell := range cmp.Cells {
			for _, m := range cell.Gated {
				dec, _ := cell.Decision(m)
				res.Cells++
				if dec.Verdict == gate.Regression {
					res.CellsFound++
				}
			}
		}
	}
	return res
}

// prefix is a cell's first r rounds.
func prefix(ci gate.CellInput, r int) gate.CellInput {
	out := gate.CellInput{Key: ci.Key,
		Baseline:  gate.Side{Samples: map[gate.Metric][]float64{}, Rungs: r, Answered: 1},
		Candidate: gate.Side{Samples: map[gate.Metric][]float64{}, Rungs: r, Answered: 1},
		Pairs:     map[gate.Metric][]gate.Pair{}}
	for m, xs := range ci.Baseline.Samples {
		out.Baseline.Samples[m] = xs[:r]
		out.Candidate.Samples[m] = ci.Candidate.Samples[m][:r]
		out.Pairs[m] = ci.Pairs[m][:r*pairs]
	}
	return out
}

// draw adds rounds of one metric to a cell: the candidate's values × f.
func draw(rng *rand.Rand, k, f float64, m gate.Metric, rounds int, ci *gate.CellInput) {
	innov := math.Sqrt(1 - phi*phi)
	for r := range rounds {
		level := k * roundSD * rng.NormFloat64()
		lb, lc := level+k*sideSD*rng.NormFloat64(), level+k*sideSD*rng.NormFloat64()
		ab, ac := k*sliceSD*rng.NormFloat64(), k*sliceSD*rng.NormFloat64()
		var sb, sc float64
		for range pairs {
			b, c := baseValue*math.Exp(lb+ab), f*baseValue*math.Exp(lc+ac)
			ci.Pairs[m] = append(ci.Pairs[m], gate.Pair{Round: r, Base: b, Cand: c})
			sb, sc = sb+b, sc+c
			ab = phi*ab + innov*k*sliceSD*rng.NormFloat64()
			ac = phi*ac + innov*k*sliceSD*rng.NormFloat64()
		}
		ci.Baseline.Samples[m] = append(ci.Baseline.Samples[m], sb/pairs)
		ci.Candidate.Samples[m] = append(ci.Candidate.Samples[m], sc/pairs)
	}
}
