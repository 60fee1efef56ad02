package report

import (
	"reflect"
	"testing"

	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
)

// TestDecide: the report's input is the one decision path's comparison of
// the results, on their complete rounds.
func TestDecide(t *testing.T) {
	t.Parallel()
	res := pinsInput().Results
	in, err := Decide(res)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := decide.Results(res)
	if in.Results != res || in.Rounds != 3 || !reflect.DeepEqual(in.Comparison, want) {
		t.Errorf("Decide = %+v rounds %d\nwant the comparison %+v", in.Comparison, in.Rounds, want)
	}
	cal, err := DecideCalibration(res)
	if err != nil {
		t.Fatal(err)
	}
	if cal.Results != res || !reflect.DeepEqual(cal.Comparison, want) || !reflect.DeepEqual(cal.Calibrations, gate.Calibrate(want)) || len(cal.Calibrations) == 0 {
		t.Errorf("DecideCalibration = %+v", cal)
	}

	bad := *res
	bad.Scenario.Gate.Confidence = 2
	if _, err := Decide(&bad); err == nil {
		t.Error("Decide of bad gate settings: no error")
	}
	if _, err := DecideCalibration(&bad); err == nil {
		t.Error("DecideCalibration of bad gate settings: no error")
	}
}
