package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/ghaction"
	"github.com/benchgate/benchgate/importers"
	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/runner"
	"github.com/benchgate/benchgate/scenario"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); otherwise
// the module version or VCS revision from the build info is used.
var version = ""

func toolVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return "dev"
}

const usageText = `benchgate — a performance-regression gate for pull requests

Usage:
  benchgate run     [flags]   measure baseline and candidate, write results.json
                              (-shard i/n: one part of the grid, for several runners)
  benchgate compare [flags]   decide and report from a results file, two saved
                              go test -bench outputs, or other tools' reports
  benchgate gate    [flags]   run, then compare: the CI entry point
  benchgate comment [flags]   post saved results as the sticky PR (or issue) comment
  benchgate merge   [flags]   combine the results of a grid's shards
  benchgate history [command] keep nightly results, show trends, find drift
  benchgate doctor  [flags]   check this machine for stable benchmarking
  benchgate calibrate [flags] the baseline against itself: what this runner can resolve
  benchgate version           print the version

Run "benchgate <command> -h" for a command's flags.

Exit codes: 0 pass, 1 regression (or a gated cell that could not be decided),
2 usage or invalid scenario, 3 the run itself failed or was cancelled, or
benchgate crashed (it says so: a crash is never 2).
`

// run is the whole CLI. getenv is the environment: the action's inputs and
// token, and through scenarioEnv a scenario's ${VAR}.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return withCode(exitUsage, errors.New("no command given"))
	}
	cmd, rest := args[0], args[1:]
	if getenv("GITHUB_ACTIONS") == "true" {
		// In a workflow, what benchgate prints is the step's log, and the
		// runner acts on commands in it: progress lines, reports and
		// errors quote targets and pull requests, so no line of them may
		// be one. benchgate's own annotations pass (ghaction writes them
		// beneath the LogWriter).
		if toLog(stdout) {
			lw := ghaction.NewLogWriter(stdout)
			defer lw.Flush()
			stdout = lw
		}
		if toLog(stderr) {
			lw := ghaction.NewLogWriter(stderr)
			defer lw.Flush()
			stderr = lw
		}
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
	case "doctor":
		return cmdDoctor(ctx, rest, stdout, stderr, getenv)
	case "calibrate":
		return cmdCalibrate(ctx, rest, stdout, stderr, getenv)
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, "benchgate", toolVersion())
		return nil
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return nil
	default:
		fmt.Fprint(stderr, usageText)
		return withCode(exitUsage, fmt.Errorf("unknown command %q", cmd))
	}
}

// toLog says whether w is a log rather than a file the output was
// redirected to (`benchgate compare -format json > x.json`), whose bytes
// must stay as written.
func toLog(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return true
	}
	fi, err := f.Stat()
	return err != nil || !fi.Mode().IsRegular()
}

// runFlags are the flags run and gate share.
type runFlags struct {
	scenario string
	profile  string
	out      string
	budget   time.Duration
	shard    runner.Shard // run only: a part of the grid
	// allowDataOutside lifts the confinement of data files to the
	// scenario's directory tree (scenario.LoadOptions).
	allowDataOutside bool
}

// parseShard reads -shard i/n.
func parseShard(s string) (runner.Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	idx, err1 := strconv.Atoi(i)
	cnt, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || cnt < 1 || idx < 1 || idx > cnt {
		return runner.Shard{}, fmt.Errorf("-shard %q: want i/n with 1 <= i <= n, e.g. 2/3", s)
	}
	return runner.Shard{Index: idx, Count: cnt}, nil
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.scenario, "scenario", "benchgate.yml", "scenario `file`")
	fs.StringVar(&f.profile, "profile", "", "profile `name` from the scenario's profiles (e.g. pr, nightly)")
	fs.StringVar(&f.out, "out", "benchgate-results", "output `dir`: results.json, report.md, decisions.json, target logs")
	fs.DurationVar(&f.budget, "budget", 0, "refuse a plan longer than this `duration` (0: no limit)")
	fs.BoolVar(&f.allowDataOutside, "allow-data-outside", false, "let the scenario's data files be outside its directory tree (they must still be regular files)")
}

