package report

import (
	"math"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
)

// Fixtures are built by hand, numbers chosen so each verdict is plain to a
// reader of the golden files; the gate's arithmetic is tested in gate.

func sum(n int, mean, hw float64) gate.Summary {
	return gate.Summary{N: n, Mean: mean, HalfWidth: hw, SD: hw / 2, Median: mean, Min: mean - hw, Max: mean + hw}
}

func dec(m gate.Metric, b, c gate.Summary, v gate.Verdict, reason string) gate.Decision {
	d := gate.Decision{Metric: m, Baseline: b, Candidate: c, Verdict: v, Reason: reason}
	if b.Mean != 0 {
		d.Delta = (c.Mean - b.Mean) / b.Mean
	}
	return d
}

func totals(req, errs int64) gate.SideTotals {
	t := gate.SideTotals{Requests: req, Errors: errs}
	if req > 0 {
		t.ErrorRate = float64(errs) / float64(req)
	}
	return t
}

var t0 = time.Date(2026, 9, 6, 14, 53, 38, 0, time.UTC)

// fullInput: two variants with a gated regression, an improvement, ties, an
// inconclusive cell and a cell whose candidate fails too many requests.
func fullInput() Input {
	cells := []benchdata.Cell{
		{Variant: "csv", Class: "Q01", Concurrency: 1},
		{Variant: "csv", Class: "Q01", Concurrency: 8},
		{Variant: "csv", Class: "mix", Concurrency: 8},
		{Variant: "json", Class: "Q01", Concurrency: 1},
		{Variant: "json", Class: "Q01", Concurrency: 8},
	}
	errCell := cells[4]
	var rungs []benchdata.Rung
	at := t0.Add(3 * time.Second)
	for round := range 3 {
		for i, c := range cells {
			order := "AB"
			if (round+i)%2 == 1 {
				order = "BA"
			}
			for pos := range 2 {
				target := "baseline"
				if (order == "AB") != (pos == 0) {
					target = "candidate"
				}
				g := benchdata.Rung{
					Cell: c, Round: round, Target: target, Position: pos, Order: order,
					Start: at, Duration: 5, Requests: 400,
					Statuses: map[string]int64{"200": 400},
				}
				if c == errCell && target == "candidate" {
					g.Errors = map[string]int64{"status": 3, "timeout": 1}
					g.Statuses = map[string]int64{"200": 396, "503": 3}
				}
				if c == errCell && target == "baseline" && round == 1 {
					g.Errors = map[string]int64{"reset": 1}
					g.Statuses = map[string]int64{"200": 399}
				}
				rungs = append(rungs, g)
				at = at.Add(7 * time.Second)
			}
		}
	}
	res := &benchdata.Results{
		Version: benchdata.FormatVersion,
		Tool:    "benchgate v0.1.0",
		Scenario: benchdata.ScenarioInfo{
			Name:    "demo-api",
			File:    "examples/demo/benchgate.yml",
			Hash:    "9f9da00f45f1c3a7e2b4d6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c",
			Profile: "pr",
			Seed:    424242,
			Gate: gate.Section{Confidence: 0.95, TieWithin: 0.10, MaxErrorRate: 0.001,
				FailOn: []gate.Rule{{Metric: "rps", Classes: []string{"*"}, Concurrency: []string{"*"}}}},
			Load: benchdata.LoadInfo{Concurrency: []int{1, 8}, Duration: 5, Warmup: 2, Repetitions: 3, Timeout: 30},
		},
		Env: benchdata.Environment{
			Baseline: benchdata.TargetInfo{Name: "baseline", Kind: "command", Spec: "./bin/demo -addr 127.0.0.1:{port}",
				Commit: "0c2afec1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7", URL: "http://127.0.0.1:40123"},
			Candidate: benchdata.TargetInfo{Name: "candidate", Kind: "image", Spec: "demo:pr",
				Commit: "7aa14f6a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e", URL: "http://127.0.0.1:40124"},
			Host: "runner-1", CPUModel: "AMD EPYC 7763 64-Core Processor", CPUs: 4,
			Kernel: "6.8.0-1021-azure", OS: "linux", Arch: "amd64", GoVersion: "go1.26.8",
			ToolVersion: "benchgate v0.1.0", Pins: []benchdata.PinInfo{{Name: "cpus=1-3 memory=2GiB", CPUs: "1-3", Memory: "2GiB", GeneratorCPUs: "0", Applied: []string{"cpuset and memory of both targets"}}},
			Start: t0, End: t0.Add(3*time.Minute + 34*time.Second),
		},
		Plan:   benchdata.Plan{Cells: cells, Rounds: 3, Estimate: 210},
		Rungs:  rungs,
		Status: "complete",
	}

	ms := 1e-3
	key := func(i int) gate.CellKey {
		return gate.CellKey{Variant: cells[i].Variant, Class: cells[i].Class, Concurrency: cells[i].Concurrency}
	}
	gated := []gate.Metric{gate.RPS}
	regression := gate.Failure{Key: key(1), Metric: gate.RPS, Kind: "regression",
		Reason: "intervals do not overlap; means 17.9% apart (>= 10%)"}
	undecided := gate.Failure{Key: key(3), Metric: gate.RPS, Kind: "inconclusive",
		Reason: "need >= 2 repetitions, have 1"}
	errorRate := gate.Failure{Key: key(4), Metric: gate.ErrorRate, Kind: "error_rate",
		Reason: "candidate error rate 1.00% > 0.10%"}
	cmp := gate.Comparison{
		Settings: gate.DefaultSettings,
		Policy:   gate.Policy{FailOn: []gate.Rule{{Metric: gate.RPS, Classes: []string{"*"}, Concurrency: []string{"*"}}}, MaxErrorRate: 0.001},
		Cells: []gate.CellResult{
			{
				Key: key(0), Gated: gated, Verdict: gate.Tie,
				Baseline: totals(1200, 0), Candidate: totals(1200, 0),
				Decisions: []gate.Decision{
					dec(gate.RPS, sum(3, 812.4, 10.2), sum(3, 820.1, 12.5), gate.Tie, "intervals overlap"),
					dec(gate.P95, sum(3, 1.92*ms, 0.05*ms), sum(3, 1.88*ms, 0.04*ms), gate.Tie, "intervals overlap"),
				},
			},
			{
				Key: key(1), Gated: gated, Verdict: gate.Regression,
				Baseline: totals(1200, 0), Candidate: totals(1200, 0),
				Decisions: []gate.Decision{
					dec(gate.RPS, sum(3, 2410.7, 35.1), sum(3, 1980.3, 41.8), gate.Regression, regression.Reason),
					dec(gate.P95, sum(3, 6.12*ms, 0.21*ms), sum(3, 7.94*ms, 0.33*ms), gate.Regression,
						"intervals do not overlap; means 29.7% apart (>= 10%)"),
				},
				Failures: []gate.Failure{regression},
			},
			{
				Key: key(2), Gated: gated, Verdict: gate.Improvement,
				Baseline: totals(1200, 0), Candidate: totals(1200, 0),
				Decisions: []gate.Decision{
					dec(gate.RPS, sum(3, 640.2, 20.3), sum(3, 905.6, 18.7), gate.Improvement,
						"intervals do not overlap; means 41.5% apart (>= 10%)"),
					dec(gate.P95, sum(3, 21.4*ms, 1.1*ms), sum(3, 14.2*ms, 0.8*ms), gate.Improvement,
						"intervals do not overlap; means 33.6% apart (>= 10%)"),
				},
			},
			{
				Key: key(3), Gated: gated, Verdict: gate.Inconclusive,
				Baseline: totals(1200, 0), Candidate: totals(400, 0),
				Decisions: []gate.Decision{
					dec(gate.RPS, sum(3, 790.0, 15.1), sum(1, 801.0, 0), gate.Inconclusive, undecided.Reason),
					dec(gate.P95, sum(3, 2.05*ms, 0.07*ms), sum(1, 1.99*ms, 0), gate.Inconclusive, undecided.Reason),
				},
				Failures: []gate.Failure{undecided},
			},
			{
				Key: key(4), Gated: gated, Verdict: gate.Tie,
				Baseline: totals(1200, 1), Candidate: totals(1200, 12),
				Decisions: []gate.Decision{
					dec(gate.RPS, sum(3, 2388.5, 40.2), sum(3, 2301.9, 52.6), gate.Tie, "means 3.6% apart (< 10%)"),
					dec(gate.P95, sum(3, 6.31*ms, 0.25*ms), sum(3, 6.48*ms, 0.29*ms), gate.Tie, "intervals overlap"),
					dec(gate.ErrorRate, sum(3, 1.0/1200, 0.0036), sum(3, 0.01, 0), gate.Tie, "intervals overlap"),
				},
				Failures: []gate.Failure{errorRate},
			},
		},
		Counts:   gate.Counts{Regressions: 1, Improvements: 1, Ties: 2, Inconclusive: 1},
		Failures: []gate.Failure{regression, undecided, errorRate},
		Outcome:  gate.Fail,
	}
	return Input{Results: res, Comparison: cmp, Rounds: 3}
}

