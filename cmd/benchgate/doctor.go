package main

import (
	"flag"
	"fmt"

	"github.com/benchgate/benchgate/doctor"
	"github.com/benchgate/benchgate/internal/cli"
	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/runner"
)

// cmdDoctor is "benchgate doctor [-scenario FILE] [-profile NAME]
// [-format terminal|json]". machine says where it looks and how long it
// samples busy processes (doctor.Options' Root and Sample: this machine
// and a second, or in tests a fake tree of the doctor package's testdata),
// and connect the engine it asks.
func cmdDoctor(machine doctor.Options, connect func() (doctor.Engine, func())) func(*call, *flag.FlagSet) (func() error, error) {
	return func(c *call, fs *flag.FlagSet) (func() error, error) {
		var file, profile string
		format := report.NewFormatFlag(doctor.Formats...)
		fs.StringVar(&file, "scenario", "", "check the pin sets and needs of this scenario `file` too")
		fs.StringVar(&profile, "profile", "", "profile `name` from the scenario's profiles (its pin sets)")
		fs.Var(&format, "format", "output `format`: terminal or json")
		return func() error {
			if profile != "" && file == "" {
				return cli.WithCode(cli.ExitUsage, fmt.Errorf("-profile %s needs -scenario", profile))
			}
			opts := doctor.Options{Root: machine.Root, Sample: machine.Sample}
			if file != "" {
				sc, err := runner.Load(runner.Request{Scenario: file, Profile: profile, Getenv: c.getenv})
				if err != nil {
					return cli.WithCode(cli.ExitUsage, err)
				}
				opts.Scenario = sc
			}
			engine, closeEngine := connect()
			defer closeEngine()
			opts.Docker = engine
			rep := doctor.Check(c.ctx, opts)
			if err := c.ctx.Err(); err != nil {
				return err
			}
			if err := doctor.Write(c.stdout, rep, format.Name, report.ColorFor(c.stdout)); err != nil {
				return cli.WithCode(cli.ExitRunFailed, err)
			}
			return cli.WithCode(cli.ExitRegression, rep.Err())
		}, nil
	}
}