// compareFlags are the flags compare and gate share.
type compareFlags struct {
	format string
}

func (f *compareFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.format, "format", "terminal", "report on stdout: terminal, markdown or json")
}

func (f *compareFlags) check() error {
	if _, err := report.ForFormat(f.format, report.Input{}, report.TerminalOptions{}); err != nil {
		return fmt.Errorf("-format: %w", err)
	}
	return nil
}

// newFlagSet makes a flag set whose errors and -h go to stderr, and parses
// args. A -h returns errSilent with exit 0; a bad flag, exit 2.
func parseFlags(name, summary string, args []string, stderr io.Writer, register func(*flag.FlagSet)) error {
	_, err := parseFlagsArgs(name, "[flags]", summary, args, 0, stderr, register)
	return err
}

// parseFlagsArgs is parseFlags for a command that also takes up to max
// arguments after its flags, which it returns; usage shows how.
func parseFlagsArgs(name, usage, summary string, args []string, max int, stderr io.Writer, register func(*flag.FlagSet)) ([]string, error) {
	fs := flag.NewFlagSet("benchgate "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: benchgate %s %s\n\n%s\n\nFlags:\n", name, usage, summary)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, withCode(exitPass, errSilent)
		}
		return nil, withCode(exitUsage, errSilent)
	}
	if fs.NArg() > max {
		fs.Usage()
		return nil, withCode(exitUsage, fmt.Errorf("unexpected argument %q", fs.Arg(max)))
	}
	return fs.Args(), nil
}

const runSummary = `Starts the scenario's baseline and candidate, drives the identical seeded
workload at both, interleaved, and writes every rung to DIR/results.json as
it completes. A cancelled or failed run keeps every rung measured.`

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var rf runFlags
	var shard string
	if err := parseFlags("run", runSummary, args, stderr, func(fs *flag.FlagSet) {
		rf.register(fs)
		fs.StringVar(&shard, "shard", "", "run only part `i/n` of the grid (1-based), e.g. 2/3 on the second of three runners; combine the parts with benchgate merge")
	}); err != nil {
		return err
	}
	if shard != "" {
		var err error
		if rf.shard, err = parseShard(shard); err != nil {
			return withCode(exitUsage, err)
		}
	}
	res, err := measure(ctx, rf, stderr, getenv, nil)
	if res != nil {
		fmt.Fprintf(stderr, "results: %s (%s, %d rungs)\n", filepath.Join(rf.out, "results.json"), res.Status, len(res.Rungs))
	}
	return err
}

// measure loads the scenario, lets override change it (the action's image
// inputs; nil for none), and runs it. Errors carry their exit code.
func measure(ctx context.Context, rf runFlags, stderr io.Writer, getenv func(string) string, override func(*scenario.Scenario) error) (*baselines.Results, error) {
	env := newScenarioEnv(getenv)
	getenv = env.Getenv
	sc, err := scenario.LoadWith(rf.scenario, rf.profile, scenario.LoadOptions{Getenv: getenv, AllowDataOutside: rf.allowDataOutside})
	if err != nil {
		return nil, withCode(exitUsage, fmt.Errorf("invalid scenario:\n%w", env.explain(err)))
	}
	if override != nil {
		if err := override(sc); err != nil {
			return nil, withCode(exitUsage, err)
		}
	}
	run := runner.Run
	if sc.Kind == scenario.KindGoBench {
		if rf.shard.Count > 0 {
			return nil, withCode(exitUsage, errors.New("-shard: a gobench scenario runs whole: its cells are found as it runs"))
		}
		run = runner.RunGoBench
		tools := []string{"go"}
		if sc.Baseline.Ref != "" || sc.Candidate.Ref != "" {
			tools = append(tools, "git")
		}
		for _, tool := range tools {
			if _, err := exec.LookPath(tool); err != nil {
				return nil, withCode(exitRunFailed, fmt.Errorf("a gobench scenario needs the %s command on PATH (the action's container image has none: run it with the benchgate CLI): %w", tool, err))
			}
		}
	}
	res, err := run(ctx, sc, runner.Options{
		OutDir:      rf.out,
		Progress:    stderr,
		Budget:      rf.budget,
		ToolVersion: toolVersion(),
		Getenv:      getenv,
		Shard:       rf.shard,
		Open:        openCells,
	})
	if err == nil {
		return res, nil
	}
	var be *runner.BudgetError
	var ie *runner.InputError
	if errors.As(err, &be) {
		return res, withCode(exitUsage, err)
	}
	if errors.As(err, &ie) {
		// Found before any load: the scenario does not fit its targets.
		return res, withCode(exitUsage, fmt.Errorf("invalid scenario: %w", err))
	}
	if res == nil && sc.Kind == scenario.KindGoBench {
		// Refused before anything ran: an unknown ref, a directory
		// without the module. The scenario names what cannot be.
		return nil, withCode(exitUsage, fmt.Errorf("invalid scenario: %w", err))
	}
	if errors.Is(err, context.Canceled) {
		return res, withCode(exitRunFailed, fmt.Errorf("run cancelled: %w", err))
	}
	return res, withCode(exitRunFailed, fmt.Errorf("run failed: %w", err))
}

