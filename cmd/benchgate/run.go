package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/doctor"
	"github.com/benchgate/benchgate/ghaction"
	"github.com/benchgate/benchgate/importers"
	"github.com/benchgate/benchgate/internal/buildinfo"
	"github.com/benchgate/benchgate/internal/cli"
	"github.com/benchgate/benchgate/internal/scaffold"
	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/runner"
	"github.com/benchgate/benchgate/scenario"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); otherwise
// buildinfo.Version takes the module version or VCS revision of the build.
var version = ""

// run is the whole CLI. getenv is the environment: the action's inputs and
// token, and through environ.Filter a scenario's ${VAR}.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	c := &call{ctx: ctx, stdout: stdout, stderr: stderr, getenv: getenv}
	if getenv("GITHUB_ACTIONS") == "true" && len(args) > 0 {
		// In a workflow, what benchgate prints is the step's log, and the
		// runner acts on commands in it: progress lines, reports and
		// errors quote targets and pull requests, so no line of them may
		// be one. benchgate's own annotations pass (ghaction writes them
		// beneath the LogWriter).
		var flush func()
		c.stdout, c.stderr, flush = ghaction.StepLogs(stdout, stderr)
		defer flush()
	}
	return cli.Dispatch(c.line(), c, benchgate, args)
}

// call is one run of a command: its context, where it prints, and the
// environment it reads.
type call struct {
	ctx            context.Context
	stdout, stderr io.Writer
	getenv         func(string) string
}

// command is one of benchgate's commands, or a family of them.
type command = cli.Command[*call]

// line is where c prints, with benchgate's help texts.
func (c *call) line() cli.Line {
	return cli.Line{Stdout: c.stdout, Stderr: c.stderr, Help: help, DidYouMean: scenario.DidYouMean}
}

// benchgate is the CLI: its commands in the order unknownCommand lists
// them, "help" last.
var benchgate = command{Missing: "no command given", Sub: []command{
	{Name: "run", Define: cmdRun},
	{Name: "compare", Args: "[flags] [OLD.txt NEW.txt]", Max: 2, Define: cmdCompare},
	{Name: "gate", Raw: cmdGate},
	{Name: "comment", Define: cmdComment},
	{Name: "merge", Args: "[flags] SHARD/results.json...", Max: 1 << 16, Define: cmdMerge},
	historyCommands,
	{Name: "export", Raw: func(c *call, args []string) error { return cmdExport(args, c.stdout, c.stderr) }},
	{Name: "doctor", Define: cmdDoctor(doctor.Options{Root: "/"}, doctor.DockerFromEnv)},
	{Name: "calibrate", Define: cmdCalibrate},
	{Name: "init", Define: cmdInit},
	{Name: "version", Aliases: []string{"-version", "--version"}, Raw: cmdVersion},
}}

func cmdVersion(c *call, _ []string) error {
	fmt.Fprintln(c.stdout, "benchgate", buildinfo.Shown(version))
	return nil
}

// cmdInit is "benchgate init" (package scaffold). A refusal (a file there
// without -force, no such directory) and a failed write exit 2.
func cmdInit(c *call, fs *flag.FlagSet) (func() error, error) {
	dir, opts := ".", scaffold.Options{Version: buildinfo.Version(version), Out: c.stdout}
	fs.StringVar(&dir, "dir", dir, "the project's root `dir`, the repository's: benchgate.yml and .github/workflows/benchgate.yml go there")
	fs.BoolVar(&opts.Force, "force", false, "overwrite those files when they are there")
	return func() error {
		_, err := scaffold.Init(dir, opts)
		return cli.WithCode(cli.ExitUsage, err)
	}, nil
}

func cmdRun(c *call, fs *flag.FlagSet) (func() error, error) {
	rf := defaultRunFlags()
	rf.register(fs)
	fs.Var(&rf.shard, "shard", "run only part `i/n` of the grid (1-based), e.g. 2/3 on the second of three runners; combine the parts with benchgate merge")
	return func() error {
		res, err := c.measure(rf, nil)
		if res != nil {
			fmt.Fprintf(c.stderr, "results: %s (%s, %d rungs)\n", filepath.Join(rf.out, "results.json"), res.Status, len(res.Rungs))
		}
		return err
	}, nil
}

