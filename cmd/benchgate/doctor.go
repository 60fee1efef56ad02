package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/benchgate/benchgate/doctor"
	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/runner"
)

// cmdDoctor is "benchgate doctor [-scenario FILE] [-profile NAME]
// [-format terminal|json]". machine says where it looks and how long it
// samples busy processes (doctor.Options' Root and Sample: this machine
// and a second, or in tests a fake tree of the doctor package's testdata),
// and connect the engine it asks.
func cmdDoctor(ctx context.Context, machine doctor.Options, connect func() (doctor.Engine, func()), args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var file, profile string
	format := report.NewFormatFlag(doctor.Formats...)
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
		sc, err := runner.Load(runner.Request{Scenario: file, Profile: profile, Getenv: getenv})
		if err != nil {
			return withCode(exitUsage, err)
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
	if err := doctor.Write(stdout, rep, format.Name, colorFor(stdout)); err != nil {
		return withCode(exitRunFailed, err)
	}
	return withCode(exitRegression, rep.Err())
}
