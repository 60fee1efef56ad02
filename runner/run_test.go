package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/load/loadtest"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/targettest"
)

func testScenario(base, cand scenario.Target) *scenario.Scenario {
	a := &scenario.Class{Name: "a", Request: &scenario.RequestTemplate{Method: "GET", Path: "/a"}}
	return &scenario.Scenario{
		File: "benchgate.yml", Hash: "0123", Source: "version: 1\n", Profile: "pr", Name: "t", Seed: 424242,
		Baseline: base, Candidate: cand,
		Load: scenario.LoadSettings{
			Concurrency: []int{1, 2}, Duration: 100 * time.Millisecond, Warmup: 20 * time.Millisecond,
			Repetitions: 2, Timeout: 5 * time.Second,
		},
		Data:       map[string][]string{},
		Classes:    []*scenario.Class{a},
		AllClasses: map[string]*scenario.Class{"a": a},
		Variants:   []scenario.Variant{{Name: ""}},
		Gate: gate.Section{Confidence: 0.95, TieWithin: 0.1, MaxErrorRate: 0.001,
			FailOn: []gate.Rule{{Metric: "rps", Classes: []string{"*"}}}},
	}
}

// fixedSource stands in for sc.Stream, which only a scenario that
// scenario.Load returned has: every worker sends GET /CLASS over and over.
func fixedSource(cell benchdata.Cell, round, worker int) Source {
	return &loadtest.Seq{Reqs: []load.Request{loadtest.Get(cell.Class, "/"+cell.Class)}, Loop: true}
}

