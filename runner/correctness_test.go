package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
)

// jsonServer answers /item?n=N with a JSON object built by body(n).
func jsonServer(t *testing.T, body func(n int) string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			return
		}
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body(n))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// correctnessScenario loads a scenario with the two url targets and extra
// sections appended. Its one class draws n from 1..1000, so the probe's
// requests differ from each other.
func correctnessScenario(t *testing.T, base, cand string, extra string) *scenario.Scenario {
	t.Helper()
	src := fmt.Sprintf(`version: 1
name: correctness
targets:
  baseline: {url: %q}
  candidate: {url: %q}
load: {concurrency: [1], duration: 50ms, warmup: 0s, repetitions: 2}
classes:
  - name: item
    request: GET /item?n={{int 1 1000}}
%s`, base, cand, extra)
	path := filepath.Join(t.TempDir(), "benchgate.yml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(path, "", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func runCorrectness(t *testing.T, sc *scenario.Scenario) (*benchdata.Results, string) {
	t.Helper()
	out := t.TempDir()
	var progress syncBuffer
	res, err := Run(t.Context(), sc, Options{OutDir: out, Progress: &progress})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, progress.String())
	}
	disk := readResults(t, out)
	if disk.Correctness == nil {
		t.Fatalf("results.json has no correctness findings\n%s", progress.String())
	}
	return res, progress.String()
}

func TestAgreementKeyOrder(t *testing.T) {
	t.Parallel()
	base := jsonServer(t, func(n int) string { return fmt.Sprintf(`{"n":%d,"name":"item %d","tags":["a","b"]}`, n, n) })
	cand := jsonServer(t, func(n int) string { return fmt.Sprintf(`{"tags":["a","b"], "name":"item %d", "n":%d.0}`, n, n) })
	res, progress := runCorrectness(t, correctnessScenario(t, base.URL, cand.URL, "agreement: {requests: 4}\n"))
	a := res.Correctness.Agreement
	if a == nil || len(a.Classes) != 1 {
		t.Fatalf("agreement %+v", a)
	}
	if c := a.Classes[0]; !c.Agree || c.Requests != 4 || c.Format != "json" || c.Mode != "required" || c.First != nil {
		t.Errorf("class %+v", c)
	}
	if !strings.Contains(progress, "agreement item: agree over 4 requests\n") {
		t.Errorf("progress:\n%s", progress)
	}
	if len(res.Rungs) != 4 {
		t.Errorf("%d rungs after the correctness checks, want 4", len(res.Rungs))
	}
}

func TestAgreementOneValueDiffers(t *testing.T) {
	t.Parallel()
	// The probe's requests are the class's stream: find the third one's n,
	// and make the candidate answer that one differently.
	sc := correctnessScenario(t, "http://127.0.0.1:1", "http://127.0.0.1:2", "")
	st := sc.Stream("", "item", 1, 0, 0)
	var third string
	for range 3 {
		third = st.Next().Target
	}
	n3, _ := strconv.Atoi(strings.TrimPrefix(third, "/item?n="))

	var candHits atomic.Int64
	base := jsonServer(t, func(n int) string { return fmt.Sprintf(`{"n":%d,"price":12}`, n) })
	cand := jsonServer(t, func(n int) string {
		candHits.Add(1)
		if n == n3 {
			return fmt.Sprintf(`{"n":%d,"price":13}`, n)
		}
		return fmt.Sprintf(`{"n":%d,"price":12}`, n)
	})
	res, progress := runCorrectness(t, correctnessScenario(t, base.URL, cand.URL, ""))
	c := res.Correctness.Agreement.Classes[0]
	want := benchdata.Disagreement{Index: 2, Method: "GET", Target: third, BaselineStatus: 200, CandidateStatus: 200,
		Reason: "$.price: 12 vs 13", Path: "$.price"}
	got := *c.First
	got.Baseline, got.Candidate = "", ""
	if c.Agree || c.Requests != 3 || got != want {
		t.Fatalf("class %+v, first %+v; want %+v", c, c.First, want)
	}
	if !strings.Contains(c.First.Baseline, "12") || !strings.Contains(c.First.Candidate, "13") {
		t.Errorf("excerpts %q %q", c.First.Baseline, c.First.Candidate)
	}
	if !strings.Contains(progress, "agreement item: DISAGREE at request 3, GET "+third+": $.price: 12 vs 13 (required)") {
		t.Errorf("progress:\n%s", progress)
	}
	// The probe stopped at the difference, and the load still ran.
	if a, _ := res.Correctness.Agreement.Counts(); a != 0 || len(res.Rungs) != 4 || candHits.Load() < 3 {
		t.Errorf("agree %d, %d rungs, %d candidate hits", a, len(res.Rungs), candHits.Load())
	}
}

