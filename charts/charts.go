package charts

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/benchgate/benchgate/internal/numtext"
	"github.com/benchgate/benchgate/internal/textsafe"
)

// Chart is a line chart: one line with markers and interval bars per
// series over a shared numeric x axis.
type Chart struct {
	Title  string
	XLabel string
	YLabel string
	// YUnit is the unit of the points' Y ("sec/op", "req/s", "B/op"):
	// the y axis's ticks and the points' tooltips print in it
	// (numtext.KindOf: "400 ns", "1.5 KiB", "12k"). Empty is a count.
	YUnit string
	// LogX puts the x axis on a logarithmic scale (for concurrency levels
	// such as 1, 2, 4, … 64); points with X <= 0 are then left out.
	LogX   bool
	Series []Series
}

// Series is one line of a chart, e.g. the baseline or the candidate.
type Series struct {
	Name   string
	Points []Point
}

// Point is one measurement. Lo and Hi bound its interval and equal Y when
// there is none; an interval that does not hold Y, or is not finite, is
// drawn as none. Label names the point's x on the axis ("c=8", a short
// commit); when no point of a chart has one the x axis gets numeric ticks.
type Point struct {
	X, Y   float64
	Lo, Hi float64
	Label  string
}

// Limits on caller text, in runes, so no name can push the rest of a chart
// out of its frame.
const (
	titleRunes = 72
	labelRunes = 60
	nameRunes  = 40
	tickRunes  = 16
)

// series is a Series ready to draw: its points finite, their intervals
// checked, sorted by x.
type series struct {
	name   string
	index  int // the caller's position: it picks colour, dash and marker
	points []Point
}

