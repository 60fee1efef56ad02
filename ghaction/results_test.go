package ghaction

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/fakegithub"
	"github.com/benchgate/benchgate/report"
)

func TestCheckGate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		event   string
		fork    bool
		refused bool
	}{
		{"pull_request_target", true, true},
		{"pull_request_target", false, false},
		{"pull_request", true, false},
		{"push", false, false},
	} {
		err := (&Env{EventName: tc.event, Fork: tc.fork}).CheckGate()
		if tc.refused != (err != nil) || (err != nil && !errors.Is(err, ErrRefused)) {
			t.Errorf("%s, fork %v: %v", tc.event, tc.fork, err)
		}
	}
	err := (&Env{EventName: "pull_request_target", Fork: true}).CheckGate()
	if want := "refusing to run a fork's code under pull_request_target: the job has a write token and the docker socket, which is root on the runner; use pull_request (see docs/action.md)"; err.Error() != want {
		t.Errorf("refusal %q, want %q", err, want)
	}
}

func TestGitHubInfo(t *testing.T) {
	t.Parallel()
	e := &Env{Repository: "octo/bench", EventName: "pull_request", PR: 7, BaseSHA: "b", HeadSHA: headSHA, SHA: "merge", RunURL: "https://github.com/octo/bench/actions/runs/1"}
	want := benchdata.GitHubInfo{Repository: "octo/bench", EventName: "pull_request", PR: 7, BaseSHA: "b", HeadSHA: headSHA, RunURL: "https://github.com/octo/bench/actions/runs/1"}
	if got := e.GitHubInfo(); *got != want {
		t.Errorf("GitHubInfo = %+v, want %+v", *got, want)
	}
}

// savedResults writes into dir the results of a gate run of pull request
// 7 at headSHA, with one cell decided tie, and returns the file.
func savedResults(t *testing.T, dir string) string {
	t.Helper()
	cell := benchdata.Cell{Class: "search", Concurrency: 8}
	res := &benchdata.Results{Version: benchdata.FormatVersion, Kind: "http", Status: "complete",
		Scenario: benchdata.ScenarioInfo{Name: "api", Gate: gate.Section{Confidence: 0.95, TieWithin: 0.1, MaxErrorRate: 0.01}},
		Plan:     benchdata.Plan{Cells: []benchdata.Cell{cell}, Rounds: 2},
		GitHub:   &benchdata.GitHubInfo{Repository: "octo/bench", EventName: "pull_request", PR: 7, HeadSHA: headSHA}}
	for round := range 2 {
		for _, target := range []string{"baseline", "candidate"} {
			res.Rungs = append(res.Rungs, benchdata.Rung{Cell: cell, Round: round, Target: target, Duration: 1, Requests: 100,
				Statuses: map[string]int64{"200": 100}, Values: map[string]float64{"rps": 100 + float64(round), "p95": 0.01}})
		}
	}
	if err := benchdata.Write(dir, res); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "results.json")
}

