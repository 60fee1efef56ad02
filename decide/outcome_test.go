package decide

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// TestOutcome: each outcome's message names what failed, as the CLI
// prints it after "benchgate: ".
func TestOutcome(t *testing.T) {
	t.Parallel()
	check := func(name string, c gate.Comparison, want string) {
		t.Helper()
		err := Outcome(c)
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v, want nil", name, err)
			}
			return
		}
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", name, err, want)
		}
	}
	q := gate.CellKey{Class: "Q01", Concurrency: 8}
	cells := []gate.CellResult{{Key: q}}
	check("pass", gate.Comparison{Outcome: gate.Pass, Cells: cells}, "")
	check("fail", gate.Comparison{Outcome: gate.Fail, Cells: cells, Failures: []gate.Failure{
		{Key: gate.CellKey{Variant: "csv", Class: "Q01"}, Kind: gate.FailAgreement, Reason: "answers differ"},
		{Kind: gate.FailPreflight, Reason: "pre-flight lint fails on the candidate (exit 1: bad) and passes on the baseline"},
		{Key: q, Metric: gate.RPS, Kind: gate.FailRegression},
		{Key: q, Metric: gate.P95, Kind: gate.FailInconclusive},
		{Key: q, Metric: gate.ErrorRate, Kind: gate.FailErrorRate},
		{Key: q, Metric: gate.P99, Kind: gate.FailUnresolved},
	}}, "gate failed: agreement: csv/Q01 answers differently; pre-flight lint fails on the candidate (exit 1: bad) and passes on the baseline; "+
		"2 pre-declared regression(s): Q01 c=8 rps, Q01 c=8 error_rate; 1 gated metric(s) could not be decided; "+
		"1 gated tie(s) could not rule out a regression beyond the tie band on this runner (gate.unresolved: fail)")
	// A cell that was not measured is counted apart from the regressions,
	// and never among them; a candidate that stopped answering fails.
	q4 := gate.CellKey{Class: "sleep", Concurrency: 4}
	check("unmeasured beside a regression", gate.Comparison{Outcome: gate.Fail, Cells: cells, Failures: []gate.Failure{
		{Key: q, Metric: gate.RPS, Kind: gate.FailRegression},
		{Key: q4, Metric: gate.RPS, Kind: gate.FailUnmeasured},
	}}, "gate failed: 1 pre-declared regression(s): Q01 c=8 rps; 1 cell(s) unmeasured, the baseline answered no request: sleep c=4")
	check("unmeasured", gate.Comparison{Outcome: gate.OutcomeUndecided, Cells: cells, Failures: []gate.Failure{
		{Key: q, Metric: gate.RPS, Kind: gate.FailUnmeasured},
		{Key: q4, Metric: gate.RPS, Kind: gate.FailUnmeasured},
	}}, "gate inconclusive: 2 cell(s) unmeasured, the baseline answered no request: Q01 c=8, sleep c=4")
	check("candidate silent", gate.Comparison{Outcome: gate.Fail, Cells: cells, Failures: []gate.Failure{
		{Key: q4, Metric: gate.RPS, Kind: gate.FailNoAnswers},
	}}, "gate failed: the candidate answered no request in 1 cell(s) the baseline answered in: sleep c=4")
	check("nothing measured", gate.Comparison{Outcome: gate.OutcomeUndecided},
		"gate inconclusive: no cell was measured (see the absent classes, if any)")
	check("inconclusive", gate.Comparison{Outcome: gate.OutcomeUndecided, Cells: cells, Failures: []gate.Failure{
		{Key: q, Metric: gate.RPS, Kind: gate.FailInconclusive},
		{Key: q, Metric: gate.P95, Kind: gate.FailInconclusive},
		{Key: q, Metric: gate.P99, Kind: gate.FailUnresolved},
	}}, "gate inconclusive: 2 gated metric(s) could not be decided; 1 gated tie(s) could not rule out a regression beyond the tie band on this runner (gate.unresolved: fail)")
	check("undecided without a failure", gate.Comparison{Outcome: gate.OutcomeUndecided, Cells: cells}, "gate inconclusive: nothing decided")
	// A failure of no cell says its own reason, and is no gated metric.
	check("a rule that gates no cell", gate.Comparison{Outcome: gate.Fail, Cells: cells, Failures: []gate.Failure{
		{Kind: gate.FailPreflight, Reason: "pre-flight lint fails on the candidate"},
		{Metric: gate.P99, Kind: gate.FailInconclusive, Reason: "the fail_on rule on p99 gates no cell: no cell it matches measured it"},
	}}, "gate failed: pre-flight lint fails on the candidate; the fail_on rule on p99 gates no cell: no cell it matches measured it")
}