const compareSummary = `Decides every cell of a results file with the pre-registered rule that the
scenario declared, prints the report and writes report.md and
decisions.json beside the results. Exits 1 when a pre-declared regression
happened or a gated cell could not be decided.

With two files, OLD and NEW, it compares saved "go test -bench" outputs as
benchstat does: each occurrence of a benchmark is one repetition. With
-import it reads another load tool's reports (vegeta, ghz, oha, k6), one
file per repetition of each side. Both write results.json to -out too, and
take the gate section (and a gobench scenario's rename rules) from
-scenario when given.`

func cmdCompare(args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var cf compareFlags
	var results, out, scenarioFile, tool, class, baseList, candList string
	files, err := parseFlagsArgs("compare", "[flags] [OLD.txt NEW.txt]", compareSummary, args, 2, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&results, "results", "benchgate-results/results.json", "results `file` written by run or gate")
		fs.StringVar(&out, "out", "", "`dir` for report.md and decisions.json (default: the results file's directory, or benchgate-results for files)")
		fs.StringVar(&scenarioFile, "scenario", "", "scenario `file` whose gate section decides files (and, for Go benchmarks, whose rename rules pair them)")
		fs.StringVar(&tool, "import", "", "read `tool`'s reports: "+strings.Join(importers.Tools, ", "))
		fs.StringVar(&baseList, "baseline", "", "with -import: the baseline's report `files`, comma-separated, one per repetition")
		fs.StringVar(&candList, "candidate", "", "with -import: the candidate's report `files`, comma-separated, as many")
		fs.StringVar(&class, "class", "", "with -import: the cell's class `name` (default load)")
		cf.register(fs)
	})
	if err != nil {
		return err
	}
	if err := cf.check(); err != nil {
		return withCode(exitUsage, err)
	}
	var res *baselines.Results
	switch {
	case len(files) == 1:
		return withCode(exitUsage, errors.New("compare of files needs two: the baseline's go test -bench output and the candidate's"))
	case len(files) == 2 || tool != "":
		if len(files) == 2 && tool != "" {
			return withCode(exitUsage, errors.New("-import reads -baseline and -candidate, not OLD NEW arguments"))
		}
		kind := scenario.KindGoBench
		if tool != "" {
			kind = scenario.KindHTTP
		}
		var sc *scenario.Scenario
		if scenarioFile != "" {
			env := newScenarioEnv(getenv)
			if sc, err = scenario.Load(scenarioFile, "", env.Getenv); err != nil {
				return withCode(exitUsage, env.explain(err))
			}
			if sc.Kind != kind && !(tool != "" && sc.Kind == scenario.KindGRPC) {
				return withCode(exitUsage, fmt.Errorf("%s: a %s scenario cannot decide %s (want kind: %s)", scenarioFile, sc.Kind, map[bool]string{true: tool + " reports", false: "go test -bench outputs"}[tool != ""], kind))
			}
		}
		if tool != "" {
			res, err = importResults(tool, baseList, candList, class, sc)
		} else {
			res, err = goBenchFiles(files[0], files[1], sc)
		}
		if err != nil {
			return withCode(exitUsage, err)
		}
		if out == "" {
			out = "benchgate-results"
		}
		if err := baselines.Write(out, res); err != nil {
			return withCode(exitRunFailed, err)
		}
		_, err = decideAndReport(res, out, cf, stdout, stderr)
		return err
	case baseList != "" || candList != "" || class != "":
		return withCode(exitUsage, errors.New("-baseline, -candidate and -class go with -import"))
	}
	res, err = baselines.Read(results)
	if err != nil {
		return withCode(exitUsage, err)
	}
	if out == "" {
		out = filepath.Dir(results)
	}
	_, err = decideAndReport(res, out, cf, stdout, stderr)
	if res.Status != "complete" && exitCode(err) != exitUsage {
		// A run that did not finish never passes: what it measured is
		// reported, and the exit code says the run failed.
		msg := fmt.Sprintf("results of a %s run: decided on %d complete round(s) of %d", res.Status, res.CompleteRounds(), res.Plan.Rounds)
		if res.Error != "" {
			msg += "; the run said: " + res.Error
		}
		return withCode(exitRunFailed, errors.New(msg))
	}
	return err
}

