package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// Markdown writes the full report as GitHub-flavoured markdown: outcome,
// the gated ties that could not resolve their band (under gate.unresolved
// warn and fail; under pass after the tables) and failures first, then the
// correctness checks, one table per pin set and variant, the resources the targets used and their throughput per core
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
	secCorrectness
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
		{secTitle, func(b *strings.Builder) { b.WriteString(m.titleLine("benchgate", 0) + m.dashboardLine()) }},
		{secIdentity, m.mdIdentity},
		{secStatus, m.mdStatus},
		{secError, m.mdError},
	}, lead, []part{
		{secFailures, m.mdFailures},
		{secCorrectness, m.mdCorrectness},
		{secTables, m.mdTables},
		{secWhere, m.mdWhere},
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
	parts = append(parts, "baseline"+commitSuffix(r.Env.Baseline)+" vs candidate"+commitSuffix(r.Env.Candidate))
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

func commitSuffix(t benchdata.TargetInfo) string {
	if t.Commit == "" {
		return ""
	}
	return " **" + md(shortCommit(t.Commit)) + "**" + dirtyText(t)
}

// dirtyText marks a commit whose work tree had changes: " (modified)".
func dirtyText(t benchdata.TargetInfo) string {
	if t.Dirty {
		return " (modified)"
	}
	return ""
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
	// outcome: "— 3 gated cells could not rule out a 10% regression on
	// this runner". When they are what left the gate undecided, they are the
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

// correctnessFailureText marks a correctness check's failure, which
// always fails the gate.
func correctnessFailureText(s string, markdown bool) string {
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
		s = strong(metric+" regression") + " in " + esc(f.Key.String())
		if it.delta != "" {
			s += " (" + it.delta + ")"
		}
	case "error_rate":
		s = strong("error rate") + " in " + esc(f.Key.String()) +
			fmt.Sprintf(" (%d of %d candidate %s failed)", it.cand.Errors, it.cand.Requests, n.many)
	case "inconclusive":
		if f.Key == (gate.CellKey{}) {
			s = strong("nothing decided") // the comparison has no cell
			if f.Metric != "" {
				s = strong(esc(metric) + " rule undecided") // a rule gates no cell
			}
			break
		}
		s = strong(metric+" undecided") + " in " + esc(f.Key.String())
	case gate.FailUnresolved:
		s = strong(metric+" unresolved") + " in " + esc(f.Key.String())
	case gate.FailNoAnswers:
		s = strong("no answers") + " in " + esc(f.Key.String())
	case gate.FailUnmeasured:
		s = strong("unmeasured") + ": " + esc(f.Key.String())
	case gate.FailAgreement:
		// The key names the class and variant probed, not a cell. The
		// reason the gate command gives reads on from the class: "answers
		// differ at request 3 (GET /s): $.n: 1 vs 2".
		s = strong("agreement") + ": class " + classLabel(f.Key.Class, f.Key.Variant, esc)
		if rest, ok := strings.CutPrefix(f.Reason, "answers differ"); ok {
			return correctnessFailureText(s+" answers differ"+esc(truncateMiddle(rest, reasonRunes)), markdown)
		}
		s += " answers differently"
	case gate.FailPreflight:
		// The key is empty: the reason names the command, as in
		// "pre-flight conformance fails on the candidate (exit 1: …)".
		if rest, ok := strings.CutPrefix(f.Reason, "pre-flight "); ok {
			return correctnessFailureText(strong("pre-flight")+" "+esc(truncateMiddle(rest, reasonRunes)), markdown)
		}
		s = strong("pre-flight check failed")
	default:
		s = strong(esc(f.Kind)+" "+metric) + " in " + esc(f.Key.String())
	}
	switch {
	case f.Reason == "":
	case correctnessFailure(f.Kind):
		// It may quote a target's output.
		s += ": " + esc(truncateMiddle(f.Reason, reasonRunes))
	default:
		s += ": " + esc(f.Reason)
	}
	if markdown {
		if it.page != "" {
			s += " · [history](<" + it.page + ">)"
		}
		if f.Kind == gate.FailInconclusive || f.Kind == gate.FailUnresolved || f.Kind == gate.FailUnmeasured {
			return "⚠️ " + s
		}
		return "❌ " + s
	}
	return s
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
	_, imported := r.Imported()
	return !imported && !(r.Kind == "gobench" && r.Env.Baseline.Kind == "file")
}
