package report

import (
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// grpcInput: a gRPC run as the gRPC reference report's, at two pin sets
// (1cpu, 2cpu) of three classes (get, search, mix) at c=1 and c=4, with
// resources measured by cgroup. The candidate's search does five times the
// work: at both pin sets it regresses in throughput, in every latency
// column and in CPU per call, all gated but for p95 at c=4. In 1cpu the get
// cell at c=4 answers some calls NotFound on both sides, under the error
// limit. Rungs carry the mean, p50, p90, p95 and p99 as the runner records
// them, and the comparison is decided from them as the CLI decides it.
func grpcInput() Input {
	type side struct {
		rps                 float64
		mean, p90, p95, p99 float64 // ms
		cpuMS               float64 // CPU ms per call
		memMean, memPeak    float64 // MiB
		notFound            int64   // NotFound answers per rung
	}
	type spec struct {
		cell      benchdata.Cell
		base, cnd side
	}
	cell := func(pins, class string, c int) benchdata.Cell {
		return benchdata.Cell{Pins: pins, Class: class, Concurrency: c}
	}
	specs := []spec{
		{cell("1cpu", "get", 1),
			side{8200, 0.118, 0.140, 0.155, 0.210, 0.095, 14.2, 15.1, 0}, side{8150, 0.119, 0.141, 0.157, 0.214, 0.096, 14.3, 15.2, 0}},
		{cell("1cpu", "get", 4),
			side{14500, 0.270, 0.390, 0.450, 0.720, 0.066, 15.0, 16.4, 3}, side{14380, 0.272, 0.394, 0.455, 0.731, 0.067, 15.1, 16.6, 4}},
		{cell("1cpu", "search", 1),
			side{3100, 0.318, 0.380, 0.410, 0.520, 0.282, 16.1, 17.8, 0}, side{760, 1.310, 1.520, 1.600, 1.950, 1.290, 16.4, 18.3, 0}},
		{cell("1cpu", "search", 4),
			side{4300, 0.925, 1.300, 1.450, 2.100, 0.228, 17.0, 19.5, 0}, side{1020, 3.900, 5.100, 5.600, 7.400, 0.965, 17.3, 20.1, 0}},
		{cell("1cpu", "mix", 1),
			side{6100, 0.162, 0.330, 0.370, 0.480, 0.131, 15.3, 16.8, 0}, side{5950, 0.166, 0.345, 0.385, 0.500, 0.134, 15.4, 16.9, 0}},
		{cell("1cpu", "mix", 4),
			side{9800, 0.405, 0.800, 0.980, 1.600, 0.099, 15.9, 17.7, 0}, side{9600, 0.414, 0.830, 1.010, 1.660, 0.101, 16.0, 17.9, 0}},
		{cell("2cpu", "get", 1),
			side{8350, 0.116, 0.138, 0.152, 0.205, 0.118, 14.6, 15.6, 0}, side{8300, 0.117, 0.139, 0.153, 0.207, 0.119, 14.7, 15.6, 0}},
		{cell("2cpu", "get", 4),
			side{24100, 0.162, 0.240, 0.280, 0.450, 0.081, 16.2, 18.0, 0}, side{23900, 0.164, 0.243, 0.284, 0.458, 0.082, 16.3, 18.2, 0}},
		{cell("2cpu", "search", 1),
			side{3150, 0.313, 0.372, 0.402, 0.510, 0.301, 16.5, 18.1, 0}, side{770, 1.295, 1.500, 1.580, 1.920, 1.310, 16.8, 18.7, 0}},
		{cell("2cpu", "search", 4),
			side{7600, 0.520, 0.760, 0.850, 1.220, 0.259, 18.4, 21.0, 0}, side{1900, 2.090, 2.800, 3.050, 4.100, 1.050, 18.9, 21.9, 0}},
		{cell("2cpu", "mix", 1),
			side{6180, 0.160, 0.326, 0.365, 0.470, 0.150, 15.7, 17.2, 0}, side{6050, 0.163, 0.338, 0.378, 0.490, 0.153, 15.8, 17.3, 0}},
		{cell("2cpu", "mix", 4),
			side{16400, 0.241, 0.470, 0.590, 0.980, 0.118, 17.1, 19.2, 0}, side{16050, 0.247, 0.488, 0.611, 1.020, 0.121, 17.2, 19.4, 0}},
	}
	jitter := []float64{0.99, 1.00, 1.01}
	const mib = 1 << 20
	var cells []benchdata.Cell
	for _, s := range specs {
		cells = append(cells, s.cell)
	}
	var rungs []benchdata.Rung
	at := t0.Add(4 * time.Second)
	// Pin sets run one after the other, each its own rounds.
	for _, pins := range []string{"1cpu", "2cpu"} {
		for round, j := range jitter {
			for i, s := range specs {
				if s.cell.Pins != pins {
					continue
				}
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
					g := benchdata.Rung{
						Cell: s.cell, Round: round, Target: target, Position: pos, Order: order,
						Start: at, Duration: 10, Requests: req, Statuses: map[string]int64{"OK": req},
						Values: map[string]float64{"rps": float64(req) / 10, "mean": v.mean * j / 1000, "p50": v.mean * 0.92 * j / 1000, "p90": v.p90 * j / 1000, "p95": v.p95 * j / 1000, "p99": v.p99 * j / 1000},

						Max:            v.p99 * 3 * j / 1000,
						ResourceSource: "cgroup",
						CPUSeconds:     v.cpuMS * j / 1000 * float64(req),
						MemMean:        int64(v.memMean * j * mib),
						MemPeak:        int64(v.memPeak * j * mib),
						GenCPUSeconds:  0.42 * j * 10,
					}
					if v.notFound > 0 {
						g.Statuses = map[string]int64{"OK": req - v.notFound, "NotFound": v.notFound}
						g.Errors = map[string]int64{"status": v.notFound}
					}
					rungs = append(rungs, g)
					at = at.Add(11 * time.Second)
				}
			}
		}
	}
	res := &benchdata.Results{
		Version: benchdata.FormatVersion,
		Tool:    "benchgate v0.3.0",
		Kind:    "grpc",
		Scenario: benchdata.ScenarioInfo{
			Name: "grpc-demo", File: "examples/grpcdemo/benchgate.yml",
			Hash: "5e0c1d2a3b4f5e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b", Seed: 424242,
			Gate: gate.Section{Confidence: 0.95, TieWithin: 0.10, MaxErrorRate: 0.001,
				FailOn: []gate.Rule{
					{Metric: "rps"},
					{Metric: "p95", Concurrency: []string{"1"}},
					{Metric: "cpu_per_req"},
				}},
			Load: benchdata.LoadInfo{Concurrency: []int{1, 4}, Duration: 10, Warmup: 2, Repetitions: 3, Timeout: 5},
		},
		Env: benchdata.Environment{
			Baseline: benchdata.TargetInfo{Name: "baseline", Kind: "command", Spec: "./bin/grpcdemo -addr 127.0.0.1:{port}",
				Commit: "0c2afec1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7", URL: "http://127.0.0.1:40123"},
			Candidate: benchdata.TargetInfo{Name: "candidate", Kind: "command", Spec: "./bin/grpcdemo-slow -addr 127.0.0.1:{port}",
				Commit: "7aa14f6a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e", URL: "http://127.0.0.1:40124"},
			CPUModel: "AMD EPYC 7763 64-Core Processor", CPUs: 4,
			Kernel: "6.8.0-1021-azure", OS: "linux", Arch: "amd64", GoVersion: "go1.26.8", ToolVersion: "benchgate v0.3.0",
			Pins: []benchdata.PinInfo{
				{Name: "1cpu", CPUs: "1", GeneratorCPUs: "0",
					Applied: []string{"baseline cpuset 1", "candidate cpuset 1", "generator cpuset 0"}},
				{Name: "2cpu", CPUs: "1-2", GeneratorCPUs: "0",
					Applied: []string{"baseline cpuset 1-2", "candidate cpuset 1-2", "generator cpuset 0"}},
			},
			Start: t0, End: t0.Add(14*time.Minute + 40*time.Second),
		},
		Plan:   benchdata.Plan{PinSets: []string{"1cpu", "2cpu"}, Cells: cells, Rounds: 3, Estimate: 864},
		Rungs:  rungs,
		Status: "complete",
	}
	return Input{Results: res, Comparison: mustDecide(res), Rounds: 3}
}