// hostileClass is a class name a pull request could declare to break a
// table, inject an image, and ping a team.
const hostileClass = "Q1|<img src=x>`@team"

// cancelledInput: a run cancelled in its second of five rounds, so every
// cell rests on one repetition; no variants; a class name written to break
// out of the markdown; an already-running baseline of unknown commit and
// pins that were declared but not applied.
func cancelledInput() Input {
	cells := []benchdata.Cell{{Class: hostileClass, Concurrency: 4}, {Class: "mix", Concurrency: 4}}
	var rungs []benchdata.Rung
	at := t0.Add(2 * time.Second)
	add := func(round int, c benchdata.Cell, target string, pos int) {
		rungs = append(rungs, benchdata.Rung{Cell: c, Round: round, Target: target, Position: pos, Order: "AB",
			Start: at, Duration: 10, Requests: 1000, Statuses: map[string]int64{"200": 1000}})
		at = at.Add(12 * time.Second)
	}
	for _, c := range cells {
		add(0, c, "baseline", 0)
		add(0, c, "candidate", 1)
	}
	add(1, cells[0], "baseline", 0)
	res := &benchdata.Results{
		Version: benchdata.FormatVersion,
		Tool:    "benchgate v0.1.0",
		Scenario: benchdata.ScenarioInfo{
			Name: "search @api", File: "bench/it's here.yml", Hash: "00aa11bb22cc33dd44ee55ff66778899aabbccddeeff00112233445566778899",
			Seed: 7, Load: benchdata.LoadInfo{Concurrency: []int{4}, Duration: 10, Warmup: 1, Repetitions: 5, Timeout: 5},
		},
		Env: benchdata.Environment{
			Baseline:  benchdata.TargetInfo{Name: "baseline", Kind: "url", Spec: "http://127.0.0.1:9000"},
			Candidate: benchdata.TargetInfo{Name: "candidate", Kind: "command", Spec: "./bin/search", Commit: "feature/x"},
			CPUModel:  "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz", CPUs: 2,
			Kernel: "6.8.0", OS: "linux", Arch: "amd64", GoVersion: "go1.26.8", ToolVersion: "benchgate v0.1.0",
			Pins:  []benchdata.PinInfo{{Name: "cpus=1", CPUs: "1", NotApplied: []string{"pins are not applied yet"}}},
			Start: t0, End: t0.Add(62 * time.Second),
		},
		Plan:   benchdata.Plan{Cells: cells, Rounds: 5},
		Rungs:  rungs,
		Status: "cancelled",
	}
	reason := "need >= 2 repetitions, have 1"
	var out []gate.CellResult
	var failures []gate.Failure
	for i, c := range cells {
		k := gate.CellKey{Class: c.Class, Concurrency: c.Concurrency}
		f := gate.Failure{Key: k, Metric: gate.RPS, Kind: "inconclusive", Reason: reason}
		failures = append(failures, f)
		rps := 500.0 + 100*float64(i)
		out = append(out, gate.CellResult{
			Key: k, Gated: []gate.Metric{gate.RPS}, Verdict: gate.Inconclusive,
			Baseline: totals(1000, 0), Candidate: totals(1000, 0),
			Decisions: []gate.Decision{
				dec(gate.RPS, sum(1, rps, 0), sum(1, rps*1.02, 0), gate.Inconclusive, reason),
				dec(gate.P95, sum(1, 0.0123, 0), sum(1, 0.0119, 0), gate.Inconclusive, reason),
			},
			Failures: []gate.Failure{f},
		})
	}
	cmp := gate.Comparison{
		Settings: gate.Settings{Confidence: 0.99, TieWithin: 0.05},
		Policy: gate.Policy{FailOn: []gate.Rule{
			{Metric: gate.RPS},
			{Metric: gate.P95, Classes: []string{"Q*", "<b>x</b>"}, Concurrency: []string{"4"}},
		}, MaxErrorRate: -1},
		Cells:    out,
		Counts:   gate.Counts{Inconclusive: 2},
		Failures: failures,
		Outcome:  gate.OutcomeUndecided,
	}
	return Input{Results: res, Comparison: cmp, Rounds: 1}
}

