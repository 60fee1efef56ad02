package report

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/numtext"
)

// HistorySeries is one series of a history as History shows it.
type HistorySeries struct {
	Series benchdata.Series
	// Machine describes the machine of the series' fingerprint, as its
	// newest record does.
	Machine string
	// ChangePoints are those found on all of the series' runs, however
	// many are shown. None are looked for on a fingerprint of
	// benchdata.MixedPrefix.
	ChangePoints []benchdata.ChangePoint
}

// HistoryInput is what History shows and WriteTrendCharts draws.
type HistoryInput struct {
	Series []HistorySeries
	// Options are those the change points were looked for with.
	Options benchdata.ChangePointOptions
	// Last, when positive, limits each series to its last runs.
	Last int
}

// ShowHistory writes in as History does and, when chartDir is not "",
// each series' trend chart into it (WriteTrendCharts).
func ShowHistory(w io.Writer, in HistoryInput, chartDir string) error {
	if err := History(w, in); err != nil || chartDir == "" {
		return err
	}
	return WriteTrendCharts(chartDir, in)
}

// History writes each series as a table for a terminal, one row per run
// (date, candidate and baseline commits, mean ±half-width, n), each
// change point marked on the first run after it with its change, p-value
// and whether it is for the worse. Names come from history files, which
// scenario files a pull request can change: they are shown escaped.
func History(w io.Writer, in HistoryInput) error {
	var b strings.Builder
	for i, s := range in.Series {
		if i > 0 {
			b.WriteString("\n")
		}
		historySeries(&b, s, in.Options, in.Last)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func historySeries(b *strings.Builder, hs HistorySeries, opt benchdata.ChangePointOptions, last int) {
	s, cps := hs.Series, hs.ChangePoints
	k := s.Key
	fmt.Fprintf(b, "%s · %s · %s %s\n", TerminalText(scenarioName(k.Scenario, k.Profile)), TerminalText(k.Cell.String()), k.Target, TerminalText(k.Metric))
	fmt.Fprintf(b, "machine %s: %s\n", TerminalText(k.Fingerprint), TerminalText(orDash(hs.Machine)))
	marks := map[int]benchdata.ChangePoint{}
	worse := 0
	for _, cp := range cps {
		marks[cp.Index] = cp
		if isWorse(s.HigherIsBetter, cp) {
			worse++
		}
	}
	need := 2 * opt.WithDefaults().MinWindow
	switch {
	case strings.HasPrefix(k.Fingerprint, benchdata.MixedPrefix):
		fmt.Fprintf(b, "%d run(s) whose shards ran on different machines: no change points are looked for\n", len(s.Points))
	case len(s.Points) < need:
		fmt.Fprintf(b, "%d run(s): too few to look for change points (need %d)\n", len(s.Points), need)
	case len(cps) == 0:
		fmt.Fprintf(b, "%d runs, no change point\n", len(s.Points))
	default:
		fmt.Fprintf(b, "%d runs, %d change point(s), %d for the worse\n", len(s.Points), len(cps), worse)
	}
	from := 0
	if last > 0 && len(s.Points) > last {
		from = len(s.Points) - last
		fmt.Fprintf(b, "(%d earlier run(s) not shown)\n", from)
	}
	unit := gate.Metric(k.Metric).Unit()
	sc := seriesScale(unit, s.Points)
	lines := []string{"date\tcandidate\tbaseline\tmean ±hw\tn\t"}
	for i := from; i < len(s.Points); i++ {
		p := s.Points[i]
		mark := ""
		if cp, ok := marks[i]; ok {
			step := numtext.ScaleOf(unit, cp.Before, cp.After)
			mark = fmt.Sprintf("◀ change %s (%s → %s, p %s)", percent(cp.Change), step.Format(cp.Before), step.Format(cp.After), pValue(cp.PValue))
			if isWorse(s.HigherIsBetter, cp) {
				mark += " WORSE"
			}
		}
		lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%s", p.Date.UTC().Format("2006-01-02 15:04"),
			TerminalText(shortRef(orDash(p.CandidateCommit))), TerminalText(shortRef(orDash(p.BaselineCommit))),
			sc.Summary(p.Mean, p.HalfWidth, p.N), p.N, mark))
	}
	leftTable(b, lines)
}

// HistoryAppended is the line, without its newline, that tells a terminal
// rec was appended to the history file named file.
func HistoryAppended(rec benchdata.Record, file string) string {
	return fmt.Sprintf("history: appended %s of %s, candidate %s, machine %s (%d values) to %s",
		TerminalText(scenarioName(rec.Scenario, rec.Profile)), rec.Date.UTC().Format("2006-01-02 15:04 MST"),
		TerminalText(shortRef(orDash(rec.CandidateCommit))), rec.Fingerprint, len(rec.Cells), TerminalText(file))
}

// HistoryHeld is the line, without its newline, that tells a terminal
// rec's run is already in the history file named file, so it was not
// appended again.
func HistoryHeld(rec benchdata.Record, file string) string {
	return fmt.Sprintf("history: run %s of %s is already in %s: not appended again",
		TerminalText(rec.RunID), rec.Date.UTC().Format(time.RFC3339), TerminalText(file))
}

// HistoryPruned is the line, without its newline, that tells a terminal
// what benchgate history prune did to the history file named file.
func HistoryPruned(p benchdata.Pruned, file, archive string) string {
	switch {
	case p.Moved == 0:
		return fmt.Sprintf("history: %s holds %d record(s), none older than the months kept: unchanged", TerminalText(file), p.Kept)
	case archive == "":
		return fmt.Sprintf("history: %s keeps %d record(s); %d older record(s) dropped", TerminalText(file), p.Kept, p.Moved)
	}
	return fmt.Sprintf("history: %s keeps %d record(s); %d older record(s) archived in %s (%d file(s) written)",
		TerminalText(file), p.Kept, p.Moved, TerminalText(archive), len(p.Archives))
}

// leftTable writes tab-separated lines as columns two spaces apart, as
// text/tabwriter lays them out, without the padding after a line's last
// cell: a terminal line ends where its text does.
func leftTable(b *strings.Builder, lines []string) {
	var t strings.Builder
	tw := tabwriter.NewWriter(&t, 0, 0, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintln(tw, l)
	}
	tw.Flush()
	for l := range strings.Lines(t.String()) {
		b.WriteString(strings.TrimRight(l, " \n") + "\n")
	}
}

// isWorse says whether a change point is for the worse in a series whose
// metric is better higher or not (benchdata.Series.HigherIsBetter).
func isWorse(higher bool, cp benchdata.ChangePoint) bool {
	return cp.Change != 0 && (cp.Change < 0) == higher
}

// scenarioName names a series' scenario and profile: "demo-api
// (nightly)".
func scenarioName(name, profile string) string {
	name = cmp.Or(name, "(unnamed scenario)")
	if profile != "" {
		name += " (" + profile + ")"
	}
	return name
}

// seriesScale is the scale one table prints its means in: that of all
// the series' means (numtext.ScaleOf), the runs not shown included, so a
// table's figures read alike however many it shows.
func seriesScale(unit string, ps []benchdata.SeriesPoint) numtext.Scale {
	means := make([]float64, len(ps))
	for i, p := range ps {
		means[i] = p.Mean
	}
	return numtext.ScaleOf(unit, means...)
}

// The figures and commits the site shows alike (internal/numtext).
var (
	percent     = numtext.Percent
	pValue      = numtext.PValue
	shortRef    = numtext.Commit
	historyDate = numtext.Day
)
