package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// writeResults writes an A/A results.json of one rps cell, one pair a
// round (round interleaving), the candidate at exp(logs[i]) times the
// baseline's 1000 rps in round i; restartEvery is its load.restart.
func writeResults(t *testing.T, dir string, restartEvery int, logs []float64) string {
	t.Helper()
	cell := benchdata.Cell{Class: "search", Concurrency: 1}
	res := &benchdata.Results{
		Version: benchdata.FormatVersion, Status: "complete",
		Plan: benchdata.Plan{Cells: []benchdata.Cell{cell}, Rounds: len(logs)},
		Scenario: benchdata.ScenarioInfo{
			Gate: gate.Section{Rule: gate.RulePaired, Confidence: 0.95, TieWithin: 0.1, FailOn: []gate.Rule{{Metric: "rps"}}},
			Load: benchdata.LoadInfo{Concurrency: []int{1}, Duration: 1, Repetitions: len(logs), RestartEvery: restartEvery},
		},
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i, l := range logs {
		for pos, rps := range []float64{1000, 1000 * math.Exp(l)} {
			n := int64(rps)
			res.Rungs = append(res.Rungs, benchdata.Rung{
				Cell: cell, Round: i, Target: []string{"baseline", "candidate"}[pos], Position: pos, Order: "AB",
				Start: t0.Add(time.Duration(10*i) * time.Second), Duration: 1,
				Requests: n, Statuses: map[string]int64{"200": n}, Values: map[string]float64{"rps": rps},
			})
		}
	}
	if err := benchdata.Write(dir, res); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "results.json")
}

// TestSpread: the rounds' log ratios ±0.1 kept up and ±0.2 restarted
// have sd √(0.04/3) = 0.1155 and √(0.16/3) = 0.2309, a variance ratio of
// 4, its interval 4·exp(∓1.96·√(2/3 + 2/3)) = 0.42–38.46.
func TestSpread(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kept := writeResults(t, filepath.Join(dir, "kept"), 0, []float64{0.1, -0.1, 0.1, -0.1})
	restarted := writeResults(t, filepath.Join(dir, "restart"), 1, []float64{0.2, -0.2, 0.2, -0.2})
	var out strings.Builder
	if err := run([]string{kept, restarted}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| kept up | 1 | 0.1155 (3) |",
		"| restart every 1 | 1 | 0.2309 (3) |",
		"variance of a round's mean, restart every 1 / kept up: 4.00 (approximate 95%: 0.42–38.46)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
