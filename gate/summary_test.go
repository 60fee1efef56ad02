package gate

import (
	"math"
	"slices"
	"testing"

	"github.com/aclements/go-moremath/stats"
)

func TestTQuantile(t *testing.T) {
	t.Parallel()
	check := func(p, df, want, tol float64) {
		t.Helper()
		if got := TQuantile(p, df); !(math.Abs(got-want) <= tol) {
			t.Errorf("TQuantile(%v, %v) = %.10f, want %.10f ± %g", p, df, got, want, tol)
		}
	}
	// Printed tables, 4 decimals.
	check(0.975, 1, 12.7062, 5e-5)
	check(0.975, 2, 4.3027, 5e-5)
	check(0.975, 4, 2.7764, 5e-5)
	check(0.975, 9, 2.2622, 5e-5)
	check(0.975, 29, 2.0452, 5e-5)
	check(0.995, 4, 4.6041, 5e-5)
	check(0.975, 1e6, 1.95996, 5e-5)
	// R's qt() and qnorm(), 8 decimals: the general df path (3, 4, 9, 29,
	// 100), the closed forms (1, 2), the large-df expansion (1e4, 1e6).
	check(0.975, 1, 12.70620474, 5e-9)
	check(0.975, 2, 4.30265273, 5e-9)
	check(0.975, 3, 3.18244631, 5e-9)
	check(0.975, 4, 2.77644511, 5e-9)
	check(0.975, 9, 2.26215716, 5e-9)
	check(0.975, 29, 2.04522964, 5e-9)
	check(0.975, 100, 1.98397152, 5e-9)
	check(0.995, 4, 4.60409487, 5e-9)
	check(0.95, 5, 2.01504837, 5e-9)
	check(0.975, 1e4, 1.96020124, 5e-9)
	check(0.975, 1e6, 1.95996636, 5e-9)
	check(0.975, math.Inf(1), 1.95996398, 5e-9)
	// Symmetry and the centre.
	check(0.025, 4, -2.77644511, 5e-9)
	check(0.5, 7, 0, 0)

	for _, c := range []struct{ p, df float64 }{{-0.1, 3}, {1.1, 3}, {0.9, 0}, {0.9, -1}, {math.NaN(), 3}, {0.9, math.NaN()}} {
		if got := TQuantile(c.p, c.df); !math.IsNaN(got) {
			t.Errorf("TQuantile(%v, %v) = %v, want NaN", c.p, c.df, got)
		}
	}
	if got := TQuantile(1, 3); !math.IsInf(got, 1) {
		t.Errorf("TQuantile(1, 3) = %v, want +Inf", got)
	}
}

// The quantile must invert the distribution function for any df: fractional
// ones no table lists, and large ones where the expansion replaces Newton.
func TestTQuantileInvertsTail(t *testing.T) {
	t.Parallel()
	for _, df := range []float64{0.5, 1.5, 2.5, 3, 7.25, 30, 500, 3000, 3001, 1e4} {
		for _, p := range []float64{0.6, 0.9, 0.975, 0.995, 0.9999} {
			q := TQuantile(p, df)
			if got := tTail(q, df); math.Abs(got-(1-p)) > 1e-12 {
				t.Errorf("df=%v p=%v: P(T > %v) = %.15g, want %.15g", df, p, q, got, 1-p)
			}
		}
	}
}

// go-moremath has no t quantile, so ours is checked against the generic
// numerical inverse of its distribution function (bisection, where ours takes
// Newton steps) and, at a df where the t distribution is the normal one to
// 1e-11, against its normal quantile. Its t distribution function forms 1-x
// by subtraction and loses digits at larger df, so the grid stops at 3000,
// where TQuantile switches to the expansion; for the same reason it rounds
// to exactly 1/2 on an interval around 0 (up to 5e-7 wide), so the median is
// checked against the normal only.
func TestTQuantileMatchesMoremath(t *testing.T) {
	t.Parallel()
	ps := []float64{0.55, 0.6, 0.75, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9995}
	check := func(p, df, want float64) {
		t.Helper()
		if got := TQuantile(p, df); !(math.Abs(got-want) <= 1e-10*math.Max(1, math.Abs(want))) {
			t.Errorf("TQuantile(%v, %v) = %.15g, moremath %.15g", p, df, got, want)
		}
	}
	dfs := []float64{50, 100, 1000, 3000}
	for df := 30; df >= 1; df-- {
		dfs = append(dfs, float64(df))
	}
	for _, df := range dfs {
		inv := stats.InvCDF(stats.TDist{V: df})
		for _, p := range ps {
			check(p, df, inv(p))
		}
	}
	for _, p := range append(ps, 0.5) {
		check(p, 1e12, stats.StdNormal.InvCDF(p))
	}
}

