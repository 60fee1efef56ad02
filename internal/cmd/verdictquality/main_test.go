package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// decisionsJSON is a decisions.json of two gated cells of rps, with
// decisions given as JSON objects.
func decisionsJSON(rounds int, failures string, decisions ...string) string {
	var cells []string
	for _, d := range decisions {
		cells = append(cells, `{"cell": {"variant": "", "class": "search", "concurrency": 1}, "gated": ["rps"], "decisions": [`+d+`, {"metric": "p95", "verdict": "regression"}]}`)
	}
	return `{"version": 1, "outcome": "x", "rounds": {"decided": ` + strconv.Itoa(rounds) + `, "planned": 3},
"settings": {"confidence": 0.95, "tie_within": 0.1},
"cells": [` + strings.Join(cells, ",") + `], "failures": [` + failures + `]}`
}

// A tie of 100 ± 2 against 101 ± 3: resolution 6% (resolved at 10%).
const resolvedTie = `{"metric": "rps", "baseline": {"mean": 100, "half_width": 2}, "candidate": {"mean": 101, "half_width": 3}, "verdict": "tie"}`

// A tie of 100 ± 9 against 103 ± 9: resolution 21% (unresolved).
const openTie = `{"metric": "rps", "baseline": {"mean": 100, "half_width": 9}, "candidate": {"mean": 103, "half_width": 9}, "verdict": "tie"}`

const regression = `{"metric": "rps", "baseline": {"mean": 100, "half_width": 2}, "candidate": {"mean": 80, "half_width": 2}, "verdict": "regression"}`

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAggregate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// aa-01 passes with one unresolved tie (computed: no unresolved field);
	// ab-01 regresses in one cell of two; aa-02 fails (a false failure);
	// ab-02 regresses in both; aa-03 is broken (exit 3); ab-03 misses.
	write(t, filepath.Join(dir, "aa-01/decisions.json"), decisionsJSON(3, "", resolvedTie, openTie))
	write(t, filepath.Join(dir, "ab-01/decisions.json"), decisionsJSON(3, `{"kind": "regression"}`, regression, openTie))
	write(t, filepath.Join(dir, "aa-02/decisions.json"), decisionsJSON(3, `{"kind": "regression"}`, regression, resolvedTie))
	write(t, filepath.Join(dir, "ab-02/decisions.json"), decisionsJSON(3, `{"kind": "regression"}`, regression, regression))
	write(t, filepath.Join(dir, "ab-03/decisions.json"), decisionsJSON(3, "", resolvedTie, resolvedTie))
	write(t, filepath.Join(dir, "runs.tsv"), strings.Join([]string{
		"aa\t1\t101\t0\t10.0\taa-01",
		"ab\t1\t102\t1\t12.0\tab-01",
		"aa\t2\t103\t1\t11.0\taa-02",
		"ab\t2\t104\t1\t13.0\tab-02",
		"aa\t3\t105\t3\t1.0\taa-03",
		"ab\t3\t106\t0\t14.0\tab-03",
	}, "\n")+"\n")
	var stdout, stderr strings.Builder
	if err := run([]string{"-condition", "noisy 30%", "-metric", "rps", "-rule", "paired", filepath.Join(dir, "runs.tsv")}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	want := "| noisy 30% | rps | paired/default/3* | 1/2 | 2/3 | 3/6 | 1/4 (computed) | 12.0 | 1 (aa-03: exit 3) |\n"
	if stdout.String() != want {
		t.Errorf("row:\n got %s\nwant %s", stdout.String(), want)
	}
	for _, line := range []string{
		"aa-01 seed 101: exit 0, 10.0s, 3 rounds: 2 gated cells, 0 regressed, 2 ties (1 unresolved), 0 inconclusive",
		"ab-01 seed 102: exit 1, 12.0s, 3 rounds: 2 gated cells, 1 regressed, 1 ties (1 unresolved), 0 inconclusive; failures: regression",
		"aa-03 seed 105: exit 3, 1.0s: BROKEN (exit 3)",
	} {
		if !strings.Contains(stderr.String(), line) {
			t.Errorf("stderr lacks %q:\n%s", line, stderr.String())
		}
	}
}

