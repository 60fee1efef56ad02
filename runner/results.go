package runner

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
)

// runID names a run's containers and network: unique per run, and sortable
// by time when an engine holds leftovers of several.
func runID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// ScenarioInfo is what a results file records of sc: its identity, its
// load settings and its gate section, so a file compared later is decided
// by the rule declared before the run.
func ScenarioInfo(sc *scenario.Scenario) benchdata.ScenarioInfo { return scenarioInfo(sc) }

func scenarioInfo(sc *scenario.Scenario) benchdata.ScenarioInfo {
	info := benchdata.ScenarioInfo{
		Name: sc.Name, File: sc.File, Hash: sc.Hash, Profile: sc.Profile, Seed: sc.Seed, Source: sc.Source,
		Gate: sc.Gate,
		Load: benchdata.LoadInfo{
			Concurrency: sc.Load.Concurrency,
			Rate:        sc.Load.Rate,
			Duration:    sc.Load.Duration.Seconds(),
			Warmup:      sc.Load.Warmup.Seconds(),
			Repetitions: sc.Load.Repetitions,
			Timeout:     sc.Load.Timeout.Seconds(),
			Interleave:  sc.Load.Interleave,
			// What is not in force is not recorded: a round-interleaved
			// run has no slices, a fixed design no maximum.
			MaxRepetitions: max(sc.Load.MaxRepetitions, sc.Load.Repetitions),
			RestartEvery:   sc.Load.RestartEvery,
		},
	}
	if sc.Load.Interleave == scenario.InterleaveSlice {
		info.Load.Slice, info.Load.Settle = sc.Load.Slice.Seconds(), sc.Load.Settle.Seconds()
	}
	if sc.Kind == scenario.KindHTTP {
		info.Load.HTTPClient = sc.Load.HTTPClient
	}
	return info
}
