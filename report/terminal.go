package report

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
)

// TerminalOptions shape the terminal report.
type TerminalOptions struct {
	// Color marks verdicts with ANSI colours. Leave it false for anything
	// that is not an interactive terminal; ColorFor decides for a file.
	Color bool
}

// ColorFor reports whether output to w should be coloured: only when w is
// a terminal's file and the user has not opted out with NO_COLOR
// (https://no-color.org) or TERM=dumb.
func ColorFor(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	return colorFor(f.Fd(), os.Getenv)
}

func colorFor(fd uintptr, getenv func(string) string) bool {
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}

// Terminal writes a compact report: the outcome, the correctness checks, one
// aligned table per pin set and variant, the resources when measured, each
// cell's latency distribution when the rungs carry histograms, the load
// generator's CPU and the failures. Untrusted names are shown with control
// characters escaped, so a class name cannot move the cursor or recolour the
// terminal; with opt.Color false the output holds no escape sequence at all.
func Terminal(w io.Writer, in Input, opt TerminalOptions) error {
	m := newModel(in)
	paint := newPalette(opt.Color)
	var b strings.Builder
	r := m.in.Results

	name := r.Scenario.Name
	if name == "" {
		name = "(unnamed scenario)"
	}
	outcome := m.outcomeText(false)
	fmt.Fprintf(&b, "benchgate: %s — %s\n", cleanTerminal(name), paint.outcome(m.in.Comparison.Outcome, outcome))
	design := ""
	if d := m.designText(); d != "" {
		design = " · " + d
	}
	fmt.Fprintf(&b, "baseline%s vs candidate%s · %s × %s%s · %s, tie within %s\n",
		termCommit(r.Env.Baseline), termCommit(r.Env.Candidate),
		plural(len(m.in.Comparison.Cells), "cell", "cells"), m.roundsText("round", "rounds", cleanTerminal),
		design, m.intervalsText(), m.bandText(cleanTerminal))
	if s := m.statusText(false); s != "" {
		fmt.Fprintf(&b, "%s\n", paint.warn.Sprint(s))
	}
	m.termCorrectness(&b, paint)

	if m.isGoBench() {
		if err := m.termGoTable(&b, paint); err != nil {
			return err
		}
	}
	for _, t := range m.tables {
		if m.isGoBench() {
			break
		}
		b.WriteString("\n")
		if name := m.tableName(t, cleanTerminal); name != "" {
			fmt.Fprintf(&b, "%s\n", name)
		}
		m.termTable(&b, t, paint)
	}

	if err := m.termResources(&b, paint); err != nil {
		return err
	}
	if err := m.termParts(&b); err != nil {
		return err
	}
	if err := m.termLatency(&b); err != nil {
		return err
	}
	if lines := m.cutLines(cleanTerminal); len(lines) > 0 {
		b.WriteString("\ncells cut otherwise than load.slice says (their requests too slow for it):\n")
		for _, l := range lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	if g := m.generator; g != nil {
		fmt.Fprintf(&b, "\nload generator: %s\n", g.text(cleanTerminal))
		if s := g.saturationText(cleanTerminal); s != "" {
			fmt.Fprintf(&b, "%s\n", paint.warn.Sprint("WARNING: "+s))
		}
	}

	for _, u := range m.unsustained {
		fmt.Fprintf(&b, "%s\n", paint.warn.Sprint("WARNING: open loop, "+u.text(cleanTerminal)))
	}

	m.termUnresolved(&b, paint)
	if listed := m.listedFailures(); len(listed) > 0 {
		b.WriteString("\nfailures:\n")
		for _, it := range listed {
			fmt.Fprintf(&b, "  %s\n", failureText(it, false))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// termTable writes one compact verdict table. The verdict is the last
// column so its colour codes, which would count as width, cannot misalign
// anything. A gRPC table's latency columns are grouped under a line naming
// each target, so their headings stay short.
func (m *model) termTable(b *strings.Builder, t table, paint palette) {
	rps := m.rpsName()
	grouped := len(t.latMetrics) > 1
	var head []string
	for _, side := range []string{"baseline", "candidate"} {
		prefix := side + " "
		if grouped {
			prefix = ""
		}
		head = append(head, prefix+rps)
		for _, mt := range t.latMetrics {
			head = append(head, prefix+latencyName(mt)+" "+t.unit.name)
		}
	}
	pad := classPad(t.rows)
	rounds := m.cellsDiffer()
	if rounds {
		head = append([]string{"rounds"}, head...)
	}
	head = append([]string{pad("class"), "c"}, head...)
	if t.hasErrors {
		head = append(head, "baseline err", "candidate err")
	}
	head = append(head, "Δ "+rps)
	rows := [][]string{head}
	for _, r := range t.rows {
		cells := []string{pad(cleanTerminal(r.key.Class)), levelOf(r.key)}
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
		cells = append(cells, r.delta)
		rows = append(rows, cells)
	}
	lines, widths := alignRight(rows, 2)
	if grouped {
		n := 1 + len(t.latMetrics)
		first := 2
		if rounds {
			first = 3
		}
		b.WriteString(groupLine(widths, 2, []colGroup{{first, n, "baseline"}, {first + n, n, "candidate"}}) + "\n")
	}
	fmt.Fprintf(b, "%s  verdict\n", lines[0])
	for i, r := range t.rows {
		fmt.Fprintf(b, "%s  %s\n", lines[i+1], paint.verdict(r, verdictText(r, false)))
	}
}

// alignRight lays out rows of cells as text/tabwriter does with
// AlignRight: each column as wide as its widest cell plus padding, the
// padding and any slack on the left of each cell. It returns each row's
// text and each column's width without the padding; widths count runes.
func alignRight(rows [][]string, padding int) ([]string, []int) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	lines := make([]string, len(rows))
	for j, r := range rows {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(strings.Repeat(" ", widths[i]+padding-utf8.RuneCountInString(c)))
			b.WriteString(c)
		}
		lines[j] = b.String()
	}
	return lines, widths
}

// colGroup is a run of n columns from column first, named by label.
type colGroup struct {
	first, n int
	label    string
}

// groupLine is a line over alignRight's columns that names each span of
// them, centred in a rule as wide as the span's cells: "──── baseline ────".
// Spans are in column order and do not overlap.
func groupLine(widths []int, padding int, spans []colGroup) string {
	var b strings.Builder
	col := 0
	for _, s := range spans {
		for ; col < s.first; col++ {
			b.WriteString(strings.Repeat(" ", widths[col]+padding))
		}
		width := -padding
		for ; col < s.first+s.n; col++ {
			width += widths[col] + padding
		}
		b.WriteString(strings.Repeat(" ", padding))
		label := " " + s.label + " "
		rule := width - utf8.RuneCountInString(label)
		if rule < 2 {
			b.WriteString(strings.Repeat(" ", max(0, width-utf8.RuneCountInString(s.label))) + s.label)
			continue
		}
		b.WriteString(strings.Repeat("─", rule/2) + label + strings.Repeat("─", rule-rule/2))
	}
	return b.String()
}

// classPad pads class names to one width: columns align right, for the
// numbers, but names read better on the left.
func classPad(rows []row) func(string) string {
	width := utf8.RuneCountInString("class")
	for _, r := range rows {
		width = max(width, utf8.RuneCountInString(cleanTerminal(r.key.Class)))
	}
	return func(s string) string { return s + strings.Repeat(" ", width-utf8.RuneCountInString(s)) }
}

// termResources writes the compact resources tables: cores, CPU per
// request (per call for gRPC) and peak memory of each side, the change in
// CPU per request and the resource verdicts.
func (m *model) termResources(b *strings.Builder, paint palette) error {
	for _, t := range m.tables {
		rt := t.res
		if rt == nil {
			continue
		}
		title := m.tableTitle("resources", t, cleanTerminal)
		fmt.Fprintf(b, "\n%s\n", title)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		pad := classPad(t.rows)
		per := m.noun().abbr
		cpu, mem := "CPU "+rt.cpu.name+"/"+per, "mem peak "+rt.mem.name
		head := []string{pad("class"), "c",
			"baseline cores", "baseline " + cpu, "baseline " + mem,
			"candidate cores", "candidate " + cpu, "candidate " + mem, "load gen " + cpu, "Δ CPU/" + per}
		fmt.Fprintf(tw, "%s\t  verdict\n", strings.Join(head, "\t"))
		for _, r := range rt.rows {
			cells := []string{pad(cleanTerminal(r.key.Class)), levelOf(r.key),
				r.base.cores, r.base.cpu, r.base.memPeak, r.cand.cores, r.cand.cpu, r.cand.memPeak, r.gen, r.dCPU}
			v := resVerdictText(r.verdicts, false)
			fmt.Fprintf(tw, "%s\t  %s\n", strings.Join(cells, "\t"), paint.byVerdict(resSeverity(r.verdicts), v))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// termLatency writes, per cell with latency detail, each target's
// percentiles on one row and a compact histogram of both side by side.
func (m *model) termLatency(b *strings.Builder) error {
	for _, t := range m.tables {
		if len(t.latency) == 0 {
			continue
		}
		title := m.tableTitle("latency", t, cleanTerminal)
		fmt.Fprintf(b, "\n%s\n", title)
		for _, cl := range t.latency {
			u := cl.unit
			label := cleanTerminal(cl.key.Class) + " c=" + levelOf(cl.key) + " (" + u.name + ")"
			// Names on the left, numbers on the right, as in the verdict
			// tables.
			width := max(utf8.RuneCountInString(label), utf8.RuneCountInString("  candidate"))
			pad := func(s string) string { return s + strings.Repeat(" ", width-utf8.RuneCountInString(s)) }
			tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
			head := []string{pad(label)}
			for _, p := range latencyPercentiles {
				head = append(head, percentileName(p))
			}
			head = append(head, "max", "count")
			fmt.Fprintf(tw, "%s\t\n", strings.Join(head, "\t"))
			for i, name := range []string{"baseline", "candidate"} {
				d := cl.sides[i]
				cells := []string{pad("  " + name)}
				for _, p := range latencyPercentiles {
					if d == nil {
						cells = append(cells, dash)
					} else {
						cells = append(cells, u.micros(d.percentile(p)))
					}
				}
				if d == nil {
					cells = append(cells, dash, dash)
				} else {
					cells = append(cells, u.micros(d.max), strconv.FormatInt(d.count, 10))
				}
				fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			text := histogramText(sharedBuckets(cl.sides, 8), cl.sides, u, 12)
			for _, line := range strings.SplitAfter(text, "\n") {
				if line != "" {
					b.WriteString("    " + line)
				}
			}
		}
	}
	return nil
}

func termCommit(t benchdata.TargetInfo) string {
	if t.Commit == "" {
		return ""
	}
	return " " + cleanTerminal(shortCommit(t.Commit)) + dirtyText(t)
}

// palette holds colours fixed on or off, whatever fatih/color guessed from
// the process's own stdout: the writer may be anything.
type palette struct {
	bad, good, warn *color.Color
}

func newPalette(on bool) palette {
	p := palette{
		bad:  color.New(color.FgRed, color.Bold),
		good: color.New(color.FgGreen),
		warn: color.New(color.FgYellow),
	}
	for _, c := range []*color.Color{p.bad, p.good, p.warn} {
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}

func (p palette) verdict(r row, s string) string {
	switch {
	case r.verdict == gate.Regression || r.errorFailure:
		return p.bad.Sprint(s)
	case r.verdict == gate.Improvement:
		return p.good.Sprint(s)
	case r.verdict == gate.Inconclusive, r.verdict == gate.Tie && len(r.unresolved) > 0:
		return p.warn.Sprint(s)
	}
	return s
}

func (p palette) byVerdict(v gate.Verdict, s string) string {
	switch v {
	case gate.Regression:
		return p.bad.Sprint(s)
	case gate.Improvement:
		return p.good.Sprint(s)
	case gate.Inconclusive:
		return p.warn.Sprint(s)
	}
	return s
}

func (p palette) outcome(o gate.Outcome, s string) string {
	switch o {
	case gate.Fail:
		return p.bad.Sprint(s)
	case gate.Pass:
		return p.good.Sprint(s)
	}
	return p.warn.Sprint(s)
}