// prepare keeps the drawable points of each series, in x order.
func prepare(c Chart) []series {
	out := make([]series, 0, len(c.Series))
	for i, s := range c.Series {
		ps := make([]Point, 0, len(s.Points))
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) || (c.LogX && p.X <= 0) {
				continue
			}
			if !finite(p.Lo) || !finite(p.Hi) || p.Lo > p.Y || p.Hi < p.Y {
				p.Lo, p.Hi = p.Y, p.Y
			}
			ps = append(ps, p)
		}
		slices.SortStableFunc(ps, func(a, b Point) int {
			switch {
			case a.X < b.X:
				return -1
			case a.X > b.X:
				return 1
			}
			return 0
		})
		out = append(out, series{name: s.Name, index: i, points: ps})
	}
	return out
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// cleanText makes caller text one line of printable characters: control
// characters and spaces become one space, every other character that
// textsafe does not show (bidirectional overrides, which could reorder the
// text around them, zero-width and tag characters) is dropped, invalid
// UTF-8 becomes U+FFFD, and the result is cut to limit runes with an
// ellipsis.
func cleanText(s string, limit int) string {
	var b strings.Builder
	space := false
	for _, r := range s { // invalid UTF-8 ranges as U+FFFD
		switch {
		case unicode.IsControl(r) || unicode.IsSpace(r):
			space = true
			continue
		case !textsafe.Shown(r):
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	out := b.String()
	if utf8.RuneCountInString(out) > limit {
		rs := []rune(out)
		out = strings.TrimRight(string(rs[:limit-1]), " ") + "…"
	}
	return out
}

// number formats a data value exactly (it reads back as the same float64),
// for machine-readable attributes.
func number(v float64) string {
	if v == 0 {
		return "0" // and never "-0"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// plainNumber formats a value to 6 significant digits without an exponent,
// as mermaid's grammar reads numbers.
func plainNumber(v float64) string {
	s := strconv.FormatFloat(v, 'g', 6, 64)
	if strings.ContainsAny(s, "eE") {
		f, _ := strconv.ParseFloat(s, 64)
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// niceNum is a "nice" number (1, 2, 2.5 or 5 times a power of ten) near x:
// the nearest when round, else the least not below it (Heckbert, Graphics
// Gems, 1990).
func niceNum(x float64, round bool) float64 {
	exp := math.Floor(math.Log10(x))
	f := x / math.Pow(10, exp)
	var nf float64
	if round {
		switch {
		case f < 1.5:
			nf = 1
		case f < 2.25:
			nf = 2
		case f < 3.5:
			nf = 2.5
		case f < 7.5:
			nf = 5
		default:
			nf = 10
		}
	} else {
		switch {
		case f <= 1:
			nf = 1
		case f <= 2:
			nf = 2
		case f <= 2.5:
			nf = 2.5
		case f <= 5:
			nf = 5
		default:
			nf = 10
		}
	}
	return nf * math.Pow(10, exp)
}

// niceTicks returns about n evenly spaced nice values covering [lo, hi],
// the first at or below lo and the last at or above hi, and their step.
// A degenerate range is widened around its value first.
func niceTicks(lo, hi float64, n int) ([]float64, float64) {
	lo, hi = widen(lo, hi)
	step := niceNum(niceNum(hi-lo, false)/float64(max(n-1, 1)), true)
	first := math.Floor(lo/step + 1e-9)
	last := math.Ceil(hi/step - 1e-9)
	count := last - first + 1
	if !(count >= 1 && count <= float64(4*max(n, 1)+4)) || first+1 == first {
		// The step is below the values' precision (means of 1e17 a few
		// units apart: k+1 == k, and counting from first to last would
		// never end), or not a number: the range's ends are the ticks.
		if !(hi > lo) || !finite(hi-lo) {
			return []float64{lo}, 0
		}
		return []float64{lo, hi}, hi - lo
	}
	var ticks []float64
	for i := 0; i < int(count); i++ {
		k := first + float64(i)
		v := k * step
		// k*step of a decimal step is not exact: round to the step's
		// precision so ticks print and compare as the numbers they are.
		ticks = append(ticks, roundTo(v, step))
	}
	return ticks, step
}

// widen gives a range with no width some: ±10% of its value, or ±1 at 0.
func widen(lo, hi float64) (float64, float64) {
	if hi > lo {
		return lo, hi
	}
	d := math.Abs(lo) * 0.1
	if d == 0 {
		d = 1
	}
	return lo - d, hi + d
}

// roundTo rounds v to the decimals step shows.
func roundTo(v, step float64) float64 {
	d := numtext.StepDecimals(step) + 1
	p := math.Pow(10, float64(d))
	r := math.Round(v*p) / p
	if r == 0 {
		return 0
	}
	return r
}

// logTicks returns the ticks of a logarithmic axis over [lo, hi] (both
// > 0): the powers of ten within it, with 2 and 5 times them when fewer
// than three powers fall inside.
func logTicks(lo, hi float64) []float64 {
	a, b := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	within := func(v float64) bool { return v >= lo*(1-1e-9) && v <= hi*(1+1e-9) }
	var ticks []float64
	for k := a; k <= b; k++ {
		if v := math.Pow(10, float64(k)); within(v) {
			ticks = append(ticks, v)
		}
	}
	if len(ticks) >= 3 {
		return ticks
	}
	ticks = ticks[:0]
	for k := a; k <= b; k++ {
		for _, m := range []float64{1, 2, 5} {
			if v := m * math.Pow(10, float64(k)); within(v) {
				ticks = append(ticks, v)
			}
		}
	}
	return ticks
}

// axisTicks are about n nice ticks over [lo, hi], values of unit, and
// their labels: laid out in the axis' units (numtext.Axis), so that ticks
// of bytes fall on round numbers of KiB and ticks of seconds print as
// "200 ns", not "0.0000002".
func axisTicks(lo, hi float64, n int, unit string) (ticks []float64, labels []string) {
	ax := numtext.AxisOf(unit, lo, hi)
	per := ax.Per()
	ts, step := niceTicks(lo/per, hi/per, n)
	labels = ax.Labels(ts, step)
	ticks = make([]float64, len(ts))
	for i, t := range ts {
		ticks[i] = t * per
	}
	return ticks, labels
}