// TestOpenCells: a gated tie two rounds cannot resolve is open, for an
// adaptive design to measure again; a clear regression is settled.
func TestOpenCells(t *testing.T) {
	t.Parallel()
	r := results([2]string{"", ""})
	r.Scenario.Gate.FailOn = []gate.Rule{{Metric: gate.RPS}}
	cells, err := OpenCells(r)
	if want := []benchdata.Cell{{Class: "Q", Concurrency: 1}}; err != nil || !reflect.DeepEqual(cells, want) {
		t.Errorf("tie: open %v, %v; want %v", cells, err, want)
	}
	for i := range r.Rungs {
		if r.Rungs[i].Target == "candidate" {
			r.Rungs[i].SetValue(gate.RPS, r.Rungs[i].Value(gate.RPS)/2)
		}
	}
	if cells, err := OpenCells(r); err != nil || len(cells) != 0 {
		t.Errorf("regression: open %v, %v; want none", cells, err)
	}
	r.Scenario.Gate.Confidence = 2
	if _, err := OpenCells(r); err == nil {
		t.Error("bad gate settings: no error")
	}
}

// TestUnfinished: only a complete run is finished; another says its
// status, the rounds decided on and what it said.
func TestUnfinished(t *testing.T) {
	t.Parallel()
	r := results([2]string{"", ""})
	if err := Unfinished(r); err != nil {
		t.Errorf("complete: %v", err)
	}
	r.Status, r.Plan.Rounds = "cancelled", 5
	if err := Unfinished(r); err == nil || err.Error() != "results of a cancelled run: decided on 2 complete round(s) of 5" {
		t.Errorf("cancelled: %v", err)
	}
	r.Status, r.Error = "failed", "candidate exited 1"
	if err := Unfinished(r); err == nil || err.Error() != "results of a failed run: decided on 2 complete round(s) of 5; the run said: candidate exited 1" {
		t.Errorf("failed: %v", err)
	}
}