// TestGRPCFixture pins what the golden files rest on: the search class
// regresses at both pin sets and nothing else does; the NotFound answers
// stay under the error limit.
func TestGRPCFixture(t *testing.T) {
	t.Parallel()
	c := grpcInput().Comparison
	if c.Outcome != gate.Fail {
		t.Fatalf("outcome %s, want fail", c.Outcome)
	}
	for _, cell := range c.Cells {
		want := gate.Tie
		if cell.Key.Class == "search" {
			want = gate.Regression
		}
		if cell.Verdict != want {
			t.Errorf("%s: verdict %s, want %s", cell.Key, cell.Verdict, want)
		}
		for _, m := range append([]gate.Metric{gate.RPS, gate.ErrorRate, gate.MemMean, gate.MemPeak}, grpcLatency...) {
			if _, ok := cell.Decision(m); !ok {
				t.Errorf("%s: no decision of %s", cell.Key, m)
			}
		}
	}
	for _, f := range c.Failures {
		if f.Kind != "regression" || f.Key.Class != "search" {
			t.Errorf("unexpected failure %+v", f)
		}
	}
}

// TestGRPCTables checks the verdict tables carry the gRPC reference
// report's columns, per pin set, in one latency unit, and that the report
// speaks of calls.
func TestGRPCTables(t *testing.T) {
	t.Parallel()
	got := markdown(t, grpcInput())
	for _, want := range []string{
		"### 1cpu\n\n| class | c | baseline req/s | baseline avg (ms) | baseline p90 (ms) | baseline p95 (ms) | baseline p99 (ms) | " +
			"candidate req/s | candidate avg (ms) | candidate p90 (ms) | candidate p95 (ms) | candidate p99 (ms) | " +
			"baseline err | candidate err | Δ req/s | verdict |\n",
		"### 2cpu\n\n| class | c | baseline req/s | baseline avg (ms) | baseline p90 (ms) | baseline p95 (ms) | baseline p99 (ms) | " +
			"candidate req/s | candidate avg (ms) | candidate p90 (ms) | candidate p95 (ms) | candidate p99 (ms) | Δ req/s | verdict |\n",
		"### Resources · 1cpu\n",
		"### Resources · 2cpu\n",
		"candidate CPU ms/call | candidate mem mean MiB | candidate mem peak MiB | load generator CPU ms/call | Δ CPU/call |",
		"| CPU ms/call |\n", // throughput per core
		"Failed calls per cell and target",
		"| cell | target | calls | errors | kinds | status codes |\n",
		"NotFound ×9, OK ×",
		"Some calls failed (see Errors)",
		"The load generator runs on the same host as the targets",
		"The call stream is a function of the scenario's seed (424242), so a rerun sends the same calls",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	for _, unwanted := range []string{"baseline rps", "Δ rps", "/req", "requests"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("markdown of a gRPC run has %q", unwanted)
		}
	}

	term := render(t, grpcInput())
	for _, want := range []string{"── baseline ──", "── candidate ──", "avg ms", "p99 ms", "Δ req/s", "CPU ms/call", "Δ CPU/call"} {
		if !strings.Contains(term, want) {
			t.Errorf("terminal report lacks %q", want)
		}
	}
}