// pinsInput: two pin sets of one variant with resources measured by cgroup.
// In cpus=1 the generator has one pinned CPU and saturates it at c=8, where
// the candidate regresses in throughput and in CPU per request (both gated)
// and in peak memory (not gated); in cpus=2 the generator is not pinned, the
// targets' memory passes 1 GiB and the candidate improves CPU per request.
// The comparison is decided by gate.Compare from the rungs, as the CLI
// does, so every figure of the report can be traced to a rung.
func pinsInput() Input {
	type side struct {
		rps, p95, cpuMS, memMean, memPeak, gen float64 // p95 and CPU in ms, memory in MiB, generator in cores
	}
	type spec struct {
		cell      benchdata.Cell
		base, cnd side
	}
	specs := []spec{
		{benchdata.Cell{Pins: "cpus=1", Variant: "csv", Class: "Q01", Concurrency: 1},
			side{500, 2.10, 1.60, 120, 130, 0.35}, side{505, 2.08, 1.62, 121, 131, 0.36}},
		{benchdata.Cell{Pins: "cpus=1", Variant: "csv", Class: "Q01", Concurrency: 8},
			side{620, 14.0, 1.60, 150, 170, 0.92}, side{480, 18.0, 2.05, 160, 260, 0.75}},
		{benchdata.Cell{Pins: "cpus=2", Variant: "csv", Class: "Q01", Concurrency: 1},
			side{510, 2.05, 1.62, 1100, 1200, 0.30}, side{515, 2.04, 1.60, 1120, 1210, 0.31}},
		{benchdata.Cell{Pins: "cpus=2", Variant: "csv", Class: "Q01", Concurrency: 8},
			side{1150, 8.0, 1.65, 1200, 1400, 1.10}, side{1180, 7.9, 1.30, 1180, 1380, 1.12}},
	}
	jitter := []float64{0.99, 1.00, 1.01}
	const mib = 1 << 20
	var cells []benchdata.Cell
	for _, s := range specs {
		cells = append(cells, s.cell)
	}
	var rungs []benchdata.Rung
	at := t0.Add(5 * time.Second)
	for round, j := range jitter {
		for i, s := range specs {
			order := "AB"
			if (round+i)%2 == 1 {
				order = "BA"
			}
			for pos := range 2 {
				target, v := "baseline", s.base
				if (order == "AB") != (pos == 0) {
					target, v = "candidate", s.cnd
				}
				req := int64(v.rps * j * 10)
				rungs = append(rungs, benchdata.Rung{
					Cell: s.cell, Round: round, Target: target, Position: pos, Order: order,
					Start: at, Duration: 10, Requests: req, Statuses: map[string]int64{"200": req},
					Values:         map[string]float64{"rps": float64(req) / 10, "p95": v.p95 * j / 1000},
					ResourceSource: "cgroup",
					CPUSeconds:     v.cpuMS * j / 1000 * float64(req),
					MemMean:        int64(v.memMean * j * mib),
					MemPeak:        int64(v.memPeak * j * mib),
					GenCPUSeconds:  v.gen * j * 10,
				})
				at = at.Add(12 * time.Second)
			}
		}
	}
	res := &benchdata.Results{
		Version: benchdata.FormatVersion,
		Tool:    "benchgate v0.2.0",
		Scenario: benchdata.ScenarioInfo{
			Name: "pinned-api", File: "benchgate.yml",
			Hash: "3c1f0e2d4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0", Seed: 99,
			Gate: gate.Section{Confidence: 0.95, TieWithin: 0.10, MaxErrorRate: 0.01,
				FailOn: []gate.Rule{{Metric: "rps"}, {Metric: "cpu_per_req"}}},
			Load: benchdata.LoadInfo{Concurrency: []int{1, 8}, Duration: 10, Warmup: 2, Repetitions: 3, Timeout: 30},
		},
		Env: benchdata.Environment{
			Baseline:  benchdata.TargetInfo{Name: "baseline", Kind: "image", Spec: "api:main", Commit: "0c2afec1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7"},
			Candidate: benchdata.TargetInfo{Name: "candidate", Kind: "image", Spec: "api:pr", Commit: "7aa14f6a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e"},
			CPUModel:  "AMD EPYC 7763 64-Core Processor", CPUs: 4,
			Kernel: "6.8.0-1021-azure", OS: "linux", Arch: "amd64", GoVersion: "go1.26.8", ToolVersion: "benchgate v0.2.0",
			Pins: []benchdata.PinInfo{
				{Name: "cpus=1", CPUs: "1", GeneratorCPUs: "0",
					Applied: []string{"baseline cpuset 1 (docker)", "candidate cpuset 1 (docker)", "generator cpuset 0"}},
				{Name: "cpus=2", CPUs: "1-2",
					Applied: []string{"baseline cpuset 1-2 (docker)", "candidate cpuset 1-2 (docker)"}},
			},
			Start: t0, End: t0.Add(5 * time.Minute),
		},
		Plan:   benchdata.Plan{PinSets: []string{"cpus=1", "cpus=2"}, Cells: cells, Rounds: 3, Estimate: 288},
		Rungs:  rungs,
		Status: "complete",
	}
	return Input{Results: res, Comparison: mustDecide(res), Rounds: 3}
}

