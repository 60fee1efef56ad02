package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/benchgate/benchgate/gate"
)

// dash stands for a value that was not measured.
const dash = "—"

// rpsSummary prints throughput with one decimal, as the reference report.
func rpsSummary(s gate.Summary) string {
	return summary(s, 1, 1)
}

// summary prints mean ±half-width at dec decimals after dividing by scale.
// With one repetition there is no interval, and printing "±0" would claim a
// certainty the data does not have.
func summary(s gate.Summary, scale float64, dec int) string {
	switch {
	case s.N == 0:
		return dash
	case s.N == 1:
		return fmt.Sprintf("%.*f (n=1)", dec, s.Mean/scale)
	}
	return fmt.Sprintf("%.*f ±%.*f", dec, s.Mean/scale, dec, s.HalfWidth/scale)
}

// latencyUnit is the unit one table prints latencies in.
type latencyUnit struct {
	name  string
	scale float64 // seconds per unit
	dec   int
}

// chooseLatencyUnit picks one unit per table so the largest latency has at
// most three integer digits, and enough decimals that the smallest one keeps
// two or three significant digits.
func chooseLatencyUnit(seconds []float64) latencyUnit {
	lo, hi := math.Inf(1), 0.0
	for _, v := range seconds {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	u := latencyUnit{name: "ms", scale: 1e-3}
	switch {
	case hi == 0:
		return latencyUnit{name: "ms", scale: 1e-3, dec: 2}
	case hi >= 1:
		u = latencyUnit{name: "s", scale: 1}
	case hi < 1e-3:
		u = latencyUnit{name: "µs", scale: 1e-6}
	}
	switch lo /= u.scale; {
	case lo >= 100:
		u.dec = 0
	case lo >= 10:
		u.dec = 1
	case lo >= 1:
		u.dec = 2
	default:
		u.dec = 3
	}
	return u
}

func (u latencyUnit) summary(s gate.Summary) string { return summary(s, u.scale, u.dec) }

// rate prints an error rate so that one failure in 65,000 requests does not
// round to 0%.
func rate(f float64) string {
	p := f * 100
	switch {
	case f == 0:
		return "0%"
	case p < 0.001:
		return "<0.001%"
	case p < 0.1:
		return strconv.FormatFloat(p, 'g', 2, 64) + "%"
	}
	return fmt.Sprintf("%.2f%%", p)
}

// fraction prints a setting such as 0.95 or 0.1 as "95%" or "10%".
func fraction(f float64) string {
	return strconv.FormatFloat(f*100, 'f', -1, 64) + "%"
}

// errorCell is the err column: count and rate of failed requests.
func errorCell(t gate.SideTotals) string {
	if t.Errors == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", t.Errors, rate(t.ErrorRate))
}

// shortCommit abbreviates a git hash as git does, and leaves anything else
// (a tag, a value from the environment) alone up to a sane length.
func shortCommit(c string) string {
	if len(c) > 7 && isHex(c) {
		return c[:7]
	}
	return truncate(c, 40)
}

// shortHash shows enough of a sha256 to tell files apart at a glance.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

func isHex(s string) bool {
	return strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// truncateMiddle cuts s to n runes, an ellipsis in place of its middle, so
// a sentence that quotes a long line keeps its end: "pre-flight x fails on
// the candidate (exit 1: …) and passes on the baseline".
func truncateMiddle(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	tail := n / 4
	return string(r[:n-tail]) + "…" + string(r[len(r)-tail:])
}

// stamp prints a time in UTC, to the second: reports are compared across
// runners in different zones.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "not recorded"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func span(start, end time.Time) string {
	if start.IsZero() || end.IsZero() {
		return ""
	}
	return end.Sub(start).Round(time.Second).String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}

func seconds(f float64) string {
	return time.Duration(f * float64(time.Second)).String()
}
