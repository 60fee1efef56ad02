package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/ghaction"
	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/scenario"
)

const calibrateSummary = `Runs the scenario's grid (after the profile) with the baseline against a
second instance of the baseline on this runner, and prints, per cell and
gated metric, the run-to-run noise (per round, and per paired batch), the
smallest change the configured design resolved, and the repetitions (or,
with slice interleaving, the duration) it would take to resolve tie_within.
Writes results.json, calibration.md and calibration.json to -out. Exits 0
whatever the runner's noise; 2 for an invalid scenario, 3 when the run
failed (what it measured is still reported).`

// cmdCalibrate is "benchgate calibrate": an A/A run of the configured
// design, decided by the one decision path, turned into what the runner
// can resolve.
func cmdCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var env *ghaction.Env
	if getenv("GITHUB_ACTIONS") == "true" {
		e, err := ghaction.Load(getenv)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("action: %w", err))
		}
		env = e
		in := e.Inputs
		profile := in.Profile
		if profile == ghaction.DefaultInputs().Profile && flagValue(args, "profile") == "" && !hasProfile(in.Scenario, profile, getenv) {
			profile = ""
		}
		defaults := []string{"-scenario", in.Scenario, "-profile", profile, "-out", in.ResultsDir, "-format", "markdown"}
		if in.Budget != "" {
			defaults = append(defaults, "-budget", in.Budget)
		}
		args = append(defaults, args...)
	}
	var rf runFlags
	var format string
	if err := parseFlags("calibrate", calibrateSummary, args, stderr, func(fs *flag.FlagSet) {
		rf.register(fs)
		fs.Lookup("out").DefValue = "benchgate-calibrate"
		fs.Lookup("out").Value.Set("benchgate-calibrate")
		fs.StringVar(&format, "format", "terminal", "report on stdout: terminal, markdown or json")
	}); err != nil {
		return err
	}
	if err := report.Calibration(io.Discard, report.CalibrationInput{Results: &baselines.Results{}}, format); err != nil {
		return withCode(exitUsage, fmt.Errorf("-format: %w", err))
	}
	res, runErr := measure(ctx, rf, stderr, getenv, againstItself)
	if res == nil {
		return runErr
	}
	in, err := decideInput(res)
	if err != nil {
		return withCode(exitUsage, err)
	}
	cal := report.CalibrationInput{Results: res, Comparison: in.Comparison, Calibrations: gate.Calibrate(in.Comparison)}
	for name, f := range map[string]string{"calibration.md": "markdown", "calibration.json": "json"} {
		if err := baselines.WriteFile(filepath.Join(rf.out, name), func(w io.Writer) error {
			return report.Calibration(w, cal, f)
		}); err != nil {
			return withCode(exitRunFailed, err)
		}
	}
	if err := report.Calibration(stdout, cal, format); err != nil {
		return withCode(exitRunFailed, err)
	}
	if env != nil {
		var md bytes.Buffer
		if err := report.Calibration(&md, cal, "markdown"); err == nil {
			if err := env.WriteSummary(md.String()); err != nil {
				fmt.Fprintf(stderr, "warning: %v\n", err)
			}
		}
	}
	fmt.Fprintf(stderr, "calibration: %s\n", filepath.Join(rf.out, "calibration.md"))
	return runErr
}

// againstItself makes the candidate a second instance of the baseline: the
// same command, image, URL or Go module version, built once (by the
// baseline). A fixed design: an A/A run measures the noise of the
// configured rounds, it does not adapt them.
func againstItself(sc *scenario.Scenario) error {
	cand := sc.Baseline
	cand.Name = sc.Candidate.Name
	cand.Build = nil
	sc.Candidate = cand
	sc.Load.MaxRepetitions = sc.Load.Repetitions
	return nil
}
