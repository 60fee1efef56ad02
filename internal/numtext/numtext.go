// Package numtext prints the figures and names that the terminal and
// markdown reports (report), the charts (charts) and the history site
// (site) show alike: a value of a unit as benchstat prints it (Value,
// Scale: "390.0 ns", "1.000 µs ± 4%", "2.000 KiB", "1.235k") and an axis'
// ticks in it (Axis), a relative change, a p-value, a time in seconds, a
// commit, a day. One function each, so a figure reads the same
// everywhere.
package numtext

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Percent is a relative change as a signed percentage: "+12.3%",
// "0.0%" for less than 0.05%.
func Percent(f float64) string {
	p := f * 100
	if math.Abs(p) < 0.05 {
		return "0.0%"
	}
	return fmt.Sprintf("%+.1f%%", p)
}

// Change is cand's change from base as Percent prints it, or "new" where
// base is 0 and cand is not (a function only the candidate runs).
func Change(base, cand float64) string {
	if base == 0 {
		if cand == 0 {
			return Percent(0)
		}
		return "new"
	}
	return Percent(cand/base - 1)
}

// Share is a part of a whole as a whole percentage: "45%".
func Share(f float64) string {
	return strconv.FormatFloat(math.Round(f*100), 'f', 0, 64) + "%"
}

// PercentInterval is a relative change with its interval as it is, not as
// a ± that would hide a lopsided one: "+28.2% [+1.4%, +62.1%]", each
// figure as Percent prints it.
func PercentInterval(change, lo, hi float64) string {
	return Percent(change) + " [" + Percent(lo) + ", " + Percent(hi) + "]"
}

// PValue is a p-value to 2 significant digits, and one too small to print
// (it may have underflowed to 0) as "< 1e-300".
func PValue(p float64) string {
	if p < 1e-300 {
		return "< 1e-300"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// Commit is a commit as a history table shows it: a git hash to 7 digits,
// any other name (a tag) whole up to 40 runes, else its first 39 and an
// ellipsis.
func Commit(c string) string {
	if len(c) > 7 && strings.Trim(strings.ToLower(c), "0123456789abcdef") == "" {
		return c[:7]
	}
	if utf8.RuneCountInString(c) > 40 {
		return string([]rune(c)[:39]) + "…"
	}
	return c
}

// Day is a run's day: "2026-01-31", in UTC.
func Day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// Seconds renders a latency or a duration with three significant digits in a unit
// that keeps it readable: 456µs, 1.23ms, 12.3s.
func Seconds(s float64) string {
	unit, v := "s", s
	switch {
	case s == 0:
		return "0"
	case s < 1e-3:
		unit, v = "µs", s*1e6
	case s < 1:
		unit, v = "ms", s*1e3
	}
	dec := 0
	switch {
	case v < 10:
		dec = 2
	case v < 100:
		dec = 1
	}
	return strconv.FormatFloat(v, 'f', dec, 64) + unit
}
