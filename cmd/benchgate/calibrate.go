package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/benchgate/benchgate/ghaction"
	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/scenario"
)

// cmdCalibrate is "benchgate calibrate": an A/A run of the configured
// design, decided by the one decision path, turned into what the runner
// can resolve.
func cmdCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	rf := defaultRunFlags()
	rf.out = "benchgate-calibrate"
	format := report.ForFormatFlag()
	var env *ghaction.Env
	if getenv("GITHUB_ACTIONS") == "true" {
		var err error
		if env, rf, err = actionEnv(getenv); err != nil {
			return err
		}
		format.Name = "markdown"
	}
	fs, err := parseFlagSet("calibrate", "[flags]", args, 0, stderr, func(fs *flag.FlagSet) {
		rf.register(fs)
		fs.Var(&format, "format", report.FormatUsage)
	})
	if err != nil {
		return err
	}
	if env != nil {
		rf.dropDefaultProfile(fs, env.Inputs, getenv)
	}
	res, runErr := measure(ctx, rf, stdout, stderr, getenv, func(sc *scenario.Scenario) error {
		sc.AgainstItself()
		return nil
	})
	if res == nil {
		return runErr
	}
	cal, err := report.DecideCalibration(res)
	if err != nil {
		return withCode(exitUsage, err)
	}
	if err := report.WriteCalibration(rf.out, cal); err != nil {
		return withCode(exitRunFailed, err)
	}
	if err := report.Calibration(stdout, cal, format.Name); err != nil {
		return withCode(exitRunFailed, err)
	}
	if env != nil {
		if err := env.WriteCalibrationSummary(cal); err != nil {
			fmt.Fprintf(stderr, "warning: %v\n", err)
		}
	}
	fmt.Fprintf(stderr, "calibration: %s\n", filepath.Join(rf.out, "calibration.md"))
	return runErr
}
