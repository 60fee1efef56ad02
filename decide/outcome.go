package decide

import (
	"errors"
	"fmt"
	"strings"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/gate"
)

// Outcome says why a comparison did not pass: nil for a pass; otherwise
// an error naming what failed (the regressions, the probes that answered
// differently, the pre-flight commands) or, for an inconclusive one, how
// many gated metrics could not be decided or could not resolve their tie
// band. The CLI gives it exit code 1 either way.
func Outcome(c gate.Comparison) error {
	switch c.Outcome {
	case gate.Pass:
		return nil
	case gate.Fail:
		var cells, parts []string
		for _, f := range c.Failures {
			switch f.Kind {
			case gate.FailAgreement:
				// The key names the class and variant probed: "csv/Q01".
				parts = append(parts, "agreement: "+f.Key.String()+" answers differently")
			case gate.FailPreflight:
				parts = append(parts, f.Reason)
			case gate.FailInconclusive, gate.FailUnresolved:
			default:
				cells = append(cells, fmt.Sprintf("%s %s", f.Key, f.Metric))
			}
		}
		if len(cells) > 0 {
			parts = append(parts, fmt.Sprintf("%d pre-declared regression(s): %s", len(cells), strings.Join(cells, ", ")))
		}
		return fmt.Errorf("gate failed: %s", strings.Join(parts, "; "))
	default:
		if len(c.Cells) == 0 {
			return errors.New("gate inconclusive: no cell was measured (see the absent classes, if any)")
		}
		var undecided, unresolved int
		for _, f := range c.Failures {
			switch f.Kind {
			case gate.FailUnresolved:
				unresolved++
			case gate.FailInconclusive:
				undecided++
			}
		}
		var parts []string
		if undecided > 0 {
			parts = append(parts, fmt.Sprintf("%d gated metric(s) could not be decided", undecided))
		}
		if unresolved > 0 {
			parts = append(parts, fmt.Sprintf("%d gated tie(s) could not resolve the tie band on this runner (gate.unresolved: fail)", unresolved))
		}
		if len(parts) == 0 {
			parts = append(parts, "nothing decided")
		}
		return fmt.Errorf("gate inconclusive: %s", strings.Join(parts, "; "))
	}
}

// OpenCells is the adaptive design's look at a run under way: the results
// so far decided by Results, and the cells whose gated verdict is still
// open, in the comparison's order.
func OpenCells(res *baselines.Results) ([]baselines.Cell, error) {
	c, err := Results(res)
	if err != nil {
		return nil, err
	}
	var cells []baselines.Cell
	for _, k := range c.OpenCells() {
		cells = append(cells, baselines.Cell(k))
	}
	return cells, nil
}

// Unfinished says why the results of a run that did not complete never
// pass, whatever was decided on the rounds it completed: nil for a
// complete run, else its status, the rounds decided on and what the run
// said.
func Unfinished(res *baselines.Results) error {
	if res.Status == "complete" {
		return nil
	}
	msg := fmt.Sprintf("results of a %s run: decided on %d complete round(s) of %d", res.Status, res.CompleteRounds(), res.Plan.Rounds)
	if res.Error != "" {
		msg += "; the run said: " + res.Error
	}
	return errors.New(msg)
}
