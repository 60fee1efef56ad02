package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/numtext"
)

// DriftInput is what Drift renders: drift detection over a history file.
type DriftInput struct {
	Result benchdata.DriftResult
	// Records is how many records the history file held.
	Records int
	// File names the history file, as the user gave it.
	File string
}

// Drift writes the change points drift detection found, each with its
// commit range and dates, and what it did with each machine's records, in
// format: terminal, markdown or json (the DriftResult itself). Names come
// from history files and are escaped for the medium.
func Drift(w io.Writer, in DriftInput, format string) error {
	return driftDoc.render(w, in, format)
}

// driftDoc is the drift report in each format; its JSON is the DriftResult
// itself.
var driftDoc = document[DriftInput]{
	terminal: text(driftTerminal),
	markdown: text(driftMarkdown),
	json: func(w io.Writer, in DriftInput) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(in.Result)
	},
}

// DriftOutcome is a drift's verdict as an error: nil when no change point
// is for the worse, else the error that names them (WorseFindings).
func DriftOutcome(d benchdata.DriftResult) error {
	if n := d.Worse(); n > 0 {
		return fmt.Errorf("drift: %d change point(s) for the worse: %s", n, strings.Join(WorseFindings(d), ", "))
	}
	return nil
}

// WorseFindings names each change point for the worse, "Q01 c=8 candidate
// rps in c36..c37", safe for a terminal.
func WorseFindings(d benchdata.DriftResult) []string {
	var names []string
	for _, f := range d.Findings {
		if f.Worse {
			names = append(names, TerminalText(fmt.Sprintf("%s %s %s in %s..%s", f.Cell, f.Target, f.Metric,
				shortRef(orDash(f.FromCommit)), shortRef(orDash(f.ToCommit)))))
		}
	}
	return names
}

func driftHeadline(in DriftInput) string {
	if in.Records == 0 {
		return "no records yet"
	}
	d := in.Result
	series := 0
	for _, g := range d.Fingerprints {
		series += g.Series
	}
	return fmt.Sprintf("%d change point(s), %d for the worse, in %d series of %d record(s) on %d machine(s)",
		len(d.Findings), d.Worse(), series, in.Records, len(d.Fingerprints))
}

func driftParams(o benchdata.ChangePointOptions) string {
	return fmt.Sprintf("E-divisive means, split tested by a Student t test: p < %g, change ≥ %s, ≥ %d runs each side",
		o.MaxPValue, fraction(o.MinMagnitude), o.MinWindow)
}

// commitRange is where a finding's change came in: the candidate commits
// either side of it, noting a baseline series whose own commit stayed.
func commitRange(f benchdata.DriftFinding, esc func(string) string) string {
	s := esc(shortRef(orDash(f.FromCommit))) + ".." + esc(shortRef(orDash(f.ToCommit)))
	if f.Target == "baseline" && f.FromBaseline == f.ToBaseline {
		s += " (baseline unchanged)"
	}
	return s
}

// groupStatus is what drift detection did with one machine's series.
func groupStatus(g benchdata.FingerprintGroup, esc func(string) string) string {
	if g.Skipped != "" {
		return "skipped: " + esc(g.Skipped)
	}
	s := fmt.Sprintf("%d series tested", g.Series)
	if g.Short > 0 {
		s += fmt.Sprintf(", %d too short", g.Short)
	}
	return s
}

func driftTerminal(in DriftInput) string {
	d := in.Result
	var b strings.Builder
	fmt.Fprintf(&b, "benchgate history drift: %s (%s)\n", driftHeadline(in), TerminalText(in.File))
	fmt.Fprintf(&b, "%s\n", driftParams(d.Options))
	if len(d.Findings) > 0 {
		b.WriteString("\n")
		lines := []string{"\tmachine\tscenario\tcell\ttarget\tmetric\tchange\tbefore → after\tp\tcommits\tdates\t"}
		for _, f := range d.Findings {
			verdict := "better"
			if f.Worse {
				verdict = "WORSE"
			}
			lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s → %s\t%s\t%s\t%s → %s\t", verdict, TerminalText(f.Fingerprint),
				TerminalText(scenarioName(f.Scenario, f.Profile)), TerminalText(f.Cell.String()), f.Target, TerminalText(f.Metric),
				percent(f.Change.Change), beforeAfter(f)[0], beforeAfter(f)[1], pValue(f.Change.PValue), commitRange(f, TerminalText),
				historyDate(f.FromDate), historyDate(f.ToDate)))
		}
		leftTable(&b, lines)
	}
	if len(d.Fingerprints) > 0 {
		b.WriteString("\nmachines:\n")
		for _, g := range d.Fingerprints {
			fmt.Fprintf(&b, "  %s  %d record(s), %s … %s  %s  — %s\n", TerminalText(g.Fingerprint), g.Records,
				historyDate(g.First), historyDate(g.Last), groupStatus(g, TerminalText), TerminalText(orDash(g.Machine)))
		}
	}
	return b.String()
}

func driftMarkdown(in DriftInput) string {
	d := in.Result
	var b strings.Builder
	b.WriteString("## benchgate history: drift\n\n")
	head := driftHeadline(in)
	if d.Worse() > 0 {
		head = "**" + head + "**"
	}
	fmt.Fprintf(&b, "%s, from %s.\n\n", head, md(in.File))
	if len(d.Findings) > 0 {
		b.WriteString("| | machine | scenario | cell | target | metric | change | before → after | p | commits | dates |\n")
		b.WriteString("| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |\n")
		for _, f := range d.Findings {
			verdict := "better"
			if f.Worse {
				verdict = "**worse**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s → %s | %s | %s | %s → %s |\n", verdict, md(f.Fingerprint),
				md(scenarioName(f.Scenario, f.Profile)), md(f.Cell.String()), f.Target, md(f.Metric),
				percent(f.Change.Change), beforeAfter(f)[0], beforeAfter(f)[1], pValue(f.Change.PValue), commitRange(f, md),
				historyDate(f.FromDate), historyDate(f.ToDate))
		}
		b.WriteString("\n")
	}
	if len(d.Fingerprints) > 0 {
		b.WriteString("Machines (only runs on the same fingerprint are compared):\n\n")
		for _, g := range d.Fingerprints {
			fmt.Fprintf(&b, "- %s (%s): %d record(s), %s … %s, %s\n", md(g.Fingerprint), md(orDash(g.Machine)), g.Records,
				historyDate(g.First), historyDate(g.Last), groupStatus(g, md))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s.\n", md(driftParams(d.Options)))
	return b.String()
}

// beforeAfter are a finding's means before and after its change point, in
// its metric's unit, on one scale (numtext, as history and the site print
// them).
func beforeAfter(f benchdata.DriftFinding) [2]string {
	sc := numtext.ScaleOf(gate.Metric(f.Metric).Unit(), f.Change.Before, f.Change.After)
	return [2]string{sc.Format(f.Change.Before), sc.Format(f.Change.After)}
}
