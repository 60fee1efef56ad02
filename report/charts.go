package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchgate/benchgate/charts"
	"github.com/benchgate/benchgate/gate"
)

// secCharts is the markdown report's throughput charts, written after the
// verdict tables (sections() places it). Its value lies outside
// markdown.go's iota run, so a part added there cannot take it; it is above
// secFailures as every part after the failures is.
const secCharts sectionID = 1000

// ThroughputCharts draws, per pin set, variant and class, the mean
// throughput of the baseline and the candidate against concurrency with
// each mean's interval, from the comparison's decided rps summaries: two
// series, "baseline" and "candidate", their points labelled "c=N". Only
// classes measured at two or more concurrency levels get a chart (one
// point is no curve), in the order their first cell has in the comparison.
// A side with no repetition in a cell has no point there. Go benchmarks
// have no concurrency and get none. A title reads "Q01 — rps by
// concurrency", after the pin set and variant as the tables name them
// ("cpus=1 · csv · Q01 — …") when the grid has any, each name cut to
// chartNameRunes. Names are the input's, unescaped: the charts package
// escapes them for each medium.
func ThroughputCharts(in Input) []charts.Chart {
	var out []charts.Chart
	for _, c := range ClassCharts(in) {
		out = append(out, c.Chart)
	}
	return out
}

// ClassChart is one of ThroughputCharts with the pin set, variant and
// class whose cells it draws, in full and unescaped, e.g. to name a file
// after them.
type ClassChart struct {
	Pins, Variant, Class string
	Chart                charts.Chart
}

// ClassCharts is ThroughputCharts with each chart's pin set, variant and
// class.
func ClassCharts(in Input) []ClassChart {
	in = in.normalise()
	if in.Results.Benchmarks() {
		return nil
	}
	return throughputCharts(in.Comparison)
}

// chartNameRunes caps each name in a chart's title, so that the class, pin
// set and variant all show within the title's room.
const chartNameRunes = 20

func throughputCharts(c gate.Comparison) []ClassChart {
	type groupKey struct{ pins, variant, class string }
	var order []groupKey
	groups := map[groupKey][]gate.CellResult{}
	anyPins, anyVariant := false, false
	for _, cell := range c.Cells {
		k := groupKey{cell.Key.Pins, cell.Key.Variant, cell.Key.Class}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], cell)
		anyPins = anyPins || k.pins != ""
		anyVariant = anyVariant || k.variant != ""
	}
	interval := "mean"
	if conf := c.Settings.Confidence; conf > 0 && conf < 1 {
		interval = "mean, " + strconv.FormatFloat(conf*100, 'f', -1, 64) + "% interval"
	}
	var out []ClassChart
	for _, k := range order {
		cells := slices.Clone(groups[k])
		slices.SortStableFunc(cells, func(a, b gate.CellResult) int { return cmp.Compare(a.Key.Concurrency, b.Key.Concurrency) })
		base := charts.Series{Name: "baseline"}
		cand := charts.Series{Name: "candidate"}
		levels := map[int]bool{}
		for _, cell := range cells {
			d, ok := cell.Decision(gate.RPS)
			if !ok {
				continue
			}
			label := "c=" + strconv.Itoa(cell.Key.Concurrency)
			for _, side := range []struct {
				s      gate.Summary
				series *charts.Series
			}{{d.Baseline, &base}, {d.Candidate, &cand}} {
				if side.s.N == 0 {
					continue
				}
				p := charts.Point{X: float64(cell.Key.Concurrency), Y: side.s.Mean, Lo: side.s.Mean, Hi: side.s.Mean, Label: label}
				if side.s.N >= 2 {
					p.Lo, p.Hi = side.s.Lo(), side.s.Hi()
				}
				side.series.Points = append(side.series.Points, p)
				levels[cell.Key.Concurrency] = true
			}
		}
		if len(levels) < 2 {
			continue
		}
		least, most := 0, 0
		for l := range levels {
			if least == 0 || l < least {
				least = l
			}
			most = max(most, l)
		}
		var parts []string
		if anyPins {
			parts = append(parts, truncate(cmp.Or(k.pins, "(no pin set)"), chartNameRunes))
		}
		if anyVariant {
			parts = append(parts, truncate(cmp.Or(k.variant, "(no variant)"), chartNameRunes))
		}
		parts = append(parts, truncate(k.class, chartNameRunes)+" — rps by concurrency")
		out = append(out, ClassChart{Pins: k.pins, Variant: k.variant, Class: k.class, Chart: charts.Chart{
			Title:  strings.Join(parts, " · "),
			XLabel: "concurrency",
			YLabel: "rps (" + interval + ")",
			YUnit:  gate.RPS.Unit(),
			// Concurrency levels are usually doublings: a log axis spaces
			// them evenly.
			LogX:   least > 0 && most >= 4*least,
			Series: []charts.Series{base, cand},
		}})
	}
	return out
}

// TrendPoint is one run in a metric's history: when it ran, the commit it
// measured, and the metric's mean with its interval (Lo = Hi = Mean when
// there is none).
type TrendPoint struct {
	Date   time.Time
	Commit string
	Mean   float64
	Lo, Hi float64
}

// TrendChart draws a history: the points in date order (those of equal
// date keep their order) at x = 1, 2, 3 …, each labelled with its commit
// shortened (or its date when the commit is unknown), as one series named
// "mean" with the intervals, values of unit (the y axis's ticks print in
// it). The caller's title names the cell, target and metric; the y axis
// is left unnamed for the caller to set.
func TrendChart(title, unit string, points []TrendPoint) charts.Chart {
	ps := slices.Clone(points)
	slices.SortStableFunc(ps, func(a, b TrendPoint) int { return a.Date.Compare(b.Date) })
	s := charts.Series{Name: "mean"}
	for i, p := range ps {
		label := shortCommit(p.Commit)
		if p.Commit == "" && !p.Date.IsZero() {
			label = historyDate(p.Date)
		}
		s.Points = append(s.Points, charts.Point{X: float64(i + 1), Y: p.Mean, Lo: p.Lo, Hi: p.Hi, Label: label})
	}
	return charts.Chart{Title: title, XLabel: "run, oldest first", YUnit: unit, Series: []charts.Series{s}}
}

// mdCharts writes one mermaid chart per ThroughputCharts chart, each
// folded in a <details> element under its title; the tables above keep
// every number.
func (m *model) mdCharts(b *strings.Builder) {
	if m.isGoBench() {
		return
	}
	var blocks []string
	for _, cc := range throughputCharts(m.in.Comparison) {
		c := cc.Chart
		c.YLabel = "rps (mean)" // mermaid draws no interval
		mer := charts.Mermaid(c)
		if mer == "" {
			continue
		}
		// The title is HTML-escaped for <summary>, as the latency
		// details' are; Mermaid makes its own text safe.
		blocks = append(blocks, fmt.Sprintf("<details><summary>%s</summary>\n\n%s\n</details>\n\n", escapeHTML(c.Title), mer))
	}
	if len(blocks) == 0 {
		return
	}
	b.WriteString("### Throughput by concurrency\n\n")
	b.WriteString("Each target's mean throughput by concurrency, per class: the means of the tables above, " +
		"which give their intervals too.\n\n")
	for _, s := range blocks {
		b.WriteString(s)
	}
}
