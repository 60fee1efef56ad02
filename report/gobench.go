package report

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/benchgate/benchgate/gate"
)

// goRow is one unit of one Go benchmark: the table of the go-client
// reference report, with the median beside each side's mean.
type goRow struct {
	key                    gate.CellKey // untrusted class
	unit                   string       // untrusted: custom units come from the benchmark
	base, cand             string       // mean ±half-width, in the row's scale
	baseMedian, candMedian string
	delta                  string
	verdict                gate.Verdict
	gated, gatedRegression bool
	reason                 string // of an inconclusive verdict
	// unresolved is the decision when it is a tie that could not
	// resolve its band.
	unresolved []gate.Decision
}

// isGoBench says whether the results are Go benchmark results: their
// cells are benchmarks and their metrics units.
func (m *model) isGoBench() bool { return m.in.Results.Benchmarks() }

// goRows lays out every decision of every cell as a row, in the cells'
// order and each cell's metric order.
func (m *model) goRows() []goRow {
	var rows []goRow
	for _, c := range m.in.Comparison.Cells {
		for _, d := range c.Decisions {
			scale, suffix := unitScale(string(d.Metric), d.Baseline, d.Candidate)
			r := goRow{
				key: c.Key, unit: string(d.Metric),
				base: valueSummary(d.Baseline, scale, suffix), cand: valueSummary(d.Candidate, scale, suffix),
				baseMedian: median(d.Baseline, scale, suffix), candMedian: median(d.Candidate, scale, suffix),
				delta: dash, verdict: d.Verdict,
			}
			r.delta = deltaText(d)
			if d.Verdict == gate.Tie && d.Unresolved {
				r.unresolved = []gate.Decision{d}
			}
			for _, g := range c.Gated {
				if g == d.Metric {
					r.gated = true
				}
			}
			r.gatedRegression = r.gated && d.Verdict == gate.Regression
			if d.Verdict == gate.Inconclusive {
				r.reason = d.Reason
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// unitScale picks how a unit's values print: times in ns, µs, ms or s,
// bytes in B, KiB, MiB or GiB, rates per second likewise, counts as they
// are. The scale fits the larger of the two means.
func unitScale(unit string, a, b gate.Summary) (scale float64, suffix string) {
	v := math.Max(math.Abs(a.Mean), math.Abs(b.Mean))
	switch unit {
	case "sec/op":
		switch {
		case v >= 1:
			return 1, " s"
		case v >= 1e-3:
			return 1e-3, " ms"
		case v >= 1e-6:
			return 1e-6, " µs"
		}
		return 1e-9, " ns"
	case "B/op", "B/s":
		per := strings.TrimPrefix(unit, "B")
		for _, u := range []struct {
			s float64
			n string
		}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
			if v >= u.s {
				return u.s, " " + u.n + per
			}
		}
		return 1, " B" + per
	}
	return 1, ""
}

// decimals is how many decimals print v with three significant digits
// at least, and no exponent: 1234 → 0, 12.345 → 1, 0.01234 → 4. An
// integer prints without decimals.
func decimals(v float64) int {
	a := math.Abs(v)
	switch {
	case v == math.Trunc(v) && a < 1e15, a >= 100:
		return 0
	case a >= 10:
		return 1
	case a >= 1:
		return 2
	case a == 0:
		return 0
	}
	return int(math.Ceil(-math.Log10(a))) + 2
}

func number(v float64) string { return fmt.Sprintf("%.*f", decimals(v), v) }

// valueSummary is "mean ±half-width unit", the half-width at the mean's
// precision.
func valueSummary(s gate.Summary, scale float64, suffix string) string {
	switch s.N {
	case 0:
		return dash
	case 1:
		return number(s.Mean/scale) + suffix + " (n=1)"
	}
	dec := decimals(s.Mean / scale)
	return fmt.Sprintf("%.*f ±%.*f%s", dec, s.Mean/scale, dec, s.HalfWidth/scale, suffix)
}

func median(s gate.Summary, scale float64, suffix string) string {
	if s.N == 0 {
		return dash
	}
	return number(s.Median/scale) + suffix
}

func goVerdictText(r goRow, markdown bool) string {
	return verdictText(row{verdict: r.verdict, gatedRegression: r.gatedRegression, reason: r.reason,
		unresolved: r.unresolved, own: gate.Metric(r.unit)}, markdown)
}

// mdGoTable writes the Go benchmark table.
func (m *model) mdGoTable(b *strings.Builder) {
	rows := m.goRows()
	if len(rows) == 0 {
		b.WriteString("No benchmark was decided.\n\n")
		return
	}
	b.WriteString("| benchmark | unit | baseline | baseline median | candidate | candidate median | Δ | verdict |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for i, r := range rows {
		name := md(r.key.Class)
		if i > 0 && rows[i-1].key == r.key {
			name = "" // the benchmark's other units
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, md(r.unit),
			r.base, r.baseMedian, r.cand, r.candMedian, r.delta, goVerdictText(r, true))
	}
	b.WriteString("\n")
}

// termGoTable writes the Go benchmark table for a terminal.
func (m *model) termGoTable(b *strings.Builder, paint palette) error {
	rows := m.goRows()
	if len(rows) == 0 {
		b.WriteString("\nno benchmark was decided\n")
		return nil
	}
	b.WriteString("\n")
	width := len("benchmark")
	for _, r := range rows {
		width = max(width, len([]rune(cleanTerminal(r.key.Class))))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-len([]rune(s))) }
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tunit\tbaseline\tmedian\tcandidate\tmedian\tΔ\t  verdict\n", pad("benchmark"))
	for i, r := range rows {
		name := cleanTerminal(r.key.Class)
		if i > 0 && rows[i-1].key == r.key {
			name = ""
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t  %s\n", pad(name), cleanTerminal(r.unit),
			r.base, r.baseMedian, r.cand, r.candMedian, r.delta, paint.byVerdict(verdictColour(r), goVerdictText(r, false)))
	}
	return tw.Flush()
}

// verdictColour is the verdict a row is painted by: a regression no rule
// gates is shown, not alarmed.
func verdictColour(r goRow) gate.Verdict {
	if r.verdict == gate.Regression && !r.gatedRegression {
		return gate.Tie
	}
	return r.verdict
}
