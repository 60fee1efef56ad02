package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/cli"
)

const nightlyHistory = "../../benchdata/testdata/history/nightly.jsonl"

// history runs "benchgate history ARGS" in-process and returns stdout,
// stderr and the exit code.
func history(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"history"}, args...), &out, &errb, func(string) string { return "" })
	if err != nil && err != cli.ErrSilent && cli.ExitCode(err) != cli.ExitPass {
		fmt.Fprintf(&errb, "benchgate: %v\n", err)
	}
	return out.String(), errb.String(), cli.ExitCode(err)
}

// historyResults writes a results file of a complete run: one cell, three
// rounds, the candidate's throughput rps.
func historyResults(t *testing.T, dir string, start time.Time, commit string, rps float64, status string) string {
	t.Helper()
	cell := benchdata.Cell{Class: "Q01", Concurrency: 8}
	res := &benchdata.Results{
		Version: benchdata.FormatVersion, Tool: "benchgate test", Status: status,
		Scenario: benchdata.ScenarioInfo{Name: "demo-api", Profile: "nightly",
			Gate: gate.Section{Confidence: 0.95, TieWithin: 0.1, MaxErrorRate: 0.001, FailOn: []gate.Rule{{Metric: "rps"}}}},
		Env: benchdata.Environment{RunID: "run-" + commit, Start: start, CPUModel: "Xeon", CPUs: 8, Kernel: "6.8", OS: "linux", Arch: "amd64",
			Baseline:  benchdata.TargetInfo{Name: "baseline", Commit: "v1.0.0"},
			Candidate: benchdata.TargetInfo{Name: "candidate", Commit: commit}},
		Plan: benchdata.Plan{Cells: []benchdata.Cell{cell}, Rounds: 3},
	}
	for round := range 3 {
		for _, target := range []string{"baseline", "candidate"} {
			v := 1000.0
			if target == "candidate" {
				v = rps
			}
			v += float64(round)
			res.Rungs = append(res.Rungs, benchdata.Rung{Cell: cell, Round: round, Target: target, Order: "AB",
				Duration: 10, Requests: int64(v * 10), Statuses: map[string]int64{"200": int64(v * 10)}, Values: map[string]float64{"rps": v, "mean": 0.002, "p50": 0.002, "p90": 0.003, "p95": 0.004, "p99": 0.005},
			})
		}
	}
	if err := benchdata.Write(dir, res); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "results.json")
}

func TestHistoryAppend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "benchgate-history", "history.jsonl")
	start := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
	r1 := historyResults(t, filepath.Join(dir, "r1"), start, "c00", 1000, "complete")
	_, stderr, code := history(t, "append", "-results", r1, "-history", file)
	if code != 0 || !strings.Contains(stderr, "history: appended demo-api (nightly) of 2026-01-01 02:00 UTC, candidate c00") {
		t.Fatalf("append: exit %d\n%s", code, stderr)
	}
	// The same run again is not appended twice.
	_, stderr, code = history(t, "append", "-results", r1, "-history", file)
	if code != 0 || !strings.Contains(stderr, "already in") {
		t.Errorf("append again: exit %d\n%s", code, stderr)
	}
	r2 := historyResults(t, filepath.Join(dir, "r2"), start.Add(24*time.Hour), "c01", 900, "complete")
	if _, stderr, code := history(t, "append", "-results", r2, "-history", file, "-candidate-commit", "deadbeefcafe0123"); code != 0 {
		t.Fatalf("append r2: exit %d\n%s", code, stderr)
	}
	recs, err := benchdata.ReadHistory(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].CandidateCommit != "c00" || recs[1].CandidateCommit != "deadbeefcafe0123" || recs[1].BaselineCommit != "v1.0.0" {
		t.Fatalf("records %+v", recs)
	}
	var rps []float64
	for _, c := range recs[1].Cells {
		if c.Metric == "rps" {
			rps = append(rps, c.Mean)
		}
		if c.N != 3 || c.Cell.Class != "Q01" {
			t.Errorf("record cell %+v", c)
		}
	}
	if fmt.Sprint(rps) != "[1001 901]" {
		t.Errorf("rps of baseline and candidate %v, want [1001 901]", rps)
	}

	// A run that did not complete is not history.
	r3 := historyResults(t, filepath.Join(dir, "r3"), start.Add(48*time.Hour), "c02", 900, "cancelled")
	_, stderr, code = history(t, "append", "-results", r3, "-history", file)
	if code != 2 || !strings.Contains(stderr, "the run is cancelled, not complete: only complete runs are history") {
		t.Errorf("cancelled: exit %d\n%s", code, stderr)
	}
	// Results without a start time need -date.
	res, _ := benchdata.Read(r2)
	res.Env.Start = time.Time{}
	res.Env.RunID = ""
	benchdata.Write(filepath.Join(dir, "r4"), res)
	r4 := filepath.Join(dir, "r4", "results.json")
	if _, stderr, code = history(t, "append", "-results", r4, "-history", file); code != 2 || !strings.Contains(stderr, "give -date") {
		t.Errorf("no start: exit %d\n%s", code, stderr)
	}
	if _, stderr, code = history(t, "append", "-results", r4, "-history", file, "-date", "yesterday"); code != 2 || !strings.Contains(stderr, "-date: want an RFC 3339 time") {
		t.Errorf("bad -date: exit %d\n%s", code, stderr)
	}
	if _, stderr, code = history(t, "append", "-results", r4, "-history", file, "-date", "2026-01-05T02:00:00Z"); code != 0 {
		t.Errorf("-date: exit %d\n%s", code, stderr)
	}
	if _, stderr, code = history(t, "append", "-results", filepath.Join(dir, "nope.json"), "-history", file); code != 2 || !strings.Contains(stderr, "nope.json") {
		t.Errorf("missing results: exit %d\n%s", code, stderr)
	}
	if recs, _ := benchdata.ReadHistory(file); len(recs) != 3 {
		t.Errorf("%d records after the refusals, want 3", len(recs))
	}
}

