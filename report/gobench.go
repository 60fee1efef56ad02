package report

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/numtext"
)

// goRow is one unit of one Go benchmark: the table of the go-client
// reference report, with the median beside each side's mean.
type goRow struct {
	key                    gate.CellKey // untrusted class
	unit                   string       // untrusted: custom units come from the benchmark
	base, cand             string       // mean ± spread, in the row's scale (numtext.Scale)
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
			b, k := d.Baseline, d.Candidate
			// One scale a row, as benchstat's: every figure of the row
			// in one prefix, each to 4 significant digits at least.
			sc := numtext.ScaleOf(gate.Metric(string(d.Metric)).Unit(), b.Mean, k.Mean, b.Median, k.Median)
			r := goRow{
				key: c.Key, unit: string(d.Metric),
				base: sc.Summary(b.Mean, b.HalfWidth, b.N), cand: sc.Summary(k.Mean, k.HalfWidth, k.N),
				baseMedian: median(sc, b), candMedian: median(sc, k),
				delta: deltaText(d), verdict: d.Verdict,
			}
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

// median is a side's median in the row's scale.
func median(sc numtext.Scale, s gate.Summary) string {
	if s.N == 0 {
		return dash
	}
	return sc.Format(s.Median)
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
