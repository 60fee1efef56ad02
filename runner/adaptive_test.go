package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
)

// adaptiveScenario has three cells (c=1, 2, 3), two rounds at least and
// five at most, against two url targets.
func adaptiveScenario(t *testing.T) *scenario.Scenario {
	sc := testScenario(urlTarget(t, "baseline"), urlTarget(t, "candidate"))
	sc.Load.Concurrency = []int{1, 2, 3}
	sc.Load.Warmup, sc.Load.Duration = 0, 20*time.Millisecond
	sc.Load.Repetitions, sc.Load.MaxRepetitions = 2, 5
	return sc
}

// script is a fake Options.Open: at look i it calls cells open[i] (by
// index in the plan) open, and records what it was shown.
type script struct {
	open  [][]int
	looks int
	rungs []int // len(res.Rungs) at each look
	err   error
}

func (s *script) Open(res *benchdata.Results) ([]benchdata.Cell, error) {
	s.rungs = append(s.rungs, len(res.Rungs))
	i := s.looks
	s.looks++
	if s.err != nil {
		return nil, s.err
	}
	var cells []benchdata.Cell
	if i < len(s.open) {
		for _, c := range s.open[i] {
			cells = append(cells, res.Plan.Cells[c])
		}
	}
	return cells, nil
}

// roundsOf lists, per round, the plan indexes of the cells that have both
// rungs in it, checking each pair's order.
func roundsOf(t *testing.T, sc *scenario.Scenario, res *benchdata.Results) [][]int {
	t.Helper()
	idx := map[benchdata.Cell]int{}
	for i, c := range res.Plan.Cells {
		idx[c] = i
	}
	var out [][]int
	for i := 0; i < len(res.Rungs); i += 2 {
		a, b := res.Rungs[i], res.Rungs[i+1]
		if a.Cell != b.Cell || a.Round != b.Round || a.Target == b.Target || a.Order != Order(sc.Seed, a.Round, idx[a.Cell]) {
			t.Fatalf("rungs %d and %d are not a pair: %v/%d/%s/%s, %v/%d/%s", i, i+1, a.Cell, a.Round, a.Target, a.Order, b.Cell, b.Round, b.Target)
		}
		for len(out) <= a.Round {
			out = append(out, nil)
		}
		out[a.Round] = append(out[a.Round], idx[a.Cell])
	}
	return out
}

func TestRunAdaptive(t *testing.T) {
	t.Parallel()
	for _, interleave := range []string{scenario.InterleaveRound, scenario.InterleaveSlice} {
		t.Run(interleave, func(t *testing.T) {
			sc := adaptiveScenario(t)
			if interleave == scenario.InterleaveSlice {
				sc.Load.Interleave, sc.Load.Slice, sc.Load.Settle = interleave, 10*time.Millisecond, 2*time.Millisecond
			}
			// Cell 0 settles at the first look and would reopen at the
			// second; cell 2 settles at the second; cell 1 stays open to
			// the maximum.
			open := &script{open: [][]int{{1, 2}, {0, 1}, {0, 1, 2}}}
			var progress syncBuffer
			out := t.TempDir()
			res, err := Run(t.Context(), sc, Options{OutDir: out, Progress: &progress, source: fixedSource, Open: open.Open})
			if err != nil {
				t.Fatal(err)
			}
			want := [][]int{{0, 1, 2}, {0, 1, 2}, {1, 2}, {1}, {1}}
			if got := roundsOf(t, sc, res); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("cells per round %v, want %v", got, want)
			}
			// Looks before rounds 3, 4 and 5, none after the maximum.
			if open.looks != 3 || !slices.Equal(open.rungs, []int{12, 16, 18}) {
				t.Errorf("%d looks, shown %v rungs", open.looks, open.rungs)
			}
			for i, n := range []int{2, 5, 3} {
				if got := res.RoundsOfCell(res.Plan.Cells[i]); got != n {
					t.Errorf("RoundsOfCell(%v) = %d, want %d", res.Plan.Cells[i], got, n)
				}
			}
			if res.Plan.Rounds != 2 || res.Plan.MaxRounds != 5 || res.Scenario.Load.MaxRepetitions != 5 {
				t.Errorf("plan rounds %d max %d, load %+v", res.Plan.Rounds, res.Plan.MaxRounds, res.Scenario.Load)
			}
			if disk := readResults(t, out); disk.Plan.MaxRounds != 5 || len(disk.Rungs) != 20 || disk.Status != "complete" {
				t.Errorf("results.json: max rounds %d, %d rungs, %q", disk.Plan.MaxRounds, len(disk.Rungs), disk.Status)
			}
			lines := strings.Split(progress.String(), "\n")
			// A rung's 5ms of rungCost, 2ms or 3ms of rewriting
			// results.json.
			line := "plan: 3 cells × 2–5 rounds × 2 targets × 25ms = 302ms–755ms"
			if interleave == scenario.InterleaveSlice {
				// 2 slice pairs of 2ms + 10ms.
				line = "plan: 3 cells × 2–5 rounds × 2 targets × 29ms = 351ms–877.5ms"
			}
			planLine := line
			if lines[0] != planLine {
				t.Errorf("plan line %q, want %q", lines[0], planLine)
			}
			var looks []string
			for _, l := range lines {
				if strings.HasPrefix(l, "look ") {
					looks = append(looks, l)
				}
			}
			wantLooks := []string{
				"look after round 2: 2 of 3 cells open: a c=2, a c=3",
				"look after round 3: 1 of 3 cells open: a c=2",
				"look after round 4: 1 of 3 cells open: a c=2",
			}
			if !slices.Equal(looks, wantLooks) {
				t.Errorf("looks %q, want %q", looks, wantLooks)
			}
			if !strings.Contains(progress.String(), "[round 5/2–5] a c=2 candidate: ") || !strings.Contains(progress.String(), "(rung 20/12–30") {
				t.Errorf("progress:\n%s", progress.String())
			}
		})
	}
}