// syncBuffer is a Progress writer that tests read while Run writes.
type syncBuffer struct {
	mu      sync.Mutex
	b       strings.Builder
	onWrite func(string)
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.b.Write(p)
	s.mu.Unlock()
	if s.onWrite != nil {
		s.onWrite(string(p))
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// pgidsFromLog returns the process groups a target's log shows were
// started (the test server prints its pid, which leads its group).
func pgidsFromLog(t *testing.T, out, name string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, m := range targettest.PIDLine.FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.Atoi(m[1])
		ids = append(ids, n)
	}
	if len(ids) == 0 {
		t.Fatalf("%s.log shows no started process:\n%s", name, b)
	}
	return ids
}

func allGone(t *testing.T, out string, names ...string) {
	t.Helper()
	for _, n := range names {
		for _, id := range pgidsFromLog(t, out, n) {
			targettest.GroupGone(t, id)
		}
	}
}

func readResults(t *testing.T, out string) *benchdata.Results {
	t.Helper()
	r, err := benchdata.Read(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRunComplete(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	sc := testScenario(targettest.ServerSpec("baseline", "-spawn"), targettest.ServerSpec("candidate"))
	var progress syncBuffer
	res, err := Run(t.Context(), sc, Options{OutDir: out, Progress: &progress, ToolVersion: "v0.1.0", source: fixedSource,
		Getenv: func(k string) string { return map[string]string{"BENCHGATE_CANDIDATE_COMMIT": "c0ffee"}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	allGone(t, out, "baseline", "candidate")

	if res.Status != "complete" || res.Error != "" || res.Env.End.IsZero() || res.Tool != "benchgate v0.1.0" {
		t.Errorf("status %q error %q end %v tool %q", res.Status, res.Error, res.Env.End, res.Tool)
	}
	if len(res.Rungs) != 8 || res.CompleteRounds() != 2 {
		t.Fatalf("%d rungs, %d complete rounds; want 8 and 2", len(res.Rungs), res.CompleteRounds())
	}
	// Rounds outside, cells inside, each pair in its drawn order.
	i := 0
	for round := range 2 {
		for ci, cell := range res.Plan.Cells {
			order := Order(sc.Seed, round, ci)
			names := []string{"baseline", "candidate"}
			if order == "BA" {
				slices.Reverse(names)
			}
			for pos, name := range names {
				g := res.Rungs[i]
				if g.Cell != cell || g.Round != round || g.Target != name || g.Position != pos || g.Order != order {
					t.Errorf("rung %d = %v round %d %s pos %d %s; want %v round %d %s pos %d %s",
						i, g.Cell, g.Round, g.Target, g.Position, g.Order, cell, round, name, pos, order)
				}
				if g.Requests == 0 || g.ErrorCount() != 0 || g.Value(gate.RPS) <= 0 || g.Histogram == "" || g.Duration != 0.1 || g.Start.IsZero() {
					t.Errorf("rung %d not measured: %+v", i, g)
				}
				i++
			}
		}
	}

	disk := readResults(t, out)
	if disk.Status != "complete" || len(disk.Rungs) != 8 {
		t.Errorf("results.json: status %q, %d rungs", disk.Status, len(disk.Rungs))
	}

	e := res.Env
	if e.Baseline.Kind != "command" || e.Baseline.URL == "" || e.Candidate.Commit != "c0ffee" ||
		e.CPUs != runtime.NumCPU() || e.OS != runtime.GOOS || e.Arch != runtime.GOARCH ||
		e.GoVersion != runtime.Version() || e.Kernel == "" || e.ToolVersion != "v0.1.0" ||
		len(e.Pins) != 0 {
		t.Errorf("environment %+v", e)
	}
	s := res.Scenario
	if s.Name != "t" || s.Seed != 424242 || s.Profile != "pr" || s.Hash != "0123" || s.Source != "version: 1\n" ||
		s.Gate.TieWithin != 0.1 || len(s.Gate.FailOn) != 1 || s.Gate.FailOn[0].Metric != "rps" ||
		s.Load.Duration != 0.1 || s.Load.Warmup != 0.02 || s.Load.Repetitions != 2 || !slices.Equal(s.Load.Concurrency, []int{1, 2}) {
		t.Errorf("scenario info %+v", s)
	}

	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	if len(lines) != 9 || lines[0] != "plan: 2 cells × 2 rounds × 2 targets × 125ms = 1.001s" {
		t.Fatalf("progress:\n%s", progress.String())
	}
	rungLine := regexp.MustCompile(`^\[round [12]/2\] a c=[12] (baseline|candidate): \d+\.\d rps, p95 [0-9.]+(µs|ms|s), 0 errors \(rung \d/8\)$`)
	for _, l := range lines[1:] {
		if !rungLine.MatchString(l) {
			t.Errorf("progress line %q", l)
		}
	}
	if !strings.HasSuffix(lines[8], "(rung 8/8)") {
		t.Errorf("last line %q", lines[8])
	}
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	progress := &syncBuffer{onWrite: func(s string) {
		if strings.Contains(s, "(rung 3/") {
			cancel() // as SIGINT would, right after the third rung was written
		}
	}}
	sc := testScenario(targettest.ServerSpec("baseline"), targettest.ServerSpec("candidate"))
	res, err := Run(ctx, sc, Options{OutDir: out, Progress: progress, source: fixedSource})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want one wrapping context.Canceled", err)
	}
	allGone(t, out, "baseline", "candidate")
	if res.Status != "cancelled" || len(res.Rungs) != 3 || res.CompleteRounds() != 0 {
		t.Errorf("status %q, %d rungs", res.Status, len(res.Rungs))
	}
	if disk := readResults(t, out); disk.Status != "cancelled" || len(disk.Rungs) != 3 {
		t.Errorf("results.json: status %q, %d rungs", disk.Status, len(disk.Rungs))
	}
}

// Cancelling while a rung is under load drops that rung and stops at once.
func TestRunCancelledMidRung(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sc := testScenario(targettest.ServerSpec("baseline"), targettest.ServerSpec("candidate"))
	sc.Load.Duration = time.Hour
	var once sync.Once
	source := func(cell benchdata.Cell, round, worker int) Source {
		once.Do(func() { time.AfterFunc(50*time.Millisecond, cancel) })
		return fixedSource(cell, round, worker)
	}
	res, err := Run(ctx, sc, Options{OutDir: out, source: source})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want one wrapping context.Canceled", err)
	}
	allGone(t, out, "baseline", "candidate")
	if res.Status != "cancelled" || len(res.Rungs) != 0 {
		t.Errorf("status %q, %d rungs", res.Status, len(res.Rungs))
	}
}

func TestRunTargetDies(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	sc := testScenario(targettest.ServerSpec("baseline"), targettest.ServerSpec("candidate", "-exit-after", "30"))
	sc.Load.Repetitions = 5
	res, err := Run(t.Context(), sc, Options{OutDir: out, source: fixedSource})
	te := targettest.AsTargetError(t, err, target.PhaseDied)
	allGone(t, out, "baseline", "candidate")
	if te.Target != "candidate" || !slices.Contains(te.Output, "exiting after 30 requests") {
		t.Errorf("error %v", err)
	}
	if res.Status != "failed" || !strings.Contains(res.Error, "exiting after 30 requests") {
		t.Errorf("status %q error %q", res.Status, res.Error)
	}
	// The rung in which the candidate died is not kept. Rungs it finished
	// before (on a loaded machine a rung may send fewer than 30 requests)
	// are, and they hold fewer than the 30 it died at.
	var answered int64
	for _, g := range res.Rungs {
		if g.Target == "candidate" {
			answered += g.Requests
		}
	}
	if answered >= 30 {
		t.Errorf("the candidate's kept rungs hold %d requests: the rung it died in (at 30) was kept", answered)
	}
	if disk := readResults(t, out); disk.Status != "failed" || len(disk.Rungs) != len(res.Rungs) || disk.Error != res.Error {
		t.Errorf("results.json: status %q, %d rungs", disk.Status, len(disk.Rungs))
	}
}

// A target that fails to start fails the run, with the other target
// stopped and the failure on disk. The candidate exits before it listens:
// the run ends by that failure, not by a start-up timeout a loaded
// machine could outlast (ServerSpec's is 20 s).
func TestRunStartFailure(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	cand := targettest.ServerSpec("candidate", "-exit-now")
	res, err := Run(t.Context(), testScenario(targettest.ServerSpec("baseline"), cand), Options{OutDir: out, source: fixedSource})
	te := targettest.AsTargetError(t, err, target.PhaseStart)
	// The candidate exited before it printed its pid; the baseline had
	// started, and was stopped.
	allGone(t, out, "baseline")
	if te.Target != "candidate" || res.Status != "failed" || len(res.Rungs) != 0 || res.Env.Candidate.Kind != "command" {
		t.Errorf("error %v, results %+v", err, res)
	}
	if disk := readResults(t, out); disk.Status != "failed" || !strings.Contains(disk.Error, "exited before it was healthy") || !strings.Contains(disk.Error, "fatal: cannot start") {
		t.Errorf("results.json: status %q error %q", disk.Status, disk.Error)
	}
}

func TestRunBudgetStartsNothing(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	marker := filepath.Join(t.TempDir(), "built")
	base := targettest.ServerSpec("baseline")
	base.Build = []string{"touch", marker}
	sc := testScenario(base, targettest.ServerSpec("candidate"))
	var progress syncBuffer
	res, err := Run(t.Context(), sc, Options{OutDir: out, Budget: 900 * time.Millisecond, Progress: &progress, source: fixedSource})
	var be *BudgetError
	if !errors.As(err, &be) || res != nil {
		t.Fatalf("error %v, results %v; want a *BudgetError and no results", err, res)
	}
	// 8 rungs of 120ms and rungCost's 5ms, 1ms of rewriting results.json.
	if be.Estimate != 1001*time.Millisecond || be.Budget != 900*time.Millisecond {
		t.Errorf("budget error %+v", be)
	}
	if want := "planned time 1.001s (2 cells × 2 rounds × 2 targets) exceeds the budget of 900ms"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the build ran: %v", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 || progress.String() != "" {
		t.Errorf("output written: %v, progress %q", entries, progress.String())
	}
}

// A missing image is refused at build time, with what to do about it, and
// the run is recorded as failed. Images are never pulled.
func TestRunMissingImage(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	sc := testScenario(targettest.ServerSpec("baseline"),
		scenario.Target{Name: "candidate", Image: "benchgate-test/no-such-image:missing", Shown: "benchgate-test/no-such-image:${TAG}", Port: 8080})
	var progress syncBuffer
	res, err := Run(t.Context(), sc, Options{OutDir: out, Progress: &progress, source: fixedSource})
	if err != nil && strings.Contains(err.Error(), "no engine answers") {
		t.Skipf("docker: %v", err)
	}
	targettest.AsTargetError(t, err, target.PhaseBuild)
	if !strings.Contains(err.Error(), "not found locally") || res.Status != "failed" {
		t.Errorf("error %v, status %q", err, res.Status)
	}
	if res.Env.Candidate.Kind != "image" || res.Env.Candidate.Spec != "benchgate-test/no-such-image:${TAG}" {
		t.Errorf("candidate %+v", res.Env.Candidate)
	}
}

// Each pin set restarts both targets and runs all its rounds before the
// next; the pins that took effect are recorded per pin set, and every rung
// carries its target's resources.
func TestRunPinSets(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	sc := testScenario(targettest.ServerSpec("baseline"), targettest.ServerSpec("candidate"))
	sc.PinSets = []scenario.Pins{{Name: "one", CPUs: "0"}, {Name: "unpinned-mem", Memory: 256 << 20, MemoryText: "256MiB"}}
	sc.Load.Concurrency = []int{1}
	res, err := Run(t.Context(), sc, Options{OutDir: out, source: fixedSource})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Plan.PinSets; !slices.Equal(got, []string{"one", "unpinned-mem"}) {
		t.Errorf("plan pin sets %v", got)
	}
	var order []string
	for _, r := range res.Rungs {
		order = append(order, r.Pins)
		if r.ResourceSource == "" || r.CPUSeconds < 0 || r.MemPeak <= 0 || r.MemMean <= 0 || r.MemMean > r.MemPeak {
			t.Errorf("rung %s %s: resources %q cpu %v mem mean %d peak %d", r.Cell, r.Target, r.ResourceSource, r.CPUSeconds, r.MemMean, r.MemPeak)
		}
	}
	// Pin sets are outermost: all of "one", then all of "unpinned-mem".
	want := []string{"one", "one", "one", "one", "unpinned-mem", "unpinned-mem", "unpinned-mem", "unpinned-mem"}
	if !slices.Equal(order, want) {
		t.Errorf("rung pin sets %v, want %v", order, want)
	}
	one := res.Env.Pins[0]
	if !slices.Contains(one.Applied, "baseline: cpuset 0 (affinity)") || !slices.Contains(one.Applied, "candidate: cpuset 0 (affinity)") {
		t.Errorf("pin set one: applied %v, not applied %v", one.Applied, one.NotApplied)
	}
	// Memory is applied or said not to be, on each side: never silent.
	mem := res.Env.Pins[1]
	if len(mem.Applied)+len(mem.NotApplied) != 2 {
		t.Errorf("pin set unpinned-mem: applied %v, not applied %v", mem.Applied, mem.NotApplied)
	}
	if got := res.CompleteRoundsOf("one"); got != 2 {
		t.Errorf("complete rounds of pin set one: %d", got)
	}
}

// loadScenario reads text through scenario.Load. A panic is a failure,
// never a skip.
func loadScenario(t *testing.T, text string) *scenario.Scenario {
	t.Helper()
	path := filepath.Join(t.TempDir(), "benchgate.yml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(path, "", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// End to end with the real request streams, against a real child process
// and an already-running target.
func TestRunWithScenarioStreams(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string][]string{} // "round worker" -> request URIs, candidate side
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = append(seen[r.URL.Path], r.URL.RawQuery)
		mu.Unlock()
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	sc := loadScenario(t, fmt.Sprintf(`version: 1
name: e2e
seed: 424242
targets:
  baseline:
    command: [%q, "-addr", "127.0.0.1:{port}"]
    health: /healthz
  candidate:
    url: %s
    health: /up
load:
  concurrency: [1, 2]
  duration: 100ms
  warmup: 20ms
  repetitions: 2
  timeout: 5s
  defaults:
    query: {MAXREC: "10"}
data:
  term: [alpha, beta, gamma]
classes:
  - name: Q01
    request: GET /items?limit=10
  - name: Q02
    request: {method: GET, path: "/search?q={{pick \"term\"}}"}
gate:
  confidence: 0.95
  tie_within: 0.10
  fail_on:
    - {metric: rps}
`, targettest.Server(), srv.URL))
	out := t.TempDir()
	res, err := Run(t.Context(), sc, Options{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	allGone(t, out, "baseline")
	if res.Status != "complete" || len(res.Rungs) != 16 {
		t.Fatalf("status %q, %d rungs", res.Status, len(res.Rungs))
	}
	for _, g := range res.Rungs {
		if g.Requests == 0 || g.ErrorCount() != 0 || g.Statuses["200"] != g.Requests {
			t.Errorf("rung %+v", g)
		}
	}
	if res.Env.Candidate.Kind != "url" || res.Env.Baseline.Kind != "command" || res.Scenario.Hash != sc.Hash {
		t.Errorf("environment %+v", res.Env)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen["/items"]) == 0 || len(seen["/search"]) == 0 || !strings.Contains(seen["/items"][0], "MAXREC=10") {
		t.Errorf("candidate saw %v", seen)
	}
}

func TestPlanOf(t *testing.T) {
	t.Parallel()
	sc := testScenario(scenario.Target{}, scenario.Target{})
	sc.Variants = []scenario.Variant{{Name: "csv"}, {Name: "votable"}}
	sc.Classes = []*scenario.Class{{Name: "Q01"}, {Name: "mix"}}
	sc.Load.Concurrency = []int{1, 8}
	sc.Load.Repetitions = 3
	sc.Load.Warmup, sc.Load.Duration = time.Second, 5*time.Second
	p := PlanOf(sc)
	var got []string
	for _, c := range p.Cells {
		got = append(got, c.String())
	}
	want := []string{"csv/Q01 c=1", "csv/Q01 c=8", "csv/mix c=1", "csv/mix c=8",
		"votable/Q01 c=1", "votable/Q01 c=8", "votable/mix c=1", "votable/mix c=8"}
	// 48 rungs of 6s and rungCost's 5ms, 23ms of rewriting results.json
	// (1176 rungs written at 1 KiB each, 50 MiB/s).
	if !slices.Equal(got, want) || p.Rounds != 3 || p.Estimate != 288.263 {
		t.Errorf("plan %v rounds %d estimate %v; want %v, 3, 288.263", got, p.Rounds, p.Estimate, want)
	}

	// Pin sets are the outermost dimension.
	sc.PinSets = []scenario.Pins{{Name: "1cpu"}, {Name: "2cpu"}}
	sc.Variants = sc.Variants[:1]
	sc.Classes = sc.Classes[:1]
	p = PlanOf(sc)
	got = got[:0]
	for _, c := range p.Cells {
		got = append(got, c.String())
	}
	want = []string{"[1cpu] csv/Q01 c=1", "[1cpu] csv/Q01 c=8", "[2cpu] csv/Q01 c=1", "[2cpu] csv/Q01 c=8"}
	if !slices.Equal(got, want) || !slices.Equal(p.PinSets, []string{"1cpu", "2cpu"}) || p.Estimate != 144.126 {
		t.Errorf("plan %v pin sets %v estimate %v; want %v", got, p.PinSets, p.Estimate, want)
	}
}

func TestOrder(t *testing.T) {
	t.Parallel()
	var got []string
	for cell := range 8 {
		got = append(got, Order(424242, 0, cell))
	}
	// Pinned: a change here reorders every existing scenario's schedule.
	want := []string{"AB", "AB", "BA", "AB", "BA", "AB", "AB", "BA"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("first-round orders %v, want %v", got, want)
	}
	// Later rounds alternate, so every cell goes first and second equally
	// often over an even number of rounds.
	for _, seed := range []uint64{424242, 7} {
		for cell := range 20 {
			for round := 1; round < 6; round++ {
				if Order(seed, round, cell) == Order(seed, round-1, cell) {
					t.Errorf("seed %d cell %d: rounds %d and %d both %s", seed, cell, round-1, round, Order(seed, round, cell))
				}
			}
		}
	}
	// The first round's orders are drawn: balanced over cells, and not
	// the same for every seed.
	n := map[string]int{}
	differ := false
	for cell := range 1000 {
		n[Order(7, 0, cell)]++
		differ = differ || Order(7, 0, cell) != Order(8, 0, cell)
	}
	if n["AB"] < 400 || n["BA"] < 400 || !differ {
		t.Errorf("first-round orders not drawn: %v, seeds differ %v", n, differ)
	}
}

// errSource is a request stream whose template failed at run time.
type errSource struct {
	loadtest.Seq
	err error
}

func (s *errSource) Err() error { return s.err }

func urlTarget(t *testing.T, name string) scenario.Target {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	return scenario.Target{Name: name, URL: srv.URL, Health: "/", StartupTimeout: 5 * time.Second}
}

// A stream that reports a failed template ends the run as failed, naming
// the class and the template's error, without keeping the rung.
func TestRunStreamError(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	sc := testScenario(urlTarget(t, "baseline"), urlTarget(t, "candidate"))
	tmplErr := errors.New(`template: body:1:2: executing "body" at <pick "x">: no data "x"`)
	source := func(cell benchdata.Cell, round, worker int) Source {
		src := &errSource{Seq: loadtest.Seq{Reqs: []load.Request{loadtest.Get("a", "/a")}, Loop: true}}
		if cell.Concurrency == 2 && worker == 1 {
			src.err = tmplErr
		}
		return src
	}
	res, err := Run(t.Context(), sc, Options{OutDir: out, source: source})
	if !errors.Is(err, tmplErr) || isTargetError(err) || !strings.Contains(err.Error(), `class "a"`) {
		t.Fatalf("error %v (%T), want one naming the class and wrapping the template's error, no *TargetError", err, err)
	}
	// Cell c=1 was measured on both sides; the first c=2 rung is dropped.
	if res.Status != "failed" || res.Error != err.Error() || len(res.Rungs) != 2 {
		t.Errorf("status %q error %q, %d rungs", res.Status, res.Error, len(res.Rungs))
	}
	if disk := readResults(t, out); disk.Status != "failed" || disk.Error != res.Error || len(disk.Rungs) != 2 {
		t.Errorf("results.json: status %q, %d rungs", disk.Status, len(disk.Rungs))
	}
}

// The outcome of a cancelled run is on disk before the targets are
// stopped, which can take the whole grace period; End is updated after.
func TestRunWritesOutcomeBeforeStopping(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	progress := &syncBuffer{onWrite: func(s string) {
		if strings.Contains(s, "(rung 1/") {
			cancel()
		}
	}}
	var before *benchdata.Results
	var running []error
	hook := func() {
		before = readResults(t, out)
		for _, n := range []string{"baseline", "candidate"} {
			for _, id := range pgidsFromLog(t, out, n) {
				running = append(running, syscall.Kill(-id, 0))
			}
		}
	}
	sc := testScenario(targettest.ServerSpec("baseline"), targettest.ServerSpec("candidate"))
	res, err := Run(ctx, sc, Options{OutDir: out, Progress: progress, source: fixedSource, beforeStop: hook})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want one wrapping context.Canceled", err)
	}
	allGone(t, out, "baseline", "candidate")
	if before == nil {
		t.Fatal("the hook before stopping did not run")
	}
	if before.Status != "cancelled" || before.Error == "" || before.Env.End.IsZero() || len(before.Rungs) != 1 {
		t.Errorf("on disk before stopping: status %q error %q end %v, %d rungs", before.Status, before.Error, before.Env.End, len(before.Rungs))
	}
	if len(running) != 2 || running[0] != nil || running[1] != nil {
		t.Errorf("targets not running when the outcome was written: %v", running)
	}
	disk := readResults(t, out)
	if disk.Status != "cancelled" || disk.Env.End.Before(before.Env.End) || !disk.Env.End.Equal(res.Env.End) {
		t.Errorf("after stopping: status %q end %v (before stopping %v, returned %v)", disk.Status, disk.Env.End, before.Env.End, res.Env.End)
	}
}

// TestRunAsymmetricPins pins a command target against a url target, which
// no pin reaches: the pin set says the two sides ran under different
// limits, not only what each side got.
func TestRunAsymmetricPins(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	sc := testScenario(targettest.ServerSpec("baseline"), scenario.Target{Name: "candidate", URL: srv.URL, Health: "/"})
	sc.PinSets = []scenario.Pins{{Name: "one", CPUs: "0"}}
	sc.Load.Concurrency = []int{1}
	sc.Load.Repetitions = 1
	res, err := Run(t.Context(), sc, Options{OutDir: t.TempDir(), source: fixedSource})
	if err != nil {
		t.Fatal(err)
	}
	ps := res.Env.Pins[0]
	if !slices.Contains(ps.Applied, "baseline: cpuset 0 (affinity)") {
		t.Skipf("cpuset 0 not applied to the command target here: %q", ps.NotApplied)
	}
	const want = "baseline and candidate ran under different limits: cpuset applied to baseline only"
	if !slices.Contains(ps.NotApplied, want) {
		t.Errorf("not applied %q; want %q among them", ps.NotApplied, want)
	}
}

func TestDifferentLimits(t *testing.T) {
	t.Parallel()
	p := &scenario.Pins{CPUs: "0", Memory: 1 << 30, MemoryText: "1GiB"}
	got := differentLimits(p, "baseline", []string{"cpuset 0 (docker)", "memory 1GiB, no swap (docker)"},
		"candidate", []string{"cpuset 0 (affinity)"})
	want := []string{"baseline and candidate ran under different limits: memory applied to baseline only"}
	if !slices.Equal(got, want) {
		t.Errorf("differentLimits = %q, want %q", got, want)
	}
	// The same limits by different means are the same limits.
	if got := differentLimits(p, "baseline", []string{"memory 1GiB (cgroup v1)"}, "candidate", []string{"memory 1GiB, no swap (docker)"}); len(got) != 0 {
		t.Errorf("same limits: %q", got)
	}
	if got := differentLimits(p, "baseline", nil, "candidate", []string{"memory 1GiB (cgroup v2)"}); len(got) != 1 || !strings.HasSuffix(got[0], "memory applied to candidate only") {
		t.Errorf("memory on the candidate only: %q", got)
	}
}

// TestRunShard: a shard runs the cells dealt to it, each pair in the
// order it has in the whole grid, and records the split.
func TestRunShard(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	sc := testScenario(targettest.ServerSpec("baseline"), targettest.ServerSpec("candidate"))
	res, err := Run(t.Context(), sc, Options{OutDir: out, source: fixedSource, Shard: Shard{Index: 2, Count: 2}})
	if err != nil {
		t.Fatal(err)
	}
	grid := PlanOf(sc).Cells
	if res.Shard == nil || res.Shard.Index != 2 || res.Shard.Count != 2 || !slices.Equal(res.Shard.Grid, grid) {
		t.Fatalf("shard %+v", res.Shard)
	}
	if !slices.Equal(res.Plan.Cells, grid[1:2]) || len(res.Rungs) != 4 {
		t.Fatalf("plan %v, %d rungs", res.Plan.Cells, len(res.Rungs))
	}
	for _, r := range res.Rungs {
		if want := Order(sc.Seed, r.Round, 1); r.Order != want {
			t.Errorf("round %d: order %s, want %s (the cell's index in the whole grid)", r.Round, r.Order, want)
		}
	}
	if _, err := Run(t.Context(), sc, Options{OutDir: out, source: fixedSource, Shard: Shard{Index: 3, Count: 2}}); err == nil {
		t.Error("shard 3/2 ran")
	}
}

// TestRunOpenLoop: load.rate is a dimension of the grid, and each rung
// records its schedule: how many requests were due in the window, and
// how many of them went out late or never.
func TestRunOpenLoop(t *testing.T) {
	t.Parallel()
	for _, interleave := range []string{scenario.InterleaveRound, scenario.InterleaveSlice} {
		t.Run(interleave, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			sc := testScenario(targettest.ServerSpec("baseline"), targettest.ServerSpec("candidate"))
			sc.Load.Concurrency = []int{4}
			sc.Load.Rate = []int{50, 100}
			sc.Load.Duration = 200 * time.Millisecond
			sc.Load.Interleave, sc.Load.Slice, sc.Load.Settle = interleave, 50*time.Millisecond, 10*time.Millisecond
			want := []benchdata.Cell{{Class: "a", Concurrency: 4, Rate: 50}, {Class: "a", Concurrency: 4, Rate: 100}}
			// The scenario's slices, which the warm-up would lengthen
			// past the duration (20 calls at 50/s take 400 ms) and so turn
			// into round interleaving.
			cut := map[benchdata.Cell]Slicing{}
			for _, c := range want {
				cut[c] = Slicing{Slice: sc.Load.Slice, Settle: sc.Load.Settle, Pairs: sc.Load.SlicePairs()}
			}
			res, err := Run(t.Context(), sc, Options{OutDir: out, source: fixedSource, slicing: cut})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Plan.Cells, want) {
				t.Fatalf("cells %v, want %v", res.Plan.Cells, want)
			}
			if len(res.Rungs) != 8 {
				t.Fatalf("%d rungs, want 8", len(res.Rungs))
			}
			for _, g := range res.Rungs {
				// 200 ms at 50/s is 10 requests, at 100/s 20; in four
				// slices of 50 ms, each may hold one more or one less.
				asked, slack := int64(g.Rate/5), int64(0)
				if interleave == scenario.InterleaveSlice {
					slack = 4
				}
				if g.Asked < asked-slack || g.Asked > asked+slack || g.Requests+g.InFlight+g.Unsent != g.Asked || g.Late > g.Asked ||
					(interleave == scenario.InterleaveSlice) != (len(g.Slices) == 4) {
					t.Errorf("%s %s round %d: asked %d, answered or failed %d, in flight %d, unsent %d, late %d, %d slices",
						g.Cell, g.Target, g.Round, g.Asked, g.Requests, g.InFlight, g.Unsent, g.Late, len(g.Slices))
				}
			}
			if got := res.Rungs[0].Cell.String(); got != "a c=4 50/s" {
				t.Errorf("cell name %q", got)
			}
		})
	}
}

// An open loop's warm-up call still in flight when the warm-up ends is
// none of the rung's: each rung's answered, failed, in flight and unsent
// calls add up to the calls its window (its slices) asked for. Each
// target holds its first request, the warm-up's first, until the client
// goes: at the window's end in a round, after the warm-up's drain in a
// sliced round, so after the warm-up whatever the machine's speed.
func TestRunOpenLoopWarmupInFlight(t *testing.T) {
	t.Parallel()
	for _, interleave := range []string{scenario.InterleaveRound, scenario.InterleaveSlice} {
		t.Run(interleave, func(t *testing.T) {
			t.Parallel()
			holdFirst := func(name string) scenario.Target {
				var n atomic.Int64
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/healthz" && n.Add(1) == 1 {
						<-r.Context().Done()
					}
				}))
				t.Cleanup(srv.Close)
				return scenario.Target{Name: name, URL: srv.URL, Health: "/healthz", StartupTimeout: 5 * time.Second}
			}
			sc := testScenario(holdFirst("baseline"), holdFirst("candidate"))
			sc.Load.Concurrency, sc.Load.Rate, sc.Load.Repetitions = []int{4}, []int{400}, 1
			sc.Load.Warmup, sc.Load.Duration = 50*time.Millisecond, 250*time.Millisecond
			sc.Load.Interleave, sc.Load.Slice, sc.Load.Settle = interleave, 50*time.Millisecond, 10*time.Millisecond
			// The scenario's slices, which a loaded machine's slower
			// answers in the warm-up would otherwise lengthen, or turn
			// into round interleaving.
			cell := benchdata.Cell{Class: "a", Concurrency: 4, Rate: 400}
			cut := map[benchdata.Cell]Slicing{cell: {Slice: sc.Load.Slice, Settle: sc.Load.Settle, Pairs: sc.Load.SlicePairs()}}
			res, err := Run(t.Context(), sc, Options{OutDir: t.TempDir(), source: fixedSource, slicing: cut})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rungs) != 2 {
				t.Fatalf("%d rungs, want 2", len(res.Rungs))
			}
			for _, g := range res.Rungs {
				if g.Requests+g.InFlight+g.Unsent != g.Asked || g.Asked == 0 || (interleave == scenario.InterleaveSlice) != (len(g.Slices) > 0) {
					t.Errorf("%s: asked %d, answered or failed %d, in flight %d, unsent %d, %d slices: they must add up",
						g.Target, g.Asked, g.Requests, g.InFlight, g.Unsent, len(g.Slices))
				}
			}
		})
	}
}