// TestRecord: a complete run's record holds both sides of each kept
// metric; another run is refused with its status and what it said.
func TestRecord(t *testing.T) {
	t.Parallel()
	r := results([2]string{"cgroup", "cgroup"})
	r.Env.Start = time.Date(2026, 1, 30, 2, 0, 0, 0, time.UTC)
	rec, err := Record(r, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var metrics []string
	for _, c := range rec.Cells {
		if c.Target == "candidate" {
			metrics = append(metrics, c.Metric)
		}
	}
	// mean, p90 and mem_mean are left out of a history (benchdata.NewRecord).
	if want := []string{"rps", "p50", "p95", "p99", "error_rate", "cpu_per_req", "mem_peak"}; !reflect.DeepEqual(metrics, want) {
		t.Errorf("candidate metrics %v, want %v", metrics, want)
	}
	// The options replace the file's date and commits; a record needs a
	// date to join a series.
	when := time.Date(2026, 1, 31, 2, 0, 0, 0, time.UTC)
	rec, err = Record(r, RecordOptions{Date: when, BaselineCommit: "b0", CandidateCommit: "c1"})
	if err != nil || !rec.Date.Equal(when) || rec.BaselineCommit != "b0" || rec.CandidateCommit != "c1" {
		t.Errorf("with options: %v, date %v, commits %q %q", err, rec.Date, rec.BaselineCommit, rec.CandidateCommit)
	}
	undated := *r
	undated.Env.Start = time.Time{}
	if _, err := Record(&undated, RecordOptions{}); err == nil || err.Error() != "the results have no start time (compared from files?): give -date" {
		t.Errorf("no date: %v", err)
	}
	// A date a history does not take: the file's, or -date's.
	now := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	early := *r
	early.Env.Start = time.Date(1, 1, 1, 2, 0, 0, 0, time.UTC)
	if _, err := Record(&early, RecordOptions{Now: now}); err == nil || err.Error() != `field "environment.start": 0001-01-01T02:00:00Z is before 2000-01-01, the earliest date a history takes (a clock never set?) (give -date)` {
		t.Errorf("a start of year 1: %v", err)
	}
	if _, err := Record(r, RecordOptions{Now: now, Date: time.Date(2026, 2, 2, 0, 0, 1, 0, time.UTC)}); err == nil || err.Error() != `-date: 2026-02-02T00:00:01Z is after now (2026-02-01T00:00:00Z) by more than a day: a clock set wrong, or a typo?` {
		t.Errorf("a -date past now and a day: %v", err)
	}
	if _, err := Record(r, RecordOptions{Now: now, Date: time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Errorf("a -date a day ahead: %v", err)
	}
	r.Status, r.Error = "failed", "target died"
	if _, err := Record(r, RecordOptions{}); err == nil || err.Error() != "the run is failed, not complete: only complete runs are history; the run said: target died" {
		t.Errorf("failed run: %v", err)
	}
	r.Status, r.Error = "", ""
	if _, err := Record(r, RecordOptions{}); err == nil || err.Error() != `the run is "", not complete: only complete runs are history` {
		t.Errorf("no status: %v", err)
	}
}

// TestUnmeasuredAnyLoad: whatever the load — HTTP, gRPC or an open loop
// — a cell whose baseline answered nothing (every request still in flight
// when its windows closed) is decided unmeasured through Results and
// Outcome: inconclusive, never a regression, whatever fail_on says.
func TestUnmeasuredAnyLoad(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*benchdata.Results)
	}{
		{"http", func(*benchdata.Results) {}},
		{"grpc", func(r *benchdata.Results) { r.Kind = "grpc" }},
		{"open loop", func(r *benchdata.Results) {
			for i := range r.Rungs {
				r.Rungs[i].Cell.Rate = 50
				r.Rungs[i].Asked = 50
			}
			r.Plan.Cells[0].Rate = 50
		}},
	} {
		r := results([2]string{"", ""})
		r.Scenario.Gate.FailOn = []gate.Rule{{Metric: gate.RPS}, {Metric: gate.P95}}
		tc.edit(r)
		for i := range r.Rungs {
			g := &r.Rungs[i]
			// The baseline never answered; the candidate did, so only
			// the baseline's silence makes the cell unmeasured.
			if g.Target == "baseline" {
				g.Requests, g.Statuses, g.InFlight = 0, nil, 2
				g.SetValue(gate.RPS, 0)
				delete(g.Values, string(gate.P95))
			}
		}
		c, err := Results(r)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Outcome != gate.OutcomeUndecided || c.Cells[0].Verdict != gate.Inconclusive {
			t.Errorf("%s: outcome %s, verdict %s; want inconclusive", tc.name, c.Outcome, c.Cells[0].Verdict)
		}
		err = Outcome(c)
		if err == nil || !strings.HasPrefix(err.Error(), "gate inconclusive: 1 cell(s) unmeasured, the baseline answered no request: Q c=") ||
			strings.Contains(err.Error(), "regression") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestOutcomeBounded: a gate that fails in 3000 cells, and in cells of
// 10 MB names, says so in a line of a few KB: the first cells, each name
// cut, and how many more.
func TestOutcomeBounded(t *testing.T) {
	t.Parallel()
	var fs []gate.Failure
	for i := range 3000 {
		k := gate.CellKey{Class: fmt.Sprintf("BenchmarkX%d", i)}
		fs = append(fs,
			gate.Failure{Key: k, Metric: gate.RPS, Kind: gate.FailRegression},
			gate.Failure{Key: k, Kind: gate.FailNoAnswers},
			gate.Failure{Key: k, Kind: gate.FailUnmeasured},
			gate.Failure{Key: gate.CellKey{Variant: "csv", Class: k.Class}, Kind: gate.FailAgreement})
	}
	long := gate.CellKey{Class: strings.Repeat("x", 10_000_000)}
	fs = append(fs, gate.Failure{Key: long, Metric: gate.P95, Kind: gate.FailRegression})
	err := Outcome(gate.Comparison{Outcome: gate.Fail, Cells: []gate.CellResult{{Key: long}}, Failures: fs})
	if err == nil {
		t.Fatal("passed")
	}
	msg := err.Error()
	if len(msg) > 8<<10 {
		t.Fatalf("an error of %d bytes: %.500s…", len(msg), msg)
	}
	for _, want := range []string{
		"gate failed: agreement: csv/BenchmarkX0 answers differently; ",
		"agreement: csv/BenchmarkX9 answers differently; agreement: 2990 more probe(s) answer differently; ",
		"3001 pre-declared regression(s): BenchmarkX0 rps, BenchmarkX1 rps, BenchmarkX2 rps, BenchmarkX3 rps, BenchmarkX4 rps, " +
			"BenchmarkX5 rps, BenchmarkX6 rps, BenchmarkX7 rps, BenchmarkX8 rps, BenchmarkX9 rps and 2991 more; ",
		"the candidate answered no request in 3000 cell(s) the baseline answered in: BenchmarkX0, ",
		"BenchmarkX9 and 2990 more; 3000 cell(s) unmeasured",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("no %q in\n%s", want, msg)
		}
	}
	// The long name, listed first, is cut.
	err = Outcome(gate.Comparison{Outcome: gate.Fail, Cells: []gate.CellResult{{Key: long}}, Failures: []gate.Failure{
		{Key: long, Metric: gate.P95, Kind: gate.FailRegression},
	}})
	if msg := err.Error(); len(msg) > 1<<10 || !strings.HasSuffix(msg, "x… (10000000 characters) p95") {
		t.Errorf("an error of %d bytes: %.300s…%s", len(msg), msg, msg[max(0, len(msg)-60):])
	}
}
