package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/internal/textsafe"
)

const mergeSummary = `Combines the results of the shards of one grid (benchgate run -shard i/n on
several runners) into one results file, as an unsharded run would have
written it: the same plan, every rung, each shard's machine. Decide it with
benchgate compare -results DIR/results.json. Every shard must be given,
once; shards of another scenario, profile or seed are refused.`

func cmdMerge(args []string, stdout, stderr io.Writer) error {
	var out string
	files, err := parseFlagsArgs("merge", "[flags] SHARD/results.json...", mergeSummary, args, 1<<16, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&out, "out", "benchgate-results", "output `dir` for the merged results.json")
	})
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return withCode(exitUsage, errors.New("merge: no shard results given (want DIR/results.json of each shard)"))
	}
	var parts []*baselines.Results
	rungs := 0
	for _, f := range files {
		r, err := baselines.Read(f)
		if err != nil {
			return withCode(exitUsage, err)
		}
		// Each shard is within the limits, but not their sum: stop
		// reading before they add up past what one file may hold.
		if rungs += len(r.Rungs); rungs > baselines.MaxRungs {
			return withCode(exitUsage, fmt.Errorf("merge: the shards up to %s hold more than %d rungs, more than one results file can", f, baselines.MaxRungs))
		}
		parts = append(parts, r)
	}
	m, err := baselines.Merge(parts)
	if err != nil {
		return withCode(exitUsage, err)
	}
	if err := baselines.Write(out, m); err != nil {
		return withCode(exitRunFailed, err)
	}
	// Status and fingerprints come from the shards' files, which a fork
	// may have written: one line each, as textsafe shows it.
	fmt.Fprintf(stdout, "merged %d shards: %d cells × %d rounds, status %s\n", len(m.Shards), len(m.Plan.Cells), m.Plan.Rounds, textsafe.Line(m.Status))
	for _, s := range m.Shards {
		fmt.Fprintf(stdout, "  shard %d/%d: %d cells, %s, on %s (fingerprint %s)\n",
			s.Index, len(m.Shards), s.Cells, textsafe.Line(s.Status), textsafe.Line(s.Env.FingerprintText()), textsafe.Line(s.Fingerprint))
	}
	fmt.Fprintf(stderr, "results: %s\n", filepath.Join(out, "results.json"))
	return nil
}