func TestHistoryShow(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := history(t, "show", "-history", nightlyHistory, "-fingerprint", "3f2a")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"demo-api (nightly) · Q01 c=8 · candidate rps\n",
		"machine 3f2a9c1b7d4e: Intel(R) Xeon(R) Gold 6338 × 8, linux/amd64, kernel 6.8.0-45-generic; pins default\n",
		"60 runs, 1 change point(s), 1 for the worse\n",
		"date              candidate  baseline  mean ±hw     n\n",
		"2026-01-01 02:00  c00        v1.0.0    972.6 ± 1%   5\n",
		"2026-02-07 02:00  c37        v1.0.0    856.9 ± 1%   5  ◀ change -14.1% (998.2 → 857.4, p 5.7e-37) WORSE\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Count(stdout, "◀") != 1 || strings.Contains(stdout, "9e8d7c6b5a49") || strings.Contains(stdout, " \n") {
		t.Errorf("show:\n%s", stdout)
	}

	stdout, _, code = history(t, "show", "-history", nightlyHistory, "-target", "all", "-metric", "p95", "-cell", "Q0?", "-last", "3")
	if code != 0 || strings.Count(stdout, "p95\n") != 4 || !strings.Contains(stdout, "(57 earlier run(s) not shown)") ||
		!strings.Contains(stdout, "5 run(s): too few to look for change points (need 6)") || !strings.Contains(stdout, "60 runs, no change point") {
		t.Errorf("show p95 of both targets: exit %d\n%s", code, stdout)
	}

	_, stderr, code = history(t, "show", "-history", nightlyHistory, "-metric", "sec/op")
	if code != 2 || !strings.Contains(stderr, "no series of metric sec/op, target candidate, cell * (metrics in the history: rps, p95)") {
		t.Errorf("no such metric: exit %d\n%s", code, stderr)
	}
	for _, args := range [][]string{{"-cell", "["}, {"-target", "both"}, {"-min-window", "1"}, {"-max-pvalue", "2"}, {"-min-magnitude", "0"}, {"-last", "-1"}} {
		if _, stderr, code := history(t, append([]string{"show", "-history", nightlyHistory}, args...)...); code != 2 {
			t.Errorf("show %v: exit %d, want 2\n%s", args, code, stderr)
		}
	}
}

// Names in a history file come from scenario files a pull request can
// change: on a terminal they are shown escaped, never acted on.
func TestHistoryShowEscapes(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "h.jsonl")
	for i := range 3 {
		r := benchdata.Record{Version: 1, Date: time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC),
			Scenario: "evil\x1b]0;pwned\x07", CandidateCommit: "c\x1b[2J", Fingerprint: "f", Machine: "m\u202e",
			Cells: []benchdata.RecordCell{{Cell: benchdata.Cell{Class: "Q\x1b[31mred\tx"}, Target: "candidate", Metric: "rps", Mean: 1, N: 1}}}
		if err := benchdata.AppendHistory(file, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"show"}, {"drift", "-min-window", "2"}} {
		stdout, stderr, _ := history(t, append(args, "-history", file)...)
		if strings.ContainsAny(stdout+stderr, "\x1b\x07\u202e") || !strings.Contains(stdout, `Q\x1b[31mred\tx`) && args[0] == "show" {
			t.Errorf("%v: not escaped:\n%q", args, stdout)
		}
	}
}

