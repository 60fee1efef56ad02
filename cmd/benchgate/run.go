package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/doctor"
	"github.com/benchgate/benchgate/ghaction"
	"github.com/benchgate/benchgate/importers"
	"github.com/benchgate/benchgate/internal/buildinfo"
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
	if len(args) == 0 {
		fmt.Fprint(stderr, help("usage"))
		return withCode(exitUsage, errors.New("no command given"))
	}
	cmd, rest := args[0], args[1:]
	if getenv("GITHUB_ACTIONS") == "true" {
		// In a workflow, what benchgate prints is the step's log, and the
		// runner acts on commands in it: progress lines, reports and
		// errors quote targets and pull requests, so no line of them may
		// be one. benchgate's own annotations pass (ghaction writes them
		// beneath the LogWriter).
		var flushOut, flushErr func() error
		stdout, flushOut = ghaction.StepLog(stdout)
		defer flushOut()
		stderr, flushErr = ghaction.StepLog(stderr)
		defer flushErr()
	}
	switch cmd {
	case "run":
		return cmdRun(ctx, rest, stdout, stderr, getenv)
	case "compare":
		return cmdCompare(rest, stdout, stderr, getenv)
	case "gate":
		return cmdGate(ctx, rest, stdout, stderr, getenv)
	case "comment":
		return cmdComment(ctx, rest, stdout, stderr, getenv)
	case "merge":
		return cmdMerge(rest, stdout, stderr)
	case "history":
		return cmdHistory(ctx, rest, stdout, stderr, getenv)
	case "export":
		return cmdExport(rest, stdout, stderr)
	case "doctor":
		return cmdDoctor(ctx, doctor.Options{Root: "/"}, doctor.DockerFromEnv, rest, stdout, stderr, getenv)
	case "calibrate":
		return cmdCalibrate(ctx, rest, stdout, stderr, getenv)
	case "init":
		return cmdInit(rest, stdout, stderr)
	case "version", "-version", "--version":
		v := buildinfo.Version(version)
		if v == "dev" {
			v += " (" + buildinfo.Unrecorded + ")"
		}
		fmt.Fprintln(stdout, "benchgate", v)
		return nil
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 && cmd == "help" {
			// "benchgate help gate" is "benchgate gate -h".
			return run(ctx, append(slices.Clone(rest), "-h"), stdout, stderr, getenv)
		}
		fmt.Fprint(stdout, help("usage"))
		return nil
	default:
		return withCode(exitUsage, unknownCommand("", cmd, commands))
	}
}

// commands are benchgate's commands, as unknownCommand suggests them.
var commands = []string{"run", "compare", "gate", "comment", "merge", "history", "export", "doctor", "calibrate", "init", "version", "help"}

// unknownCommand is the error of a command not among names, under parent
// ("" or "history"): the closest name when one is close, and where the
// list is, never the whole usage, which would scroll the error away.
func unknownCommand(parent, cmd string, names []string) error {
	what, list := "command", "benchgate help"
	if parent != "" {
		what, list = parent+" command", "benchgate "+parent+" help"
	}
	msg := fmt.Sprintf("unknown %s %s", what, textsafe.Quote(cmd, textsafe.QuoteRunes))
	if d := scenario.DidYouMean(cmd, names); d != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", d)
	}
	return fmt.Errorf("%s; %s lists them", msg, list)
}

