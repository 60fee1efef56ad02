package ghaction

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/fakegithub"
	"github.com/benchgate/benchgate/report"
)

const headSHA = "7d1f3a5c9e2b4d6f8a0c1e3b5d7f9a2c4e6b8d01"

// failedReport is a decided report of a complete run with one regression,
// an agreement failure and a failed pre-flight check.
func failedReport() *report.Input {
	res := &benchdata.Results{Version: benchdata.FormatVersion, Kind: "http", Status: "complete",
		Scenario: benchdata.ScenarioInfo{Name: "api"}}
	search := gate.CellKey{Class: "search", Concurrency: 8}
	return &report.Input{Results: res, Comparison: gate.Comparison{
		Outcome: gate.Fail,
		Counts:  gate.Counts{Regressions: 1, Ties: 2, Inconclusive: 3},
		Failures: []gate.Failure{
			{Key: search, Metric: "p99", Kind: gate.FailRegression, Reason: "p99 +40%"},
			{Key: gate.CellKey{Variant: "v2", Class: "list"}, Kind: gate.FailAgreement, Reason: "body.items differ"},
			{Kind: gate.FailPreflight, Reason: "pre-flight GET / fails"},
		},
	}}
}

// actionEnv is a step's Env whose output and summary files are in a
// temporary directory, with GitHub the fake (nil: none).
func actionEnv(t *testing.T, gh *fakegithub.Server) *Env {
	t.Helper()
	dir := t.TempDir()
	e := &Env{Inputs: DefaultInputs(), Repository: "octo/bench", Owner: "octo", Repo: "bench", EventName: "pull_request",
		PR: 7, HeadSHA: headSHA, Token: testToken, OutputFile: filepath.Join(dir, "output"), SummaryFile: filepath.Join(dir, "summary")}
	if gh != nil {
		e.APIURL = gh.URL
	}
	return e
}

func readOutputs(t *testing.T, e *Env) [][2]string {
	t.Helper()
	b, err := os.ReadFile(e.OutputFile)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := parseOutputs(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func TestPublishGate(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t, testToken, nil)
	gh.AddPR(7, headSHA)
	e := actionEnv(t, gh)
	var out, log bytes.Buffer
	run := GateRun{Report: failedReport(), ResultsDir: "out", Scenario: "/work/repo/bench/s.yml", Workspace: "/work/repo"}
	if err := e.PublishGate(context.Background(), run, &out, &log); err != nil {
		t.Fatal(err)
	}
	cs := gh.Comments(7)
	if len(cs) != 1 || !strings.HasPrefix(cs[0].Body, Marker("benchgate")+"\n<!-- benchgate:outcome fail regressions=1 -->\n") {
		t.Fatalf("comments %+v", cs)
	}
	want := [][2]string{
		{"report", "out/report.md"}, {"results", "out/results.json"}, {"verdict", "fail"},
		{"regressions", "1"}, {"improvements", "0"}, {"ties", "2"}, {"inconclusive", "3"}, {"unresolved", "0"},
		{"disagreements", "0"}, {"comment-url", fmt.Sprintf("https://github.com/octo/bench/pull/7#issuecomment-%d", cs[0].ID)},
	}
	if got := readOutputs(t, e); !reflect.DeepEqual(got, want) {
		t.Errorf("outputs\n got %q\nwant %q", got, want)
	}
	wantOut := "::error title=benchgate%3A p99 regression,file=bench/s.yml::search c=8: p99 +40%25\n" +
		"::error title=benchgate%3A agreement,file=bench/s.yml::class v2/list answers differently: body.items differ\n" +
		"::error title=benchgate%3A pre-flight,file=bench/s.yml::pre-flight GET / fails\n"
	if out.String() != wantOut || log.Len() != 0 {
		t.Errorf("annotations:\n%s\nlog:\n%s", out.String(), log.String())
	}
	if b, err := os.ReadFile(e.SummaryFile); err != nil || !bytes.Contains(b, []byte("api")) {
		t.Errorf("summary %q, %v", b, err)
	}
}

// A run that decided nothing, or did not finish, says verdict error.
func TestPublishGateNoVerdict(t *testing.T) {
	t.Parallel()
	e := actionEnv(t, nil)
	e.Inputs.Comment = "never"
	if err := e.PublishGate(context.Background(), GateRun{ResultsDir: "r"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"report", "r/report.md"}, {"results", "r/results.json"}, {"verdict", "error"}}
	if got := readOutputs(t, e); !reflect.DeepEqual(got, want) {
		t.Errorf("outputs %q, want %q", got, want)
	}

	e = actionEnv(t, nil)
	e.Inputs.Comment = "never"
	rep := failedReport()
	rep.Results.Status = "cancelled"
	var log bytes.Buffer
	if err := e.PublishGate(context.Background(), GateRun{Report: rep, ResultsDir: "r"}, &bytes.Buffer{}, &log); err != nil {
		t.Fatal(err)
	}
	if got := readOutputs(t, e); got[2] != [2]string{"verdict", "error"} || got[len(got)-1] != [2]string{"comment-url", ""} {
		t.Errorf("outputs %q", got)
	}
	if log.Len() != 0 {
		t.Errorf("log %q", log.String())
	}
}

// A comment that cannot be posted is a warning: the outputs are set all the
// same.
func TestPublishGateCommentFails(t *testing.T) {
	t.Parallel()
	e := actionEnv(t, nil)
	e.Token = ""
	var log bytes.Buffer
	if err := e.PublishGate(context.Background(), GateRun{Report: failedReport(), ResultsDir: "r"}, &bytes.Buffer{}, &log); err != nil {
		t.Fatal(err)
	}
	if got := log.String(); got != "::warning::comment: no github-token: no comment\n" {
		t.Errorf("log %q", got)
	}
	if got := readOutputs(t, e); len(got) != 10 {
		t.Errorf("outputs %q", got)
	}
}

func TestAnnotationFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ scenario, workspace, want string }{
		{"", "/w", ""},
		{"bench/s.yml", "", "bench/s.yml"},
		{"./bench/../s.yml", "/w", "s.yml"},
		{"/w/bench/s.yml", "/w/", "bench/s.yml"},
		{"/elsewhere/s.yml", "/w", ""},
		{"/w2/s.yml", "/w", ""},
		{"/w/s.yml", "", ""},
	} {
		if got := annotationFile(tc.scenario, tc.workspace); got != tc.want {
			t.Errorf("annotationFile(%q, %q) = %q, want %q", tc.scenario, tc.workspace, got, tc.want)
		}
	}
}

