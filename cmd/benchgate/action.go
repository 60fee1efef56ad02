package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/ghaction"
	"github.com/benchgate/benchgate/internal/cli"
	"github.com/benchgate/benchgate/internal/environ"
	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/scenario"
)

// actionGate is "benchgate gate" inside GitHub Actions (GITHUB_ACTIONS=true):
// the same run and decision, with the action's inputs as defaults for the
// flags, and then what only a workflow has: the job summary, annotations,
// the sticky comment and the step outputs (ghaction.PublishGate).
func (c *call) actionGate(args []string) error {
	env, rf, err := actionEnv(c.getenv)
	if err != nil {
		return err
	}
	if err := env.CheckGate(); err != nil {
		return cli.WithCode(cli.ExitUsage, err)
	}
	in := env.Inputs
	format := report.ForFormatFlag()
	fs, gateErr := c.line().ParseFlagSet("gate", "[flags]", args, 0, gateFlags(&rf, &format))
	var rep *report.Input
	if gateErr == nil {
		if rf.dropDefaultProfile(fs, in, c.getenv) {
			ghaction.Notice(c.stderr, fmt.Sprintf("the scenario has no %q profile: running its full grid", in.Profile))
		}
		rep, gateErr = c.runGate(rf, format.Name, &gateHooks{
			override: func(sc *scenario.Scenario) error { return sc.SetImages(in.Baseline, in.Candidate) },
			annotate: func(r *benchdata.Results) { r.GitHub = env.GitHubInfo() },
		})
		if rf.dryRun { // nothing ran: nothing to publish
			return gateErr
		}
	}
	run := ghaction.GateRun{Report: rep, ResultsDir: rf.out, Scenario: rf.scenario, Workspace: c.getenv("GITHUB_WORKSPACE")}
	if err := env.PublishGate(c.ctx, run, c.stdout, c.stderr); err != nil {
		return cli.WithCode(cli.ExitRunFailed, fmt.Errorf("action outputs: %w", err))
	}
	if cli.ExitCode(gateErr) == cli.ExitRegression && !in.FailOnRegression {
		ghaction.Notice(c.stderr, "regressions found, but fail-on-regression is false: the step passes")
		return nil
	}
	return gateErr
}

// actionEnv loads the step's environment and returns run's flags with the
// action's inputs as their defaults: flags given explicitly still win, so
// the action and a hand-run gate behave the same.
func actionEnv(getenv func(string) string) (*ghaction.Env, runFlags, error) {
	env, err := ghaction.Load(getenv)
	if err != nil {
		return nil, runFlags{}, cli.WithCode(cli.ExitUsage, fmt.Errorf("action: %w", err))
	}
	in := env.Inputs
	rf := runFlags{scenario: in.Scenario, profile: in.Profile, out: in.ResultsDir, dashboard: in.DashboardURL}
	if in.Budget != "" {
		if rf.budget, err = time.ParseDuration(in.Budget); err != nil {
			return nil, rf, cli.WithCode(cli.ExitUsage, fmt.Errorf("action: input budget: %w", err))
		}
	}
	return env, rf, nil
}

// dropDefaultProfile runs the whole grid of a scenario without the profile
// the profile input names by default (the usual PR profile), rather than
// fail on a default nobody chose; it says whether it did. A -profile given
// on the command line is kept. The scenario looked at is the input's.
func (f *runFlags) dropDefaultProfile(fs *flag.FlagSet, in ghaction.Inputs, getenv func(string) string) bool {
	if f.profile != ghaction.DefaultInputs().Profile || cli.Given(fs, "profile") ||
		scenario.HasProfile(in.Scenario, f.profile, environ.NewFilter(getenv).Getenv) {
		return false
	}
	f.profile = ""
	return true
}

// cmdComment is "benchgate comment" (ghaction's PostResults).
func cmdComment(c *call, fs *flag.FlagSet) (func() error, error) {
	var results string
	var pr, issue int
	var dash, label string
	fs.StringVar(&results, "results", "", "results `file` (default: the results-dir input's results.json)")
	fs.IntVar(&pr, "pr", 0, "pull request `number` (default: the one the results recorded)")
	fs.IntVar(&issue, "issue", 0, "post to this tracking issue `number` instead (the nightly workflow's)")
	fs.Var(cli.Checked(&label, ghaction.CheckLabel), "remove-label", "then remove this `label` from the pull request (default: the remove-label input)")
	dashboardFlag(fs, &dash)
	return func() error {
		env, err := ghaction.Load(c.getenv)
		if err != nil {
			return cli.WithCode(cli.ExitUsage, fmt.Errorf("comment: %w", err))
		}
		if cli.Given(fs, "remove-label") {
			env.Inputs.RemoveLabel = label
		}
		if cli.Given(fs, "dashboard-url") {
			env.Inputs.DashboardURL = dash
		}
		url, rep, err := env.PostResults(c.ctx, results, pr, issue, c.stderr)
		if errors.Is(err, ghaction.ErrRefused) {
			return cli.WithCode(cli.ExitUsage, err)
		} else if err != nil {
			return cli.WithCode(cli.ExitRunFailed, err)
		}
		if url != "" {
			fmt.Fprintln(c.stdout, url)
		}
		return env.SetOutputs([][2]string{{"comment-url", url}, {"verdict", string(rep.Comparison.Outcome)}})
	}, nil
}