// cmdInit is "benchgate init" (package scaffold). A refusal (a file there
// without -force, no such directory) and a failed write exit 2.
func cmdInit(args []string, stdout, stderr io.Writer) error {
	dir, opts := ".", scaffold.Options{Version: buildinfo.Version(version), Out: stdout}
	if err := parseFlags("init", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&dir, "dir", dir, "the project's root `dir`, the repository's: benchgate.yml and .github/workflows/benchgate.yml go there")
		fs.BoolVar(&opts.Force, "force", false, "overwrite those files when they are there")
	}); err != nil {
		return err
	}
	_, err := scaffold.Init(dir, opts)
	return withCode(exitUsage, err)
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	rf := defaultRunFlags()
	if err := parseFlags("run", args, stderr, func(fs *flag.FlagSet) {
		rf.register(fs)
		fs.Var(&rf.shard, "shard", "run only part `i/n` of the grid (1-based), e.g. 2/3 on the second of three runners; combine the parts with benchgate merge")
	}); err != nil {
		return err
	}
	res, err := measure(ctx, rf, stdout, stderr, getenv, nil)
	if res != nil {
		fmt.Fprintf(stderr, "results: %s (%s, %d rungs)\n", filepath.Join(rf.out, "results.json"), res.Status, len(res.Rungs))
	}
	return err
}

// measure runs rf's scenario (runner.Measure; -dry-run: runner.DryRun, the plan on stdout),
// override changing it after loading (nil for none). Errors carry their exit code.
func measure(ctx context.Context, rf runFlags, stdout, stderr io.Writer, getenv func(string) string, override func(*scenario.Scenario) error) (res *baselines.Results, err error) {
	if _, err := os.Stat(rf.scenario); errors.Is(err, fs.ErrNotExist) {
		// The commonest first stumble: run where no scenario is.
		return nil, withCode(exitUsage, fmt.Errorf("no scenario file %s: give -scenario FILE, or write one here with benchgate init",
			textsafe.Quote(rf.scenario, textsafe.QuoteRunes)))
	}
	req := runner.Request{Scenario: rf.scenario, Profile: rf.profile, AllowDataOutside: rf.allowDataOutside, Override: override, Getenv: getenv}
	opts := runner.Options{
		OutDir:      rf.out,
		Progress:    stderr,
		Budget:      rf.budget,
		ToolVersion: buildinfo.Version(version),
		Shard:       rf.shard,
		Open:        decide.OpenCells,
	}
	if rf.dryRun {
		err = runner.DryRun(ctx, req, opts, stdout)
	} else {
		res, err = runner.Measure(ctx, req, opts)
	}
	if ue := (*runner.UsageError)(nil); errors.As(err, &ue) {
		return res, withCode(exitUsage, err)
	}
	return res, withCode(exitRunFailed, err)
}

