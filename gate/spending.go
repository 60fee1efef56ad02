package gate

import (
	"math"
	"sync"
)

// The error spending of an adaptive design. A cell is decided after round
// `repetitions` and after every round added, up to max_repetitions; look k
// comes after R_k rounds, at information fraction t_k = R_k / R_max. The
// Lan–DeMets spending function of O'Brien–Fleming type,
//
//	α(t) = 2 − 2Φ(z_{1−α/2} / √t),
//
// says how much of the two-sided error rate α may have been spent by t:
// almost nothing at the early looks, nearly all of it at the last. The
// boundaries c_1…c_K on |Z_k| (Z_k the standardized mean of the first R_k
// rounds) are those whose first crossing happens at look k with
// probability α(t_k) − α(t_{k−1}) when there is no change; they are found
// by the recursive numerical integration of Armitage, McPherson and Rowe
// (1969) over the joint normal distribution of Z_1…Z_K (corr(Z_i, Z_j) =
// √(t_i/t_j)), and each is turned into the nominal two-sided level
// 2 − 2Φ(c_k) that look's intervals are made at (with the t quantile of
// their own degrees of freedom).

// spendingGrid is the number of Simpson intervals of the integration over
// a look's continuation region: the boundaries it gives are those of grids
// of 200 to 3000 intervals to 1e-5 (see TestSpendingLevels).
const spendingGrid = 400

// obfSpent is α(t), the error spent by information fraction t.
func obfSpent(alpha, t float64) float64 {
	if t <= 0 {
		return 0
	}
	// erfc keeps the far tail that 2 − 2Φ would round to 0: the first of
	// 60 looks spends about 1e-52.
	return math.Erfc(normQuantile(1-alpha/2) / math.Sqrt(t) / math.Sqrt2)
}

// twoSidedBound is c with 2 − 2Φ(c) = p, found on erfc by bisection, so a
// p far below the float64 epsilon (an early look of a long design) has a
// finite c where normQuantile(1 − p/2) would be +Inf.
func twoSidedBound(p float64) float64 {
	if p >= 1 {
		return 0
	}
	lo, hi := 0.0, 40.0
	for range 200 {
		mid := (lo + hi) / 2
		if math.Erfc(mid/math.Sqrt2) > p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

func normPDF(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }

func normQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// spendingLevels are the nominal two-sided levels of looks at the
// information fractions ts (increasing, the last 1) whose boundaries spend
// spent(t) of the error rate by t.
func spendingLevels(ts []float64, spent func(t float64) float64) []float64 {
	levels := make([]float64, len(ts))
	// The score S_k = Z_k √t_k has independent increments N(0, t_k −
	// t_{k−1}). f holds its density at look k−1 on a grid of the
	// continuation region (−b, b), b the boundary on the score scale;
	// what crossed at an earlier look is not in it.
	var grid, f []float64
	var prevT float64
	for k, t := range ts {
		spend := spent(t) - spent(prevT)
		if k == 0 {
			c := twoSidedBound(spend)
			levels[k] = spend
			grid, f = continuation(c*math.Sqrt(t), func(s float64) float64 {
				return normPDF(s/math.Sqrt(t)) / math.Sqrt(t)
			})
			prevT = t
			continue
		}
		sd := math.Sqrt(t - prevT)
		h := grid[1] - grid[0]
		// crossing is the probability of reaching |S_k| ≥ b without
		// crossing before: decreasing in b.
		crossing := func(b float64) float64 {
			var p float64
			for i, u := range grid {
				p += simpson(i, len(grid)) * f[i] * (normCDF((-b-u)/sd) + normCDF((u-b)/sd))
			}
			return p * h / 3
		}
		lo, hi := 0.0, 40*math.Sqrt(t)
		for range 200 {
			mid := (lo + hi) / 2
			if crossing(mid) > spend {
				lo = mid
			} else {
				hi = mid
			}
			if hi-lo < 1e-12 {
				break
			}
		}
		b := (lo + hi) / 2
		levels[k] = math.Erfc(b / math.Sqrt(t) / math.Sqrt2)
		if k == len(ts)-1 {
			break
		}
		pg, pf := grid, f
		grid, f = continuation(b, func(s float64) float64 {
			var d float64
			for i, u := range pg {
				d += simpson(i, len(pg)) * pf[i] * normPDF((s-u)/sd) / sd
			}
			return d * h / 3
		})
		prevT = t
	}
	return levels
}

// continuation is a Simpson grid over (−b, b) and the density at its
// points.
func continuation(b float64, density func(float64) float64) (grid, f []float64) {
	grid, f = make([]float64, spendingGrid+1), make([]float64, spendingGrid+1)
	for i := range grid {
		grid[i] = -b + 2*b*float64(i)/spendingGrid
		f[i] = density(grid[i])
	}
	return grid, f
}

// simpson is the weight of point i of n (n odd) in Simpson's rule, × 3/h.
func simpson(i, n int) float64 {
	switch {
	case i == 0 || i == n-1:
		return 1
	case i%2 == 1:
		return 4
	}
	return 2
}

type spendingKey struct {
	alpha            float64
	looks, maxRounds int
}

var spendingCache sync.Map // spendingKey → []float64

// lookLevels are the nominal two-sided levels of a design's looks, after
// rounds maxRounds−looks+1 … maxRounds; computed once per design.
func lookLevels(alpha float64, looks, maxRounds int) []float64 {
	key := spendingKey{alpha, looks, maxRounds}
	if l, ok := spendingCache.Load(key); ok {
		return l.([]float64)
	}
	ts := make([]float64, looks)
	for k := range ts {
		ts[k] = float64(maxRounds-looks+1+k) / float64(maxRounds)
	}
	l := spendingLevels(ts, func(t float64) float64 { return obfSpent(alpha, t) })
	spendingCache.Store(key, l)
	return l
}