func render(t *testing.T, in Input) string {
	t.Helper()
	var b strings.Builder
	if err := Terminal(&b, in, TerminalOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestGRPCErrorRateWords: a gRPC cell over its error limit counts calls.
func TestGRPCErrorRateWords(t *testing.T) {
	t.Parallel()
	in := grpcInput()
	k := in.Comparison.Cells[1].Key
	in.Comparison.Failures = append(in.Comparison.Failures, gate.Failure{Key: k, Metric: gate.ErrorRate, Kind: "error_rate",
		Reason: "candidate error rate 0.10% > 0.01%"})
	if got := markdown(t, in); !strings.Contains(got, "(12 of 431400 candidate calls failed)") {
		t.Errorf("error-rate failure does not count calls:\n%s", got)
	}
}

// TestHTTPKindUnchanged: results of services over HTTP render as before
// whether their kind is left empty or says "http": only "grpc" brings the
// gRPC columns and words.
func TestHTTPKindUnchanged(t *testing.T) {
	t.Parallel()
	for _, input := range []func() Input{fullInput, pinsInput, correctnessInput} {
		plain := input()
		http := input()
		http.Results.Kind = "http"
		if a, b := markdown(t, plain), markdown(t, http); a != b {
			t.Errorf("kind http renders differently from kind \"\"")
		}
		if a, b := render(t, plain), render(t, http); a != b {
			t.Errorf("kind http renders differently from kind \"\" in a terminal")
		}
		if got := markdown(t, plain); strings.Contains(got, "req/s") || strings.Contains(got, "/call") {
			t.Errorf("an HTTP report has gRPC words")
		}
	}
}

// TestGRPCComment: the wider gRPC tables fold like the others and the
// comment stays within its budget whatever the budget, from one that
// holds everything down to one that holds only the head.
func TestGRPCComment(t *testing.T) {
	t.Parallel()
	in := grpcInput()
	full := comment(t, in, CommentOptions{Marker: testMarker})
	if !strings.Contains(full, "<details><summary>Full report: 12 cells, tables, resources, errors, environment</summary>") {
		t.Fatalf("full comment does not fold the report:\n%s", full)
	}
	if !strings.Contains(full, "### 1cpu\n\n| class | c | baseline req/s |") {
		t.Errorf("full comment lacks the gRPC table")
	}
	if runes(full) > DefaultCommentRunes {
		t.Fatalf("comment of %d runes over the default budget", runes(full))
	}
	md := markdown(t, in)
	sawPointer := false
	for limit := runes(full); limit >= 600; limit -= 97 {
		got := comment(t, in, CommentOptions{Marker: testMarker, MaxRunes: limit})
		if n := runes(got); n > limit {
			t.Fatalf("budget %d: comment of %d runes", limit, n)
		}
		if !strings.HasPrefix(got, testMarker+"\n## benchgate: grpc-demo — ❌ 10 regressions") {
			t.Fatalf("budget %d: head lost:\n%s", limit, got)
		}
		if strings.Count(got, "<details>") != strings.Count(got, "</details>") {
			t.Fatalf("budget %d: unbalanced <details>:\n%s", limit, got)
		}
		if strings.Contains(got, "<details><summary>Full report") {
			// A fold holds the tables whole, never a cut row.
			for _, line := range strings.Split(got, "\n") {
				if strings.HasPrefix(line, "| ") && !strings.Contains(md, line+"\n") {
					t.Fatalf("budget %d: table line not in the report: %q", limit, line)
				}
			}
		} else {
			sawPointer = true
			if !strings.Contains(got, "The full report is too long for a comment") {
				t.Fatalf("budget %d: no fold and no pointer:\n%s", limit, got)
			}
		}
	}
	if !sawPointer {
		t.Error("no budget was small enough to drop the fold")
	}
}

// TestGRPCKinds: imported ghz reports are gRPC calls too; any other kind
// keeps the HTTP table.
func TestGRPCKinds(t *testing.T) {
	t.Parallel()
	for kind, want := range map[string]bool{"grpc": true, "import:ghz": true, "": false, "http": false, "import:oha": false} {
		in := grpcInput()
		in.Results.Kind = kind
		if got := newModel(in).isGRPC(); got != want {
			t.Errorf("kind %q: isGRPC %v", kind, got)
		}
		got := markdown(t, in)
		if has := strings.Contains(got, "| baseline avg (ms) |"); has != want {
			t.Errorf("kind %q: gRPC columns %v, want %v", kind, has, want)
		}
	}
}

// TestGRPCAgreementWords: the agreement check of a gRPC run counts calls.
func TestGRPCAgreementWords(t *testing.T) {
	t.Parallel()
	in := grpcInput()
	in.Results.Correctness = &benchdata.Correctness{Agreement: &benchdata.AgreementResult{Classes: []benchdata.ClassAgreement{
		{Class: "get", Mode: "required", Requests: 5, Agree: true, Format: "json"},
		{Class: "search", Mode: "required", Requests: 5, Format: "json", First: &benchdata.Disagreement{
			Index: 2, Method: "GRPC", Target: "benchgate.demo.Inventory/Search",
			Reason: "$.items[0].name: \"a\" vs \"b\"", Path: "$.items[0].name",
			Baseline: `{"name": "a"}`, Candidate: `{"name": "b"}`,
		}},
	}}}
	got := markdown(t, in)
	for _, want := range []string{"Agreement check: 1 class agrees, 1 disagrees, over 5 calls each.",
		"**search** answers differently, fails the gate: call 3, <code>GRPC benchgate.demo.Inventory/Search</code>"} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q:\n%s", want, got)
		}
	}
	if term := render(t, in); !strings.Contains(term, "DISAGREES search, fails the gate: call 3 GRPC benchgate.demo.Inventory/Search") {
		t.Errorf("terminal agreement does not count calls:\n%s", term)
	}
}