func TestHistoryDrift(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := history(t, "drift", "-history", nightlyHistory)
	if code != 1 || !strings.Contains(stderr, "drift: 1 change point(s) for the worse: Q01 c=8 candidate rps in c36..c37") {
		t.Errorf("drift: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"benchgate history drift: 1 change point(s), 1 for the worse, in 4 series of 65 record(s) on 2 machine(s)",
		"E-divisive means, split tested by a Student t test: p < 0.001, change ≥ 5%, ≥ 3 runs each side\n",
		"WORSE  3f2a9c1b7d4e  demo-api (nightly)  Q01 c=8  candidate  rps     -14.1%  998.2 → 857.4   5.7e-37  c36..c37  2026-02-06 → 2026-02-07\n",
		"9e8d7c6b5a49  5 record(s), 2026-01-01 … 2026-01-05  skipped: 5 record(s); change points need at least 6 (2 × min window 3)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("drift lacks %q:\n%s", want, stdout)
		}
	}

	stdout, _, code = history(t, "drift", "-history", nightlyHistory, "-format", "json")
	var d benchdata.DriftResult
	if err := json.Unmarshal([]byte(stdout), &d); err != nil || code != 1 {
		t.Fatalf("json: exit %d, %v\n%s", code, err, stdout)
	}
	if len(d.Findings) != 1 || d.Findings[0].ToCommit != "c37" || !d.Findings[0].Worse || d.Options.MaxPValue != 0.001 || len(d.Fingerprints) != 2 {
		t.Errorf("json %+v", d)
	}

	stdout, _, code = history(t, "drift", "-history", nightlyHistory, "-format", "markdown")
	if code != 1 || !strings.Contains(stdout, "| **worse** | 3f2a9c1b7d4e | demo-api (nightly) | Q01 c=8 | candidate | rps | -14.1% | 998.2 → 857.4 | 5.7e-37 | c36..c37 | 2026-02-06 → 2026-02-07 |") {
		t.Errorf("markdown: exit %d\n%s", code, stdout)
	}

	// A larger minimum change finds nothing: exit 0.
	stdout, _, code = history(t, "drift", "-history", nightlyHistory, "-min-magnitude", "0.2")
	if code != 0 || !strings.Contains(stdout, "0 change point(s), 0 for the worse") {
		t.Errorf("min magnitude 20%%: exit %d\n%s", code, stdout)
	}
	// An empty history is no drift.
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	if stdout, _, code = history(t, "drift", "-history", empty); code != 0 || !strings.Contains(stdout, "no records yet") {
		t.Errorf("empty: exit %d\n%s", code, stdout)
	}
	if _, stderr, code = history(t, "drift", "-history", nightlyHistory, "-format", "html"); code != 2 || !strings.Contains(stderr, `-format: report: unknown format "html" (want terminal, markdown or json)`) {
		t.Errorf("bad format: exit %d\n%s", code, stderr)
	}
}

func TestHistoryBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.jsonl")
	good, _ := os.ReadFile(nightlyHistory)
	lines := strings.SplitAfter(string(good), "\n")
	os.WriteFile(broken, []byte(lines[0]+lines[1]+"{\"version\":1,\n"+lines[2]), 0o644)
	for _, sub := range []string{"show", "drift"} {
		if _, stderr, code := history(t, sub, "-history", broken); code != 2 || !strings.Contains(stderr, broken+":3: not a history record") {
			t.Errorf("%s of a broken line: exit %d\n%s", sub, code, stderr)
		}
		missing := filepath.Join(dir, "missing.jsonl")
		if _, stderr, code := history(t, sub, "-history", missing); code != 2 || !strings.Contains(stderr, missing) {
			t.Errorf("%s of a missing file: exit %d\n%s", sub, code, stderr)
		}
		if _, stderr, code := history(t, sub, "-h"); code != 0 || !strings.Contains(stderr, "Usage: benchgate history "+sub) {
			t.Errorf("%s -h: exit %d\n%s", sub, code, stderr)
		}
	}
	if _, stderr, code := history(t, "append", "-h"); code != 0 || !strings.Contains(stderr, "Usage: benchgate history append") {
		t.Errorf("append -h: exit %d\n%s", code, stderr)
	}
	if stdout, _, code := history(t, "-h"); code != 0 || !strings.Contains(stdout, "Usage: benchgate history <command>") {
		t.Errorf("history -h: exit %d\n%s", code, stdout)
	}
	if _, stderr, code := history(t); code != 2 || !strings.Contains(stderr, "history needs a command") {
		t.Errorf("history: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := history(t, "plot"); code != 2 || !strings.Contains(stderr, `unknown history command "plot"`) {
		t.Errorf("history plot: exit %d\n%s", code, stderr)
	}
}
