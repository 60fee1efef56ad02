package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target/targettest"
)

// TestRunRestart: with load.restart each side runs as a fresh process
// every RestartEvery rounds of each pin set, every instance is gone when
// Run returns, and results.json records the setting and the count.
func TestRunRestart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		every, rounds   int
		pinSets         []scenario.Pins
		restarts, procs int // recorded restarts; processes per side
	}{
		{name: "every round", every: 1, rounds: 3, restarts: 2, procs: 3},
		{name: "every 2 of 5", every: 2, rounds: 5, restarts: 2, procs: 3},
		{name: "every 3 of 3", every: 3, rounds: 3, restarts: 0, procs: 1},
		{name: "pin sets", every: 1, rounds: 2, pinSets: []scenario.Pins{{Name: "a"}, {Name: "b"}}, restarts: 2, procs: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			sc := testScenario(targettest.ServerSpec("baseline"), targettest.ServerSpec("candidate"))
			sc.Load.Concurrency = []int{1}
			sc.Load.Repetitions = tc.rounds
			sc.Load.RestartEvery = tc.every
			sc.PinSets = tc.pinSets
			var progress syncBuffer
			res, err := Run(t.Context(), sc, Options{OutDir: out, Progress: &progress, source: fixedSource})
			if err != nil {
				t.Fatal(err)
			}
			if res.Env.Restarts != tc.restarts || res.Scenario.Load.RestartEvery != tc.every {
				t.Errorf("restarts %d, restart_every %d; want %d, %d", res.Env.Restarts, res.Scenario.Load.RestartEvery, tc.restarts, tc.every)
			}
			if got := readResults(t, out).Env.Restarts; got != tc.restarts {
				t.Errorf("results.json: restarts %d, want %d", got, tc.restarts)
			}
			if n := strings.Count(progress.String(), "fresh baseline and candidate started"); n != tc.restarts {
				t.Errorf("%d restart lines, want %d:\n%s", n, tc.restarts, progress.String())
			}
			for _, side := range []string{"baseline", "candidate"} {
				ids := pgidsFromLog(t, out, side)
				if len(ids) != tc.procs || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != tc.procs {
					t.Errorf("%s: processes %v, want %d distinct", side, ids, tc.procs)
				}
			}
			allGone(t, out, "baseline", "candidate")
			if want := tc.rounds * 2 * max(1, len(tc.pinSets)); len(res.Rungs) != want {
				t.Errorf("%d rungs, want %d", len(res.Rungs), want)
			}
		})
	}
}