// The unresolved field, when present, wins over any computation; a
// resolution is compared with the band; a missing gated decision is
// inconclusive.
func TestUnresolvedField(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flagged := strings.Replace(resolvedTie, `"verdict": "tie"`, `"verdict": "tie", "unresolved": true, "rule": "paired"`, 1)
	notFlagged := strings.Replace(openTie, `"verdict": "tie"`, `"verdict": "tie", "unresolved": false`, 1)
	wide := strings.Replace(resolvedTie, `"verdict": "tie"`, `"verdict": "tie", "resolution": 0.25`, 1)
	missing := `{"metric": "p99", "verdict": "tie"}`
	write(t, filepath.Join(dir, "aa-01/decisions.json"), decisionsJSON(5, "", flagged, notFlagged, wide, missing))
	write(t, filepath.Join(dir, "runs.tsv"), "aa\t1\t1\t1\t2.5\taa-01\n")
	var stdout, stderr strings.Builder
	if err := run([]string{"-header", filepath.Join(dir, "runs.tsv")}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	want := tableHeader + "\n" + tableRule + "\n| quiet | rps | paired*/default/5* | 1/1 | 0/0 | 0/0 | 2/4 | 2.5 | 0 |\n"
	if stdout.String() != want {
		t.Errorf("got\n%s\nwant\n%s", stdout.String(), want)
	}
	if !strings.Contains(stderr.String(), "4 gated cells, 0 regressed, 3 ties (2 unresolved), 1 inconclusive") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

func TestBadRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "runs.tsv"), "xx\t1\t1\t0\t1\taa-01\n")
	var stdout, stderr strings.Builder
	if err := run([]string{filepath.Join(dir, "runs.tsv")}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "want kind aa or ab") {
		t.Errorf("err = %v", err)
	}
	// A run that exited 0 but left no decisions.json is broken.
	write(t, filepath.Join(dir, "runs.tsv"), "aa\t1\t1\t0\t1\taa-01\n")
	if err := run([]string{filepath.Join(dir, "runs.tsv")}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "| 1 (aa-01: exit 0 without decisions.json) |") {
		t.Errorf("row: %s", stdout.String())
	}
}