// measure runs rf's scenario (runner.Measure; -dry-run: runner.DryRun, the plan on stdout),
// override changing it after loading (nil for none). Errors carry their exit code.
func (c *call) measure(rf runFlags, override func(*scenario.Scenario) error) (res *benchdata.Results, err error) {
	if _, err := os.Stat(rf.scenario); errors.Is(err, fs.ErrNotExist) {
		// The commonest first stumble: run where no scenario is.
		return nil, cli.WithCode(cli.ExitUsage, fmt.Errorf("no scenario file %s: give -scenario FILE, or write one here with benchgate init",
			textsafe.Quote(rf.scenario, textsafe.QuoteRunes)))
	}
	req := runner.Request{Scenario: rf.scenario, Profile: rf.profile, AllowDataOutside: rf.allowDataOutside, Override: override, Getenv: c.getenv}
	opts := runner.Options{
		OutDir:      rf.out,
		Progress:    c.stderr,
		Budget:      rf.budget,
		ToolVersion: buildinfo.Version(version),
		Shard:       rf.shard,
		Open:        decide.OpenCells,
		Profile:     decide.ProfileCells,
	}
	if rf.dryRun {
		err = runner.DryRun(c.ctx, req, opts, c.stdout)
	} else {
		res, err = runner.Measure(c.ctx, req, opts)
	}
	if ue := (*runner.UsageError)(nil); errors.As(err, &ue) {
		return res, cli.WithCode(cli.ExitUsage, err)
	}
	return res, cli.WithCode(cli.ExitRunFailed, err)
}

func cmdCompare(c *call, fs *flag.FlagSet) (func() error, error) {
	format := report.ForFormatFlag()
	var results, out, scenarioFile, tool, class string
	var base, cand importers.FileList
	var dash, name string
	fs.StringVar(&results, "results", "benchgate-results/results.json", "results `file` written by run or gate")
	fs.StringVar(&out, "out", "", "`dir` for report.md and decisions.json (default: the results file's directory, or benchgate-results for files)")
	fs.StringVar(&scenarioFile, "scenario", "", "scenario `file` whose gate section decides files (and, for Go benchmarks, whose rename rules pair them); with -results, refused unless its gate section is the one the file recorded")
	fs.StringVar(&tool, "import", "", "read the reports of a load `tool` or the files of a benchmark format: "+strings.Join(importers.Names(), ", "))
	fs.Var(&base, "baseline", "with -import: the baseline's report `files`, comma-separated, one per repetition")
	fs.Var(&cand, "candidate", "with -import: the candidate's report `files`, comma-separated, as many")
	fs.StringVar(&class, "class", "", "with -import: the cell's class `name` (default load)")
	fs.Var(cli.Checked(&name, report.CheckName), "name", "with files (OLD NEW or -import): the results' scenario `name`, which history keeps its series by (default: -scenario's name, else \""+importers.DefaultGoBenchName+"\" for go test -bench outputs, \"imported TOOL results\" for -import)")
	dashboardFlag(fs, &dash)
	fs.Var(&format, "format", report.FormatUsage)
	return func() error {
		files := fs.Args()
		switch {
		case len(files) == 1:
			return cli.WithCode(cli.ExitUsage, errors.New("compare of files needs two: the baseline's go test -bench output and the candidate's"))
		case len(files) == 2 || tool != "":
			if len(files) == 2 && tool != "" {
				return cli.WithCode(cli.ExitUsage, errors.New("-import reads -baseline and -candidate, not OLD NEW arguments"))
			}
			res, err := c.readReports(importers.Sources{GoBench: files, Tool: tool, Baseline: base, Candidate: cand},
				importers.Options{Class: class, Name: name}, scenarioFile)
			if err != nil {
				return err
			}
			out = cmp.Or(out, "benchgate-results")
			if err := benchdata.Write(out, res); err != nil {
				return cli.WithCode(cli.ExitRunFailed, err)
			}
			_, err = c.decideAndReport(res, out, out, format.Name, dash)
			return err
		case cli.Given(fs, "baseline") || cli.Given(fs, "candidate") || class != "":
			// Given at all: a list that names no file ("-baseline ,") is
			// still meant for -import.
			return cli.WithCode(cli.ExitUsage, errors.New("-baseline, -candidate and -class go with -import"))
		case name != "":
			return cli.WithCode(cli.ExitUsage, fmt.Errorf("-name names results read from files (OLD NEW or -import); %s keeps the name it was run under", results))
		}
		res, err := benchdata.Read(results)
		if err != nil {
			return cli.WithCode(cli.ExitUsage, err)
		}
		if scenarioFile != "" {
			if err := c.sameGate(res, results, scenarioFile); err != nil {
				return err
			}
		}
		_, err = c.decideAndReport(res, filepath.Dir(results), cmp.Or(out, filepath.Dir(results)), format.Name, dash)
		if unfinished := decide.Unfinished(res); unfinished != nil && cli.ExitCode(err) != cli.ExitUsage {
			// What it measured is reported, and the exit code says the run
			// failed.
			return cli.WithCode(cli.ExitRunFailed, unfinished)
		}
		return err
	}, nil
}

// sameGate refuses a scenario given with a results file whose gate section
// differs from the one the file recorded (decide.SameGate). Errors carry
// their exit code.
func (c *call) sameGate(res *benchdata.Results, results, scenarioFile string) error {
	s, err := c.loadToDecide(scenarioFile)
	if err != nil {
		return err
	}
	return cli.WithCode(cli.ExitUsage, decide.SameGate(res.Scenario.Gate, s.Gate, results, scenarioFile))
}

