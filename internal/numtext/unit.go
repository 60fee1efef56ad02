package numtext

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// A value of a unit prints as benchstat prints it (golang.org/x/perf's
// benchunit): scaled by a prefix chosen for the value, to 4 significant
// digits, a time with its unit ("390.0 ns", "1.500 s"), bytes with a
// binary prefix ("2.000 KiB"), a count with the SI prefix alone
// ("1.235k", "12.00", "390.0n"). A table's row, a history's column or a
// chart's axis share one scale, so its figures read alike.

// Kind is what a unit's values measure, which decides how they scale.
type Kind int

const (
	// Count is a dimensionless count ("allocs/op", "errors/request", a
	// benchmark's own unit): SI prefixes from n to T, written after the
	// number: "390.0n", "12.00", "1.235k".
	Count Kind = iota
	// Rate is a count per second ("req/s", "ops/s"): SI prefixes k to T;
	// a rate below 1 is written with decimals ("0.5000"), not as
	// milli-requests.
	Rate
	// Time is a time ("sec/op", "sec/iter", "s", "ns/op", "CPU
	// s/request"): in ns, µs, ms or s.
	Time
	// Bytes is an amount of bytes ("B/op", "B/s", "bytes"): B, KiB, MiB,
	// GiB or TiB, as benchstat scales bytes; less than a byte with
	// decimals.
	Bytes
)

func (k Kind) String() string {
	switch k {
	case Rate:
		return "rate"
	case Time:
		return "time"
	case Bytes:
		return "bytes"
	}
	return "count"
}

// timeUnits are the times a unit's numerator may name, in seconds.
var timeUnits = map[string]float64{
	"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
	"ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9,
}

// byteUnits are the amounts of bytes a unit's numerator may name, in
// bytes (benchunit knows "B", "MB" and "bytes").
var byteUnits = map[string]float64{"B": 1, "bytes": 1, "MB": 1e6}

// unitOf is what unit measures and its value in the kind's base unit
// (seconds, bytes): "ns/op" is a time of 1e-9 s. The unit is read as
// benchunit reads one: words separated by "*", "/", "-" and spaces, those
// after a "/" (until a "*") in the denominator. A byte or a time in the
// numerator makes bytes or a time, whichever comes first ("B/s" is
// bytes, "cpu-sec/op" a time); a time only in the denominator a rate
// ("req/s"); anything else is a count.
func unitOf(unit string) (Kind, float64) {
	kind, base := Count, 1.0
	denom := false
	for unit != "" {
		i := strings.IndexFunc(unit, func(r rune) bool { return r == '*' || r == '/' || r == '-' || unicode.IsSpace(r) })
		word := unit
		if i >= 0 {
			word = unit[:i]
		}
		switch {
		case word == "":
		case !denom && kind != Time:
			if f, ok := byteUnits[word]; ok {
				return Bytes, f
			}
			if f, ok := timeUnits[word]; ok {
				kind, base = Time, f
			}
		case kind == Count:
			if _, ok := timeUnits[word]; ok {
				kind = Rate
			}
		}
		if i < 0 {
			break
		}
		switch unit[i] {
		case '/':
			denom = true
		case '*':
			denom = false
		}
		unit = unit[i+1:]
	}
	return kind, base
}

// KindOf is what unit measures (Kind).
func KindOf(unit string) Kind {
	k, _ := unitOf(unit)
	return k
}

// prefix is one scaling of a kind's values: its factor in the kind's base
// unit and its symbol, with the least values that print with 1, 2 and 3
// decimals in it (4 significant digits), found by parsing the figures
// they round to, so that a value on a boundary scales as it prints.
type prefix struct {
	factor  float64
	name    string
	t100    float64 // 1 decimal from here: "100.0"
	t10, t1 float64 // 2 and 3 decimals: "10.00", "1.000"
	t1000   float64 // none, in the largest prefix: "1000"
}

func decimalPrefixes(exp int, names ...string) []prefix {
	var out []prefix
	for _, n := range names {
		at := func(m string) float64 { return parse(fmt.Sprintf("%se%d", m, exp)) }
		out = append(out, prefix{factor: math.Pow(10, float64(exp)), name: n,
			t1000: at("999.95"), t100: at("99.995"), t10: at("9.9995"), t1: at("0.99995")})
		exp -= 3
	}
	return out
}