func TestRunAdaptiveStops(t *testing.T) {
	t.Parallel()
	all := [][]int{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}}
	for _, tc := range []struct {
		name   string
		script script
		budget func(sc *scenario.Scenario) time.Duration
		rounds [][]int
		looks  int
		line   string
	}{
		// Every cell open at every look: the maximum ends it.
		{"max", script{open: all}, nil, [][]int{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}}, 3, ""},
		// No cell open at the first look.
		{"settled", script{}, nil, [][]int{{0, 1, 2}, {0, 1, 2}}, 1, "look after round 2: 0 of 3 cells open"},
		// A budget of the minimum: the run's time is at least the
		// plan's, so no further round fits. Not an error. The budget's
		// deadline is off, or the start-up would end the run in its
		// minimum rounds.
		{"budget", script{open: all}, func(sc *scenario.Scenario) time.Duration { return estimate(sc, PlanOf(sc)) },
			[][]int{{0, 1, 2}, {0, 1, 2}}, 1, "budget: round 3 would take 150ms with "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := adaptiveScenario(t)
			opts := Options{OutDir: t.TempDir(), source: fixedSource, Open: tc.script.Open}
			if tc.budget != nil {
				opts.Budget, opts.noDeadline = tc.budget(sc), true
			}
			var progress syncBuffer
			opts.Progress = &progress
			res, err := Run(t.Context(), sc, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := roundsOf(t, sc, res); fmt.Sprint(got) != fmt.Sprint(tc.rounds) || tc.script.looks != tc.looks || res.Status != "complete" {
				t.Errorf("cells per round %v after %d looks, status %q; want %v after %d", got, tc.script.looks, res.Status, tc.rounds, tc.looks)
			}
			for _, c := range res.Plan.Cells {
				if got := res.RoundsOfCell(c); got != len(tc.rounds) {
					t.Errorf("RoundsOfCell(%v) = %d, want %d", c, got, len(tc.rounds))
				}
			}
			if tc.line != "" && !strings.Contains(progress.String(), "\n"+tc.line) {
				t.Errorf("no line %q in\n%s", tc.line, progress.String())
			}
		})
	}
}

// Without Open the design is fixed, whatever max_repetitions says; an
// error of Open fails the run with the complete rounds kept.
func TestRunAdaptiveWithoutOpen(t *testing.T) {
	t.Parallel()
	sc := adaptiveScenario(t)
	var progress syncBuffer
	res, err := Run(t.Context(), sc, Options{OutDir: t.TempDir(), Progress: &progress, source: fixedSource})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rungs) != 12 || res.Plan.MaxRounds != 0 || !strings.HasPrefix(progress.String(), "plan: 3 cells × 2 rounds × 2 targets × 25ms = 302ms\n") {
		t.Errorf("%d rungs, max rounds %d, progress\n%s", len(res.Rungs), res.Plan.MaxRounds, progress.String())
	}

	boom := errors.New("boom")
	s := &script{err: boom}
	res, err = Run(t.Context(), sc, Options{OutDir: t.TempDir(), source: fixedSource, Open: s.Open})
	if !errors.Is(err, boom) || res.Status != "failed" || len(res.Rungs) != 12 || res.CompleteRounds() != 2 {
		t.Errorf("error %v, status %q, %d rungs", err, res.Status, len(res.Rungs))
	}
}

// Each pin set runs its adaptive rounds before the next pin set starts,
// and the budget keeps the later pin sets' minimum.
func TestRunAdaptivePinSets(t *testing.T) {
	t.Parallel()
	sc := adaptiveScenario(t)
	sc.Load.Concurrency = []int{1}
	sc.PinSets = []scenario.Pins{{Name: "one"}, {Name: "two"}}
	// Cell 0 is pin set one's, cell 1 pin set two's: both open once.
	s := &script{open: [][]int{{0, 1}, {}, {0, 1}, {}}}
	res, err := Run(t.Context(), sc, Options{OutDir: t.TempDir(), source: fixedSource, Open: s.Open})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := 0; i < len(res.Rungs); i += 2 {
		got = append(got, fmt.Sprintf("%s/%d", res.Rungs[i].Pins, res.Rungs[i].Round))
	}
	want := []string{"one/0", "one/1", "one/2", "two/0", "two/1", "two/2"}
	if !slices.Equal(got, want) || s.looks != 4 {
		t.Errorf("rounds %v after %d looks, want %v after 4", got, s.looks, want)
	}
	for _, c := range res.Plan.Cells {
		if n := res.RoundsOfCell(c); n != 3 {
			t.Errorf("RoundsOfCell(%v) = %d", c, n)
		}
	}

	// A budget of the minimum (its deadline off, as above): pin set
	// one's extra round would eat into what pin set two needs, so it does
	// not run.
	s = &script{open: [][]int{{0, 1}, {0, 1}, {0, 1}}}
	var progress syncBuffer
	res, err = Run(t.Context(), sc, Options{OutDir: t.TempDir(), source: fixedSource, Open: s.Open, Progress: &progress,
		Budget: estimate(sc, PlanOf(sc)), noDeadline: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rungs) != 8 || strings.Count(progress.String(), "\nbudget: ") != 2 {
		t.Errorf("%d rungs; progress\n%s", len(res.Rungs), progress.String())
	}
}
