package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// Correctness checks: what the pre-flight commands and the agreement probe
// found before any load (benchdata.Correctness). They come right after the
// outcome in every report, as in the model report, because they fail the
// gate whatever the cells say: a faster candidate that answers differently
// must never read as a pass. Everything in them came from a target or the
// scenario — names, commands, output, response bodies, request targets,
// reasons — and is escaped for the medium; output and bodies are cut to
// lineRunes.

// lineRunes caps a line of a target's output, a body excerpt or a request
// target in a report.
const lineRunes = 160

// reasonRunes caps a correctness check's reason, which may quote output.
const reasonRunes = 300

// correctness returns what the results file's correctness checks found,
// nil when there is nothing to show.
func (m *model) correctness() *benchdata.Correctness {
	g := m.in.Results.Correctness
	if g == nil || (len(g.Preflight) == 0 && g.Agreement == nil && len(g.Absent) == 0) {
		return nil
	}
	return g
}

// preflightNames are the pre-flight commands' names in file order.
func preflightNames(ps []benchdata.PreflightResult) []string {
	var names []string
	for _, p := range ps {
		if !slices.Contains(names, p.Name) {
			names = append(names, p.Name)
		}
	}
	return names
}

// preflightTargets are the targets the pre-flight commands ran against,
// the baseline first.
func preflightTargets(ps []benchdata.PreflightResult) []string {
	var ts []string
	for _, p := range ps {
		if !slices.Contains(ts, p.Target) {
			ts = append(ts, p.Target)
		}
	}
	slices.SortStableFunc(ts, func(a, b string) int { return cmp.Compare(targetOrder(a), targetOrder(b)) })
	return ts
}

// preflightOf finds the result of one command on one target.
func preflightOf(ps []benchdata.PreflightResult, name, target string) (benchdata.PreflightResult, bool) {
	for _, p := range ps {
		if p.Name == name && p.Target == target {
			return p, true
		}
	}
	return benchdata.PreflightResult{}, false
}

// preflightStatus is "PASS", "FAIL (exit 1)" or "FAIL (timed out after
// 1m0s)"; fail is applied to the word FAIL (emphasis), esc to the error.
func preflightStatus(p benchdata.PreflightResult, esc, fail func(string) string) string {
	if p.Pass {
		return "PASS"
	}
	switch {
	case p.Error != "":
		return fail("FAIL") + " (" + esc(truncate(p.Error, lineRunes)) + ")"
	case p.ExitCode >= 0:
		return fail("FAIL") + " (exit " + strconv.Itoa(p.ExitCode) + ")"
	}
	return fail("FAIL")
}

// failsGate says whether a failed pre-flight fails the gate: the candidate
// fails a command the baseline passes. Where both fail, the build under
// test is not to blame, and the classes it guards are left out instead.
func failsGate(ps []benchdata.PreflightResult, p benchdata.PreflightResult) bool {
	if p.Pass || p.Target != "candidate" {
		return false
	}
	b, ok := preflightOf(ps, p.Name, "baseline")
	return !ok || b.Pass
}

// agreementLine is "Agreement check: 11 classes agree, none disagree." — a
// class being one class in one variant — with ", over 5 requests each"
// when every class was probed with as many ("calls" for gRPC).
func agreementLine(a *benchdata.AgreementResult, n loadNoun) string {
	agree, disagree := a.Counts()
	if agree+disagree == 0 {
		return "Agreement check: no class was probed."
	}
	s := "Agreement check: "
	switch agree {
	case 1:
		s += "1 class agrees"
	default:
		s += strconv.Itoa(agree) + " classes agree"
	}
	switch disagree {
	case 0:
		s += ", none disagree"
	case 1:
		s += ", 1 disagrees"
	default:
		s += ", " + strconv.Itoa(disagree) + " disagree"
	}
	k := a.Classes[0].Requests
	same := k > 0
	for _, c := range a.Classes {
		same = same && c.Requests == k
	}
	if same {
		s += ", over " + plural(k, n.one, n.many) + " each"
	}
	return s + "."
}

