package numtext

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestNumtext(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ got, want string }{
		{Percent(0.1234), "+12.3%"}, {Percent(-0.5), "-50.0%"}, {Percent(0.0004), "0.0%"},
		{PercentInterval(0.282, 0.014, 0.621), "+28.2% [+1.4%, +62.1%]"},
		{PercentInterval(-0.167, -0.194, -0.139), "-16.7% [-19.4%, -13.9%]"},
		{PercentInterval(0.0004, -0.021, 0.022), "0.0% [-2.1%, +2.2%]"},
		{PValue(0.00123), "0.0012"}, {PValue(0), "< 1e-300"},
		{Sig4(1234.5678), "1235"}, {Sig4(0.0123456), "0.01235"}, {Sig4(2e9), "2e+09"}, {Sig4(0), "0"}, {Sig4(math.NaN()), "NaN"},
		{Commit("0123456789abcdef"), "0123456"}, {Commit("v1.0.0"), "v1.0.0"}, {Commit(strings.Repeat("é", 41)), strings.Repeat("é", 39) + "…"},
		{Commit(strings.Repeat("x", 40)), strings.Repeat("x", 40)},
		{Day(time.Date(2026, 1, 31, 23, 0, 0, 0, time.FixedZone("x", -3600))), "2026-02-01"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestSeconds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    float64
		want string
	}{
		{0, "0"}, {0.000456, "456µs"}, {0.0000123, "12.3µs"}, {0.00123, "1.23ms"},
		{0.0123, "12.3ms"}, {0.123, "123ms"}, {1.5, "1.50s"}, {12.34, "12.3s"}, {123.4, "123s"},
	} {
		if got := Seconds(c.s); got != c.want {
			t.Errorf("Seconds(%v) = %q, want %q", c.s, got, c.want)
		}
	}
}
