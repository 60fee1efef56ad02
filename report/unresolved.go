package report

import (
	"fmt"
	"strings"

	"github.com/benchgate/benchgate/gate"
)

// Unresolved ties: a gated tie whose RulesOut exceeds its band could not
// have told a regression of the band's size from none. The gate lists them
// (CellResult.Unresolved) and, under gate.unresolved fail, makes them
// failures; the report shows each in the verdict column as "tie (rules out
// > 31%)", the far end of its interval on the regression side, counts them
// in the outcome line, and lists them with what to do: leading under warn
// and fail, after the verdicts under pass.

// secUnresolved is the markdown report's list of unresolved ties. Like
// secCharts its value lies outside markdown.go's iota run and above
// secFailures; sections() places it before the failures or after the
// verdict tables as the policy asks.
const secUnresolved sectionID = 1001

// unresolvedItem is one gated metric of one cell whose tie is unresolved.
type unresolvedItem struct {
	key gate.CellKey // untrusted names
	d   gate.Decision
}

func (m *model) buildUnresolved() {
	for _, c := range m.in.Comparison.Cells {
		for _, mt := range c.Unresolved {
			if d, ok := c.Decision(mt); ok {
				m.unresolved = append(m.unresolved, unresolvedItem{c.Key, d})
			}
		}
	}
}

// unresolvedCells counts the cells with an unresolved gated tie.
func (m *model) unresolvedCells() int {
	n := 0
	for i, it := range m.unresolved {
		if i == 0 || m.unresolved[i-1].key != it.key {
			n++
		}
	}
	return n
}

// unresolvedPolicy is gate.unresolved, warn when unset.
func (m *model) unresolvedPolicy() gate.Unresolved {
	if p := m.in.Comparison.Policy.Unresolved; p != "" {
		return p
	}
	return gate.UnresolvedWarn
}

// unresolvedLeads says whether the list of unresolved ties comes before
// the failures (warn, fail) or after the verdicts (pass).
func (m *model) unresolvedLeads() bool { return m.unresolvedPolicy() != gate.UnresolvedPass }

// unresolvedBand is "a 10% regression", the band of the unresolved ties,
// or "a regression of their tie band" when their bands differ.
func (m *model) unresolvedBand() string {
	if len(m.unresolved) == 0 {
		return "a regression of their tie band"
	}
	for _, it := range m.unresolved[1:] {
		if it.d.TieWithin != m.unresolved[0].d.TieWithin {
			return "a regression of their tie band"
		}
	}
	return "a " + fraction(m.unresolved[0].d.TieWithin) + " regression"
}

// unresolvedSummary is the outcome line's count: "3 gated cells could not
// rule out a 10% regression on this runner", with the metrics' count when
// it differs ("3 gated cells (8 metrics) could not…": the list has a
// line a metric); "" when every gated tie resolved.
func (m *model) unresolvedSummary() string {
	n := m.unresolvedCells()
	if n == 0 {
		return ""
	}
	cells := plural(n, "gated cell", "gated cells")
	if k := len(m.unresolved); k != n {
		// The list has a line a metric: say both counts.
		cells += " (" + plural(k, "metric", "metrics") + ")"
	}
	return cells + " could not rule out " + m.unresolvedBand() + " on this runner"
}

// resolutionText prints a resolution as a percentage rounded up, so it
// never claims more than the data could see: one decimal under 10%,
// whole percents above ("31%", "4.2%").
func resolutionText(r float64) string { return gate.ResolutionPercent(r) }

// rulesOut is an unresolved tie's "rules out > 31%": the regression its
// interval rules out, rounded up so it never claims more. It names the
// metrics when they are not the row's own one: "rules out > 31% in rps,
// > 12% in p95". esc escapes metric names, which a Go benchmark may choose.
//
// A tie below its measurement floor rules out nothing: "below the
// measurement floor" ("… in cpu_per_req" when not the row's own metric).
func rulesOut(ds []gate.Decision, own gate.Metric, esc func(string) string) string {
	var floors, parts []string
	for _, d := range ds {
		in := ""
		if len(ds) > 1 || d.Metric != own {
			in = " in " + esc(string(d.Metric))
		}
		if d.Floor != "" {
			floors = append(floors, "below the measurement floor"+in)
			continue
		}
		parts = append(parts, "> "+resolutionText(d.RulesOut)+in)
	}
	if len(parts) > 0 {
		floors = append([]string{"rules out " + strings.Join(parts, ", ")}, floors...)
	}
	return strings.Join(floors, "; ")
}

// unresolvedLine is one unresolved tie in a list: "rps in csv/Q01 c=8: tie
// (rules out > 31%; band 10%)".
//
// A regression the whole gate's control withheld says so: "…; its own
// interval found -14.2%, not confirmed for the whole gate)".
func unresolvedLine(it unresolvedItem, esc func(string) string) string {
	if it.d.Floor != "" {
		return esc(string(it.d.Metric)) + " in " + esc(it.key.String()) + ": tie (below its measurement floor: " + esc(it.d.Floor) + ")"
	}
	withheld := ""
	if it.d.Withheld {
		withheld = "; its own interval found " + percent(it.d.Delta) + ", not confirmed for the whole gate"
	}
	return esc(string(it.d.Metric)) + " in " + esc(it.key.String()) + ": tie (rules out > " +
		resolutionText(it.d.RulesOut) + "; band " + fraction(it.d.TieWithin) + withheld + ")"
}