// modeText says what a disagreement does under the class's mode.
func modeText(mode string, esc func(string) string) string {
	switch mode {
	case "required", "":
		return "fails the gate"
	case "warn":
		return "warning only"
	}
	return "mode " + esc(mode)
}

// classLabel names a probed class: "search (variant csv)", or "search"
// without variants; name and variant pass through esc.
func classLabel(class, variant string, esc func(string) string) string {
	if variant == "" {
		return esc(class)
	}
	return esc(class) + " (variant " + esc(variant) + ")"
}

// requestOf is a disagreement's place in the stream: "request 4" ("call
// 4" for gRPC), 1-based, as a reader counts. The probe stops at the first difference,
// so it is also the number of requests compared.
func requestOf(c benchdata.ClassAgreement, n loadNoun) string {
	return n.one + " " + strconv.Itoa(c.First.Index+1)
}

// requestText is "GET /search?q=x" raw, cut to lineRunes.
func requestText(d *benchdata.Disagreement) string {
	return truncate(strings.TrimSpace(d.Method+" "+d.Target), lineRunes)
}

// statusText is a response's status for a disagreement: "status 200", or
// "no response" when the request failed.
func statusText(code int) string {
	if code == 0 {
		return "no response"
	}
	return "status " + strconv.Itoa(code)
}

// mdCorrectness writes the Correctness section: the pre-flight table, the
// agreement check and the absent classes, whichever the run has.
func (m *model) mdCorrectness(b *strings.Builder) {
	g := m.correctness()
	if g == nil {
		return
	}
	b.WriteString("### Correctness\n\n")
	m.mdPreflight(b)
	m.mdAgreement(b)
	m.mdAbsent(b)
}

