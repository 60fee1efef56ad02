package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/benchgate/benchgate/doctor"
	"github.com/benchgate/benchgate/internal/environ"
	"github.com/benchgate/benchgate/scenario"
)

// cmdDoctor is "benchgate doctor [-scenario FILE] [-profile NAME]
// [-format terminal|json]". machine says where it looks and how long it
// samples busy processes (doctor.Options' Root and Sample: this machine
// and a second, or in tests a fake tree of the doctor package's testdata),
// and connect the engine it asks.
func cmdDoctor(ctx context.Context, machine doctor.Options, connect func() (doctor.Engine, func()), args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var file, profile string
	format := formatOneOf("terminal", "json")
	if err := parseFlags("doctor", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&file, "scenario", "", "check the pin sets and needs of this scenario `file` too")
		fs.StringVar(&profile, "profile", "", "profile `name` from the scenario's profiles (its pin sets)")
		fs.Var(&format, "format", "output `format`: terminal or json")
	}); err != nil {
		return err
	}
	if profile != "" && file == "" {
		return withCode(exitUsage, fmt.Errorf("-profile %s needs -scenario", profile))
	}
	opts := doctor.Options{Root: machine.Root, Sample: machine.Sample}
	if file != "" {
		// Read as every command reads it: no ${VAR} of the runner's
		// credentials.
		env := environ.NewFilter(getenv)
		sc, err := scenario.Load(file, profile, env.Getenv)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("invalid scenario:\n%w", env.Explain(err)))
		}
		opts.Scenario = sc
	}
	engine, closeEngine := connect()
	defer closeEngine()
	opts.Docker = engine

	rep := doctor.Check(ctx, opts)
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	if format.name == "json" {
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
