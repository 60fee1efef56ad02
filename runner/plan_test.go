package runner

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target/targettest"
)

// TestBudgetRefusesOverflow: a plan too long to count saturates instead of
// wrapping to a negative time, so the budget refuses it before anything
// starts (duration: 1000000h once overflowed to a negative plan, and ran).
// Load refuses such a duration itself; a Scenario made in code is not
// loaded.
func TestBudgetRefusesOverflow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*scenario.LoadSettings)
	}{
		{"duration", func(ls *scenario.LoadSettings) { ls.Duration = 1_000_000 * time.Hour; ls.Repetitions = 1000 }},
		{"repetitions", func(ls *scenario.LoadSettings) { ls.Duration = time.Hour; ls.Repetitions = math.MaxInt32 }},
		{"slices", func(ls *scenario.LoadSettings) {
			ls.Interleave, ls.Duration, ls.Slice, ls.Settle = scenario.InterleaveSlice, 1_000_000*time.Hour, time.Nanosecond, time.Hour
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "built")
			base := targettest.ServerSpec("baseline")
			base.Build = []string{"touch", marker}
			sc := testScenario(base, targettest.ServerSpec("candidate"))
			tc.edit(&sc.Load)
			if got := estimate(sc, PlanOf(sc)); got != math.MaxInt64 {
				t.Errorf("estimate %v, want the longest time.Duration", got)
			}
			out := t.TempDir()
			res, err := Run(t.Context(), sc, Options{OutDir: out, Budget: 24 * time.Hour, source: fixedSource})
			var be *BudgetError
			if !errors.As(err, &be) || res != nil || be.Estimate < 0 {
				t.Fatalf("error %v, results %v; want a *BudgetError", err, res)
			}
			if want := "planned time 2562047h47m16.854775807s"; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("message %q, want it to start %q", err, want)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the build ran: %v", err)
			}
		})
	}
}

// TestEstimateCountsEveryRung: a rung costs more than its measured time,
// and the rewrites of results.json grow with the square of the rungs, so
// a plan of many short rungs is not planned as nothing
// (duration: 1ns × 1e9 repetitions was planned as 2 s; Load now caps the
// repetitions at scenario.MaxRounds).
func TestEstimateCountsEveryRung(t *testing.T) {
	t.Parallel()
	sc := testScenario(scenario.Target{}, scenario.Target{})
	sc.Load.Duration, sc.Load.Warmup = time.Nanosecond, 0
	sc.Load.Repetitions = 1_000_000_000
	if got := estimate(sc, PlanOf(sc)); got < 100*365*24*time.Hour {
		t.Errorf("estimate %v of 4e9 rungs of 1ns, want over a century", got)
	}
	// At the caps of a loaded scenario: 10 cells × 1000 rounds × 2.
	sc.Load.Repetitions = scenario.MaxRounds
	sc.Load.Concurrency = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	// 20000 rungs × (1ns + 5ms) = 100.00002s; 200010000 rungs written at
	// 1 KiB, 50 MiB/s: 3906.4453125s, rounded up to the millisecond.
	if got, want := estimate(sc, PlanOf(sc)), 100*time.Second+20*time.Microsecond+3906446*time.Millisecond; got != want {
		t.Errorf("estimate %v, want %v", got, want)
	}
}