func cmdCompare(args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	format := report.ForFormatFlag()
	var results, out, scenarioFile, tool, class string
	var base, cand importers.FileList
	var dash dashboardFlag
	var name nameFlag
	fs, err := parseFlagSet("compare", "[flags] [OLD.txt NEW.txt]", args, 2, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&results, "results", "benchgate-results/results.json", "results `file` written by run or gate")
		fs.StringVar(&out, "out", "", "`dir` for report.md and decisions.json (default: the results file's directory, or benchgate-results for files)")
		fs.StringVar(&scenarioFile, "scenario", "", "scenario `file` whose gate section decides files (and, for Go benchmarks, whose rename rules pair them); with -results, refused unless its gate section is the one the file recorded")
		fs.StringVar(&tool, "import", "", "read the reports of a load `tool` or the files of a benchmark format: "+strings.Join(importers.Names(), ", "))
		fs.Var(&base, "baseline", "with -import: the baseline's report `files`, comma-separated, one per repetition")
		fs.Var(&cand, "candidate", "with -import: the candidate's report `files`, comma-separated, as many")
		fs.StringVar(&class, "class", "", "with -import: the cell's class `name` (default load)")
		fs.Var(&name, "name", "with files (OLD NEW or -import): the results' scenario `name`, which history keeps its series by (default: -scenario's name, else \""+importers.DefaultGoBenchName+"\" for go test -bench outputs, \"imported TOOL results\" for -import)")
		dash.register(fs)
		fs.Var(&format, "format", report.FormatUsage)
	})
	if err != nil {
		return err
	}
	files := fs.Args()
	switch {
	case len(files) == 1:
		return withCode(exitUsage, errors.New("compare of files needs two: the baseline's go test -bench output and the candidate's"))
	case len(files) == 2 || tool != "":
		if len(files) == 2 && tool != "" {
			return withCode(exitUsage, errors.New("-import reads -baseline and -candidate, not OLD NEW arguments"))
		}
		res, err := readReports(importers.Sources{GoBench: files, Tool: tool, Baseline: base, Candidate: cand},
			importers.Options{Class: class, Name: string(name)}, scenarioFile, getenv, stderr)
		if err != nil {
			return err
		}
		if out == "" {
			out = "benchgate-results"
		}
		if err := baselines.Write(out, res); err != nil {
			return withCode(exitRunFailed, err)
		}
		_, err = decideAndReport(res, out, format.Name, string(dash), stdout, stderr)
		return err
	case given(fs, "baseline") || given(fs, "candidate") || class != "":
		// Given at all: a list that names no file ("-baseline ,") is
		// still meant for -import.
		return withCode(exitUsage, errors.New("-baseline, -candidate and -class go with -import"))
	case name != "":
		return withCode(exitUsage, fmt.Errorf("-name names results read from files (OLD NEW or -import); %s keeps the name it was run under", results))
	}
	res, err := baselines.Read(results)
	if err != nil {
		return withCode(exitUsage, err)
	}
	if scenarioFile != "" {
		if err := sameGate(res, results, scenarioFile, getenv, stderr); err != nil {
			return err
		}
	}
	if out == "" {
		out = filepath.Dir(results)
	}
	_, err = decideAndReport(res, out, format.Name, string(dash), stdout, stderr)
	if unfinished := decide.Unfinished(res); unfinished != nil && exitCode(err) != exitUsage {
		// What it measured is reported, and the exit code says the run
		// failed.
		return withCode(exitRunFailed, unfinished)
	}
	return err
}

// sameGate refuses a scenario given with a results file whose gate section
// differs from the one the file recorded: the file is decided by the rule
// declared before it was measured, and one written after it (or another
// scenario's) must not decide it, nor be ignored unsaid. A scenario that
// agrees changes nothing. Errors carry their exit code.
func sameGate(res *baselines.Results, results, scenarioFile string, getenv func(string) string, stderr io.Writer) error {
	s, err := loadToDecide(scenarioFile, getenv, stderr)
	if err != nil {
		return err
	}
	changes, err := decide.GateChanges(res.Scenario.Gate, s.Gate)
	if err != nil || len(changes) == 0 {
		return withCode(exitUsage, err)
	}
	return withCode(exitUsage, fmt.Errorf("-scenario %s: its gate section differs from the one %s recorded when it ran (%s); "+
		"a results file is decided by the rule declared before it was measured, never by one chosen after (docs/statistics.md): "+
		"run the scenario again to decide under its gate section, or leave -scenario out to decide by the recorded one "+
		"(-scenario gives the gate section to files: OLD NEW or -import)",
		scenarioFile, results, strings.Join(changes, "; ")))
}

// readReports reads src into results with opt, decided by scenarioFile's
// gate section when one is given. Errors carry their exit code.
func readReports(src importers.Sources, opt importers.Options, scenarioFile string, getenv func(string) string, stderr io.Writer) (*baselines.Results, error) {
	if scenarioFile != "" {
		s, err := loadToDecide(scenarioFile, getenv, stderr)
		if err != nil {
			return nil, err
		}
		opt.Scenario = &importers.Scenario{Scenario: s, Info: runner.ScenarioInfo(s)}
	}
	res, err := importers.ReadSources(src, opt, "benchgate "+buildinfo.Version(version))
	return res, withCode(exitUsage, err)
}