const gateSummary = `Runs the scenario (as "run") and decides it (as "compare"): the entry point
of CI and of the GitHub Action. Exits 0 pass, 1 regression, 2 invalid
scenario, 3 run failed; a failed or cancelled run still reports the complete
rounds it measured.`

func cmdGate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if getenv("GITHUB_ACTIONS") == "true" {
		return actionGate(ctx, args, stdout, stderr, getenv)
	}
	_, _, err := runGate(ctx, args, stdout, stderr, getenv, nil)
	return err
}

// gateHooks are what the action adds to a gate run.
type gateHooks struct {
	override func(*scenario.Scenario) error // change the scenario after loading
	annotate func(*baselines.Results)       // add to the results before they are decided
}

// runGate runs and decides, as "benchgate gate" does, and returns the results
// and the decided report (each nil when it never came to be) with the exit
// error.
func runGate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string, hooks *gateHooks) (*baselines.Results, *report.Input, error) {
	if hooks == nil {
		hooks = &gateHooks{}
	}
	var rf runFlags
	var cf compareFlags
	err := parseFlags("gate", gateSummary, args, stderr, func(fs *flag.FlagSet) {
		rf.register(fs)
		cf.register(fs)
	})
	if err != nil {
		return nil, nil, err
	}
	if err := cf.check(); err != nil {
		return nil, nil, withCode(exitUsage, err)
	}
	// A report left by an earlier run must never be taken for this one's.
	for _, name := range []string{"report.md", "decisions.json"} {
		if err := os.Remove(filepath.Join(rf.out, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, withCode(exitRunFailed, err)
		}
	}
	res, runErr := measure(ctx, rf, stderr, getenv, hooks.override)
	if res == nil {
		return nil, nil, runErr
	}
	if hooks.annotate != nil {
		hooks.annotate(res)
		if err := baselines.Write(rf.out, res); err != nil {
			return res, nil, withCode(exitRunFailed, err)
		}
	}
	if len(res.Rungs) == 0 {
		// Nothing was measured (a target never came up): the files still
		// say so, for CI to publish, but a table of empty cells on the
		// terminal would only bury the error.
		cf.format = "none"
	}
	in, decideErr := decideAndReport(res, rf.out, cf, stdout, stderr)
	if runErr != nil {
		// The run's failure decides the exit code; the report of what was
		// measured has been written all the same.
		return res, in, runErr
	}
	return res, in, decideErr
}

// decideAndReport decides res, writes report.md and decisions.json into
// out, prints the chosen report on stdout, and returns the gate's outcome
// as an exit error.
func decideAndReport(res *baselines.Results, out string, cf compareFlags, stdout, stderr io.Writer) (*report.Input, error) {
	in, err := decideInput(res)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, withCode(exitRunFailed, err)
	}
	for name, rep := range map[string]func(io.Writer, report.Input) error{
		"report.md":      report.Markdown,
		"decisions.json": report.JSON,
	} {
		if err := baselines.WriteFile(filepath.Join(out, name), func(w io.Writer) error { return rep(w, in) }); err != nil {
			return nil, withCode(exitRunFailed, err)
		}
	}
	if err := writeCharts(out, in); err != nil {
		return nil, withCode(exitRunFailed, err)
	}
	if cf.format != "none" {
		show, err := report.ForFormat(cf.format, in, report.TerminalOptions{Color: colorFor(stdout)})
		if err == nil {
			err = show(stdout)
		}
		if err != nil {
			return nil, withCode(exitRunFailed, err)
		}
	}
	fmt.Fprintf(stderr, "report: %s\n", filepath.Join(out, "report.md"))
	return &in, outcomeError(in.Comparison)
}

