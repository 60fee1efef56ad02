package decide

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/textsafe"
)

// Outcome says why a comparison did not pass: nil for a pass; otherwise
// an error naming what failed (the regressions, the cells the candidate
// stopped answering in, the probes that answered differently, the
// pre-flight commands) and, counted apart, what could not be decided: the
// unmeasured cells, the gated metrics undecided, the ties that could not
// resolve their band. The CLI gives it exit code 1 either way. The error
// is one line of a log: each list names at most maxListed cells, each
// name cut to textsafe.QuoteRunes characters, and counts the rest.
func Outcome(c gate.Comparison) error {
	if c.Outcome == gate.Pass {
		return nil
	}
	if c.Outcome != gate.Fail && len(c.Cells) == 0 {
		return errors.New("gate inconclusive: no cell was measured (see the absent classes, if any)")
	}
	var parts, regressed, silent, unmeasured []string
	var disagree, undecided, unresolved int
	for _, f := range c.Failures {
		// A class may be a benchmark's name of any length.
		cell := textsafe.Clip(f.Key.String(), textsafe.QuoteRunes)
		switch f.Kind {
		case gate.FailAgreement:
			// The key names the class and variant probed: "csv/Q01".
			if disagree++; disagree <= maxListed {
				parts = append(parts, "agreement: "+cell+" answers differently")
			}
		case gate.FailPreflight:
			parts = append(parts, f.Reason)
		case gate.FailNoAnswers:
			silent = append(silent, cell)
		case gate.FailUnmeasured:
			unmeasured = append(unmeasured, cell)
		case gate.FailUnresolved:
			unresolved++
		case gate.FailInconclusive:
			if f.Key == (gate.CellKey{}) {
				// Of no cell: nothing measured, a rule that gates none.
				parts = append(parts, f.Reason)
				continue
			}
			undecided++
		default:
			regressed = append(regressed, fmt.Sprintf("%s %s", cell, f.Metric))
		}
	}
	if disagree > maxListed {
		parts = append(parts, fmt.Sprintf("agreement: %d more probe(s) answer differently", disagree-maxListed))
	}
	if len(regressed) > 0 {
		parts = append(parts, fmt.Sprintf("%d pre-declared regression(s): %s", len(regressed), listed(regressed)))
	}
	if len(silent) > 0 {
		parts = append(parts, fmt.Sprintf("the candidate answered no request in %d cell(s) the baseline answered in: %s", len(silent), listed(silent)))
	}
	// What could not be decided is counted apart from what failed: an
	// unmeasured cell is never a regression.
	if len(unmeasured) > 0 {
		parts = append(parts, fmt.Sprintf("%d cell(s) unmeasured, the baseline answered no request: %s", len(unmeasured), listed(unmeasured)))
	}
	if undecided > 0 {
		parts = append(parts, fmt.Sprintf("%d gated metric(s) could not be decided", undecided))
	}
	if unresolved > 0 {
		parts = append(parts, fmt.Sprintf("%d gated tie(s) could not rule out a regression beyond the tie band on this runner (gate.unresolved: fail)", unresolved))
	}
	if c.Outcome == gate.Fail {
		return fmt.Errorf("gate failed: %s", strings.Join(parts, "; "))
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing decided")
	}
	return fmt.Errorf("gate inconclusive: %s", strings.Join(parts, "; "))
}

// maxListed is how many cells a list of Outcome's names: the error is one
// line of a workflow log, and the report and decisions.json list them all.
const maxListed = 10

// listed joins the first maxListed of names and counts the rest: "a, b,
// …, j and 2990 more".
func listed(names []string) string {
	shown := names[:min(len(names), maxListed)]
	s := strings.Join(shown, ", ")
	if rest := len(names) - len(shown); rest > 0 {
		s += fmt.Sprintf(" and %d more", rest)
	}
	return s
}

// OpenCells is the adaptive design's look at a run under way: the results
// so far decided by Results, and the cells whose gated verdict is still
// open, in the comparison's order.
func OpenCells(res *benchdata.Results) ([]benchdata.Cell, error) {
	c, err := Results(res)
	if err != nil {
		return nil, err
	}
	var cells []benchdata.Cell
	for _, k := range c.OpenCells() {
		cells = append(cells, benchdata.Cell(k))
	}
	return cells, nil
}

// Unfinished says why the results of a run that did not complete never
// pass, whatever was decided on the rounds it completed: nil for a
// complete run, else its status, the rounds decided on and what the run
// said.
func Unfinished(res *benchdata.Results) error {
	if res.Status == "complete" {
		return nil
	}
	msg := fmt.Sprintf("results of a %s run: decided on %d complete round(s) of %d", res.Status, res.CompleteRounds(), res.Plan.Rounds)
	if res.Error != "" {
		msg += "; the run said: " + res.Error
	}
	return errors.New(msg)
}

// ProfileCells are the cells to profile after a run's measured rounds
// (the profiling section): the gated cells that regressed, or with all
// every gated cell, the largest gated regression first (by its decision's
// figure, the paired ratio's or the means' change), then in the plan's
// order.
func ProfileCells(res *benchdata.Results, all bool) ([]benchdata.Cell, error) {
	c, err := Results(res)
	if err != nil {
		return nil, err
	}
	type ranked struct {
		cell benchdata.Cell
		size float64
	}
	var rs []ranked
	for _, cell := range c.Cells {
		if len(cell.Gated) == 0 || !all && cell.Verdict != gate.Regression {
			continue
		}
		r := ranked{cell: benchdata.Cell(cell.Key)}
		for _, d := range cell.Decisions {
			if d.Verdict == gate.Regression && slices.Contains(cell.Gated, d.Metric) {
				r.size = max(r.size, math.Abs(d.Delta))
			}
		}
		rs = append(rs, r)
	}
	slices.SortStableFunc(rs, func(a, b ranked) int { return cmp.Compare(b.size, a.size) })
	cells := make([]benchdata.Cell, len(rs))
	for i, r := range rs {
		cells[i] = r.cell
	}
	return cells, nil
}