// readReports reads src into results with opt, decided by scenarioFile's
// gate section when one is given. Errors carry their exit code.
func (c *call) readReports(src importers.Sources, opt importers.Options, scenarioFile string) (*benchdata.Results, error) {
	if scenarioFile != "" {
		s, err := c.loadToDecide(scenarioFile)
		if err != nil {
			return nil, err
		}
		opt.Scenario = &importers.Scenario{Scenario: s, Info: runner.ScenarioInfo(s)}
	}
	res, err := importers.ReadSources(src, opt, "benchgate "+buildinfo.Version(version))
	return res, cli.WithCode(cli.ExitUsage, err)
}

// loadToDecide loads scenarioFile to decide results it did not run
// (runner.Request.Decide: a gobench scenario needs no targets, nor the
// variables of fields compare does not use) and prints a gobench
// scenario's warnings on stderr, which are then about deciding (an unset
// gobench.module); another kind's are about its runs. Errors carry their
// exit code.
func (c *call) loadToDecide(scenarioFile string) (*scenario.Scenario, error) {
	s, err := runner.Load(runner.Request{Scenario: scenarioFile, Getenv: c.getenv, Decide: true})
	if err != nil {
		return nil, cli.WithCode(cli.ExitUsage, err)
	}
	if s.Kind == scenario.KindGoBench {
		for _, w := range s.Warnings {
			fmt.Fprintf(c.stderr, "warning: %v\n", w)
		}
	}
	return s, nil
}

func cmdGate(c *call, args []string) error {
	if c.getenv("GITHUB_ACTIONS") == "true" {
		return c.actionGate(args)
	}
	rf, format := defaultRunFlags(), report.ForFormatFlag()
	if _, err := c.line().ParseFlagSet("gate", "[flags]", args, 0, gateFlags(&rf, &format)); err != nil {
		return err
	}
	_, err := c.runGate(rf, format.Name, nil)
	return err
}

// gateFlags registers gate's flags.
func gateFlags(rf *runFlags, format *report.FormatFlag) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		rf.register(fs)
		dashboardFlag(fs, &rf.dashboard)
		fs.Var(format, "format", report.FormatUsage)
	}
}

// gateHooks are what the action adds to a gate run.
type gateHooks struct {
	override func(*scenario.Scenario) error // change the scenario after loading
	annotate func(*benchdata.Results)       // add to the results before they are decided
}

// runGate runs and decides, as "benchgate gate" does, prints the report
// in format, and returns the decided report (nil when nothing was
// decided) with the exit error.
func (c *call) runGate(rf runFlags, format string, hooks *gateHooks) (*report.Input, error) {
	if hooks == nil {
		hooks = &gateHooks{}
	}
	if rf.dryRun { // before anything is removed
		_, err := c.measure(rf, hooks.override)
		return nil, err
	}
	// A report left by an earlier run must never be taken for this one's.
	if err := report.RemoveFiles(rf.out); err != nil {
		return nil, cli.WithCode(cli.ExitRunFailed, err)
	}
	res, runErr := c.measure(rf, hooks.override)
	if res == nil {
		return nil, runErr
	}
	if hooks.annotate != nil {
		hooks.annotate(res)
		if err := benchdata.Write(rf.out, res); err != nil {
			return nil, cli.WithCode(cli.ExitRunFailed, err)
		}
	}
	if len(res.Rungs) == 0 {
		// Nothing was measured (a target never came up): the files still
		// say so, for CI to publish, but a table of empty cells on the
		// terminal would only bury the error.
		format = ""
	}
	in, decideErr := c.decideAndReport(res, rf.out, rf.out, format, rf.dashboard)
	if runErr != nil {
		// The run's failure decides the exit code; the report of what was
		// measured has been written all the same.
		return in, runErr
	}
	return in, decideErr
}

// decideAndReport decides res, whose files (its profiles) are in dir,
// writes report.md and decisions.json into out, prints the report in
// format on stdout ("": none), and returns the gate's outcome as an exit
// error.
func (c *call) decideAndReport(res *benchdata.Results, dir, out, format, dashboard string) (*report.Input, error) {
	comp, err := decide.Results(res)
	if err != nil {
		return nil, cli.WithCode(cli.ExitUsage, err)
	}
	in := report.Input{Results: res, Comparison: comp, Dashboard: dashboard, Where: report.LoadWhere(dir, res)}
	if err := report.Publish(out, in, format, c.stdout, c.stderr); err != nil {
		return nil, cli.WithCode(cli.ExitRunFailed, err)
	}
	return &in, cli.WithCode(cli.ExitRegression, decide.Outcome(in.Comparison))
}
