package main

import (
	"flag"
	"time"

	"github.com/benchgate/benchgate/internal/cli"
	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/runner"
)

// runFlags are the flags run, gate and calibrate share. Their values when
// registered are their defaults: a hand-run benchgate's (defaultRunFlags),
// or the action's inputs.
type runFlags struct {
	scenario string
	profile  string
	out      string
	budget   time.Duration
	shard    runner.Shard // run only: a part of the grid
	// allowDataOutside lifts the confinement of data files to the
	// scenario's directory tree (scenario.LoadOptions).
	allowDataOutside bool
	dryRun           bool   // check and print the plan, run nothing (runner.DryRun)
	dashboard        string // gate only: -dashboard-url
	// calibrate marks calibrate's flags, whose -out holds its own files.
	calibrate bool
}

func defaultRunFlags() runFlags {
	return runFlags{scenario: "benchgate.yml", out: "benchgate-results"}
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.scenario, "scenario", f.scenario, "scenario `file`")
	fs.StringVar(&f.profile, "profile", f.profile, "profile `name` from the scenario's profiles (e.g. pr, nightly)")
	what := "results.json, report.md, decisions.json, target logs"
	if f.calibrate {
		what = "results.json, calibration.md, calibration.json, target logs"
	}
	fs.StringVar(&f.out, "out", f.out, "output `dir`: "+what)
	fs.DurationVar(&f.budget, "budget", f.budget, "refuse a plan longer than this `duration`, and stop the run (builds, start-up, correctness checks, rounds) once it has run this long, keeping what it measured (0: no limit)")
	fs.BoolVar(&f.allowDataOutside, "allow-data-outside", f.allowDataOutside, "let the scenario's data files be outside its directory tree (they must still be regular files)")
	fs.BoolVar(&f.dryRun, "dry-run", f.dryRun, "load and check the scenario as a run would, print its plan (targets, cells, rounds, planned time) and exit 0: nothing is built, started or written")
}

// dashboardFlag registers -dashboard-url into p: the published history
// site that the report and the comment link (report.Input.Dashboard),
// checked as it is parsed.
func dashboardFlag(fs *flag.FlagSet, p *string) {
	fs.Var(cli.Checked(p, report.CheckDashboardURL), "dashboard-url", "link the history site published at this `URL` (benchgate history site) and each failing cell's page")
}