func TestPostResults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gh := fakegithub.New(t, testToken, nil)
	gh.AddPR(7, headSHA)
	dir := t.TempDir()
	file := savedResults(t, dir)

	// The second workflow of the fork-safe pattern: the PR the results
	// recorded, from the results-dir input, with the note that a PR wrote
	// them.
	e := actionEnv(t, gh)
	e.EventName, e.PR, e.Inputs.ResultsDir = "workflow_run", 0, dir
	url, rep, err := e.PostResults(ctx, "", 0, 0, &bytes.Buffer{})
	if err != nil || url == "" {
		t.Fatalf("PostResults: %q, %v", url, err)
	}
	cs := gh.Comments(7)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, resultsNote) || rep.Results.GitHub.PR != 7 || rep.Comparison.Outcome != gate.Pass {
		t.Errorf("comments %+v, report outcome %s", cs, rep.Comparison.Outcome)
	}

	// A tracking issue: a trusted workflow's results, without the note.
	gh.AddPR(42, headSHA)
	e = actionEnv(t, gh)
	e.EventName, e.PR = "schedule", 0
	if url, _, err := e.PostResults(ctx, file, 0, 42, &bytes.Buffer{}); err != nil || url == "" {
		t.Fatalf("PostResults to issue 42: %q, %v", url, err)
	}
	if cs := gh.Comments(42); len(cs) != 1 || strings.Contains(cs[0].Body, resultsNote) {
		t.Errorf("issue comments %+v", cs)
	}

	bad := filepath.Join(t.TempDir(), "results.json")
	os.WriteFile(bad, []byte(`{"version":1000}`), 0o644)
	undecided := filepath.Join(t.TempDir(), "results.json")
	b, _ := os.ReadFile(file)
	os.WriteFile(undecided, bytes.Replace(b, []byte(`"confidence": 0.95`), []byte(`"confidence": 2`), 1), 0o644)
	for _, tc := range []struct {
		name      string
		event     string
		file      string
		pr, issue int
		want      string
	}{
		{"missing file", "workflow_run", filepath.Join(dir, "missing.json"), 0, 0, "missing.json"},
		{"unreadable version", "workflow_run", bad, 0, 0, bad},
		{"bad gate settings", "workflow_run", undecided, 0, 0, "confidence"},
		{"issue and pr", "schedule", file, 7, 42, "-issue and -pr are exclusive"},
		{"issue from a pull request", "pull_request", file, 0, 42, "not a pull_request event's"},
		{"no -pr outside workflow_run", "push", file, 0, 0, "give the pull request with -pr"},
	} {
		e := actionEnv(t, gh)
		e.EventName, e.PR = tc.event, 0
		if _, _, err := e.PostResults(ctx, tc.file, tc.pr, tc.issue, &bytes.Buffer{}); err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want refused, saying %q", tc.name, err, tc.want)
		}
	}

	// GitHub's failure is not a refusal, and names what failed.
	e = actionEnv(t, gh)
	e.EventName, e.PR = "schedule", 0
	if _, _, err := e.PostResults(ctx, file, 0, 43, &bytes.Buffer{}); err == nil || errors.Is(err, ErrRefused) || !strings.HasPrefix(err.Error(), "comment on issue #43: ") {
		t.Errorf("an issue GitHub does not know: %v", err)
	}
}

func TestWriteCalibrationSummary(t *testing.T) {
	t.Parallel()
	side := gate.Side{Samples: map[gate.Metric][]float64{gate.RPS: {100, 110, 90}}}
	c := gate.Compare([]gate.CellInput{{Key: gate.CellKey{Class: "search", Concurrency: 1}, Baseline: side, Candidate: side}},
		gate.DefaultSettings, gate.Policy{FailOn: []gate.Rule{{Metric: gate.RPS}}})
	in := report.CalibrationInput{Results: &benchdata.Results{Scenario: benchdata.ScenarioInfo{Name: "shop"}, Status: "complete"},
		Comparison: c, Calibrations: gate.Calibrate(c)}
	e := actionEnv(t, nil)
	if err := e.WriteCalibrationSummary(in); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	report.Calibration(&want, in, "markdown")
	got, err := os.ReadFile(e.SummaryFile)
	if err != nil || !strings.Contains(string(got), want.String()) || !strings.HasPrefix(want.String(), "## benchgate calibrate: shop") {
		t.Errorf("summary %v:\n%s\nwant\n%s", err, got, want.String())
	}
}