// Comment modes: on-regression posts nothing for a pass with no comment to
// correct; on-change leaves a comment of the same outcome alone; a run
// whose head is no longer the PR's leaves the comment to the newer run.
func TestPostCommentModes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pass := failedReport()
	pass.Comparison = gate.Comparison{Outcome: gate.Pass}

	gh := fakegithub.New(t, testToken, nil)
	gh.AddPR(7, headSHA)
	e := actionEnv(t, gh)
	e.Inputs.Comment = "on-regression"
	if url, err := e.postComment(ctx, *pass, "", &bytes.Buffer{}); err != nil || url != "" || len(gh.Comments(7)) != 0 {
		t.Errorf("on-regression pass: %q, %v, %d comments", url, err, len(gh.Comments(7)))
	}
	e.Inputs.Comment = "on-change"
	first, err := e.postComment(ctx, *failedReport(), "", &bytes.Buffer{})
	if err != nil || first == "" {
		t.Fatalf("on-change, first: %q, %v", first, err)
	}
	n := len(gh.Calls())
	if url, err := e.postComment(ctx, *failedReport(), "", &bytes.Buffer{}); err != nil || url != first {
		t.Errorf("on-change, same outcome: %q, %v; want %q", url, err, first)
	}
	for _, c := range gh.Calls()[n:] {
		if !strings.HasPrefix(c, "GET ") {
			t.Errorf("on-change, same outcome: %s", c)
		}
	}

	gh.AddPR(7, "0000000000000000000000000000000000000001")
	var log bytes.Buffer
	e.Inputs.Comment = "always"
	if url, err := e.postComment(ctx, *pass, "", &log); err != nil || url != "" {
		t.Errorf("moved head: %q, %v", url, err)
	}
	if want := "::notice::PR #7's head is now 000000000000, this run measured 7d1f3a5c9e2b: the comment is left to the newer run\n"; log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
	// CommentOn posts whatever the input and the head say.
	e.Inputs.Comment = "never"
	url, err := e.CommentOn(ctx, 7, *pass, "shown, not verified", &bytes.Buffer{})
	if cs := gh.Comments(7); err != nil || url != first || len(cs) != 1 || !strings.Contains(cs[0].Body, "shown, not verified") {
		t.Errorf("CommentOn: %q, %v, %+v", url, err, cs)
	}
	if e.PR != 7 || e.HeadSHA != headSHA || e.Inputs.Comment != "never" {
		t.Errorf("CommentOn changed the Env: %+v", e)
	}
}

