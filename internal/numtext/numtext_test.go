package numtext

import (
	"math"
	"slices"
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

// TestValue pins a value of each kind of unit over the magnitudes a
// benchmark gives, and past them: 4 significant digits in the prefix
// that suits the value, as benchstat prints them
// (golang.org/x/perf/benchunit's TestScale), the unit's own symbol after
// a time or bytes.
func TestValue(t *testing.T) {
	t.Parallel()
	check := func(unit string, v float64, want string) {
		t.Helper()
		if got := Value(v, unit); got != want {
			t.Errorf("Value(%v, %q) = %q, want %q", v, unit, got, want)
		}
	}
	for _, c := range []struct {
		v                        float64
		time, count, rate, bytes string
	}{
		{0, "0 s", "0", "0", "0 B"},
		{1e-12, "0.001000 ns", "0.001000n", "0.0000000000", "0.0000000000 B"},
		// Below a kind's least prefix, more decimals, up to 10 (as
		// benchstat): a rate or bytes of 1e-9 keeps 2 digits.
		{1e-9, "1.000 ns", "1.000n", "0.0000000010", "0.0000000010 B"},
		{3.9e-7, "390.0 ns", "390.0n", "0.0000003900", "0.0000003900 B"},
		{1e-6, "1.000 µs", "1.000µ", "0.000001000", "0.000001000 B"},
		{1.2346e-5, "12.35 µs", "12.35µ", "0.00001235", "0.00001235 B"},
		{0.0125, "12.50 ms", "12.50m", "0.01250", "0.01250 B"},
		{0.5, "500.0 ms", "500.0m", "0.5000", "0.5000 B"},
		{1, "1.000 s", "1.000", "1.000", "1.000 B"},
		{12, "12.00 s", "12.00", "12.00", "12.00 B"},
		{999.94, "999.9 s", "999.9", "999.9", "999.9 B"},
		{999.96, "1000 s", "1.000k", "1.000k", "1000.0 B"},
		{2048, "2048 s", "2.048k", "2.048k", "2.000 KiB"},
		{1e6, "1000000 s", "1.000M", "1.000M", "976.6 KiB"},
		{1.5e9, "1500000000 s", "1.500G", "1.500G", "1.397 GiB"},
		{1e12, "1000000000000 s", "1.000T", "1.000T", "931.3 GiB"},
		{-3.9e-7, "-390.0 ns", "-390.0n", "-0.0000003900", "-0.0000003900 B"},
		{-2048, "-2048 s", "-2.048k", "-2.048k", "-2.000 KiB"},
		// A value JSON could hold but no benchmark gives: digits, still
		// no exponent.
		{1e15, "1000000000000000 s", "1000T", "1000T", "909.5 TiB"},
	} {
		check("sec/iter", c.v, c.time)
		check("allocs/op", c.v, c.count)
		check("req/s", c.v, c.rate)
		check("B/op", c.v, c.bytes)
	}
	// A unit of ns, ms: its values converted; MB is 1e6 bytes.
	check("ns/op", 390, "390.0 ns")
	check("ns/iter", 1234567, "1.235 ms")
	check("ms", 12.5, "12.50 ms")
	check("us/op", 3, "3.000 µs")
	check("MB/s", 1.5, "1.431 MiB")
	// Not numbers: said so, never strconv's "+Inf" or "NaN" unchecked.
	check("sec/op", math.Inf(1), "∞")
	check("B/op", math.Inf(-1), "-∞")
	check("allocs/op", math.NaN(), "NaN")
	check("MB/s", 1e308, "∞") // too large once in bytes
	// A tiny negative that rounds to nothing is 0, not -0.
	if got := ScaleOf("sec/op", 1).Format(-1e-12); got != "0.000 s" {
		t.Errorf("-1e-12 s in a scale of 1 s: %q", got)
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	for unit, want := range map[string]Kind{
		"sec/op": Time, "sec/iter": Time, "s": Time, "ns/op": Time, "ms": Time, "µs/op": Time,
		"cpu-sec/op": Time, "CPU s/request": Time, "sec/op*B": Time,
		"B/op": Bytes, "B/s": Bytes, "bytes": Bytes, "MB/s": Bytes, "B*s/op": Bytes,
		"req/s": Rate, "ops/s": Rate, "items/sec": Rate, "calls/s": Rate,
		"allocs/op": Count, "errors/request": Count, "rows/op": Count, "Percent": Count, "": Count,
		"secret/op": Count, "ops": Count, "op/B": Count, "op/s*s": Time,
	} {
		if got := KindOf(unit); got != want {
			t.Errorf("KindOf(%q) = %s, want %s", unit, got, want)
		}
	}
}

// TestScale: a row's figures share the scale of the least of them, and
// a summary's spread is a percentage of its mean, as benchstat writes
// one, unless the interval reaches 0.
func TestScale(t *testing.T) {
	t.Parallel()
	s := ScaleOf("sec/iter", 1.0e-6, 1.04e-6, 3.61e-6, 0) // a zero does not scale
	less := ScaleOf("sec/iter", 3.61e-6, 0.98e-6)         // the least is in ns
	for _, c := range []struct{ got, want string }{
		{s.Format(3.61e-6), "3.610 µs"},
		{less.Format(3.61e-6), "3610.0 ns"},
		{less.Format(0.98e-6), "980.0 ns"},
		{s.Summary(1e-6, 4e-8, 5), "1.000 µs ± 4%"},
		{s.Summary(1e-6, 0, 5), "1.000 µs ± 0%"},
		{s.Summary(1e-6, 0, 1), "1.000 µs (n=1)"},
		{s.Summary(1e-6, 0, 0), "—"},
		{s.Spread(1e-6, 1e-6), "± 1.000 µs"}, // reaches 0: no percentage
		{s.Spread(-1e-6, 2e-7), "± 20%"},
		{s.Spread(0, 0), "± 0%"},
		{s.Spread(0, 1e-7), "± 0.100 µs"},
		{s.Spread(1e-6, math.Inf(1)), "± ∞"},
		{s.Spread(1e-6, math.NaN()), "± ?"},
		{ScaleOf("B/op", 2048, 6144).Summary(6144, 0, 3), "6.000 KiB ± 0%"},
		{ScaleOf("allocs/op", 12, 36).Summary(36, 0, 3), "36.00 ± 0%"},
		{ScaleOf("allocs/op", 0, 0).Summary(0, 0, 3), "0 ± 0%"},
		{ScaleOf("req/s", 972.6, 12345).Format(12345), "12345.0"},
		{ScaleOf("sec/op").Format(1.5), "1.500 s"},
		{ScaleOf("sec/op", math.NaN(), math.Inf(1)).Format(2e-3), "0.002 s"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestAxis: ticks in one prefix, the decimals of their step.
func TestAxis(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		unit   string
		lo, hi float64
		per    float64
		ticks  []float64 // in the axis' units
		step   float64
		want   []string
	}{
		// The history site's stumble: 3.9e-07 sec/iter at "0.0000004".
		{"sec/iter", 3.5e-7, 8e-7, 1e-9, []float64{300, 400, 500, 600, 700, 800}, 100, []string{"300 ns", "400 ns", "500 ns", "600 ns", "700 ns", "800 ns"}},
		{"sec/op", 0, 1.2e-6, 1e-6, []float64{0, 0.4, 0.8, 1.2}, 0.4, []string{"0", "0.4 µs", "0.8 µs", "1.2 µs"}},
		{"s", 0, 4.5, 1, []float64{0, 2.5, 5}, 2.5, []string{"0", "2.5 s", "5.0 s"}},
		{"req/s", 0, 1500, 1, []float64{0, 500, 1000, 1500}, 500, []string{"0", "500", "1000", "1500"}},
		{"req/s", 11500, 12500, 1000, []float64{11.5, 12, 12.5}, 0.5, []string{"11.5k", "12.0k", "12.5k"}},
		{"", -2.5, 2.5, 1, []float64{-2.5, 0, 2.5}, 2.5, []string{"-2.5", "0", "2.5"}},
		{"", 0, 4e-5, 1e-6, []float64{0, 20, 40}, 20, []string{"0", "20µ", "40µ"}},
		{"B/op", 0, 3000, 1024, []float64{0, 1, 2, 3}, 1, []string{"0", "1 KiB", "2 KiB", "3 KiB"}},
		{"ns/op", 0, 1500, 1000, []float64{0, 0.5, 1, 1.5}, 0.5, []string{"0", "0.5 µs", "1.0 µs", "1.5 µs"}},
		// A logarithmic axis (step 0): each tick as short as it is.
		{"", 1, 50, 1, []float64{1, 2, 5, 10, 20, 50}, 0, []string{"1", "2", "5", "10", "20", "50"}},
		{"", 0, 0, 1, []float64{0}, 0, []string{"0"}},
	} {
		a := AxisOf(c.unit, c.lo, c.hi)
		if got := a.Per(); math.Abs(got-c.per) > 1e-12*c.per {
			t.Errorf("AxisOf(%q, %v, %v).Per() = %v, want %v", c.unit, c.lo, c.hi, got, c.per)
		}
		if got := a.Labels(c.ticks, c.step); !slices.Equal(got, c.want) {
			t.Errorf("AxisOf(%q, %v, %v).Labels(%v, %v) = %q, want %q", c.unit, c.lo, c.hi, c.ticks, c.step, got, c.want)
		}
	}
	if got := StepDecimals(0.25); got != 2 {
		t.Errorf("StepDecimals(0.25) = %d", got)
	}
}

// FuzzValue: any value of any unit prints without panicking, without an
// exponent, and as "NaN", "∞" or "-∞" only when it is not a finite
// number once in the unit's base; a summary and an axis' labels alike.
func FuzzValue(f *testing.F) {
	for _, c := range []struct {
		v, hw float64
		unit  string
	}{{3.9e-7, 1e-8, "sec/iter"}, {0, 0, "B/op"}, {-1e300, 1e300, "allocs/op"}, {5e-324, 0, "req/s"},
		{1e308, 1, "MB/s"}, {math.NaN(), 0, "ns/op"}, {math.Inf(1), 0, "x/y*z"}, {1, math.Inf(-1), "a b/c-d"}} {
		f.Add(c.v, c.hw, c.unit)
	}
	f.Fuzz(func(t *testing.T, v, hw float64, unit string) {
		_, base := unitOf(unit)
		isFinite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
		check := func(what, s string, finite bool) {
			t.Helper()
			if strings.ContainsAny(s, "eE") || strings.Contains(s, "Inf") {
				t.Fatalf("%s of %v %q: %q has an exponent or Inf", what, v, unit, s)
			}
			if finite && (strings.Contains(s, "NaN") || strings.Contains(s, "∞") || strings.Contains(s, "?")) {
				t.Fatalf("%s of %v %q: %q for a finite value", what, v, unit, s)
			}
		}
		check("Value", Value(v, unit), isFinite(v*base))
		// In a scale another value chose, v may be too large to print
		// once scaled: ∞, said so.
		sc := ScaleOf(unit, v, hw)
		check("Format", sc.Format(v), isFinite(v*base/sc.factor))
		check("Summary", sc.Summary(v, hw, 3), isFinite(v*base/sc.factor) && isFinite(hw*base/sc.factor))
		if isFinite(v * base) {
			a := AxisOf(unit, v, 0)
			for _, l := range a.Labels([]float64{v / a.Per(), 0}, math.Abs(v/a.Per())/4) {
				check("Labels", l, true)
			}
		}
	})
}
