package export

import (
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// Fixtures are results files built by hand, with numbers a reader of the
// golden files can follow: each cell's rounds vary by ±1%, and the
// candidate is 10% slower than the baseline. They are decided as the CLI
// decides them (FromResults), so the goldens are the product's numbers.

var t0 = time.Date(2026, 2, 7, 2, 0, 0, 0, time.UTC)

// loadResults is a complete load run of cells over three rounds: rps,
// latencies, errors and the targets' CPU and memory.
func loadResults(cells ...benchdata.Cell) *benchdata.Results {
	if len(cells) == 0 {
		cells = []benchdata.Cell{
			{Variant: "csv", Class: "Q01", Concurrency: 8},
			{Variant: "csv", Class: "mix", Concurrency: 8},
			{Pins: "cpus=1", Class: "Q01", Concurrency: 64, Rate: 200},
		}
	}
	var rungs []benchdata.Rung
	at := t0.Add(3 * time.Second)
	for round := range 3 {
		jitter := []float64{1, 1.01, 0.99}[round]
		for i, c := range cells {
			for pos, target := range []string{"baseline", "candidate"} {
				slow := 1.0
				if target == "candidate" {
					slow = 1.1
				}
				rps := float64(800+100*i) * jitter / slow
				requests := int64(rps * 5)
				g := benchdata.Rung{
					Cell: c, Round: round, Target: target, Position: pos, Order: "AB",
					Start: at, Duration: 5, Requests: requests, Values: map[string]float64{"rps": rps, "mean": 0.0010 * jitter * slow, "p50": 0.0009 * jitter * slow, "p90": 0.0015 * jitter * slow, "p95": 0.0020 * jitter * slow, "p99": 0.0040 * jitter * slow},
					Statuses: map[string]int64{"200": requests},

					Max:            0.010,
					ResourceSource: "cgroup", CPUSeconds: 2.5 * jitter * slow,
					MemMean: int64(40e6 * jitter), MemPeak: int64(50e6 * jitter),
				}
				if round == 1 && target == "candidate" {
					g.Errors = map[string]int64{"status": 2}
					g.Statuses = map[string]int64{"200": requests - 2, "503": 2}
				}
				rungs = append(rungs, g)
				at = at.Add(6 * time.Second)
			}
		}
	}
	return &benchdata.Results{
		Version: benchdata.FormatVersion,
		Tool:    "benchgate v0.1.0",
		Scenario: benchdata.ScenarioInfo{
			Name: "demo-api", File: "benchgate.yml", Profile: "nightly",
			Gate: gate.Section{Confidence: 0.95, TieWithin: 0.10, MaxErrorRate: -1,
				FailOn: []gate.Rule{{Metric: "rps"}}},
			Load: benchdata.LoadInfo{Concurrency: []int{8}, Duration: 5, Warmup: 1, Repetitions: 3, Timeout: 30},
		},
		Env: benchdata.Environment{
			RunID:     "bg-5f3a",
			Baseline:  benchdata.TargetInfo{Name: "baseline", Kind: "command", Commit: "v1.0.0"},
			Candidate: benchdata.TargetInfo{Name: "candidate", Kind: "command", Commit: "9c1e4d2"},
			CPUModel:  "Intel(R) Xeon(R) Gold 6338", CPUs: 8, Kernel: "6.8.0-45-generic", OS: "linux", Arch: "amd64",
			Start: t0, End: t0.Add(4 * time.Minute),
		},
		Plan:   benchdata.Plan{Cells: cells, Rounds: 3},
		Rungs:  rungs,
		Status: "complete",
	}
}

// gobenchResults is a complete run of one Go benchmark over three rounds,
// with a custom unit the scenario declares better higher (items/s is
// higher by its name already; hits/op is not).
func gobenchResults() *benchdata.Results {
	cell := benchdata.Cell{Class: "benchmod.BenchmarkSum-2"}
	var rungs []benchdata.Rung
	for round := range 3 {
		for _, target := range []string{"baseline", "candidate"} {
			ns := []float64{629, 644.9, 611}[round]
			if target == "candidate" {
				ns += 10
			}
			rungs = append(rungs, benchdata.Rung{
				Cell: cell, Round: round, Target: target,
				Values: map[string]float64{"sec/op": ns * 1e-9, "B/op": 0, "allocs/op": 0, "hits/op": 0.5, "items/s": 1e9 / ns},
			})
		}
	}
	return &benchdata.Results{
		Version: benchdata.FormatVersion, Tool: "benchgate v0.1.0", Kind: "gobench",
		Scenario: benchdata.ScenarioInfo{
			Name: "sums",
			Gate: gate.Section{Confidence: 0.95, TieWithin: 0.10, FailOn: []gate.Rule{{Metric: "sec/op"}},
				HigherBetterFor: map[gate.Metric]bool{"hits/op": true}},
		},
		// Compared from files: no start time, no commits.
		Plan:       benchdata.Plan{Cells: []benchdata.Cell{cell}, Rounds: 3},
		Rungs:      rungs,
		RoundsDone: map[string]int{"": 3},
		Status:     "complete",
	}
}

// hostileNames are class names a pull request could give: quotes, the
// CSV separator, line breaks, formula prefixes, markup and escapes.
var hostileNames = []string{
	`say "hi"`, `a,b`, "two\nlines", "cr\rlf\r\n", `=HYPERLINK("http://x","y")`, "+1", "-1+1", "@SUM(A1)",
	"\ttab", `<script>alert(1)</script>`, `back\slash`, "ünïcødé ✓", `}{"x":1}`, "",
}

// hostileResults is loadResults over one cell per hostile class name,
// every other one in a variant whose name is hostile too.
func hostileResults() *benchdata.Results {
	var cells []benchdata.Cell
	for i, name := range hostileNames {
		cells = append(cells, benchdata.Cell{Variant: []string{"v", `=v,"x"`}[i%2], Class: name, Concurrency: 8})
	}
	return loadResults(cells...)
}