func TestResultsPR(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gh := fakegithub.New(t, testToken, nil)
	gh.AddPR(7, headSHA)
	gh.AddPR(8, "0000000000000000000000000000000000000008")
	ok := &benchdata.GitHubInfo{Repository: "octo/bench", PR: 7, HeadSHA: headSHA}
	run := func(change func(e *Env), gh0 *benchdata.GitHubInfo, pr int) (int, error) {
		e := actionEnv(t, gh)
		e.EventName, e.PR = "workflow_run", 0
		change(e)
		return e.ResultsPR(ctx, gh0, pr, "r.json")
	}
	if n, err := run(func(*Env) {}, ok, 0); err != nil || n != 7 {
		t.Errorf("workflow_run: %d, %v", n, err)
	}
	if n, err := run(func(e *Env) { e.EventName = "workflow_dispatch" }, ok, 7); err != nil || n != 7 {
		t.Errorf("-pr 7: %d, %v", n, err)
	}
	forged := *ok
	forged.Repository = "octo/bench\n::warning::x"
	for _, tc := range []struct {
		name   string
		change func(e *Env)
		gh     *benchdata.GitHubInfo
		pr     int
		want   string
	}{
		{"no github info", func(*Env) {}, nil, 0, "r.json records no valid repository and head commit: it was not made by benchgate gate in GitHub Actions"},
		{"forged repository", func(*Env) {}, &forged, 0, "r.json records no valid repository and head commit: it was not made by benchgate gate in GitHub Actions"},
		{"no -pr", func(e *Env) { e.EventName = "push" }, ok, 0, "outside a workflow_run event, give the pull request with -pr"},
		{"other PR", func(e *Env) { e.PR = 9 }, ok, 0, "the results are of PR #7, this workflow_run event is of PR #9"},
		{"no PR", func(*Env) {}, &benchdata.GitHubInfo{Repository: "octo/bench", HeadSHA: headSHA}, 0, "r.json records no pull request number: give -pr"},
		{"other repository", func(e *Env) { e.Repository = "octo/other" }, ok, 0, `the results are of "octo/bench", this workflow runs in octo/other`},
		{"other commit", func(e *Env) { e.HeadSHA = "5e7a9c1b3d5f7a9c1b3d5f7a9c1b3d5f7a9c1b3d" }, ok, 0, "the results measured 7d1f3a5c9e2b, but this workflow_run is of 5e7a9c1b3d5f"},
		{"no token", func(e *Env) { e.Token = "" }, ok, 0, "comment: no github-token"},
		{"moved head", func(*Env) {}, ok, 8, "PR #8's head is 000000000000, the results measured 7d1f3a5c9e2b: not posting stale or foreign results"},
	} {
		if _, err := run(tc.change, tc.gh, tc.pr); err == nil || err.Error() != tc.want || !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v; want refused: %s", tc.name, err, tc.want)
		}
	}
	// GitHub's failure is not a refusal.
	if _, err := run(func(*Env) {}, ok, 404); err == nil || !strings.HasPrefix(err.Error(), "reading PR #404: ") || errors.Is(err, ErrRefused) {
		t.Errorf("unknown PR: %v", err)
	}
}

func TestCheckIssue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		event, token string
		issue, pr    int
		want         string
	}{
		{"schedule", "t", 42, 0, ""},
		{"push", "t", 42, 0, ""},
		{"schedule", "t", -1, 0, "-issue -1: want an issue number"},
		{"schedule", "t", 42, 7, "-issue and -pr are exclusive"},
		{"pull_request", "t", 42, 0, "-issue posts a trusted workflow's results (schedule, push, workflow_dispatch), not a pull_request event's"},
		{"workflow_run", "t", 42, 0, "-issue posts a trusted workflow's results (schedule, push, workflow_dispatch), not a workflow_run event's"},
		{"schedule", "", 42, 0, "comment: no github-token"},
	} {
		got := ""
		if err := (&Env{EventName: tc.event, Token: tc.token}).CheckIssue(tc.issue, tc.pr); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s -issue %d -pr %d: %q, want %q", tc.event, tc.issue, tc.pr, got, tc.want)
		}
	}
}
