package report

import (
	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
)

// Decide decides a results file by the one decision path (package decide)
// into the Input every reporter renders, so the CLI, the action and the
// history all report what the same decision found.
func Decide(res *baselines.Results) (Input, error) {
	c, err := decide.Results(res)
	if err != nil {
		return Input{}, err
	}
	return Input{Results: res, Comparison: c, Rounds: res.CompleteRounds()}, nil
}

// DecideCalibration decides an A/A run as Decide does and adds what it
// says of the runner (gate.Calibrate): the CalibrationInput of
// "benchgate calibrate".
func DecideCalibration(res *baselines.Results) (CalibrationInput, error) {
	in, err := Decide(res)
	if err != nil {
		return CalibrationInput{}, err
	}
	return CalibrationInput{Results: res, Comparison: in.Comparison, Calibrations: gate.Calibrate(in.Comparison)}, nil
}
