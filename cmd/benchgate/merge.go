package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/report"
)

func cmdMerge(args []string, stdout, stderr io.Writer) error {
	var out string
	fs, err := parseFlagSet("merge", "[flags] SHARD/results.json...", args, 1<<16, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&out, "out", "benchgate-results", "output `dir` for the merged results.json")
	})
	if err != nil {
		return err
	}
	files := fs.Args()
	if len(files) == 0 {
		return withCode(exitUsage, errors.New("merge: no shard results given (want DIR/results.json of each shard)"))
	}
	m, err := baselines.MergeFiles(files)
	if err != nil {
		return withCode(exitUsage, err)
	}
	if err := baselines.Write(out, m); err != nil {
		return withCode(exitRunFailed, err)
	}
	if err := report.Merged(stdout, m); err != nil {
		return withCode(exitRunFailed, err)
	}
	fmt.Fprintf(stderr, "results: %s\n", filepath.Join(out, "results.json"))
	return nil
}
