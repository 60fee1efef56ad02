package gate

import (
	"math"
	"slices"
)

// Summarize returns the summary of one metric's repetitions: mean, sample
// standard deviation, median, extremes and the half-width of the two-sided
// Student-t interval at the given confidence. With fewer than two samples
// there is no interval and HalfWidth (and SD) are 0; Decide calls such a
// summary inconclusive. A confidence outside (0, 1) gives a NaN HalfWidth.
// xs is not modified.
func Summarize(xs []float64, confidence float64) Summary {
	return summarize(xs, confidence, nil)
}

// quantiles remembers the t quantiles of one decision's confidence by
// degrees of freedom: the sides and metrics of a cell share a few, and each
// costs microseconds.
type quantiles struct {
	confidence float64
	byDF       map[int]float64
}

func newQuantiles(confidence float64) *quantiles {
	return &quantiles{confidence: confidence, byDF: map[int]float64{}}
}

// t is the two-sided quantile at confidence with df degrees of freedom;
// q may be nil.
func (q *quantiles) t(confidence float64, df int) float64 {
	if q == nil || q.confidence != confidence {
		return TQuantile((1+confidence)/2, float64(df))
	}
	t, ok := q.byDF[df]
	if !ok {
		t = TQuantile((1+confidence)/2, float64(df))
		q.byDF[df] = t
	}
	return t
}

func summarize(xs []float64, confidence float64, q *quantiles) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{}
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)

	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	// A second pass corrects the rounding of the first, so n identical
	// samples give exactly that value and an SD of 0.
	var corr, ss float64
	for _, x := range xs {
		corr += x - mean
	}
	mean += corr / float64(n)
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}

	s := Summary{
		N:    n,
		Mean: mean,
		Min:  sorted[0],
		Max:  sorted[n-1],
	}
	if n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	if n < 2 {
		return s
	}
	s.SD = math.Sqrt(ss / float64(n-1))
	if !(confidence > 0 && confidence < 1) {
		s.HalfWidth = math.NaN()
		return s
	}
	s.HalfWidth = q.t(confidence, n-1) * s.SD / math.Sqrt(float64(n))
	return s
}

// TQuantile returns the p-quantile of Student's t distribution with df
// degrees of freedom (df need not be an integer; +Inf gives the normal
// distribution); go-moremath, where benchstat's distributions come from, has
// no t quantile. It inverts the exact distribution function, written with the
// regularized incomplete beta function, by safeguarded Newton steps, so it is
// accurate to about 1e-12 for any df, not only for tabulated ones. It returns
// NaN when p is outside [0, 1] or df is not positive.
func TQuantile(p, df float64) float64 {
	switch {
	case math.IsNaN(p) || math.IsNaN(df) || p < 0 || p > 1 || df <= 0:
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	case p == 0.5:
		return 0
	case p < 0.5:
		return -TQuantile(1-p, df)
	}
	q := 1 - p // upper tail to hit
	switch {
	case df == 1: // Cauchy
		return math.Tan(math.Pi * (p - 0.5))
	case df == 2:
		return (2*p - 1) / math.Sqrt(2*p*q)
	}
	z := normalQuantile(p)
	guess := cornishFisher(z, df)
	if df > 3000 {
		// Here the expansion's error (order df^-5) is below 1e-13, while
		// the incomplete beta loses digits to the cancellation of large
		// log-gamma values and needs ~sqrt(df) continued-fraction steps.
		return guess
	}

	// Bracket the root: the upper tail falls from 1/2 at t = 0.
	lo, hi := 0.0, math.Max(guess, 1)
	for tTail(hi, df) > q {
		lo, hi = hi, 2*hi
	}
	t := guess
	if !(t > lo && t < hi) {
		t = (lo + hi) / 2
	}
	for range 200 {
		f := tTail(t, df) - q // decreasing in t
		if f == 0 {
			return t
		}
		if f > 0 {
			lo = t
		} else {
			hi = t
		}
		next := t + f/tDensity(t, df)
		if !(next > lo && next < hi) {
			next = (lo + hi) / 2
		}
		if math.Abs(next-t) <= 1e-15*math.Abs(t) || hi-lo <= 1e-15*hi {
			return next
		}
		t = next
	}
	return t
}

