package runner

import (
	"fmt"
	"time"

	"github.com/benchgate/benchgate/profiler"
	"github.com/benchgate/benchgate/scenario"
)

// ProfileDir is where a run's profiles go, under its out dir.
const ProfileDir = "profiles"

// profileWindows is the profiling plan of a cell: its side's windows in
// ABBA order, each half the section's duration (whole seconds, as a pprof
// endpoint counts them), so each side is profiled for the duration in
// all and neither side always goes first.
func profileWindows(p scenario.Profiling) time.Duration {
	return time.Duration(profiler.Seconds(p.Duration/2)) * time.Second
}

// profilePlanLine says what profiling may add to a run, for the plan.
func profilePlanLine(sc *scenario.Scenario) string {
	p := sc.Profiling
	if p.When == scenario.ProfileNever {
		return ""
	}
	per := 4 * (profileWindows(p) + sc.Load.Warmup)
	which := "of the gated cells that regress"
	if p.When == scenario.ProfileAlways {
		which = "of the gated cells"
	}
	return fmt.Sprintf("profiling: after the measured rounds, up to %d %s, each %v (both sides, ABBA, under a CPU profile; profiling.when: never turns it off)",
		p.Cells, which, per)
}
