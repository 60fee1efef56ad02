package gate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSpendingLevels checks the boundaries against published ones and
// against their promise.
//
// Published: O'Brien–Fleming-type spending of 0.025 on each side
// (gsDesign's sfLDOF at alpha 0.025, symmetric two-sided; ldbounds'
// iuse 1 at alpha (0.025, 0.025)), five equally spaced looks: 4.8769,
// 3.3569, 2.6803, 2.2898, 2.0310 (ours agree to 1e-4 but look 2's
// 3.35701, the same on grids of 200 to 3000 intervals). Promised: a Brownian motion seen at the
// looks of the product's design (rounds 3…8 of 8) crosses a boundary for
// the first time at look k with probability α(t_k) − α(t_{k−1}), 5% in
// all; a million seeded paths.
func TestSpendingLevels(t *testing.T) {
	t.Parallel()
	ts := []float64{0.2, 0.4, 0.6, 0.8, 1}
	levels := spendingLevels(ts, func(t float64) float64 { return 2 * obfSpent(0.025, t) })
	for k, want := range []float64{4.8769, 3.3569, 2.6803, 2.2898, 2.0310} {
		if c := normQuantile(1 - levels[k]/2); math.Abs(c-want) > 1.5e-4 {
			t.Errorf("look %d: boundary %.5f, want %.4f", k+1, c, want)
		}
	}

	const alpha, looks, maxRounds, paths = 0.05, 6, 8, 1_000_000
	levels = lookLevels(alpha, looks, maxRounds)
	bounds := make([]float64, looks)
	for k, l := range levels {
		bounds[k] = normQuantile(1 - l/2)
	}
	t.Logf("rounds 3…8 of 8: nominal levels %.5f, boundaries %.4f", levels, bounds)
	rng := rand.New(rand.NewPCG(28, 0x0bf))
	crossed := make([]float64, looks)
	for range paths {
		var s float64 // sum of the rounds' standard normals
		r := 0
		for k := range looks {
			for ; r < maxRounds-looks+1+k; r++ {
				s += rng.NormFloat64()
			}
			if math.Abs(s)/math.Sqrt(float64(r)) >= bounds[k] {
				crossed[k]++
				break
			}
		}
	}
	var cum float64
	for k := range looks {
		cum += crossed[k] / paths
		want := obfSpent(alpha, float64(maxRounds-looks+1+k)/maxRounds)
		if sd := math.Sqrt(want * (1 - want) / paths); math.Abs(cum-want) > 4*sd {
			t.Errorf("look %d: crossed by %.5f of paths, want %.5f ± %.5f", k+1, cum, want, 4*sd)
		}
	}
}

// TestSpendingManyLooks: a long design's early looks spend less than the
// float64 epsilon (about 1e-52 at the first of 60), which 2 − 2Φ rounded
// to 0, making every later level nonsense (a last-look confidence of
// 2e-13). Each level is now finite, above 0, rising look by look, and the
// last look's is near α, as O'Brien–Fleming's is.
func TestSpendingManyLooks(t *testing.T) {
	t.Parallel()
	for _, looks := range []int{60, 200} {
		levels := lookLevels(0.05, looks, looks+2)
		if len(levels) != looks {
			t.Fatalf("%d looks: %d levels", looks, len(levels))
		}
		for k, l := range levels {
			if !(l > 0) || math.IsNaN(l) || (k > 0 && l < levels[k-1]) {
				t.Fatalf("%d looks: level %d is %v after %v", looks, k, l, levels[max(k-1, 0)])
			}
		}
		if last := levels[looks-1]; !(last > 0.02 && last < 0.05) {
			t.Errorf("%d looks: the last look's level is %v, want a little under 0.05", looks, last)
		}
	}
}