// hangTarget is a url target healthy at /healthz that holds every other
// request until the client goes.
func hangTarget(t *testing.T, name string) scenario.Target {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			<-r.Context().Done()
		}
	}))
	t.Cleanup(srv.Close)
	return scenario.Target{Name: name, URL: srv.URL, Health: "/healthz", StartupTimeout: 5 * time.Second}
}

// The budget bounds every phase, not only the plan: with targets that
// never answer and a request timeout of an hour, the run ends when its
// budget runs out, saying in which phase, with what it measured kept and
// its status cancelled. The phase is where the run cannot get past,
// whatever the machine's speed.
func TestRunBudgetRunsOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(sc *scenario.Scenario)
		phase string // what the error names
	}{
		// The probe's first request never ends: an hour's timeout.
		{"agreement", func(sc *scenario.Scenario) {
			sc.Classes[0].Agreement = scenario.Agreement{Mode: scenario.AgreementRequired, Requests: 5}
		}, "the agreement probe"},
		// A pre-flight command that sleeps for its hour's timeout.
		{"preflight", func(sc *scenario.Scenario) {
			sc.Preflight = []scenario.Preflight{{Name: "wait", Run: []string{"sleep", "3600"}, Shown: "sleep 3600",
				Targets: []string{"baseline", "candidate"}, Timeout: time.Hour}}
		}, "the pre-flight wait on the baseline"},
		// Without correctness checks the rounds run: every slice of a side that does
		// not answer drains for a second, which no plan counts, so the
		// first round's 8 slices outlast the budget.
		{"rounds", func(sc *scenario.Scenario) {
			sc.Load.Interleave, sc.Load.Slice, sc.Load.Settle = scenario.InterleaveSlice, 50*time.Millisecond, 10*time.Millisecond
			sc.Load.Duration = 200 * time.Millisecond
		}, "round 1, cell a c=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			sc := testScenario(hangTarget(t, "baseline"), hangTarget(t, "candidate"))
			sc.Load.Concurrency, sc.Load.Warmup, sc.Load.Duration, sc.Load.Timeout = []int{1}, 0, 50*time.Millisecond, time.Hour
			tc.setup(sc)
			var progress syncBuffer
			res, err := Run(t.Context(), sc, Options{OutDir: out, Budget: 5 * time.Second, Progress: &progress, source: fixedSource})
			var bo *BudgetOutError
			if !errors.As(err, &bo) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("error %v (%T), want a *BudgetOutError", err, err)
			}
			if want := "the budget of 5s ran out during " + tc.phase; !strings.HasPrefix(err.Error(), want) || bo.Rungs != len(res.Rungs) {
				t.Errorf("error %q, want it to begin %q and count %d rungs", err, want, len(res.Rungs))
			}
			if disk := readResults(t, out); disk.Status != "cancelled" || disk.Error != err.Error() || len(disk.Rungs) != len(res.Rungs) {
				t.Errorf("results.json: status %q, error %q, %d rungs", disk.Status, disk.Error, len(disk.Rungs))
			}
			if !strings.Contains(progress.String(), "; the budget of 5s bounds the whole run, builds, start-up, correctness checks and rounds\n") {
				t.Errorf("the plan line does not say what the budget bounds:\n%s", progress.String())
			}
		})
	}
}