func colorFor(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && report.ColorFor(f)
}

// outcomeError turns the comparison's outcome into the exit error.
func outcomeError(c gate.Comparison) error {
	switch c.Outcome {
	case gate.Pass:
		return nil
	case gate.Fail:
		var cells, parts []string
		for _, f := range c.Failures {
			switch f.Kind {
			case gate.FailAgreement:
				name := f.Key.Class
				if f.Key.Variant != "" {
					name = f.Key.Variant + "/" + name
				}
				parts = append(parts, "agreement: "+name+" answers differently")
			case gate.FailPreflight:
				parts = append(parts, f.Reason)
			case gate.FailInconclusive, gate.FailUnresolved:
			default:
				cells = append(cells, fmt.Sprintf("%s %s", cellName(f.Key), f.Metric))
			}
		}
		if len(cells) > 0 {
			parts = append(parts, fmt.Sprintf("%d pre-declared regression(s): %s", len(cells), strings.Join(cells, ", ")))
		}
		return withCode(exitRegression, fmt.Errorf("gate failed: %s", strings.Join(parts, "; ")))
	default:
		if len(c.Cells) == 0 {
			return withCode(exitRegression, errors.New("gate inconclusive: no cell was measured (see the absent classes, if any)"))
		}
		var undecided, unresolved int
		for _, f := range c.Failures {
			switch f.Kind {
			case gate.FailUnresolved:
				unresolved++
			case gate.FailInconclusive:
				undecided++
			}
		}
		var parts []string
		if undecided > 0 {
			parts = append(parts, fmt.Sprintf("%d gated metric(s) could not be decided", undecided))
		}
		if unresolved > 0 {
			parts = append(parts, fmt.Sprintf("%d gated tie(s) could not resolve the tie band on this runner (gate.unresolved: fail)", unresolved))
		}
		if len(parts) == 0 {
			parts = append(parts, "nothing decided")
		}
		return withCode(exitRegression, fmt.Errorf("gate inconclusive: %s", strings.Join(parts, "; ")))
	}
}

// openCells is the adaptive design's look: the results so far decided by
// the one decision path, and the cells whose gated verdict is still open.
func openCells(res *baselines.Results) ([]baselines.Cell, error) {
	in, err := decideInput(res)
	if err != nil {
		return nil, err
	}
	var cells []baselines.Cell
	for _, k := range in.Comparison.OpenCells() {
		cells = append(cells, baselines.Cell{Pins: k.Pins, Variant: k.Variant, Class: k.Class, Concurrency: k.Concurrency})
	}
	return cells, nil
}

func cellName(k gate.CellKey) string {
	return baselines.Cell{Pins: k.Pins, Variant: k.Variant, Class: k.Class, Concurrency: k.Concurrency}.String()
}