// unresolvedHead is the first sentence of the list: how many, what it
// means, and what the policy made of it.
func (m *model) unresolvedHead(markdown bool) string {
	code, strong := func(s string) string { return s }, func(s string) string { return s }
	if markdown {
		code, strong = func(s string) string { return "`" + s + "`" }, func(s string) string { return "**" + s + "**" }
	}
	s := m.unresolvedSummary()
	s = strings.ToUpper(s[:1]) + s[1:]
	var policy string
	switch {
	case m.unresolvedPolicy() == gate.UnresolvedFail && m.in.Comparison.Outcome == gate.OutcomeUndecided:
		policy = "They leave the gate inconclusive (" + code("gate.unresolved: fail") + ")."
	case m.unresolvedPolicy() == gate.UnresolvedFail:
		policy = "Under " + code("gate.unresolved: fail") + " they alone would leave the gate inconclusive."
	case m.unresolvedPolicy() == gate.UnresolvedPass:
		policy = "They do not change the outcome (" + code("gate.unresolved: pass") + ")."
	default:
		policy = "The gate does not fail on them (" + code("gate.unresolved: warn") + "), but they are not evidence of no change."
	}
	return strong(s+":") + " each tie below rules out a regression only beyond the figure shown, larger than its band. " + policy
}

// adviceText says what would resolve the ties, leaving out what the run
// already did.
func (m *model) adviceText(markdown bool) string {
	code := func(s string) string { return s }
	if markdown {
		code = func(s string) string { return "`" + s + "`" }
	}
	if !m.interleaved() {
		// Saved files or another tool's reports: only their runs can change.
		return "To resolve them: more runs in each file (" + code("go test -count") + ", or the tool's own repetitions), " +
			"run alternately on both sides; or a quieter runner (docs/self-hosted.md)."
	}
	longer := code("load.duration")
	if m.isGoBench() {
		longer = code("gobench.benchtime")
	}
	more := "more rounds (" + code("load.repetitions") + ", or " + code("load.max_repetitions") +
		" to add rounds only where a verdict is still open) or a longer " + longer
	if m.adaptive() {
		more = "more rounds (a higher " + code("load.max_repetitions") + ") or a longer " + longer
	}
	parts := []string{more}
	var paired []string
	if !m.sliced() && !m.isGoBench() {
		paired = append(paired, code("load.interleave: slice"))
	}
	if m.rule() != gate.RulePaired {
		paired = append(paired, code("gate.rule: paired"))
	}
	switch {
	case len(paired) > 1:
		parts = append(parts, strings.Join(paired, " with ")+", which compare the two sides back to back so that slow noise reaches both alike")
	case len(paired) == 1:
		parts = append(parts, paired[0]+", which compares the two sides back to back so that slow noise reaches both alike")
	}
	parts = append(parts, "running "+code("benchgate calibrate")+" on this runner, which says what it can resolve and what that would take")
	parts = append(parts, "or a quieter runner (docs/self-hosted.md)")
	return "To resolve them: " + strings.Join(parts, "; ") + "."
}

// unresolvedMarkdown is the list as a quoted block: the head, the first
// keep ties with "… and N more" for the rest, and the advice. keep < 0
// keeps every tie.
func (m *model) unresolvedMarkdown(keep int) string {
	if len(m.unresolved) == 0 {
		return ""
	}
	mark := "⚠️"
	if !m.unresolvedLeads() {
		mark = "ℹ️"
	}
	if keep < 0 || keep > len(m.unresolved) {
		keep = len(m.unresolved)
	}
	var b strings.Builder
	b.WriteString("> " + mark + " " + m.unresolvedHead(true) + "\n>\n")
	for _, it := range m.unresolved[:keep] {
		b.WriteString("> - " + unresolvedLine(it, md) + "\n")
	}
	if rest := len(m.unresolved) - keep; rest > 0 {
		fmt.Fprintf(&b, "> - … and %d more\n", rest)
	}
	b.WriteString(">\n> " + m.adviceText(true) + "\n\n")
	return b.String()
}

// mdUnresolved writes the list of unresolved ties for the markdown report.
func (m *model) mdUnresolved(b *strings.Builder) {
	b.WriteString(m.unresolvedMarkdown(-1))
}

// cutUnresolved is the longest list of unresolved ties that fits in
// budget runes, its head and advice always kept; an error when not even
// those fit with "… and N more".
func (m *model) cutUnresolved(budget int) (string, error) {
	for keep := len(m.unresolved); keep >= 0; keep-- {
		if s := m.unresolvedMarkdown(keep); runes(s) <= budget {
			return s, nil
		}
	}
	return "", fmt.Errorf("%d runes short", runes(m.unresolvedMarkdown(0))-budget)
}

// termUnresolved writes the list for a terminal.
func (m *model) termUnresolved(b *strings.Builder, paint palette) {
	if len(m.unresolved) == 0 {
		return
	}
	b.WriteString("\nunresolved ties:\n")
	head := m.unresolvedHead(false)
	if m.unresolvedLeads() {
		head = paint.warn.Sprint(head)
	}
	fmt.Fprintf(b, "  %s\n", head)
	for _, it := range m.unresolved {
		fmt.Fprintf(b, "    %s\n", unresolvedLine(it, cleanTerminal))
	}
	fmt.Fprintf(b, "  %s\n", m.adviceText(false))
}
