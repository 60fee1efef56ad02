package main

import (
	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/report"
)

// decideInput turns a results file into the report's input, decided by the one
// decision path (package decide).
func decideInput(res *baselines.Results) (report.Input, error) {
	c, err := decide.Results(res)
	if err != nil {
		return report.Input{}, err
	}
	return report.Input{Results: res, Comparison: c, Rounds: res.CompleteRounds()}, nil
}
