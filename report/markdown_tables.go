package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/gate"
)

func (m *model) mdTables(b *strings.Builder) {
	if m.isGoBench() {
		m.mdGoTable(b)
		return
	}
	if len(m.tables) == 0 {
		b.WriteString("No cell was decided.\n\n")
		return
	}
	for _, t := range m.tables {
		if name := m.tableName(t, md); name != "" {
			fmt.Fprintf(b, "### %s\n\n", name)
		}
		rps := m.rpsName()
		head := []string{"class", "c"}
		align := []string{"---", "---:"}
		rounds := m.cellsDiffer()
		if rounds {
			head, align = append(head, "rounds"), append(align, "---:")
		}
		for _, side := range []string{"baseline", "candidate"} {
			head = append(head, side+" "+rps)
			for _, mt := range t.latMetrics {
				head = append(head, side+" "+latencyName(mt)+" ("+t.unit.name+")")
			}
		}
		for range 2 * (1 + len(t.latMetrics)) {
			align = append(align, "---:")
		}
		if t.hasErrors {
			head = append(head, "baseline err", "candidate err")
			align = append(align, "---:", "---:")
		}
		head = append(head, "Δ "+rps, "verdict")
		align = append(align, "---:", "---")
		b.WriteString("| " + strings.Join(head, " | ") + " |\n")
		b.WriteString("| " + strings.Join(align, " | ") + " |\n")
		for _, r := range t.rows {
			cells := []string{md(r.key.Class), levelOf(r.key)}
			if rounds {
				cells = append(cells, strconv.Itoa(r.rounds))
			}
			cells = append(cells, r.baseRPS)
			cells = append(cells, r.baseLat...)
			cells = append(cells, r.candRPS)
			cells = append(cells, r.candLat...)
			if t.hasErrors {
				cells = append(cells, r.baseErr, r.candErr)
			}
			cells = append(cells, r.delta, verdictText(r, true))
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		b.WriteString("\n")
	}
}

// rpsName heads the throughput columns: "rps", or for gRPC "req/s" as the
// gRPC reference report.
func (m *model) rpsName() string {
	if m.isGRPC() {
		return "req/s"
	}
	return "rps"
}

// latencyName heads a latency column: "p95", or "avg" for the mean as the
// gRPC reference report's "avg. latency".
func latencyName(mt gate.Metric) string {
	if mt == gate.Mean {
		return "avg"
	}
	return string(mt)
}

// mdResources writes one resources table per pin set and variant that
// measured any, after the verdict tables.
func (m *model) mdResources(b *strings.Builder) {
	for _, t := range m.tables {
		rt := t.res
		if rt == nil {
			continue
		}
		title := m.tableTitle("Resources", t, md)
		fmt.Fprintf(b, "### %s\n\n", title)
		per := m.noun().abbr
		cpu, mem := "CPU "+rt.cpu.name+"/"+per, rt.mem.name
		var head []string
		for _, side := range []string{"baseline", "candidate"} {
			head = append(head, side+" cores", side+" "+cpu, side+" mem mean "+mem, side+" mem peak "+mem)
		}
		head = append([]string{"class", "c"}, head...)
		head = append(head, "load generator "+cpu, "Δ CPU/"+per, "Δ mem peak", "verdict")
		align := []string{"---", "---:"}
		for range 11 {
			align = append(align, "---:")
		}
		align = append(align, "---")
		b.WriteString("| " + strings.Join(head, " | ") + " |\n")
		b.WriteString("| " + strings.Join(align, " | ") + " |\n")
		for _, r := range rt.rows {
			cells := []string{md(r.key.Class), levelOf(r.key),
				r.base.cores, r.base.cpu, r.base.memMean, r.base.memPeak,
				r.cand.cores, r.cand.cpu, r.cand.memMean, r.cand.memPeak,
				r.gen, r.dCPU, r.dMem, resVerdictText(r.verdicts, true)}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		b.WriteString("\n")
	}
	m.mdParts(b)
}

// mdPerCore writes throughput per core used, per cell and target.
func (m *model) mdPerCore(b *strings.Builder) {
	t := m.perCore
	if t == nil {
		return
	}
	b.WriteString("### Throughput per core\n\n")
	b.WriteString("Means over the decided rounds' rungs whose resources were measured.\n\n")
	var head, align []string
	if t.pinsCol {
		head, align = append(head, "pin set"), append(align, "---")
	}
	if t.variantCol {
		head, align = append(head, "variant"), append(align, "---")
	}
	rps := m.rpsName()
	head = append(head, "class", "c", "target", rps, "cores", rps+" per core", "CPU "+t.cpu.name+"/"+m.noun().abbr)
	align = append(align, "---", "---:", "---", "---:", "---:", "---:", "---:")
	b.WriteString("| " + strings.Join(head, " | ") + " |\n")
	b.WriteString("| " + strings.Join(align, " | ") + " |\n")
	for _, r := range t.rows {
		var cells []string
		if t.pinsCol {
			cells = append(cells, md(orDash(r.key.Pins)))
		}
		if t.variantCol {
			cells = append(cells, md(orDash(r.key.Variant)))
		}
		cells = append(cells, md(r.key.Class), levelOf(r.key), md(r.target),
			r.rps, r.cores, r.perCore, r.cpu)
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
}

// mdLatency writes each cell's latency distribution, folded one cell to a
// <details> element: the percentiles of both targets side by side and a
// text histogram whose buckets both share.
func (m *model) mdLatency(b *strings.Builder) {
	if !m.anyLatency() {
		return
	}
	b.WriteString("### Latency distribution\n\n")
	n := m.noun()
	fmt.Fprintf(b, "Every completed %s's latency per cell and target, merged over the decided rounds' rungs "+
		"(HdrHistogram, 3 significant digits). The histogram's buckets are shared by both targets, "+
		"from the fastest %s to the slower 99.9th percentile, with any slower %s in a last row; "+
		"each target's bars are scaled to its largest bucket.\n\n", n.one, n.one, n.many)
	for _, t := range m.tables {
		for _, cl := range t.latency {
			fmt.Fprintf(b, "<details><summary>%s</summary>\n\n", m.latencySummary(t, cl))
			u := cl.unit
			fmt.Fprintf(b, "| percentile | baseline (%s) | candidate (%s) | Δ |\n", u.name, u.name)
			b.WriteString("| --- | ---: | ---: | ---: |\n")
			for _, st := range latencyStats {
				cells := latencyCells(cl, st)
				fmt.Fprintf(b, "| %s | %s | %s | %s |\n", st.name, cells[0], cells[1], cells[2])
			}
			b.WriteString("\n")
			text := histogramText(sharedBuckets(cl.sides, 10), cl.sides, u, 24)
			f := fence(text)
			fmt.Fprintf(b, "%stext\n%s%s\n\n</details>\n\n", f, text, f)
		}
	}
	if m.unreadable > 0 {
		verb := "are"
		if m.unreadable == 1 {
			verb = "is"
		}
		fmt.Fprintf(b, "%s could not be read and %s left out.\n\n",
			plural(m.unreadable, "rung's histogram", "rungs' histograms"), verb)
	}
}

// latencySummary heads a cell's latency detail: the table and cell, then
// the median and 99th percentile of each target. It is HTML-escaped
// rather than markdown-escaped: GitHub may render <summary> either way.
func (m *model) latencySummary(t table, cl cellLatency) string {
	name := escapeHTML(cl.key.Class) + " c=" + levelOf(cl.key)
	if tn := m.tableName(t, escapeHTML); tn != "" {
		name = tn + " · " + name
	}
	var parts []string
	for _, p := range []float64{50, 99} {
		parts = append(parts, percentileName(p)+" "+latencyChange(cl, func(d *latencyDist) float64 { return d.percentile(p) }))
	}
	return name + ": " + strings.Join(parts, ", ")
}

// latencyChange is "1.20 → 1.45 ms (+20.8%)", or one side's value with a
// dash for the other.
func latencyChange(cl cellLatency, of func(*latencyDist) float64) string {
	b, c := cl.sides[0], cl.sides[1]
	s := dash
	if b != nil {
		s = cl.unit.micros(of(b))
	}
	s += " → "
	if c != nil {
		s += cl.unit.micros(of(c))
	} else {
		s += dash
	}
	s += " " + cl.unit.name
	if b != nil && c != nil && of(b) != 0 {
		s += " (" + percent((of(c)-of(b))/of(b)) + ")"
	}
	return s
}

// latencyStat is one row of a cell's latency table.
type latencyStat struct {
	name  string
	of    func(*latencyDist) float64 // µs, or a count
	count bool
}

// latencyStats are the rows of a cell's latency table, in order.
var latencyStats = func() []latencyStat {
	st := []latencyStat{{name: "min", of: func(d *latencyDist) float64 { return d.min }}}
	for _, p := range latencyPercentiles {
		st = append(st, latencyStat{name: percentileName(p), of: func(d *latencyDist) float64 { return d.percentile(p) }})
	}
	return append(st,
		latencyStat{name: "max", of: func(d *latencyDist) float64 { return d.max }},
		latencyStat{name: "mean", of: func(d *latencyDist) float64 { return d.mean }},
		latencyStat{name: "count", of: func(d *latencyDist) float64 { return float64(d.count) }, count: true},
	)
}()

// latencyCells are a stat's baseline, candidate and Δ columns.
func latencyCells(cl cellLatency, st latencyStat) [3]string {
	out := [3]string{dash, dash, dash}
	for i, d := range cl.sides {
		if d == nil {
			continue
		}
		if st.count {
			out[i] = strconv.FormatInt(d.count, 10)
		} else {
			out[i] = cl.unit.micros(st.of(d))
		}
	}
	if b, c := cl.sides[0], cl.sides[1]; b != nil && c != nil && st.of(b) != 0 {
		out[2] = percent((st.of(c) - st.of(b)) / st.of(b))
	}
	return out
}

// verdictText is the verdict column. Without colour or emphasis a gated
// regression must still stand out, so plain text shouts it.
func verdictText(r row, markdown bool) string {
	esc := cleanTerminal
	if markdown {
		esc = md
	}
	var s string
	switch {
	case r.gatedRegression && markdown:
		s = "**regression**"
	case r.gatedRegression:
		s = "REGRESSION"
	case r.verdict == gate.Regression:
		s = "regression (not gated)"
	default:
		s = esc(string(r.verdict))
	}
	if r.verdict == gate.Tie && len(r.unresolved) > 0 {
		s += " (" + rulesOut(r.unresolved, r.own, esc) + ")"
	}
	if len(r.carriers) > 0 && r.verdict != gate.Inconclusive {
		names := make([]string, len(r.carriers))
		for i, c := range r.carriers {
			names[i] = esc(string(c))
		}
		s += " (" + strings.Join(names, ", ") + ")"
	}
	if r.reason != "" {
		s += ": " + esc(r.reason)
	}
	if r.errorFailure {
		if markdown {
			s += " · **error rate over limit**"
		} else {
			s += ", ERROR RATE OVER LIMIT"
		}
	}
	if r.generatorBound {
		if markdown {
			s += " · **load generator saturated**"
		} else {
			s += ", LOAD GENERATOR SATURATED"
		}
	}
	return s
}

func (m *model) mdErrors(b *strings.Builder) {
	if len(m.errors) == 0 {
		return
	}
	b.WriteString("### Errors\n\n")
	n := m.noun()
	fmt.Fprintf(b, "Failed %s per cell and target, summed over the decided rounds.\n\n", n.many)
	fmt.Fprintf(b, "| cell | target | %s | errors | kinds | status codes |\n", n.many)
	b.WriteString("| --- | --- | ---: | ---: | --- | --- |\n")
	for _, e := range m.errors {
		fmt.Fprintf(b, "| %s | %s | %d | %d (%s) | %s | %s |\n",
			md(e.cell.String()), md(e.target), e.requests, e.errors, rate(ratio(e.errors, e.requests)),
			md(tally(e.kinds)), md(tally(e.statuses)))
	}
	b.WriteString("\n")
	if m.uncounted > 0 {
		rounds := "round"
		if m.incomplete > 1 {
			rounds = "rounds" // one per pin set
		}
		fmt.Fprintf(b, "%s of the incomplete %s not counted: the verdicts do not rest on them either.\n\n",
			plural(m.uncounted, "rung", "rungs"), rounds)
	}
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// tally prints "status 3, timeout 1"; raw names, the caller escapes.
func tally(cs []count) string {
	if len(cs) == 0 {
		return dash
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s ×%d", c.name, c.n)
	}
	return strings.Join(parts, ", ")
}
