package runner

import (
	"io"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/load"
)

// Options are the settings of a run that do not come from the scenario.
type Options struct {
	OutDir   string    // results.json and the targets' logs go here
	Progress io.Writer // the plan and a line per rung; nil for none
	// Budget, when above 0, refuses a plan whose minimum takes longer,
	// and bounds the whole run, every phase, from Run's start: when it
	// runs out the run stops with a *BudgetOutError (see there).
	Budget      time.Duration
	ToolVersion string
	// Shard, when Count > 0, runs only the cells benchdata.ShardOf deals
	// to shard Index (1-based) of Count; each pair keeps the order it has
	// in the whole grid, so merged shards decide as one run.
	Shard Shard
	// Getenv reads the commit overrides; nil means os.Getenv.
	Getenv func(string) string
	// Open says which cells' verdicts are still open given the results so
	// far: the adaptive rounds (load.max_repetitions above repetitions)
	// ask it before each round after the minimum, and run that round for
	// the open cells only. The CLI supplies its one decision; nil means a
	// fixed design, repetitions rounds for every cell, whatever
	// max_repetitions says (Plan.MaxRounds is then not recorded).
	Open func(res *benchdata.Results) ([]benchdata.Cell, error)
	// Profile says which cells to profile after the measured rounds (the
	// scenario's profiling section): the gated cells that regressed, or
	// with all every gated cell, the first first. The CLI supplies its one
	// decision (decide.ProfileCells); nil profiles nothing.
	Profile func(res *benchdata.Results, all bool) ([]benchdata.Cell, error)

	// source replaces sc.Stream; only tests set it.
	source func(cell benchdata.Cell, round, worker int) Source
	// beforeStop, when set, runs after a failed or cancelled run's status
	// was written and before the targets are stopped; only tests set it.
	beforeStop func()
	// noDeadline keeps Budget from bounding the run's context: it still
	// refuses a longer plan and stops adding rounds. Only tests set it,
	// to see the adaptive rounds stop without the run stopping.
	noDeadline bool
	// slicing presets cells' slicing, which their first round would
	// otherwise choose from its warm-up (ChooseSlicing); only tests set
	// it, so that a loaded machine's slower answers cannot change it.
	slicing map[benchdata.Cell]Slicing
}

// Source is one worker's request sequence, as the load core takes it.
type Source = load.Source
