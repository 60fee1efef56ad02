// Package report renders a decided comparison for people and machines: a
// compact terminal table, the full GitHub-flavoured markdown report laid
// out as a hand-written performance comparison is (each cell's means
// ±interval on both builds with the change and a verdict, then what the
// run may claim, the threats to validity, how to reproduce it and the
// environment), and a stable JSON document.
//
// Every reporter reads the same value, an Input, through one table model
// so the three formats can never disagree about a number or a
// verdict; the renderers only lay that model out. The package decides
// nothing itself: verdicts, reasons and the outcome come from the one
// decision path (packages decide and gate, in the Input's Comparison), and
// counts of errors, resource figures, latency distributions and what the
// correctness checks found come from the results file. Names of classes,
// variants, pin sets, scenarios, target specs, commits, error texts, the
// pre-flight commands' output and the response bodies the agreement check
// quotes are controlled by whoever opens the pull request, so each
// renderer neutralises them for its medium
// (EscapeMarkdown for markdown, visible escapes for a terminal, encoding/json
// for JSON). Output is a function of the Input alone — no clock, no
// environment — so golden files pin it byte for byte.
//
// The same holds for the nightly history "benchgate history" keeps:
// History and Drift lay out series and change points that package
// benchdata found, escaping the names a history file carries. WriteFiles
// (with WriteCharts), WriteCalibration and WriteTrendCharts are the
// package's only writers of files: a report, its SVG charts and a
// calibration beside their results, and a history's trends.
package report

import (
	"io"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// Input is what every reporter renders.
type Input struct {
	// Results is the run that was decided: scenario identity, environment,
	// rungs (for error distributions) and status. Nil renders as an empty
	// results file.
	Results *benchdata.Results
	// Comparison is the decided grid.
	Comparison gate.Comparison
	// Rounds is the number of complete rounds the comparison was decided on
	// when the results file has no pin sets; 0 means
	// Results.CompleteRounds(). With pin sets it is ignored: each pin set's
	// cells are decided on its own complete rounds,
	// Results.CompleteRoundsOf(pins), as the gate decides them. With
	// adaptive rounds a cell also counts the rounds it ran after those on
	// both targets, Results.RoundsOfCell, unless Rounds says fewer rounds
	// than the results file holds.
	Rounds int
	// Dashboard is the address of the published history site (benchgate
	// history site), checked by CheckDashboardURL: when set, the markdown
	// report and the comment link it at their head, and each failure of a
	// cell links that cell's page (site.CellPage). "" links nothing.
	Dashboard string
	// Where is what the profiled cells' CPU profiles say (LoadWhere);
	// nil when none were taken.
	Where []Where
}

// ForFormat returns the writer of in in the named format (a name or alias
// of Formats), so a -format flag maps to a renderer in one place.
func ForFormat(format string, in Input, opt TerminalOptions) (func(io.Writer) error, error) {
	if _, err := canonical(format); err != nil {
		return nil, err
	}
	comparison := document[Input]{
		terminal: func(w io.Writer, in Input) error { return Terminal(w, in, opt) },
		markdown: Markdown,
		json:     JSON,
	}
	return func(w io.Writer) error { return comparison.render(w, in, format) }, nil
}

// normalise fills the defaults Input documents, so renderers need no nil
// checks.
func (in Input) normalise() Input {
	if in.Results == nil {
		in.Results = &benchdata.Results{}
	}
	// Rounds becomes the least over the pin sets; the model keeps each pin
	// set's own (rounds.go).
	if in.Rounds == 0 || len(in.Results.Plan.PinSets) > 0 {
		in.Rounds = in.Results.CompleteRounds()
	}
	return in
}
