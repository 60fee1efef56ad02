package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/gate"
)

// Markdown writes the full report as GitHub-flavoured markdown: outcome,
// the gated ties that could not resolve their band (under gate.unresolved
// warn and fail; under pass after the tables) and failures first, then the
// correctness gates, one table per pin set and variant, the resources the targets used and their throughput per core
// when measured, each cell's latency distribution when the rungs carry
// histograms, the error distribution, claims, threats to validity, how to
// reproduce and the environment, in the order of the hand-written model
// report.
func Markdown(w io.Writer, in Input) error {
	var b strings.Builder
	for _, s := range newModel(in).sections() {
		b.WriteString(s.text)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var md = EscapeMarkdown

// sectionID names a part of the markdown report, in report order.
type sectionID int

const (
	secTitle sectionID = iota
	secIdentity
	secStatus
	secError
	secFailures
	secGates
	secTables
	secResources
	secPerCore
	secLatency
	secErrors
	secClaims
	secThreats
	secReproduce
	secEnvironment
)

// section is one part of the markdown report as it is written: each ends
// with a blank line, but for the last.
type section struct {
	id   sectionID
	text string
}

// sections renders the markdown report as its parts, leaving out those with
// nothing to say, so the comment and the job summary can fold, reorder or
// leave out whole parts of the same text.
func (m *model) sections() []section {
	type part struct {
		id    sectionID
		write func(*strings.Builder)
	}
	// Unresolved ties lead under gate.unresolved warn and fail, as
	// important as the failures; under pass they follow the verdicts.
	var lead, follow []part
	if m.unresolvedLeads() {
		lead = []part{{secUnresolved, m.mdUnresolved}}
	} else {
		follow = []part{{secUnresolved, m.mdUnresolved}}
	}
	parts := slices.Concat([]part{
		{secTitle, func(b *strings.Builder) { b.WriteString(m.titleLine("benchgate", 0)) }},
		{secIdentity, m.mdIdentity},
		{secStatus, m.mdStatus},
		{secError, m.mdError},
	}, lead, []part{
		{secFailures, m.mdFailures},
		{secGates, m.mdGates},
		{secTables, m.mdTables},
	}, follow, []part{
		{secCharts, m.mdCharts},
		{secResources, m.mdResources},
		{secPerCore, m.mdPerCore},
		{secLatency, m.mdLatency},
		{secErrors, m.mdErrors},
		{secClaims, m.mdClaims},
		{secThreats, m.mdThreats},
		{secReproduce, m.mdReproduce},
		{secEnvironment, m.mdEnvironment},
	})
	var out []section
	for _, p := range parts {
		var b strings.Builder
		p.write(&b)
		if b.Len() > 0 {
			out = append(out, section{p.id, b.String()})
		}
	}
	return out
}

// titleLine is the report's heading: "## header: scenario — outcome",
// followed by a blank line. header is trusted text and escaped anyway;
// nameLimit, when positive, caps the scenario name in runes (a comment has
// a size limit, a report does not).
func (m *model) titleLine(header string, nameLimit int) string {
	r := m.in.Results
	name := r.Scenario.Name
	if name == "" {
		name = "(unnamed scenario)"
	}
	if nameLimit > 0 {
		name = truncate(name, nameLimit)
	}
	title := m.outcomeText(true)
	// An unfinished run leads with that; the outcome of what it did decide
	// follows without a second mark.
	_, decided, _ := strings.Cut(title, " ")
	switch r.Status {
	case "failed":
		title = "❌ run failed · " + decided
	case "cancelled":
		title = "⚠️ run cancelled · " + decided
	}
	return fmt.Sprintf("## %s: %s — %s\n\n", md(header), md(name), title)
}

// mdIdentity is the line under the title: the two builds, the profile, the
// size of the grid and the rule's settings.
func (m *model) mdIdentity(b *strings.Builder) {
	r := m.in.Results
	var parts []string
	parts = append(parts, "baseline"+commitSuffix(r.Env.Baseline.Commit)+" vs candidate"+commitSuffix(r.Env.Candidate.Commit))
	if r.Scenario.Profile != "" {
		parts = append(parts, "profile "+md(r.Scenario.Profile))
	}
	parts = append(parts, plural(len(m.in.Comparison.Cells), "cell", "cells")+" × "+m.roundsText("round", "rounds", md))
	if d := m.designText(); d != "" {
		parts = append(parts, d)
	}
	parts = append(parts, fmt.Sprintf("%s, tie within %s", m.intervalsText(), m.bandText(md)))
	b.WriteString(strings.Join(parts, " · ") + "\n\n")
}

// mdStatus warns of a run that did not finish.
func (m *model) mdStatus(b *strings.Builder) {
	if s := m.statusText(true); s != "" {
		fmt.Fprintf(b, "> ⚠️ %s\n\n", s)
	}
}

// mdError shows the error of a run that did not finish.
func (m *model) mdError(b *strings.Builder) {
	r := m.in.Results
	if r.Error != "" && r.Status != "complete" {
		// The error carries the target's own output, line by line: a code
		// block keeps its lines and shows it as the text it is.
		f := fence(r.Error)
		fmt.Fprintf(b, "%s\n%s\n%s\n\n", f, strings.TrimRight(r.Error, "\n"), f)
	}
}

func commitSuffix(c string) string {
	if c == "" {
		return ""
	}
	return " **" + md(shortCommit(c)) + "**"
}

// outcomeText is the outcome in a few words. Regressions no rule gates do
// not fail the gate, so a pass that saw some says "pass", not "no
// regression".
func (m *model) outcomeText(emoji bool) string {
	c := m.in.Comparison
	// A terminal has no emoji to carry the outcome, so it leads with the
	// outcome in capitals.
	mark := func(e, word string) string {
		if emoji {
			return e + " " + word
		}
		return strings.ToUpper(string(c.Outcome)) + ": " + word
	}
	// Ties that could not resolve their band are counted whatever the
	// outcome: "— 3 gated cells could not resolve a 10% change on this
	// runner". When they are what left the gate undecided, they are the
	// outcome's reason instead.
	unresolved := m.unresolvedSummary()
	also := func(s string) string {
		if unresolved == "" {
			return s
		}
		return s + " — " + unresolved
	}
	switch c.Outcome {
	case gate.Fail:
		var parts []string
		if n := m.failuresOf(gate.FailAgreement); n > 0 {
			parts = append(parts, plural(n, "agreement failure", "agreement failures"))
		}
		if n := m.failuresOf(gate.FailPreflight); n > 0 {
			parts = append(parts, plural(n, "pre-flight failure", "pre-flight failures"))
		}
		if n := m.failuresOf("regression"); n > 0 {
			parts = append(parts, plural(n, "regression", "regressions"))
		}
		if n := m.failuresOf("error_rate"); n > 0 {
			parts = append(parts, plural(n, "error-rate failure", "error-rate failures"))
		}
		if len(parts) == 0 {
			parts = append(parts, "gate failed")
		}
		return also(mark("❌", strings.Join(parts, ", ")))
	case gate.Pass:
		word := "no regression"
		if c.Counts.Regressions > 0 {
			word = "pass"
		}
		if d := countsText(c.Counts); d != "" {
			word += " (" + d + ")"
		}
		return also(mark("✅", word))
	case gate.OutcomeUndecided:
		word := "inconclusive"
		undecided := ""
		if n := m.failuresOf("inconclusive"); n > 0 {
			undecided = plural(n, "gated metric", "gated metrics") + " undecided"
		}
		switch {
		case unresolved != "" && m.failuresOf(gate.FailUnresolved) > 0:
			// gate.unresolved fail: the ties are why.
			word = unresolved
			if undecided != "" {
				word = undecided + ", " + unresolved
			}
			if emoji {
				word = "inconclusive: " + word
			}
			return mark("⚠️", word)
		case undecided != "":
			word = undecided
			if emoji {
				word = "inconclusive (" + word + ")"
			}
		}
		return also(mark("⚠️", word))
	}
	return mark("⚠️", "no outcome")
}

func countsText(c gate.Counts) string {
	var parts []string
	if c.Regressions > 0 {
		parts = append(parts, plural(c.Regressions, "ungated regression", "ungated regressions"))
	}
	if c.Ties > 0 {
		parts = append(parts, plural(c.Ties, "tie", "ties"))
	}
	if c.Improvements > 0 {
		parts = append(parts, plural(c.Improvements, "improvement", "improvements"))
	}
	if c.Inconclusive > 0 {
		parts = append(parts, fmt.Sprintf("%d inconclusive", c.Inconclusive))
	}
	return strings.Join(parts, ", ")
}

// statusText explains a run that did not finish; "" when it did.
func (m *model) statusText(markdown bool) string {
	esc, strong := cleanTerminal, func(s string) string { return s }
	if markdown {
		esc, strong = md, func(s string) string { return "**" + s + "**" }
	}
	r := m.in.Results
	decided := "decided on " + m.roundsText("complete round", "complete rounds", esc)
	switch {
	case !m.uniformRounds():
		// Pin sets differ: each is named with its own count.
		if r.Plan.Rounds > 0 {
			decided += " (" + strconv.Itoa(r.Plan.Rounds) + " planned)"
		}
		if none := m.undecidedPins(esc); none != "" {
			decided += ", so the cells of " + none + " could not be decided"
		}
	case m.in.Rounds == 0:
		decided = "no round completed, so nothing could be decided"
	case r.Plan.Rounds > 0:
		decided += " of " + strconv.Itoa(r.Plan.Rounds) + " planned"
	}
	switch r.Status {
	case "cancelled":
		return strong("Run cancelled") + ": " + decided + "."
	case "failed":
		s := strong("Run failed") + ": " + decided + "."
		if r.Error != "" && !markdown {
			s += " Error: " + esc(r.Error)
		}
		return s
	case "running":
		return strong("Run still in progress") + " when this report was made: " + decided + "."
	}
	return ""
}

func (m *model) mdFailures(b *strings.Builder) {
	listed := m.listedFailures()
	if len(listed) == 0 {
		return
	}
	for _, it := range listed {
		b.WriteString("- " + failureText(it, true) + "\n")
	}
	b.WriteString("\n")
}

// listedFailures are the failures a failure list shows: all but the
// unresolved ties under gate.unresolved fail, which the list of unresolved
// ties shows with their resolution.
func (m *model) listedFailures() []failureItem {
	var out []failureItem
	for _, it := range m.failures {
		if it.f.Kind != gate.FailUnresolved || len(m.unresolved) == 0 {
			out = append(out, it)
		}
	}
	return out
}

// gateFailureText marks a correctness gate's failure, which always fails
// the gate.
func gateFailureText(s string, markdown bool) string {
	if markdown {
		return "❌ " + s
	}
	return s
}

// failureText is one failure in a sentence; md selects markdown escaping
// and emphasis, else terminal-safe plain text.
func failureText(it failureItem, markdown bool) string {
	esc, strong := cleanTerminal, func(s string) string { return s }
	if markdown {
		esc, strong = md, func(s string) string { return "**" + s + "**" }
	}
	f := it.f
	n := requestNoun
	if it.calls {
		n = callNoun
	}
	metric := esc(string(f.Metric))
	var s string
	switch f.Kind {
	case "regression":
		s = strong(metric+" regression") + " in " + esc(cellName(f.Key))
		if it.delta != "" {
			s += " (" + it.delta + ")"
		}
	case "error_rate":
		s = strong("error rate") + " in " + esc(cellName(f.Key)) +
			fmt.Sprintf(" (%d of %d candidate %s failed)", it.cand.Errors, it.cand.Requests, n.many)
	case "inconclusive":
		if f.Key == (gate.CellKey{}) {
			s = strong("nothing decided") // the comparison has no cell
			if f.Metric != "" {
				s = strong(esc(metric) + " rule undecided") // a rule gates no cell
			}
			break
		}
		s = strong(metric+" undecided") + " in " + esc(cellName(f.Key))
	case gate.FailUnresolved:
		s = strong(metric+" unresolved") + " in " + esc(cellName(f.Key))
	case gate.FailNoAnswers:
		s = strong("no answers") + " in " + esc(cellName(f.Key))
	case gate.FailAgreement:
		// The key names the class and variant probed, not a cell. The
		// reason the gate command gives reads on from the class: "answers
		// differ at request 3 (GET /s): $.n: 1 vs 2".
		s = strong("agreement") + ": class " + classLabel(f.Key.Class, f.Key.Variant, esc)
		if rest, ok := strings.CutPrefix(f.Reason, "answers differ"); ok {
			return gateFailureText(s+" answers differ"+esc(truncateMiddle(rest, reasonRunes)), markdown)
		}
		s += " answers differently"
	case gate.FailPreflight:
		// The key is empty: the reason names the command, as in
		// "pre-flight conformance fails on the candidate (exit 1: …)".
		if rest, ok := strings.CutPrefix(f.Reason, "pre-flight "); ok {
			return gateFailureText(strong("pre-flight")+" "+esc(truncateMiddle(rest, reasonRunes)), markdown)
		}
		s = strong("pre-flight check failed")
	default:
		s = strong(esc(f.Kind)+" "+metric) + " in " + esc(cellName(f.Key))
	}
	switch {
	case f.Reason == "":
	case gateFailure(f.Kind):
		// It may quote a target's output.
		s += ": " + esc(truncateMiddle(f.Reason, reasonRunes))
	default:
		s += ": " + esc(f.Reason)
	}
	if markdown {
		if f.Kind == "inconclusive" || f.Kind == gate.FailUnresolved {
			return "⚠️ " + s
		}
		return "❌ " + s
	}
	return s
}

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
			cells := []string{md(r.key.Class), strconv.Itoa(r.key.Concurrency)}
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
		title := "Resources"
		if name := m.tableName(t, md); name != "" {
			title += " · " + name
		}
		fmt.Fprintf(b, "### %s\n\n", title)
		per := m.noun().abbr
		cpu, mem := "CPU "+rt.cpu.name+"/"+per, rt.mem.name
		var head []string
		for _, side := range []string{"baseline", "candidate"} {
			head = append(head, side+" cores", side+" "+cpu, side+" mem mean "+mem, side+" mem peak "+mem)
		}
		head = append([]string{"class", "c"}, head...)
		head = append(head, "Δ CPU/"+per, "Δ mem peak", "verdict")
		align := []string{"---", "---:"}
		for range 10 {
			align = append(align, "---:")
		}
		align = append(align, "---")
		b.WriteString("| " + strings.Join(head, " | ") + " |\n")
		b.WriteString("| " + strings.Join(align, " | ") + " |\n")
		for _, r := range rt.rows {
			cells := []string{md(r.key.Class), strconv.Itoa(r.key.Concurrency),
				r.base.cores, r.base.cpu, r.base.memMean, r.base.memPeak,
				r.cand.cores, r.cand.cpu, r.cand.memMean, r.cand.memPeak,
				r.dCPU, r.dMem, resVerdictText(r.verdicts, true)}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		b.WriteString("\n")
	}
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
		cells = append(cells, md(r.key.Class), strconv.Itoa(r.key.Concurrency), md(r.target),
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
		fmt.Fprintf(b, "%s could not be read and %s left out.\n\n",
			plural(m.unreadable, "rung's histogram", "rungs' histograms"), map[bool]string{true: "is", false: "are"}[m.unreadable == 1])
	}
}

// latencySummary heads a cell's latency detail: the table and cell, then
// the median and 99th percentile of each target. It is HTML-escaped
// rather than markdown-escaped: GitHub may render <summary> either way.
func (m *model) latencySummary(t table, cl cellLatency) string {
	name := escapeHTML(cl.key.Class) + " c=" + strconv.Itoa(cl.key.Concurrency)
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
		s += " (" + couldNotSee(r.unresolved, r.own, esc) + ")"
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

func (m *model) mdClaims(b *strings.Builder) {
	r, c := m.in.Results, m.in.Comparison
	b.WriteString("### Claims\n\n")
	fmt.Fprintf(b, "This run may claim the relative behaviour of these two builds — baseline%s and candidate%s — "+
		"on this runner, under scenario %s%s: nothing else. It measures neither absolute capacity "+
		"nor behaviour on other hardware or under another workload.\n\n",
		commitSuffix(r.Env.Baseline.Commit), commitSuffix(r.Env.Candidate.Commit),
		md(r.Scenario.Name), scenarioIdentity(r.Scenario))
	better := "higher throughput, lower latency"
	if m.isGoBench() {
		better = "lower time, memory and allocations per op, higher rates"
	}
	design := []string{m.ruleClaim(better), m.orderText()}
	if s := m.adaptiveText(); s != "" {
		design = append(design, s)
	}
	if m.anyPaired() {
		design = append(design, "Where a cell has paired observations, Δ is the change of their ratio candidate/baseline, "+
			"± the larger distance from it to an end of its interval.")
	}
	b.WriteString(strings.Join(design, " ") + "\n\n")
	b.WriteString("The gate fails on:\n\n")
	for _, rule := range c.Policy.FailOn {
		b.WriteString("- " + ruleText(rule) + "\n")
	}
	if inc := c.Policy.MaxErrorIncrease; inc != nil && !m.isGoBench() {
		fmt.Fprintf(b, "- a candidate error rate more than %s above the baseline's in any cell\n", fraction(*inc))
	}
	if c.Policy.MaxErrorRate >= 0 && !m.isGoBench() {
		fmt.Fprintf(b, "- a candidate error rate above %s in any cell\n", fraction(c.Policy.MaxErrorRate))
	}
	gates := m.gateRules()
	for _, g := range gates {
		b.WriteString("- " + g + "\n")
	}
	if len(c.Policy.FailOn) == 0 && c.Policy.MaxErrorRate < 0 && len(gates) == 0 {
		b.WriteString("- nothing: no rule is declared, so this run can only inform\n")
	}
	if m.rule() == gate.RulePaired {
		b.WriteString("\n**Inconclusive** means too few observations to form an interval (at least 2 batches of paired " +
			"observations, or for the error rate 2 repetitions, are needed); it is never a pass.\n\n")
	} else {
		b.WriteString("\n**Inconclusive** means too few repetitions to form an interval (at least 2 are needed); " +
			"it is never a pass.\n\n")
	}
	if m.anyUnresolved() {
		b.WriteString("A **tie (could not see < N%)** is an unresolved tie: its data could not rule out a change of up to " +
			"N% (rounded up), more than the tie band, so it says only that no change larger than that was seen.\n\n")
	}
}

// anyUnresolved says whether some verdict shown is an unresolved tie.
func (m *model) anyUnresolved() bool {
	for _, c := range m.in.Comparison.Cells {
		for _, d := range c.Decisions {
			if d.Unresolved {
				return true
			}
		}
	}
	return false
}

// scenarioIdentity is ", sha256 0123…, seed 1, profile pr" for prose.
func scenarioIdentity(s baselines.ScenarioInfo) string {
	var parts []string
	if s.Hash != "" {
		parts = append(parts, "sha256 "+md(shortHash(s.Hash)))
	}
	parts = append(parts, "seed "+strconv.FormatUint(s.Seed, 10))
	if s.Profile != "" {
		parts = append(parts, "profile "+md(s.Profile))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// ruleText states a fail_on rule in words, with its globs escaped.
func ruleText(r gate.Rule) string {
	var where []string
	add := func(what string, globs []string) {
		if len(globs) == 0 || (len(globs) == 1 && globs[0] == "*") {
			return
		}
		esc := make([]string, len(globs))
		for i, g := range globs {
			esc[i] = md(g)
		}
		where = append(where, what+" matches "+strings.Join(esc, " or "))
	}
	add("class", r.Classes)
	add("concurrency", r.Concurrency)
	add("variant", r.Variants)
	s := "a regression of " + md(string(r.Metric)) + " "
	if len(where) == 0 {
		return s + "in any cell"
	}
	return s + "where " + strings.Join(where, " and ")
}

func (m *model) mdThreats(b *strings.Builder) {
	b.WriteString("### Threats to validity\n\n")
	for _, t := range m.threats() {
		b.WriteString("- " + t + "\n")
	}
	b.WriteString("\n")
}

// threats lists what limits this run's claim, as markdown items. Only
// conditions the results file records are listed; the rest of the protocol
// is stated in Claims.
func (m *model) threats() []string {
	r := m.in.Results
	env := r.Env
	var out []string
	window := "single run window"
	if !env.Start.IsZero() {
		window += " (" + stamp(env.Start)
		if !env.End.IsZero() {
			window += " → " + stamp(env.End)
		}
		window += ")"
	}
	out = append(out, "Single runner, "+window+": nothing here speaks for other machines, "+
		"and drift of this host during the window is only partly cancelled by interleaving.")
	if len(env.Pins) == 0 {
		out = append(out, "No resource pins: both targets could use every CPU of the host, "+
			"so background activity reaches them unevenly.")
	}
	for _, p := range env.Pins {
		if len(p.NotApplied) == 0 {
			continue
		}
		reasons := make([]string, len(p.NotApplied))
		for i, n := range p.NotApplied {
			reasons[i] = md(n)
		}
		out = append(out, "Pin set "+md(p.Name)+" was not fully applied ("+strings.Join(reasons, "; ")+
			"): its cells ran outside the declared budget, so they do not show how the targets behave within it.")
	}
	if m.ownLoad() {
		out = append(out, "The load generator runs on the same host as the targets and competes with them for CPU; "+
			"a saturated generator slows both sides alike and pushes verdicts towards a tie.")
	}
	if fps := m.shardFingerprints(); len(fps) > 1 {
		out = append(out, fmt.Sprintf("The grid's shards ran on %d different kinds of machine (fingerprints %s): each cell compares its two builds on one machine, but cells measured on different machines do not compare with each other.",
			len(fps), strings.Join(fps, ", ")))
	}
	if s := m.generator.saturationText(md); s != "" {
		out = append(out, strings.ToUpper(s[:1])+s[1:]+".")
	}
	if s := m.sourceThreat(); s != "" {
		out = append(out, s)
	}
	switch r.Status {
	case "cancelled", "failed", "running":
		after := fmt.Sprintf("after %d of %d planned rounds", m.in.Rounds, r.Plan.Rounds)
		if !m.uniformRounds() {
			after = fmt.Sprintf("with %s (%d planned)", m.roundsText("complete round", "complete rounds", md), r.Plan.Rounds)
		}
		out = append(out, fmt.Sprintf("The run stopped early (%s) %s: "+
			"fewer repetitions give wider intervals, so more cells read as ties or inconclusive.",
			md(r.Status), after))
	default:
		if m.in.Rounds > 0 && m.in.Rounds < 3 {
			out = append(out, fmt.Sprintf("Only %s: the t-intervals are wide, so only large changes can be told from a tie.",
				plural(m.in.Rounds, "repetition", "repetitions")))
		}
	}
	for _, t := range []baselines.TargetInfo{env.Baseline, env.Candidate} {
		name := sideName(t)
		if t.Kind == "url" {
			out = append(out, "The "+name+" is an already-running service: benchgate neither built, started nor pinned it.")
		}
		if t.Commit == "" {
			out = append(out, "The "+name+"'s commit is unknown: the report cannot show which build was measured.")
		}
	}
	if len(m.errors) > 0 {
		out = append(out, "Some "+m.noun().many+" failed (see Errors): a side that fails fast can look faster, "+
			"and its latency mixes error responses with real ones.")
	}
	out = append(out, m.designThreats()...)
	return append(out, m.gateThreats()...)
}

func sideName(t baselines.TargetInfo) string {
	if t.Name == "" {
		return "target"
	}
	return md(t.Name)
}

func (m *model) mdReproduce(b *strings.Builder) {
	s := m.in.Results.Scenario
	b.WriteString("### Reproduce with\n\n")
	cmd := reproduceCommand(s)
	r := m.in.Results
	switch {
	case r.Kind == "gobench" && r.Env.Baseline.Kind == "file":
		cmd = "benchgate compare " + shellWord(r.Env.Baseline.Spec) + " " + shellWord(r.Env.Candidate.Spec)
	case strings.HasPrefix(r.Kind, "import:"):
		cmd = "benchgate compare -import " + shellWord(strings.TrimPrefix(r.Kind, "import:")) +
			" -baseline " + shellWord(strings.ReplaceAll(r.Env.Baseline.Spec, ", ", ",")) +
			" -candidate " + shellWord(strings.ReplaceAll(r.Env.Candidate.Spec, ", ", ","))
	}
	f := fence(cmd)
	fmt.Fprintf(b, "%ssh\n%s\n%s\n\n", f, cmd, f)
	switch {
	case r.Kind == "gobench" && r.Env.Baseline.Kind == "file":
		b.WriteString("These were saved go test -bench outputs: decided again from the same files, they give the same verdicts.\n\n")
	case strings.HasPrefix(r.Kind, "import:"):
		b.WriteString("These were another tool's reports: decided again from the same files, they give the same verdicts.\n\n")
	case r.Kind == "gobench":
		fmt.Fprintf(b, "The rounds' order is a function of the scenario's seed (%d); "+
			"run it on the same runner type with the same two versions.\n\n", s.Seed)
	default:
		n := m.noun()
		fmt.Fprintf(b, "The %s stream is a function of the scenario's seed (%d), so a rerun sends the same %s; "+
			"run it on the same runner type with the same two builds.\n\n", n.one, s.Seed, n.many)
	}
}

func reproduceCommand(s baselines.ScenarioInfo) string {
	file := s.File
	if file == "" {
		file = "benchgate.yml"
	}
	cmd := "benchgate gate -scenario " + shellWord(file)
	if s.Profile != "" {
		cmd += " -profile " + shellWord(s.Profile)
	}
	return cmd
}

func (m *model) mdEnvironment(b *strings.Builder) {
	r := m.in.Results
	env, s := r.Env, r.Scenario
	b.WriteString("### Environment\n\n")
	for _, t := range []baselines.TargetInfo{env.Baseline, env.Candidate} {
		b.WriteString("- " + targetText(t) + "\n")
	}
	line := "- **scenario**: " + md(orDash(s.File))
	if s.Hash != "" {
		line += ", sha256 " + md(shortHash(s.Hash))
	}
	line += ", seed " + strconv.FormatUint(s.Seed, 10)
	if s.Profile != "" {
		line += ", profile " + md(s.Profile)
	}
	b.WriteString(line + "\n")
	if l := s.Load; len(l.Concurrency) > 0 {
		cs := make([]string, len(l.Concurrency))
		for i, c := range l.Concurrency {
			cs[i] = strconv.Itoa(c)
		}
		decided := m.roundsText("complete round", "complete rounds", md) + " decided"
		if !m.uniformRounds() {
			decided = "decided on " + m.roundsText("complete round", "complete rounds", md)
		}
		sliced := ""
		if m.sliced() {
			sliced = "; alternating in slices of " + m.sliceText()
		}
		planned := plural(l.Repetitions, "repetition", "repetitions") + " planned"
		if m.adaptive() {
			planned += fmt.Sprintf(" (up to %d where a verdict was open)", m.in.Results.Plan.MaxRounds)
		}
		fmt.Fprintf(b, "- **load**: concurrency %s; %s measured after %s warmup per rung%s; timeout %s; "+
			"%s, %s\n",
			strings.Join(cs, ", "), seconds(l.Duration), seconds(l.Warmup), sliced, seconds(l.Timeout),
			planned, decided)
	}
	cpu := md(orDash(env.CPUModel))
	if env.CPUs > 0 {
		cpu += fmt.Sprintf(" × %d", env.CPUs)
	}
	fmt.Fprintf(b, "- **runner**: %s; %s/%s, kernel %s; %s\n",
		cpu, md(orDash(env.OS)), md(orDash(env.Arch)), md(orDash(env.Kernel)), md(orDash(env.GoVersion)))
	for _, sh := range r.Shards {
		fmt.Fprintf(b, "- **shard %d/%d**: %s, %s, on %s (fingerprint %s)\n", sh.Index, len(r.Shards),
			plural(sh.Cells, "cell", "cells"), md(sh.Status), md(sh.Env.FingerprintText()), md(sh.Fingerprint))
	}
	tool := env.ToolVersion
	if tool == "" {
		tool = r.Tool
	}
	fmt.Fprintf(b, "- **tool**: %s\n", md(orDash(tool)))
	when := stamp(env.Start) + " → " + stamp(env.End)
	if d := span(env.Start, env.End); d != "" {
		when += " (" + d + ")"
	}
	fmt.Fprintf(b, "- **time**: %s\n", when)
	fmt.Fprintf(b, "- **pins**: %s\n", pinsText(env))
	if g := m.generator; g != nil {
		fmt.Fprintf(b, "- **load generator**: %s\n", g.text(md))
	}
}

func targetText(t baselines.TargetInfo) string {
	s := "**" + sideName(t) + "**: " + md(orDash(t.Kind)) + " " + md(orDash(t.Spec))
	if t.Commit != "" {
		s += ", commit " + md(t.Commit)
	} else {
		s += ", commit unknown"
	}
	if t.URL != "" {
		s += ", reached at " + md(t.URL)
	}
	return s
}

func pinsText(env baselines.Environment) string {
	if len(env.Pins) == 0 {
		return "none"
	}
	var sets []string
	for _, p := range env.Pins {
		s := md(p.Name)
		if len(p.NotApplied) > 0 {
			s += " (" + plural(len(p.NotApplied), "pin", "pins") + " not applied)"
		} else {
			s += " (applied)"
		}
		sets = append(sets, s)
	}
	return strings.Join(sets, "; ")
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

// bandText is the tie band, with the metrics that have bands of their own:
// "10% (allocs/op 0%)".
func (m *model) bandText(esc func(string) string) string {
	st := m.in.Comparison.Settings
	s := fraction(st.TieWithin)
	if len(st.TieWithinFor) > 0 {
		var own []string
		for _, k := range slices.Sorted(maps.Keys(st.TieWithinFor)) {
			own = append(own, esc(string(k))+" "+fraction(st.TieWithinFor[k]))
		}
		s += " (" + strings.Join(own, ", ") + ")"
	}
	return s
}

// interleaved says whether the rungs were scheduled by benchgate in
// seeded AB/BA pairs; saved files and imported reports were not.
func (m *model) interleaved() bool {
	r := m.in.Results
	return !strings.HasPrefix(r.Kind, "import:") && !(r.Kind == "gobench" && r.Env.Baseline.Kind == "file")
}

// ownLoad says whether benchgate's own load generator measured the run:
// HTTP requests, or gRPC calls.
func (m *model) ownLoad() bool {
	k := m.in.Results.Kind
	return k == "" || k == "http" || k == "grpc"
}

// shardFingerprints lists the distinct machine fingerprints of a merged
// run's shards, in shard order.
func (m *model) shardFingerprints() []string {
	var fps []string
	for _, s := range m.in.Results.Shards {
		if !slices.Contains(fps, s.Fingerprint) {
			fps = append(fps, s.Fingerprint)
		}
	}
	return fps
}
