package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

func TestCalibrationReport(t *testing.T) {
	t.Parallel()
	side := gate.Side{Samples: map[gate.Metric][]float64{gate.RPS: {100, 110, 90}}}
	// A pin set's name is the file's: it must not break the table or
	// the terminal.
	key := gate.CellKey{Pins: "a|b\x1b[31m", Class: "search", Concurrency: 1}
	c := gate.Compare([]gate.CellInput{{Key: key, Baseline: side, Candidate: side}},
		gate.DefaultSettings, gate.Policy{FailOn: []gate.Rule{{Metric: gate.RPS}}})
	in := CalibrationInput{
		Results:      &benchdata.Results{Scenario: benchdata.ScenarioInfo{Name: "shop"}, Status: "complete", Plan: benchdata.Plan{Rounds: 3}},
		Comparison:   c,
		Calibrations: gate.Calibrate(c),
	}
	var md, term, js bytes.Buffer
	for _, f := range []struct {
		w      *bytes.Buffer
		format string
	}{{&md, "markdown"}, {&term, "terminal"}, {&js, "json"}} {
		if err := Calibration(f.w, in, f.format); err != nil {
			t.Fatal(err)
		}
	}
	// The interval rules out 2·t(2)·10/√3/100 = 49.68%, shown rounded
	// up; 80% of A/A ties rule out 62.4% at 3 rounds; 29 rounds resolve
	// 10% with 80% power, 34 as max_repetitions (gate's
	// TestCalibrateOverlap).
	row := "| \\[a\\|b \\[31m\\] search c=1 | rps | 10.0% | - | > 50% (band 10%) | 63% | no | 29 | 34 | - |"
	if !strings.Contains(md.String(), row) || !strings.HasPrefix(md.String(), "## benchgate calibrate: shop — 0 of 1 gated metrics resolve") {
		t.Errorf("markdown:\n%s\nwant row %s", md.String(), row)
	}
	if !strings.Contains(md.String(), "at most 0.2%, a false regression in any of its 1 gated metric at these rounds") {
		t.Errorf("markdown: no projected A/A failure:\n%s", md.String())
	}
	if strings.Contains(term.String(), "\x1b") || !strings.Contains(term.String(), "> 50% (band 10%)") {
		t.Errorf("terminal:\n%q", term.String())
	}
	var doc struct {
		Rule         string             `json:"rule"`
		Resolved     int                `json:"resolved"`
		Calibrations []gate.Calibration `json:"calibrations"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Rule != "overlap" || len(doc.Calibrations) != 1 || doc.Calibrations[0].RoundsNeeded != 29 {
		t.Errorf("json %v: %s", err, js.String())
	}
	golden(t, "calibrate.md", md.Bytes())
	golden(t, "calibrate.txt", term.Bytes())
	golden(t, "calibrate.json", js.Bytes())
	if err := Calibration(&md, in, "html"); err == nil {
		t.Error("an unknown format is accepted")
	}
}