// mdPreflight writes one row per target and one column per pre-flight
// command, then what each command ran and the last line of its output on
// each target.
func (m *model) mdPreflight(b *strings.Builder) {
	g := m.correctness()
	if g == nil || len(g.Preflight) == 0 {
		return
	}
	ps := g.Preflight
	names := preflightNames(ps)
	head := []string{"target"}
	align := []string{"---"}
	for _, n := range names {
		head = append(head, md(n))
		align = append(align, "---")
	}
	b.WriteString("| " + strings.Join(head, " | ") + " |\n")
	b.WriteString("| " + strings.Join(align, " | ") + " |\n")
	bold := func(s string) string { return "**" + s + "**" }
	for _, t := range preflightTargets(ps) {
		cells := []string{md(t)}
		for _, n := range names {
			if p, ok := preflightOf(ps, n, t); ok {
				cells = append(cells, preflightStatus(p, md, bold))
			} else {
				cells = append(cells, dash)
			}
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
	for _, n := range names {
		var cmd string
		var guards []string
		for _, p := range ps {
			if p.Name == n {
				cmd = cmp.Or(cmd, p.Command)
				for _, c := range p.Classes {
					if !slices.Contains(guards, c) {
						guards = append(guards, c)
					}
				}
			}
		}
		line := "- **" + md(n) + "**"
		if cmd != "" {
			line += " ran " + codeText(truncate(cmd, lineRunes))
		}
		if len(guards) > 0 {
			esc := make([]string, len(guards))
			for i, c := range guards {
				esc[i] = md(c)
			}
			line += "; it guards " + strings.Join(esc, ", ")
		}
		b.WriteString(line + "\n")
		for _, t := range preflightTargets(ps) {
			p, ok := preflightOf(ps, n, t)
			if !ok || (p.LastLine == "" && p.Pass) {
				continue
			}
			item := "  - " + md(t) + ": " + codeText(truncate(p.LastLine, lineRunes))
			if p.LastLine == "" {
				item = "  - " + md(t) + ": no output"
			}
			if p.Log != "" && !p.Pass {
				item += " (whole output in " + codeText(truncate(p.Log, lineRunes)) + ")"
			}
			b.WriteString(item + "\n")
		}
	}
	b.WriteString("\n")
}

// mdFailedPreflight lists the failed pre-flight commands, one line each,
// for the head of a comment, where the table itself is folded. Those that
// fail the gate are left out when the failures above name them.
func (m *model) mdFailedPreflight(b *strings.Builder) {
	g := m.correctness()
	if g == nil {
		return
	}
	listed := m.failuresOf(gate.FailPreflight) > 0
	n := 0
	for _, p := range g.Preflight {
		if p.Pass || (listed && failsGate(g.Preflight, p)) {
			continue
		}
		mark := "⚠️"
		if failsGate(g.Preflight, p) {
			mark = "❌"
		}
		line := "- " + mark + " pre-flight **" + md(p.Name) + "** on the " + md(p.Target) + ": " +
			preflightStatus(p, md, func(s string) string { return s })
		if p.LastLine != "" {
			line += ": " + codeText(truncate(p.LastLine, lineRunes))
		}
		b.WriteString(line + "\n")
		n++
	}
	if n > 0 {
		b.WriteString("\n")
	}
}

// mdAgreement writes the agreement line and each disagreeing class with
// its first differing request, the reason and both bodies' excerpts.
func (m *model) mdAgreement(b *strings.Builder) {
	g := m.correctness()
	if g == nil || g.Agreement == nil {
		return
	}
	b.WriteString(agreementLine(g.Agreement, m.noun()) + "\n\n")
	n := 0
	for _, c := range g.Agreement.Classes {
		if c.Agree {
			continue
		}
		n++
		mark := "❌"
		if c.Mode == "warn" {
			mark = "⚠️"
		}
		line := "- " + mark + " **" + classLabel(c.Class, c.Variant, md) + "** answers differently, " + modeText(c.Mode, md)
		d := c.First
		if d == nil {
			b.WriteString(line + "\n")
			continue
		}
		line += ": " + requestOf(c, m.noun()) + ", " + codeText(requestText(d))
		if c.Format != "" {
			line += " (" + md(c.Format) + ")"
		}
		if d.Reason != "" {
			line += " — " + md(truncate(d.Reason, reasonRunes))
		}
		b.WriteString(line + "\n")
		if d.Baseline == "" && d.Candidate == "" && d.BaselineStatus == d.CandidateStatus {
			continue
		}
		for _, side := range []struct {
			name    string
			excerpt string
			status  int
		}{{"baseline", d.Baseline, d.BaselineStatus}, {"candidate", d.Candidate, d.CandidateStatus}} {
			label := side.name
			if d.BaselineStatus != d.CandidateStatus {
				label += " (" + statusText(side.status) + ")"
			}
			fmt.Fprintf(b, "  - %s: %s\n", label, codeText(truncate(side.excerpt, lineRunes)))
		}
	}
	if n > 0 {
		b.WriteString("\n")
	}
}

// mdAbsent lists the classes a check left out of the grid, with why.
func (m *model) mdAbsent(b *strings.Builder) {
	g := m.correctness()
	if g == nil || len(g.Absent) == 0 {
		return
	}
	b.WriteString("Absent classes, left out of the grid by a correctness check:\n\n")
	for _, a := range g.Absent {
		line := "- **" + md(a.Class) + "**"
		if a.Reason != "" {
			line += " — " + md(truncate(a.Reason, reasonRunes))
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("\n")
}

// correctnessRules are the Claims' items for the correctness checks that
// ran: they fail the gate as a rule does.
func (m *model) correctnessRules() []string {
	g := m.correctness()
	if g == nil {
		return nil
	}
	var out []string
	if len(g.Preflight) > 0 {
		out = append(out, "a pre-flight command the candidate fails and the baseline passes")
	}
	if g.Agreement != nil {
		out = append(out, "a class whose answers differ between the targets under agreement mode required")
	}
	return out
}

// correctnessThreats are the threats to validity the correctness checks
// found: classes that answer differently but were measured anyway (mode
// warn), and classes left out of the grid.
func (m *model) correctnessThreats() []string {
	g := m.correctness()
	if g == nil {
		return nil
	}
	var out []string
	if a := g.Agreement; a != nil {
		warned := 0
		for _, c := range a.Classes {
			if !c.Agree && c.Mode == "warn" {
				warned++
			}
		}
		if warned > 0 {
			their := "their"
			if warned == 1 {
				their = "its"
			}
			out = append(out, plural(warned, "class answers", "classes answer")+" differently on the two targets under "+
				"agreement mode warn (see Correctness): "+their+" speed compares different work.")
		}
	}
	if n := len(g.Absent); n > 0 {
		their := "their"
		if n == 1 {
			their = "its"
		}
		out = append(out, plural(n, "class was", "classes were")+" left out of the grid by a correctness check (see Correctness): "+
			"this run says nothing of "+their+" speed.")
	}
	return out
}

// commentCorrectness is what a comment shows of the correctness checks
// above its fold: the failed pre-flight commands, the agreement check with
// each disagreement and the absent classes. The pre-flight table goes into
// the fold.
func (m *model) commentCorrectness() string {
	var b strings.Builder
	m.mdFailedPreflight(&b)
	m.mdAgreement(&b)
	m.mdAbsent(&b)
	return b.String()
}

// termCorrectness writes the correctness checks in a few lines: each
// pre-flight command's result per target with the last line of any
// failure, the agreement line with each disagreement's first difference,
// and the absent classes.
func (m *model) termCorrectness(b *strings.Builder, paint palette) {
	g := m.correctness()
	if g == nil {
		return
	}
	esc := cleanTerminal
	b.WriteString("\ncorrectness\n")
	ps := g.Preflight
	for _, n := range preflightNames(ps) {
		var parts []string
		for _, t := range preflightTargets(ps) {
			if p, ok := preflightOf(ps, n, t); ok {
				s := esc(t) + " " + preflightStatus(p, esc, func(s string) string { return s })
				if !p.Pass {
					s = paint.bad.Sprint(s)
				}
				parts = append(parts, s)
			}
		}
		fmt.Fprintf(b, "  pre-flight %s: %s\n", esc(n), strings.Join(parts, ", "))
		for _, t := range preflightTargets(ps) {
			if p, ok := preflightOf(ps, n, t); ok && !p.Pass && p.LastLine != "" {
				fmt.Fprintf(b, "    %s: %s\n", esc(t), esc(truncate(p.LastLine, lineRunes)))
			}
		}
	}
	if a := g.Agreement; a != nil {
		fmt.Fprintf(b, "  %s\n", agreementLine(a, m.noun()))
		for _, c := range a.Classes {
			if c.Agree {
				continue
			}
			head := "DISAGREES"
			if c.Mode == "warn" {
				head = paint.warn.Sprint(head)
			} else {
				head = paint.bad.Sprint(head)
			}
			line := fmt.Sprintf("    %s %s, %s", head, classLabel(c.Class, c.Variant, esc), modeText(c.Mode, esc))
			if d := c.First; d != nil {
				line += ": " + requestOf(c, m.noun()) + " " + esc(requestText(d))
				if d.Reason != "" {
					line += ": " + esc(truncate(d.Reason, reasonRunes))
				}
				b.WriteString(line + "\n")
				if d.Baseline == "" && d.Candidate == "" && d.BaselineStatus == d.CandidateStatus {
					continue
				}
				labels := [2]string{"baseline", "candidate"}
				if d.BaselineStatus != d.CandidateStatus {
					labels[0] += " (" + statusText(d.BaselineStatus) + ")"
					labels[1] += " (" + statusText(d.CandidateStatus) + ")"
				}
				w := max(utf8.RuneCountInString(labels[0]), utf8.RuneCountInString(labels[1])) + 1
				for i, excerpt := range []string{d.Baseline, d.Candidate} {
					l := labels[i] + ":"
					fmt.Fprintf(b, "      %s%s %s\n", l, strings.Repeat(" ", w-utf8.RuneCountInString(l)), termExcerpt(excerpt))
				}
				continue
			}
			b.WriteString(line + "\n")
		}
	}
	for _, a := range g.Absent {
		line := "  absent: " + esc(a.Class)
		if a.Reason != "" {
			line += " (" + esc(truncate(a.Reason, reasonRunes)) + ")"
		}
		b.WriteString(line + "\n")
	}
}

// termExcerpt shows a body excerpt on a terminal, escaped and cut, or
// "(empty)".
func termExcerpt(s string) string {
	if s == "" {
		return "(empty)"
	}
	return cleanTerminal(truncate(s, lineRunes))
}