func TestAgreementIgnoreAndModes(t *testing.T) {
	t.Parallel()
	var clock atomic.Int64
	stamped := func(n int) string {
		return fmt.Sprintf(`{"n":%d,"generated_at":"2026-11-30T00:00:%02dZ"}`, n, clock.Add(1)%60)
	}
	base, cand := jsonServer(t, stamped), jsonServer(t, stamped)

	res, _ := runCorrectness(t, correctnessScenario(t, base.URL, cand.URL, "agreement: {ignore: [\"$.generated_at\"]}\n"))
	if c := res.Correctness.Agreement.Classes[0]; !c.Agree || c.Requests != 5 {
		t.Errorf("with ignore: %+v %+v", c, c.First)
	}
	res, _ = runCorrectness(t, correctnessScenario(t, base.URL, cand.URL, "agreement: warn\n"))
	if c := res.Correctness.Agreement.Classes[0]; c.Agree || c.Mode != "warn" || c.First.Path != "$.generated_at" {
		t.Errorf("without ignore, warn: %+v %+v", c, c.First)
	}
	out := t.TempDir()
	res, err := Run(t.Context(), correctnessScenario(t, base.URL, cand.URL, "agreement: {mode: off}\n"), Options{OutDir: out})
	if err != nil || res.Correctness != nil {
		t.Errorf("mode off: err %v, correctness %+v", err, res.Correctness)
	}
}

func TestPreflight(t *testing.T) {
	t.Parallel()
	base := jsonServer(t, func(n int) string { return `{}` })
	cand := jsonServer(t, func(n int) string { return `{}` })
	extra := `
  - name: other
    request: GET /other
preflight:
  - name: echo-url
    run: ["sh", "-c", "echo checking $BENCHGATE_TARGET; echo $1", "sh", "{url}/x"]
  - name: lint
    run: ["sh", "-c", "echo line one; echo 'bad <thing>' >&2; echo; [ $BENCHGATE_TARGET = baseline ] || exit 3"]
    classes: [other]
  - name: slow
    run: ["sh", "-c", "echo started; sleep 31.25 & sleep 31.25"]
    targets: [candidate]
    timeout: 300ms
  - name: background
    run: ["sh", "-c", "sleep 41.5 & echo backgrounded"]
    targets: [baseline]
agreement: off
`
	sc := correctnessScenario(t, base.URL, cand.URL, extra)
	res, progress := runCorrectness(t, sc)
	got := res.Correctness.Preflight
	if len(got) != 6 {
		t.Fatalf("preflight %+v", got)
	}
	type short struct {
		name, target, last, err string
		pass                    bool
		exit                    int
	}
	var have []short
	for _, r := range got {
		have = append(have, short{r.Name, r.Target, r.LastLine, r.Error, r.Pass, r.ExitCode})
	}
	want := []short{
		{"echo-url", "baseline", base.URL + "/x", "", true, 0},
		{"echo-url", "candidate", cand.URL + "/x", "", true, 0},
		{"lint", "baseline", "bad <thing>", "", true, 0},
		{"lint", "candidate", "bad <thing>", "", false, 3},
		{"slow", "candidate", "started", "timed out after 300ms", false, -1},
		// A job left in the background holds the output open: the
		// command passed when it exited, and the job is killed.
		{"background", "baseline", "backgrounded", "", true, 0},
	}
	if !slices.Equal(have, want) {
		t.Errorf("preflight\n got %+v\nwant %+v\n%s", have, want, progress)
	}
	// The whole output is kept in the results directory.
	if got[0].Log == "" {
		t.Errorf("no log: %+v", got[0])
	}
	// The failed lint guards class other: absent, not measured.
	if !slices.Equal(res.Correctness.Absent, []benchdata.AbsentClass{{Class: "other", Reason: "pre-flight lint failed on candidate"}}) {
		t.Errorf("absent %+v", res.Correctness.Absent)
	}
	for _, c := range res.Plan.Cells {
		if c.Class == "other" {
			t.Errorf("plan still has %v", c)
		}
	}
	for _, g := range res.Rungs {
		if g.Class == "other" {
			t.Errorf("rung of an absent class: %v", g.Cell)
		}
	}
	if res.Status != "complete" || res.CompleteRounds() != 2 {
		t.Errorf("status %s, %d complete rounds", res.Status, res.CompleteRounds())
	}
	// The timed-out command's group is gone: no sleep of it is left.
	noneLeft(t, "sleep 31.25")
	noneLeft(t, "sleep 41.5")
}