// pinsCancelledInput: pinsInput's run cancelled in its second pin set. Pin
// sets run one after the other, so cpus=1 has two complete rounds and
// cpus=2 none (its first cell ran once on the baseline only). The
// comparison is decided as the CLI does, each pin set on its own complete
// rounds; Rounds still says 3, which a results file with pin sets ignores.
func pinsCancelledInput() Input {
	in := pinsInput()
	res := in.Results
	var kept []benchdata.Rung
	for _, g := range res.Rungs {
		if g.Pins == "cpus=1" && g.Round < 2 {
			kept = append(kept, g)
		}
	}
	for _, g := range res.Rungs {
		if g.Pins == "cpus=2" && g.Round == 0 && g.Cell == res.Plan.Cells[2] && g.Target == "baseline" {
			g.Errors = map[string]int64{"connect": 3}
			kept = append(kept, g)
		}
	}
	kept[0].Errors = map[string]int64{"timeout": 2}
	res.Rungs = kept
	res.Status = "cancelled"
	res.Env.End = t0.Add(3 * time.Minute)
	return Input{Results: res, Comparison: mustDecide(res), Rounds: 3}
}

// latencyHistogram encodes, as the runner does, a histogram of n latencies
// in µs spread as a + b·Exp(1): median a + 0.69b, p95 a + 3b. Values are
// quantiles, not draws, so the fixture is exact.
func latencyHistogram(n int, a, b float64) string {
	h := hdrhistogram.New(1, 30_000_000, 3)
	for i := range n {
		q := (float64(i) + 0.5) / float64(n)
		if err := h.RecordValue(int64(a + b*-math.Log(1-q))); err != nil {
			panic(err)
		}
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		panic(err)
	}
	return string(enc)
}

