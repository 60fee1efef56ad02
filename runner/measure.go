package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/internal/environ"
	"github.com/benchgate/benchgate/internal/linux"
	"github.com/benchgate/benchgate/scenario"
)

// Request is what Measure loads: the scenario file and how it is read.
type Request struct {
	Scenario string // the scenario file
	Profile  string // a profile of it; "" for none
	// AllowDataOutside lifts the confinement of data files to the
	// scenario's directory tree (scenario.LoadOptions).
	AllowDataOutside bool
	// Override changes the scenario after loading (the action's image
	// inputs, calibrate's A/A run); nil for none. Its error is a
	// *UsageError.
	Override func(*scenario.Scenario) error
	// Getenv is the environment; the scenario's ${VAR} and the run read
	// it through environ.Filter, so never a runner's credential. nil
	// means os.Getenv.
	Getenv func(string) string
	// Decide loads the scenario only to decide results it did not run
	// (scenario.LoadOptions.Decide): Load's, for compare.
	Decide bool
}

// UsageError is a run refused for what it was asked: an invalid scenario,
// a plan over its budget, inputs that do not fit the targets. Nothing was
// measured that the input could have made right; any other error of
// Measure is a run that failed.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// InputError is a scenario that cannot run against the targets it
// started: a gRPC method a target does not have, a message that does not
// fit its type. It is found before any load and is the scenario's fault,
// not the run's; the targets are stopped as on any error.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Load reads req's scenario as Measure does, before Measure checks it
// against this machine: its ${VAR} through environ.Filter, so never one of
// the runner's credentials. A refusal is a *UsageError that says the
// scenario is invalid, and why a secret it asked for read as unset.
func Load(req Request) (*scenario.Scenario, error) {
	sc, _, err := readScenario(req)
	return sc, err
}

// readScenario is Load, with the filter the scenario was read through.
func readScenario(req Request) (*scenario.Scenario, *environ.Filter, error) {
	getenv := req.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	env := environ.NewFilter(getenv)
	sc, err := scenario.LoadWith(req.Scenario, req.Profile, scenario.LoadOptions{Getenv: env.Getenv, AllowDataOutside: req.AllowDataOutside, Decide: req.Decide})
	if err != nil {
		return nil, nil, &UsageError{fmt.Errorf("invalid scenario:\n%w", env.Explain(err))}
	}
	return sc, env, nil
}

// prepare is what Measure and DryRun ask before anything starts: req's
// scenario read as Load reads it (its warnings printed on opts.Progress),
// its pins checked against this machine, req.Override applied, a shard
// its engine cannot run refused and the tools its kind needs found. eng
// is the scenario's engine (engineOf).
func prepare(req Request, opts Options) (*scenario.Scenario, *environ.Filter, engine, error) {
	sc, env, err := readScenario(req)
	if err != nil {
		return nil, nil, nil, err
	}
	if opts.Progress != nil {
		for _, w := range sc.Warnings {
			fmt.Fprintf(opts.Progress, "warning: %v\n", w)
		}
	}
	// The file parses wherever it is read; whether its pins name CPUs this
	// machine has is a question of the run, asked before anything starts.
	// An unreadable online list is guessed from the CPU count, as the
	// kernel's own would be.
	online, _ := linux.OnlineCPUs()
	if err := sc.CheckCPUs(online); err != nil {
		return nil, nil, nil, &UsageError{fmt.Errorf("invalid scenario:\n%w", env.Explain(err))}
	}
	if req.Override != nil {
		if err := req.Override(sc); err != nil {
			return nil, nil, nil, &UsageError{err}
		}
	}
	eng := engineOf(sc)
	if opts.Shard.Count > 0 {
		if err := eng.shard(); err != nil {
			return nil, nil, nil, &UsageError{err}
		}
	}
	if err := sc.CheckTools(exec.LookPath); err != nil {
		return nil, nil, nil, err
	}
	return sc, env, eng, nil
}

// Measure loads req's scenario, checks that this machine can run it, and
// runs it with the engine its kind says (engineOf: Run or RunGoBench);
// opts.Getenv is replaced by req's, filtered. The results come back with
// the error whenever some were measured.
func Measure(ctx context.Context, req Request, opts Options) (*benchdata.Results, error) {
	sc, env, eng, err := prepare(req, opts)
	if err != nil {
		return nil, err
	}
	opts.Getenv = env.Getenv
	res, err := eng.run(ctx, sc, opts)
	if err == nil {
		return res, nil
	}
	if errors.Is(err, linux.ErrRequired) {
		return nil, err // another system: nothing ran, and the error says so
	}
	var be *BudgetError
	var ie *InputError
	if errors.As(err, &be) {
		return res, &UsageError{err}
	}
	if errors.As(err, &ie) {
		// Found before any load: the scenario does not fit its targets.
		return res, &UsageError{fmt.Errorf("invalid scenario: %w", err)}
	}
	if eng.refused(res, err) {
		// Refused before anything ran: an unknown ref, a directory
		// without the module. The scenario names what cannot be.
		return res, &UsageError{fmt.Errorf("invalid scenario:\n%w", err)}
	}
	if errors.Is(err, context.Canceled) {
		return res, fmt.Errorf("run cancelled: %w", err)
	}
	if bo := (*BudgetOutError)(nil); errors.As(err, &bo) {
		return res, fmt.Errorf("run stopped: %w", err)
	}
	return res, fmt.Errorf("run failed: %w", err)
}
