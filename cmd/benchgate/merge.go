package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/internal/cli"
	"github.com/benchgate/benchgate/report"
)

func cmdMerge(c *call, fs *flag.FlagSet) (func() error, error) {
	out := fs.String("out", "benchgate-results", "output `dir` for the merged results.json")
	return func() error {
		files := fs.Args()
		if len(files) == 0 {
			return cli.WithCode(cli.ExitUsage, errors.New("merge: no shard results given (want DIR/results.json of each shard)"))
		}
		m, copies, err := benchdata.MergeFiles(files)
		if err != nil {
			return cli.WithCode(cli.ExitUsage, err)
		}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return cli.WithCode(cli.ExitRunFailed, err)
		}
		benchdata.CopyProfiles(*out, m, copies)
		if err := benchdata.Write(*out, m); err != nil {
			return cli.WithCode(cli.ExitRunFailed, err)
		}
		if err := report.Merged(c.stdout, m); err != nil {
			return cli.WithCode(cli.ExitRunFailed, err)
		}
		fmt.Fprintf(c.stderr, "results: %s\n", filepath.Join(*out, "results.json"))
		return nil
	}, nil
}
