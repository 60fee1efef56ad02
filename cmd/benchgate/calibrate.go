package main

import (
	"flag"
	"fmt"
	"path/filepath"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/ghaction"
	"github.com/benchgate/benchgate/internal/cli"
	"github.com/benchgate/benchgate/internal/numtext"
	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/scenario"
)

// cmdCalibrate is "benchgate calibrate": an A/A run of the configured
// design, decided by the one decision path, turned into what the runner
// can resolve.
func cmdCalibrate(c *call, fs *flag.FlagSet) (func() error, error) {
	rf := defaultRunFlags()
	rf.out = "benchgate-calibrate"
	format := report.ForFormatFlag()
	var env *ghaction.Env
	if c.getenv("GITHUB_ACTIONS") == "true" {
		var err error
		if env, rf, err = actionEnv(c.getenv); err != nil {
			return nil, err
		}
		format.Name = "markdown"
	}
	rf.calibrate = true
	var results string
	rf.register(fs)
	fs.Var(&format, "format", report.FormatUsage)
	fs.StringVar(&results, "results", "", "project from this results `file` of an A/A run (a build against itself, e.g. a verdict-quality A/A gate) instead of running one")
	return func() error {
		if env != nil {
			rf.dropDefaultProfile(fs, env.Inputs, c.getenv)
		}
		var res *benchdata.Results
		var err, runErr error
		if results != "" {
			for _, f := range []string{"scenario", "profile", "budget", "dry-run"} {
				if cli.Given(fs, f) {
					return cli.WithCode(cli.ExitUsage, fmt.Errorf("-results %s and -%s: the results file is what was run; give one or the other", results, f))
				}
			}
			if res, err = benchdata.Read(results); err != nil {
				return cli.WithCode(cli.ExitUsage, err)
			}
			if base, cand := res.Env.Baseline, res.Env.Candidate; base.Spec != cand.Spec || base.Commit != cand.Commit {
				fmt.Fprintf(c.stderr, "warning: %s compares %s with %s: calibrate projects a runner's noise from a build against itself, and a real change between the two sides reads as noise\n",
					results, textsafe.Quote(base.Spec+" "+numtext.Commit(base.Commit), textsafe.QuoteRunes), textsafe.Quote(cand.Spec+" "+numtext.Commit(cand.Commit), textsafe.QuoteRunes))
			}
		} else {
			res, runErr = c.measure(rf, func(sc *scenario.Scenario) error {
				sc.AgainstItself()
				return nil
			})
			if res == nil {
				return runErr
			}
		}
		comp, err := decide.Results(res)
		if err != nil {
			return cli.WithCode(cli.ExitUsage, err)
		}
		cal := report.CalibrationInput{Results: res, Comparison: comp, Calibrations: gate.Calibrate(comp)}
		if err := report.WriteCalibration(rf.out, cal); err != nil {
			return cli.WithCode(cli.ExitRunFailed, err)
		}
		if err := report.Calibration(c.stdout, cal, format.Name); err != nil {
			return cli.WithCode(cli.ExitRunFailed, err)
		}
		if env != nil {
			if err := env.WriteCalibrationSummary(cal); err != nil {
				fmt.Fprintf(c.stderr, "warning: %v\n", err)
			}
		}
		fmt.Fprintf(c.stderr, "calibration: %s\n", filepath.Join(rf.out, "calibration.md"))
		return runErr
	}, nil
}