// results writes a gate's results.json of one rps cell over four rounds of
// round interleaving, whose candidate answers ratios[i] times the
// baseline's 1000 rps in round i; each cell round's session starts 10 s
// after the last.
func writeResults(t *testing.T, dir string, ratios []float64) {
	t.Helper()
	cell := benchdata.Cell{Class: "search", Concurrency: 1}
	res := &benchdata.Results{
		Version: benchdata.FormatVersion, Status: "complete",
		Plan: benchdata.Plan{Cells: []benchdata.Cell{cell}, Rounds: len(ratios)},
		Scenario: benchdata.ScenarioInfo{
			Gate: gate.Section{Confidence: 0.95, TieWithin: 0.1, FailOn: []gate.Rule{{Metric: "rps"}}},
			Load: benchdata.LoadInfo{Concurrency: []int{1}, Duration: 1, Repetitions: len(ratios)},
		},
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i, q := range ratios {
		for pos, side := range []struct {
			name string
			rps  float64
		}{{"baseline", 1000}, {"candidate", 1000 * q}} {
			n := int64(side.rps)
			res.Rungs = append(res.Rungs, benchdata.Rung{
				Cell: cell, Round: i, Target: side.name, Position: pos, Order: "AB",
				Start: t0.Add(time.Duration(10*i) * time.Second), Duration: 1,
				Requests: n, Statuses: map[string]int64{"200": n}, Values: map[string]float64{"rps": side.rps},
			})
		}
	}
	if err := benchdata.Write(dir, res); err != nil {
		t.Fatal(err)
	}
}

// TestReplay: -replay re-decides each gate's rungs under another design,
// as the runner's looks would have: a cell settled at the first look
// stops there, an open one takes rounds up to the maximum; the wall time
// drops by the sessions not run.
func TestReplay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// ab-01: the candidate at half the throughput in every round,
	// settled after 3 rounds (after 2, its interval of 1 degree of
	// freedom excludes no change but the whole gate's error control,
	// at 1%, does not confirm it: p 0.021 at the first look's share). aa-01: the same build, so close a tie
	// that it is resolved after 2 rounds. aa-02: ratios all over the
	// place, open until the fourth round. ab-02: has 2 rounds only.
	writeResults(t, filepath.Join(dir, "ab-01"), []float64{0.5, 0.505, 0.5, 0.495})
	writeResults(t, filepath.Join(dir, "aa-01"), []float64{1, 1.001, 0.999, 1})
	writeResults(t, filepath.Join(dir, "aa-02"), []float64{0.8, 1.3, 0.9, 1.1})
	writeResults(t, filepath.Join(dir, "ab-02"), []float64{0.5, 0.5})
	write(t, filepath.Join(dir, "runs.tsv"), strings.Join([]string{
		"ab\t1\t1\t1\t100\tab-01",
		"aa\t1\t2\t0\t100\taa-01",
		"aa\t2\t3\t0\t100\taa-02",
		"ab\t2\t4\t1\t100\tab-02",
	}, "\n")+"\n")
	var stdout, stderr strings.Builder
	args := []string{"-replay", "-rule", "paired", "-reps", "2", "-maxreps", "4", filepath.Join(dir, "runs.tsv")}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	// 100 s of wall, 40 s of it sessions of 10 s: 80 s for 2 rounds, 90 for 3.
	for _, line := range []string{
		"ab-01 seed 1: exit 1, 90.0s (replayed as paired 2-4, wall estimated; cell rounds [3]), 3 rounds: 1 gated cells, 1 regressed",
		"aa-01 seed 2: exit 0, 80.0s (replayed as paired 2-4, wall estimated; cell rounds [2]), 2 rounds: 1 gated cells, 0 regressed, 1 ties (0 unresolved)",
		"aa-02 seed 3: exit 0, 100.0s (replayed as paired 2-4, wall estimated; cell rounds [4]), 4 rounds: 1 gated cells, 0 regressed, 1 ties (1 unresolved)",
		"ab-02 seed 4: exit 1, 100.0s: BROKEN (search c=1 has 2 rounds, the design needs 4)",
	} {
		if !strings.Contains(stderr.String(), line) {
			t.Errorf("stderr lacks %q:\n%s", line, stderr.String())
		}
	}
	want := "| quiet | rps | paired/default/2-4, mean 3.0 (max 4) | 0/2 | 1/1 | 1/1 | 1/2 | 90.0 | 1 (ab-02: search c=1 has 2 rounds, the design needs 4) |\n"
	if stdout.String() != want {
		t.Errorf("row:\n got %s\nwant %s", stdout.String(), want)
	}

	// -false-failure off re-decides without the whole gate's control:
	// ab-01's own interval settles it after 2 rounds.
	stdout.Reset()
	stderr.Reset()
	args = append([]string{"-false-failure", "off"}, args...)
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if line := "ab-01 seed 1: exit 1, 80.0s (replayed as paired 2-4, wall estimated; cell rounds [2]), 2 rounds: 1 gated cells, 1 regressed"; !strings.Contains(stderr.String(), line) {
		t.Errorf("-false-failure off: stderr lacks %q:\n%s", line, stderr.String())
	}
	stderr.Reset()
	if err := run([]string{"-replay", "-false-failure", "1.5", filepath.Join(dir, "runs.tsv")}, &stdout, &stderr); err != errUsage ||
		!strings.Contains(stderr.String(), `-false-failure "1.5": want a level in (0, 1) or off`) {
		t.Errorf("-false-failure 1.5: %v, %s", err, stderr.String())
	}
}