// loadToDecide loads scenarioFile to decide results it did not run
// (runner.Request.Decide: a gobench scenario needs no targets, nor the
// variables of fields compare does not use) and prints a gobench
// scenario's warnings on stderr, which are then about deciding (an unset
// gobench.module); another kind's are about its runs. Errors carry their
// exit code.
func loadToDecide(scenarioFile string, getenv func(string) string, stderr io.Writer) (*scenario.Scenario, error) {
	s, err := runner.Load(runner.Request{Scenario: scenarioFile, Getenv: getenv, Decide: true})
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	if s.Kind == scenario.KindGoBench {
		for _, w := range s.Warnings {
			fmt.Fprintf(stderr, "warning: %v\n", w)
		}
	}
	return s, nil
}

func cmdGate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if getenv("GITHUB_ACTIONS") == "true" {
		return actionGate(ctx, args, stdout, stderr, getenv)
	}
	rf, format := defaultRunFlags(), report.ForFormatFlag()
	if err := parseFlags("gate", args, stderr, gateFlags(&rf, &format)); err != nil {
		return err
	}
	_, err := runGate(ctx, rf, format.Name, stdout, stderr, getenv, nil)
	return err
}

// gateFlags registers gate's flags.
func gateFlags(rf *runFlags, format *report.FormatFlag) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		rf.register(fs)
		rf.dashboard.register(fs)
		fs.Var(format, "format", report.FormatUsage)
	}
}

// gateHooks are what the action adds to a gate run.
type gateHooks struct {
	override func(*scenario.Scenario) error // change the scenario after loading
	annotate func(*baselines.Results)       // add to the results before they are decided
}

// runGate runs and decides, as "benchgate gate" does, prints the report
// in format, and returns the decided report (nil when nothing was
// decided) with the exit error.
func runGate(ctx context.Context, rf runFlags, format string, stdout, stderr io.Writer, getenv func(string) string, hooks *gateHooks) (*report.Input, error) {
	if hooks == nil {
		hooks = &gateHooks{}
	}
	if rf.dryRun { // before anything is removed
		_, err := measure(ctx, rf, stdout, stderr, getenv, hooks.override)
		return nil, err
	}
	// A report left by an earlier run must never be taken for this one's.
	if err := report.RemoveFiles(rf.out); err != nil {
		return nil, withCode(exitRunFailed, err)
	}
	res, runErr := measure(ctx, rf, stdout, stderr, getenv, hooks.override)
	if res == nil {
		return nil, runErr
	}
	if hooks.annotate != nil {
		hooks.annotate(res)
		if err := baselines.Write(rf.out, res); err != nil {
			return nil, withCode(exitRunFailed, err)
		}
	}
	if len(res.Rungs) == 0 {
		// Nothing was measured (a target never came up): the files still
		// say so, for CI to publish, but a table of empty cells on the
		// terminal would only bury the error.
		format = ""
	}
	in, decideErr := decideAndReport(res, rf.out, format, string(rf.dashboard), stdout, stderr)
	if runErr != nil {
		// The run's failure decides the exit code; the report of what was
		// measured has been written all the same.
		return in, runErr
	}
	return in, decideErr
}

// decideAndReport decides res, writes report.md and decisions.json into
// out, prints the report in format on stdout ("": none), and returns the
// gate's outcome as an exit error.
func decideAndReport(res *baselines.Results, out, format, dashboard string, stdout, stderr io.Writer) (*report.Input, error) {
	c, err := decide.Results(res)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	in := report.Input{Results: res, Comparison: c, Dashboard: dashboard}
	if err := report.WriteFiles(out, in); err != nil {
		return nil, withCode(exitRunFailed, err)
	}
	if format != "" {
		show, err := report.ForFormat(format, in, report.TerminalOptions{Color: colorFor(stdout)})
		if err == nil {
			err = show(stdout)
		}
		if err != nil {
			return nil, withCode(exitRunFailed, err)
		}
	}
	fmt.Fprintf(stderr, "report: %s\n", filepath.Join(out, "report.md"))
	return &in, withCode(exitRegression, decide.Outcome(in.Comparison))
}

func colorFor(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && report.ColorFor(f)
}