// normalQuantile is the p-quantile of the standard normal distribution.
func normalQuantile(p float64) float64 {
	return -math.Sqrt2 * math.Erfcinv(2*p)
}

// cornishFisher is the asymptotic expansion of the t quantile in powers of
// 1/df around the normal quantile z (Abramowitz & Stegun 26.7.5; the large-df
// branch of Hill, CACM Algorithm 396, 1970).
func cornishFisher(z, df float64) float64 {
	z2 := z * z
	g1 := z * (z2 + 1) / 4
	g2 := z * ((5*z2+16)*z2 + 3) / 96
	g3 := z * (((3*z2+19)*z2+17)*z2 - 15) / 384
	g4 := z * ((((79*z2+776)*z2+1482)*z2-1920)*z2 - 945) / 92160
	return z + (g1+(g2+(g3+g4/df)/df)/df)/df
}

// TTwoSided is the two-sided p-value P(|T| > |t|) of Student's t
// distribution with df degrees of freedom.
func TTwoSided(t, df float64) float64 { return 2 * tTail(math.Abs(t), df) }

// tTail is P(T > t) for t >= 0: I_x(df/2, 1/2) / 2 with x = df/(df+t²).
// 1-x is computed directly, not by subtraction, to keep the tail's digits.
func tTail(t, df float64) float64 {
	t2 := t * t
	return regIncBeta(df/2, 0.5, df/(df+t2), t2/(df+t2)) / 2
}

// tDensity is the density of Student's t distribution at t.
func tDensity(t, df float64) float64 {
	return math.Exp(lgamma((df+1)/2) - lgamma(df/2) - 0.5*math.Log(df*math.Pi) -
		(df+1)/2*math.Log1p(t*t/df))
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), with
// y = 1-x supplied by the caller. It evaluates the continued fraction on the
// side where it converges quickly (Numerical Recipes, 3rd ed., §6.4).
// go-moremath's mathx.BetaInc is the same method, but it forms 1-x by
// subtraction, losing the digits of a small 1-x (t small against √df), stops
// at a relative step of 3e-14 rather than 1e-16, and panics on a NaN; its
// last bits differ from these, and the results files print them.
func regIncBeta(a, b, x, y float64) float64 {
	switch {
	case x <= 0:
		return 0
	case y <= 0:
		return 1
	}
	front := math.Exp(lgamma(a+b) - lgamma(a) - lgamma(b) + a*math.Log(x) + b*math.Log(y))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, y)/b
}

// betaCF evaluates the continued fraction of the incomplete beta function by
// the modified Lentz method.
func betaCF(a, b, x float64) float64 {
	const (
		tiny = 1e-300
		eps  = 1e-16
	)
	clamp := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c := 1.0
	d := 1 / clamp(1-(a+b)*x/(a+1))
	h := d
	// Convergence takes O(sqrt(max(a, b))) steps near the switch-over point.
	maxIter := 1000 + int(10*math.Sqrt(math.Max(a, b)))
	for m := 1; m <= maxIter; m++ {
		fm := float64(m)
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 / clamp(1+num*d)
		c = clamp(1 + num/c)
		h *= d * c
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 / clamp(1+num*d)
		c = clamp(1 + num/c)
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// BinomialUpper is P(X >= k) for X ~ Binomial(n, p): 1 for k <= 0, 0 for
// k > n. Through the incomplete beta, exactly: P(X >= k) = I_p(k, n-k+1).
// profdiff tests a function's share of two profiles' samples by it.
func BinomialUpper(k, n int, p float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n || p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	return regIncBeta(float64(k), float64(n-k+1), p, 1-p)
}