// binaryPrefixes are powers of 1024. A value from 1000 to 1024 of one
// prints in the next smaller ("1020.0 KiB", not "0.996 MiB"), as
// benchstat prints it.
func binaryPrefixes(exp int, names ...string) []prefix {
	var out []prefix
	for _, n := range names {
		f := math.Pow(2, float64(exp))
		out = append(out, prefix{factor: f, name: n, t1000: 999.95 * f, t100: 99.995 * f, t10: 9.9995 * f, t1: 0.99995 * f})
		exp -= 10
	}
	return out
}

func parse(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return f
}

// prefixes are each kind's, largest first.
var prefixes = map[Kind][]prefix{
	Count: decimalPrefixes(12, "T", "G", "M", "k", "", "m", "µ", "n"),
	Rate:  decimalPrefixes(12, "T", "G", "M", "k", ""),
	Time:  decimalPrefixes(0, "", "m", "µ", "n"),
	Bytes: binaryPrefixes(40, "Ti", "Gi", "Mi", "Ki", ""),
}

// symbols are the units that follow a kind's prefix, after a space.
var symbols = map[Kind]string{Time: "s", Bytes: "B"}

// below are the least values, scaled by the smallest prefix, that print
// with 3, 4, … 10 decimals.
var below = func() []float64 {
	var out []float64
	for exp := -1; exp >= -8; exp-- {
		out = append(out, parse(fmt.Sprintf("9.9995e%d", exp)))
	}
	return out
}()

// Scale is how a set of values of one unit prints: one prefix and one
// number of decimals for all of them.
type Scale struct {
	base   float64 // the unit's value in its kind's base unit
	factor float64 // the prefix's
	prec   int
	prefix string
	symbol string
}

// ScaleOf is the scale that prints each of vals, values of unit, with 4
// significant digits at least: that of the smallest non-zero magnitude
// among them, as benchstat scales a row.
func ScaleOf(unit string, vals ...float64) Scale {
	kind, base := unitOf(unit)
	s := Scale{base: base, factor: 1, prec: 3, symbol: symbols[kind]}
	least := math.Inf(1)
	for _, v := range vals {
		if a := math.Abs(v * base); a != 0 && a < least {
			least = a
		}
	}
	if math.IsInf(least, 1) {
		return s // nothing to scale: no value, zeros, or none finite
	}
	ps := prefixes[kind]
	for i, p := range ps {
		s.factor, s.prefix = p.factor, p.name
		switch {
		case i == 0 && least >= p.t1000:
			s.prec = 0 // above the largest prefix: its digits, no decimals
			return s
		case least >= p.t100:
			s.prec = 1
			return s
		case least >= p.t10:
			s.prec = 2
			return s
		case least >= p.t1:
			s.prec = 3
			return s
		}
	}
	// Below the smallest prefix: more decimals, up to 10.
	x := least / s.factor
	s.prec = 3 + len(below) - 1
	for i, t := range below {
		if x >= t {
			s.prec = 3 + i
			break
		}
	}
	return s
}

// Format prints v in the scale: "1.000 µs", "2.000 KiB", "1.235k". Zero is
// "0" in the unit ("0 B"); a value too large for a number, or not one, is
// "∞", "-∞" or "NaN", never the exponent or "Inf" strconv would write.
func (s Scale) Format(v float64) string {
	x := v * s.base
	if !math.IsNaN(x) && math.IsInf(x/s.factor, 0) {
		x /= s.factor // far above the scale's least: too large once scaled
	}
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "-∞"
	case x == 0:
		return s.join("0", "")
	}
	n := strconv.FormatFloat(x/s.factor, 'f', s.prec, 64)
	if strings.Trim(n, "-0.") == "" {
		n = strings.TrimPrefix(n, "-") // a tiny negative rounds to 0, not -0
	}
	return s.join(n, s.prefix)
}

func (s Scale) join(number, prefix string) string {
	if s.symbol == "" {
		return number + prefix
	}
	return number + " " + prefix + s.symbol
}