// TestPostResultsRemovesTheLabel: the on-demand workflow's comment step
// removes its label from the PR it posted to, and only from a PR it has
// checked: the results' own once ResultsPR accepted them, or the one the
// workflow_run event names when the run left no results.
func TestPostResultsRemovesTheLabel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	file := savedResults(t, dir)
	setup := func(label string, labels ...string) (*fakegithub.Server, *Env) {
		gh := fakegithub.New(t, testToken, nil)
		gh.AddPR(7, headSHA)
		gh.SetLabels(7, labels...)
		e := actionEnv(t, gh)
		e.EventName, e.PR, e.Inputs.RemoveLabel = "workflow_run", 0, label
		return gh, e
	}

	gh, e := setup("benchmark", "perf", "benchmark")
	var log bytes.Buffer
	if url, _, err := e.PostResults(ctx, file, 0, 0, &log); err != nil || url == "" {
		t.Fatalf("PostResults: %q, %v", url, err)
	}
	if got := gh.Labels(7); len(got) != 1 || got[0] != "perf" {
		t.Errorf("labels after the run: %q, want [perf]", got)
	}
	if len(gh.Comments(7)) != 1 || !strings.Contains(log.String(), `label "benchmark" removed from PR #7`) {
		t.Errorf("comments %d, log %q", len(gh.Comments(7)), log.String())
	}

	// A name that needs escaping in the path reaches GitHub as itself.
	gh, e = setup("run: bench/full ✓", "run: bench/full ✓")
	if _, _, err := e.PostResults(ctx, file, 0, 0, &bytes.Buffer{}); err != nil || len(gh.Labels(7)) != 0 {
		t.Errorf("escaped label: %v, labels left %q", err, gh.Labels(7))
	}
	// Already gone (removed by hand meanwhile): no error.
	gh, e = setup("benchmark")
	if _, _, err := e.PostResults(ctx, file, 0, 0, &bytes.Buffer{}); err != nil || len(gh.Comments(7)) != 1 {
		t.Errorf("label already gone: %v", err)
	}
	// No input: no DELETE at all.
	gh, e = setup("", "benchmark")
	if _, _, err := e.PostResults(ctx, file, 0, 0, &bytes.Buffer{}); err != nil || len(gh.Labels(7)) != 1 {
		t.Errorf("no remove-label: %v, labels %q", err, gh.Labels(7))
	}
	// A token that cannot write: the failure says what failed.
	gh, e = setup("benchmark", "benchmark")
	gh.SetReadOnly(true)
	if _, _, err := e.PostResults(ctx, file, 0, 0, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `removing the label: ghaction: removing label "benchmark" from octo/bench#7`) {
		t.Errorf("read-only token: %v", err)
	}

	// Results refused (the PR moved on since they were measured): the
	// label stays, since nothing checked says whose it is.
	gh, e = setup("benchmark", "benchmark")
	gh.AddPR(7, strings.Repeat("c", 40))
	if _, _, err := e.PostResults(ctx, file, 0, 0, &bytes.Buffer{}); !errors.Is(err, ErrRefused) || len(gh.Labels(7)) != 1 {
		t.Errorf("stale results: %v, labels %q", err, gh.Labels(7))
	}
	// No results, the event names the PR (a same-repository PR): removed,
	// and the missing results are still the error.
	gh, e = setup("benchmark", "benchmark")
	e.PR = 7
	missing := filepath.Join(dir, "missing.json")
	if _, _, err := e.PostResults(ctx, missing, 0, 0, &bytes.Buffer{}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "missing.json") || len(gh.Labels(7)) != 0 {
		t.Errorf("no results, event's PR: %v, labels %q", err, gh.Labels(7))
	}
	// No results, no PR in the event (a fork's): the label stays.
	gh, e = setup("benchmark", "benchmark")
	if _, _, err := e.PostResults(ctx, missing, 0, 0, &bytes.Buffer{}); !errors.Is(err, ErrRefused) || len(gh.Labels(7)) != 1 {
		t.Errorf("no results, no PR: %v, labels %q", err, gh.Labels(7))
	}
	for _, r := range gh.Requests() {
		if r.Method == "DELETE" {
			t.Errorf("a DELETE with nothing checked: %+v", r)
		}
	}
}

func TestCheckLabel(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"benchmark": true, "run: bench/full ✓": true, strings.Repeat("é", 50): true,
		"": false, strings.Repeat("x", 51): false, "bench\nmark": false, "bench\x1b[31m": false, "\xff": false,
	} {
		if err := CheckLabel(name); (err == nil) != ok {
			t.Errorf("CheckLabel(%q) = %v", name, err)
		}
	}
}