// TestPreflightCancelled: a run cancelled while a pre-flight command runs
// kills the command's whole group, records the run as cancelled and
// measured nothing.
func TestPreflightCancelled(t *testing.T) {
	t.Parallel()
	base := jsonServer(t, func(n int) string { return `{}` })
	cand := jsonServer(t, func(n int) string { return `{}` })
	started := filepath.Join(t.TempDir(), "started")
	extra := fmt.Sprintf(`preflight:
  - name: hang
    run: ["sh", "-c", "sleep 32.75 & touch %s; sleep 32.75"]
`, started)
	sc := correctnessScenario(t, base.URL, cand.URL, extra)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(started); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	out := t.TempDir()
	res, err := Run(ctx, sc, Options{OutDir: out})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a cancellation", err)
	}
	if res.Status != "cancelled" || len(res.Rungs) != 0 {
		t.Errorf("status %q, %d rungs", res.Status, len(res.Rungs))
	}
	if disk := readResults(t, out); disk.Status != "cancelled" {
		t.Errorf("results.json status %q", disk.Status)
	}
	noneLeft(t, "sleep 32.75")
}

// noneLeft fails when a process whose command line holds pattern is still
// there: killed processes get a moment to be reaped.
func noneLeft(t *testing.T, pattern string) {
	t.Helper()
	var out []byte
	for range 200 {
		if out, _ = exec.Command("pgrep", "-f", pattern).Output(); len(out) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("pre-flight processes left: %s", out)
}

// TestAgreementMix: a mix's requests are compared as their own class
// says, and a mix drawing from an absent class is absent too.
func TestAgreementMix(t *testing.T) {
	t.Parallel()
	var clock atomic.Int64
	stamped := func(n int) string { return fmt.Sprintf(`{"n":%d,"t":%d}`, n, clock.Add(1)) }
	base, cand := jsonServer(t, stamped), jsonServer(t, stamped)
	extra := `    agreement: {ignore: ["$.t"]}
  - name: plain
    request: GET /plain?n=1
  - name: both
    mix: {item: 1}
`
	res, _ := runCorrectness(t, correctnessScenario(t, base.URL, cand.URL, extra))
	got := map[string]bool{}
	for _, c := range res.Correctness.Agreement.Classes {
		got[c.Class] = c.Agree
	}
	if want := map[string]bool{"item": true, "plain": false, "both": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("agree by class %v, want %v", got, want)
	}

	extra += `preflight:
  - name: item-check
    run: ["false"]
    classes: [item]
`
	res, _ = runCorrectness(t, correctnessScenario(t, base.URL, cand.URL, extra))
	want := []benchdata.AbsentClass{
		{Class: "item", Reason: "pre-flight item-check failed on baseline"},
		{Class: "both", Reason: "it draws from item, absent: pre-flight item-check failed on baseline"},
	}
	if !reflect.DeepEqual(res.Correctness.Absent, want) {
		t.Errorf("absent %+v", res.Correctness.Absent)
	}
	for _, c := range res.Plan.Cells {
		if c.Class != "plain" {
			t.Errorf("plan has %v", c)
		}
	}
}

// TestSidesFailed: a probe's reason names the sides that failed, in order,
// each as it was said (the old trim of "; " cut a reason's own last
// semicolon).
func TestSidesFailed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail [2]string
		want string
	}{
		{[2]string{"", ""}, ""},
		{[2]string{"baseline: call failed: x", ""}, "baseline: call failed: x"},
		{[2]string{"", "candidate: request failed: y;"}, "candidate: request failed: y;"},
		{[2]string{"baseline: a", "candidate: b"}, "baseline: a; candidate: b"},
	} {
		if got := sidesFailed(c.fail); got != c.want {
			t.Errorf("sidesFailed(%q) = %q, want %q", c.fail, got, c.want)
		}
	}
}
