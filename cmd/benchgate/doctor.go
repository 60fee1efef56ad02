package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/benchgate/benchgate/doctor"
	"github.com/benchgate/benchgate/scenario"
)

const doctorSummary = `Inspects this machine for stable benchmarking and prints, per check, OK,
WARN, FAIL or SKIP with what it found and what to change: the CPUs (and,
with -scenario, every pin set against them), the frequency governor,
turbo/boost, SMT, the load average, busy processes (a one-second sample),
memory, swap, transparent hugepages, cgroups, the Docker Engine and
virtualisation. It changes nothing. See docs/self-hosted.md.

Exit codes: 0 when no check FAILs (WARNs included), 1 when one does (the
scenario cannot run here as written), 2 for bad flags or an invalid
scenario.`

// doctorRoot, doctorEngine and doctorSample are where cmdDoctor looks and
// how long it samples busy processes: this machine, its engine, a second
// (doctor.Options.Sample 0), unless a test points them at a fake tree.
var (
	doctorRoot   = "/"
	doctorEngine = doctor.DockerFromEnv
	doctorSample time.Duration
)

// cmdDoctor is "benchgate doctor [-scenario FILE] [-profile NAME]
// [-format terminal|json]".
func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var file, profile, format string
	if err := parseFlags("doctor", doctorSummary, args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&file, "scenario", "", "check the pin sets and needs of this scenario `file` too")
		fs.StringVar(&profile, "profile", "", "profile `name` from the scenario's profiles (its pin sets)")
		fs.StringVar(&format, "format", "terminal", "output: terminal or json")
	}); err != nil {
		return err
	}
	if format != "terminal" && format != "json" {
		return withCode(exitUsage, fmt.Errorf("-format: %q is not terminal or json", format))
	}
	if profile != "" && file == "" {
		return withCode(exitUsage, fmt.Errorf("-profile %s needs -scenario", profile))
	}
	opts := doctor.Options{Root: doctorRoot, Sample: doctorSample}
	if file != "" {
		// Read as every command reads it: no ${VAR} of the runner's
		// credentials.
		env := newScenarioEnv(getenv)
		sc, err := scenario.Load(file, profile, env.Getenv)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("invalid scenario:\n%w", env.explain(err)))
		}
		opts.Scenario = sc
	}
	engine, closeEngine := doctorEngine()
	defer closeEngine()
	opts.Docker = engine

	rep := doctor.Check(ctx, opts)
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	if format == "json" {
		err = doctor.WriteJSON(stdout, rep)
	} else {
		err = doctor.WriteTerminal(stdout, rep, colorFor(stdout))
	}
	if err != nil {
		return withCode(exitRunFailed, err)
	}
	if rep.Failed() {
		var ids []string
		for _, c := range rep.Checks {
			if c.Status == doctor.Fail {
				ids = append(ids, c.Title)
			}
		}
		what := "check"
		if len(ids) > 1 {
			what = "checks"
		}
		return withCode(exitRegression, fmt.Errorf("doctor: %d %s failed: %s", len(ids), what, strings.Join(ids, ", ")))
	}
	return nil
}