// Two-sided p-values by mpmath's betainc at 30 digits, in the
// changepoint test's range and beyond.
func TestTTwoSided(t *testing.T) {
	t.Parallel()
	check := func(tv, df, want float64) {
		t.Helper()
		if got := TTwoSided(tv, df); !(math.Abs(got-want) <= 1e-12*want) {
			t.Errorf("TTwoSided(%v, %v) = %.17g, want %.17g", tv, df, got, want)
		}
	}
	check(2, 5, 0.10193947882985836)
	check(-2, 5, 0.10193947882985836)
	check(1, 1, 0.5)
	check(0.5, 3, 0.65144796484815099)
	check(2.5, 28, 0.018550923069545745)
	check(0.01, 1000, 0.99202328193218729) // where 1-x is near 0
	check(4, 2000, 6.564676494309238e-5)
	check(10, 10, 1.589553175596412e-6)
	check(0, 7, 1)
	if got := TTwoSided(math.Inf(1), 7); got != 0 {
		t.Errorf("TTwoSided(+Inf, 7) = %v, want 0", got)
	}
	// A NaN (a sample that is not a number) gives a NaN, never a panic.
	for _, c := range []struct{ t, df float64 }{{math.NaN(), 3}, {1, math.NaN()}, {math.NaN(), math.NaN()}} {
		if got := TTwoSided(c.t, c.df); !math.IsNaN(got) {
			t.Errorf("TTwoSided(%v, %v) = %v, want NaN", c.t, c.df, got)
		}
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	const eps = 5e-5
	check := func(xs []float64, conf float64, want Summary) {
		t.Helper()
		got := Summarize(xs, conf)
		near := func(a, b float64) bool { return math.Abs(a-b) <= eps }
		if got.N != want.N || !near(got.Mean, want.Mean) || !near(got.SD, want.SD) ||
			!near(got.HalfWidth, want.HalfWidth) || !near(got.Median, want.Median) ||
			got.Min != want.Min || got.Max != want.Max {
			t.Errorf("Summarize(%v, %v)\n got %+v\nwant %+v", xs, conf, got, want)
		}
	}
	// mean 14; squares of deviations 16+4+0+4+16 = 40, sd = sqrt(40/4) = 3.1623;
	// hw = t(.975,4) * sd / sqrt(5) = 2.7764 * 3.1623 / 2.2361 = 3.9265.
	check([]float64{10, 12, 14, 16, 18}, 0.95,
		Summary{N: 5, Mean: 14, SD: 3.1623, HalfWidth: 3.9265, Median: 14, Min: 10, Max: 18})
	// Same at 0.99: hw = 4.6041 * 1.4142 = 6.5112.
	check([]float64{18, 10, 16, 12, 14}, 0.99,
		Summary{N: 5, Mean: 14, SD: 3.1623, HalfWidth: 6.5112, Median: 14, Min: 10, Max: 18})
	// mean 2.5; squares 2.25+0.25+0.25+2.25 = 5, sd = sqrt(5/3) = 1.2910;
	// hw = t(.975,3) * sd / 2 = 3.1824 * 1.2910 / 2 = 2.0543; median (2+3)/2.
	check([]float64{4, 1, 3, 2}, 0.95,
		Summary{N: 4, Mean: 2.5, SD: 1.2910, HalfWidth: 2.0543, Median: 2.5, Min: 1, Max: 4})
	// Two samples: mean 5, sd = sqrt(2) = 1.4142; hw = 12.7062 * 1.4142 / 1.4142.
	check([]float64{4, 6}, 0.95,
		Summary{N: 2, Mean: 5, SD: 1.4142, HalfWidth: 12.7062, Median: 5, Min: 4, Max: 6})
	// One sample has no interval; none has nothing.
	check([]float64{7}, 0.95, Summary{N: 1, Mean: 7, Median: 7, Min: 7, Max: 7})
	check(nil, 0.95, Summary{})

	// Identical samples are a point, exactly, despite 0.1's rounding.
	same := Summarize([]float64{0.1, 0.1, 0.1}, 0.95)
	if same.Mean != 0.1 || same.SD != 0 || same.HalfWidth != 0 {
		t.Errorf("Summarize(0.1 ×3) = %+v, want mean 0.1 exactly, sd 0, hw 0", same)
	}

	xs := []float64{3, 1, 2}
	Summarize(xs, 0.95)
	if !slices.Equal(xs, []float64{3, 1, 2}) {
		t.Errorf("Summarize reordered its input: %v", xs)
	}

	if hw := Summarize([]float64{1, 2, 3}, 1).HalfWidth; !math.IsNaN(hw) {
		t.Errorf("HalfWidth at confidence 1 = %v, want NaN", hw)
	}
}