// Spread is the half-width of mean's interval as benchstat writes it
// beside the mean: "± 4%" of the mean, to the whole percent; "± 0%" for
// none about a mean of 0. An interval that reaches 0 or past it has no
// such percentage (benchstat writes "?"): its half-width is printed in the
// scale, "± 1.200 µs". One that is not a number is "± ?".
func (s Scale) Spread(mean, halfWidth float64) string {
	hw := math.Abs(halfWidth)
	switch {
	case math.IsNaN(hw) || math.IsNaN(mean) || math.IsInf(mean, 0):
		return "± ?"
	case math.IsInf(hw, 0):
		return "± ∞"
	case hw == 0:
		return "± 0%"
	case hw >= math.Abs(mean):
		return "± " + s.Format(hw)
	}
	return "± " + strconv.FormatFloat(100*hw/math.Abs(mean), 'f', 0, 64) + "%"
}

// Summary prints a summary of n repetitions: "1.000 µs ± 4%", the mean
// alone with "(n=1)" for one repetition (no interval), "—" for none.
func (s Scale) Summary(mean, halfWidth float64, n int) string {
	switch {
	case n <= 0:
		return "—"
	case n == 1:
		return s.Format(mean) + " (n=1)"
	}
	return s.Format(mean) + " " + s.Spread(mean, halfWidth)
}

// Value prints v, a value of unit, in the scale that suits it alone:
// 3.9e-07 sec/op is "390.0 ns".
func Value(v float64, unit string) string { return ScaleOf(unit, v).Format(v) }

// Axis is how a chart's axis over values of one unit labels its ticks:
// in one prefix, the largest in which the axis's largest magnitude is 1
// or more (0 to 1.2e-6 s is "0" to "1.2 µs", 0 to 5 s "0" to "5 s"),
// with the decimals the ticks' step needs; a count or a rate from 0.001
// to 9999 takes none, as it reads plainly without one (0 to 1500 is "0"
// to "1500", not to "1.5k"; 0 to 12,000 is "0" to "12k"). A chart lays
// its ticks out in the axis' units (Per), so that ticks of bytes fall on
// round numbers of KiB.
type Axis struct {
	s Scale
}

// AxisOf is the axis of values of unit from lo to hi.
func AxisOf(unit string, lo, hi float64) Axis {
	kind, base := unitOf(unit)
	s := Scale{base: base, factor: 1, prec: -1, symbol: symbols[kind]}
	top := math.Max(math.Abs(lo*base), math.Abs(hi*base))
	if top == 0 || math.IsNaN(top) || math.IsInf(top, 0) || (kind == Count || kind == Rate) && top >= 1e-3 && top < 1e4 {
		return Axis{s}
	}
	for _, p := range prefixes[kind] {
		s.factor, s.prefix = p.factor, p.name
		if top >= p.factor*(1-1e-9) {
			break
		}
	}
	return Axis{s}
}

// Per is how many of the unit's values make one of the axis's: a tick at
// t (in the axis' units) stands at the value t × Per.
func (a Axis) Per() float64 { return a.s.factor / a.s.base }

// Labels prints ticks, in the axis' units, with the decimals step (their
// spacing, in the axis' units) needs; a step of 0 or less (a logarithmic
// axis) prints each tick as short as it is. A tick at 0 is "0".
func (a Axis) Labels(ticks []float64, step float64) []string {
	d := -1
	if step > 0 {
		d = StepDecimals(step)
	}
	out := make([]string, len(ticks))
	for i, t := range ticks {
		n := strconv.FormatFloat(t, 'f', d, 64)
		if d < 0 {
			// Six significant digits, then as short as that is: a tick
			// of 0.1 × 1000 is "100", not "100.00000000000001".
			n = strconv.FormatFloat(parse(strconv.FormatFloat(t, 'g', 6, 64)), 'f', -1, 64)
		}
		switch {
		case math.IsNaN(t) || math.IsInf(t, 0):
			out[i] = a.s.Format(t)
		case strings.Trim(n, "-0.") == "":
			out[i] = "0"
		default:
			out[i] = a.s.join(n, a.s.prefix)
		}
	}
	return out
}

// StepDecimals is how many decimals show the multiples of step (> 0): 1
// for 0.5, 2 for 0.25, 0 for 20.
func StepDecimals(step float64) int {
	if step <= 0 || math.IsNaN(step) || math.IsInf(step, 0) {
		return 0
	}
	d := max(int(math.Ceil(-math.Log10(step)-1e-9)), 0)
	// A step of 2.5 × 10^k needs one more.
	if m := step / math.Pow(10, -float64(d)); math.Abs(m-math.Round(m)) > 1e-6 {
		d++
	}
	return d
}