// hostileExcerpt is a body excerpt written to break out of a code span, a
// table cell and the HTML around it, and to ping a team.
const hostileExcerpt = "{\"price\": 12, \"note\": \"<script>`|*</script> @team\"}"

// longLastLine is a pre-flight's last line of output, longer than a report
// shows, with markdown and HTML in it.
var longLastLine = "FAIL /search?q=<b>x</b>: response does not match the schema `#/items` | " + strings.Repeat("expected number, got string; ", 10) + "END"

// correctnessInput: fullInput whose run also ran the correctness checks — a
// pre-flight command the candidate fails and the baseline passes, one that
// both pass, two classes that agree, one that disagrees under mode required
// with a hostile excerpt, one that disagrees under warn with a different
// status, and a class the failed pre-flight left out — and whose csv Q01
// rungs carry latency histograms (the candidate slower at c=8).
func correctnessInput() Input {
	in := fullInput()
	res := in.Results
	res.Correctness = &benchdata.Correctness{
		Preflight: []benchdata.PreflightResult{
			{Name: "conformance", Target: "baseline", Command: "./bin/conform {url}", Pass: true,
				LastLine: "42 checks passed", Duration: 1.5, Classes: []string{"export"}, Log: "gates/conformance-baseline.log"},
			{Name: "lint", Target: "baseline", Command: "./bin/lint {url}", Pass: true, Duration: 0.4, Log: "gates/lint-baseline.log"},
			{Name: "conformance", Target: "candidate", Command: "./bin/conform {url}", ExitCode: 1,
				LastLine: longLastLine, Duration: 1.7, Classes: []string{"export"}, Log: "gates/conformance-candidate.log"},
			{Name: "lint", Target: "candidate", Command: "./bin/lint {url}", Pass: true, LastLine: "ok", Duration: 0.4,
				Log: "gates/lint-candidate.log"},
		},
		Agreement: &benchdata.AgreementResult{Classes: []benchdata.ClassAgreement{
			{Variant: "csv", Class: "Q01", Mode: "required", Requests: 5, Agree: true, Format: "csv"},
			{Variant: "csv", Class: "mix", Mode: "required", Requests: 5, Format: "json", First: &benchdata.Disagreement{
				Index: 2, Method: "GET", Target: "/search?q=<b>x</b>&fmt=csv", BaselineStatus: 200, CandidateStatus: 200,
				Reason: "$.items[0].price: 12 vs 13", Path: "$.items[0].price",
				Baseline: hostileExcerpt, Candidate: "{\"price\": 13, \"note\": \"ok\"}",
			}},
			{Variant: "json", Class: "Q01", Mode: "required", Requests: 5, Agree: true, Format: "json"},
			{Variant: "json", Class: "mix", Mode: "warn", Requests: 5, Format: "text", First: &benchdata.Disagreement{
				Index: 0, Method: "POST", Target: "/mix", BaselineStatus: 200, CandidateStatus: 500,
				Reason: "status 200 vs 500", Baseline: "ok", Candidate: "internal error\n```\n\x1b[31mpanic",
			}},
		}},
		Absent: []benchdata.AbsentClass{{Class: "export", Reason: "pre-flight conformance failed on candidate"}},
	}
	type spread struct{ a, b float64 }
	spreads := map[benchdata.Cell][2]spread{
		{Variant: "csv", Class: "Q01", Concurrency: 1}: {{984, 312}, {970, 303}},
		{Variant: "csv", Class: "Q01", Concurrency: 8}: {{3363, 919}, {4377, 1188}},
	}
	jitter := []float64{0.99, 1.00, 1.01}
	for i, g := range res.Rungs {
		s, ok := spreads[g.Cell]
		if !ok {
			continue
		}
		side := s[0]
		if g.Target == "candidate" {
			side = s[1]
		}
		res.Rungs[i].Histogram = latencyHistogram(int(g.Requests), side.a*jitter[g.Round], side.b*jitter[g.Round])
	}
	in.Comparison = gate.WithCorrectnessFailures(in.Comparison, []gate.Failure{
		// As decide words them (correctnessFailures).
		{Key: gate.CellKey{Variant: "csv", Class: "mix"}, Kind: gate.FailAgreement,
			Reason: "answers differ at request 3 (GET /search?q=<b>x</b>&fmt=csv): $.items[0].price: 12 vs 13"},
		{Kind: gate.FailPreflight, Reason: "pre-flight conformance fails on the candidate (exit 1: " + longLastLine + ") and passes on the baseline"},
	})
	return in
}

// mustDecide decides a fixture's results by the product's one decision
// path, so the golden files show what benchgate itself would decide.
func mustDecide(res *benchdata.Results) gate.Comparison {
	c, err := decide.Results(res)
	if err != nil {
		panic(err)
	}
	return c
}
