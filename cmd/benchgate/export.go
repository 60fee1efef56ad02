package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/benchgate/benchgate/export"
	"github.com/benchgate/benchgate/internal/cli"
	"github.com/benchgate/benchgate/report"
)

// cmdExport is "benchgate export" (package export): a results file or a
// history in another tool's format, on stdout or into -out. Bad flags, a
// file that cannot be read or exported exit 2; a failed write exits 3.
func cmdExport(args []string, stdout, stderr io.Writer) error {
	format := report.NewFormatFlag(export.Formats...)
	format.Name = "" // required: no format is the obvious one
	var results, history, out string
	var opt export.Options
	fs, err := (cli.Line{Stderr: stderr, Help: help}).ParseFlagSet("export", "[flags]", args, 0, func(fs *flag.FlagSet) {
		fs.Var(&format, "format", export.FormatUsage)
		fs.StringVar(&results, "results", "benchgate-results/results.json", "results `file` of a complete run")
		fs.StringVar(&history, "history", "", "export this history `file` (JSON Lines) instead of a results file")
		fs.StringVar(&out, "out", "", "write to this `file` instead of stdout")
		fs.StringVar(&opt.Target, "target", "", "`target`: candidate or baseline (default candidate), or for csv all (its default)")
		fs.StringVar(&opt.Run, "run", "", "with -history: the run `id` to export (default: bmf and gab the latest run, csv every run)")
		fs.StringVar(&opt.Direction, "direction", "", "with -format gab: the metrics the file holds, by `direction`: smaller (customSmallerIsBetter) or bigger (customBiggerIsBetter)")
	})
	if err != nil {
		return err
	}
	opt.Format = format.Name
	switch {
	case cli.Given(fs, "results") && cli.Given(fs, "history"):
		return cli.WithCode(cli.ExitUsage, errors.New("-results and -history: give one, the file to export"))
	case cli.Given(fs, "history") && history == "":
		return cli.WithCode(cli.ExitUsage, errors.New("-history: want the history file to export"))
	}
	if err := opt.Check(); err != nil {
		return cli.WithCode(cli.ExitUsage, err)
	}
	files := export.Files{Results: results, Out: out}
	if cli.Given(fs, "history") {
		files = export.Files{History: history, Out: out}
	}
	if err := files.Export(opt, stdout); err != nil {
		if we := (*export.WriteError)(nil); errors.As(err, &we) {
			return cli.WithCode(cli.ExitRunFailed, err)
		}
		return cli.WithCode(cli.ExitUsage, err)
	}
	if out == "" {
		return nil
	}
	fmt.Fprintf(stderr, "export: %s\n", report.TerminalText(out))
	return nil
}
