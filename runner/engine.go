package runner

import (
	"context"
	"errors"
	"io"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
)

// engine is what measures a scenario: the load engine drives two targets
// with requests (Run, which chooses its protocol once more, protocolOf),
// the gobench engine runs go test -bench of two versions of a Go module
// (RunGoBench). It is chosen once, by the scenario's kind (engineOf), so
// Measure and DryRun know no kind: what differs between the two — whether
// a run can be sharded, which failures are the scenario's, the dry run's
// plan — is asked of the engine.
type engine interface {
	// shard is why a run of this engine cannot be cut into shards
	// (Options.Shard); nil when it can.
	shard() error
	// run measures sc, with Run's contract or RunGoBench's.
	run(ctx context.Context, sc *scenario.Scenario, opts Options) (*benchdata.Results, error)
	// refused says whether err, returned by run with res, refused the
	// scenario before anything ran, for a reason the scenario names (an
	// unknown git ref, a directory without the module): its mistake, not
	// the run's.
	refused(res *benchdata.Results, err error) bool
	// plan writes to w the plan a run of sc would follow, starting,
	// building and writing nothing (DryRun). Its errors are run's for
	// the same refusal.
	plan(ctx context.Context, sc *scenario.Scenario, opts Options, w io.Writer) error
}

// engineOf is sc's engine, by its kind: the one place in runner that asks
// whether a scenario is a gobench one.
func engineOf(sc *scenario.Scenario) engine {
	if sc.Kind == scenario.KindGoBench {
		return goBenchEngine{}
	}
	return loadEngine{}
}

// loadEngine measures HTTP or gRPC targets under load (Run).
type loadEngine struct{}

func (loadEngine) shard() error { return nil }

func (loadEngine) run(ctx context.Context, sc *scenario.Scenario, opts Options) (*benchdata.Results, error) {
	return Run(ctx, sc, opts)
}

// refused: a load run refuses what the scenario gets wrong before it
// starts a target as a *BudgetError or an *InputError, which Measure tells
// apart for any engine; whatever else it returns is the run's failure.
func (loadEngine) refused(*benchdata.Results, error) bool { return false }

// goBenchEngine measures go test -bench of two versions of a Go module
// (RunGoBench).
type goBenchEngine struct{}

func (goBenchEngine) shard() error {
	return errors.New("-shard: a gobench scenario runs whole: its cells are found as it runs")
}

func (goBenchEngine) run(ctx context.Context, sc *scenario.Scenario, opts Options) (*benchdata.Results, error) {
	return RunGoBench(ctx, sc, opts)
}

// refused: RunGoBench resolves its git refs and modules before it runs or
// writes anything, and returns nil results when it refuses them. (A first
// write of results.json that fails comes with nil results too, and is
// counted with them, as Measure always has.)
func (goBenchEngine) refused(res *benchdata.Results, _ error) bool { return res == nil }
