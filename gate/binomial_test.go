package gate

import (
	"math"
	"testing"
)

// TestBinomialUpper checks the upper tail against sums of the binomial's
// probabilities computed term by term, and its edges.
func TestBinomialUpper(t *testing.T) {
	direct := func(k, n int, p float64) float64 {
		s := 0.0
		for i := k; i <= n; i++ {
			lc := lgamma(float64(n+1)) - lgamma(float64(i+1)) - lgamma(float64(n-i+1))
			s += math.Exp(lc + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
		}
		return s
	}
	for _, c := range []struct {
		k, n int
		p    float64
	}{{1, 1, 0.5}, {3, 10, 0.5}, {8, 10, 0.5}, {50, 100, 0.5}, {70, 100, 0.5}, {5, 400, 0.01}, {300, 1000, 0.25}, {1, 50, 0.3}} {
		got, want := BinomialUpper(c.k, c.n, c.p), direct(c.k, c.n, c.p)
		if math.Abs(got-want) > 1e-12*math.Max(1, want) && math.Abs(got-want)/want > 1e-10 {
			t.Errorf("BinomialUpper(%d, %d, %g) = %.15g, want %.15g", c.k, c.n, c.p, got, want)
		}
	}
	// Known by hand: P(X >= 2) of Binomial(2, 0.5) is 1/4; of X >= 1, 3/4.
	if got := BinomialUpper(2, 2, 0.5); math.Abs(got-0.25) > 1e-15 {
		t.Errorf("BinomialUpper(2, 2, 0.5) = %g, want 0.25", got)
	}
	if got := BinomialUpper(1, 2, 0.5); math.Abs(got-0.75) > 1e-15 {
		t.Errorf("BinomialUpper(1, 2, 0.5) = %g, want 0.75", got)
	}
	for _, c := range []struct {
		k, n int
		p    float64
		want float64
	}{{0, 5, 0.3, 1}, {-1, 5, 0.3, 1}, {6, 5, 0.3, 0}, {1, 5, 0, 0}, {5, 5, 1, 1}} {
		if got := BinomialUpper(c.k, c.n, c.p); got != c.want {
			t.Errorf("BinomialUpper(%d, %d, %g) = %g, want %g", c.k, c.n, c.p, got, c.want)
		}
	}
}
