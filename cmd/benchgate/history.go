package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/importers"
	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/site"
)

const defaultHistoryFile = "benchgate-history/history.jsonl"

// cmdHistory is "benchgate history": append, show, drift, site and prune.
func cmdHistory(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	_, _ = ctx, getenv
	if len(args) == 0 {
		fmt.Fprint(stderr, help("history"))
		return withCode(exitUsage, errors.New("history needs a command: append, show, drift, site or prune"))
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "append":
		return historyAppend(rest, stderr)
	case "show":
		return historyShow(rest, stdout, stderr)
	case "drift":
		return historyDrift(rest, stdout, stderr)
	case "site":
		return historySite(rest, stderr)
	case "prune":
		return historyPrune(rest, stderr)
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 && sub == "help" {
			// "benchgate history help drift" is "benchgate history drift -h".
			return cmdHistory(ctx, append(slices.Clone(rest[:1]), "-h"), stdout, stderr, getenv)
		}
		fmt.Fprint(stdout, help("history"))
		return nil
	default:
		return withCode(exitUsage, unknownCommand("history", sub, []string{"append", "show", "drift", "site", "prune", "help"}))
	}
}

func historyAppend(args []string, stderr io.Writer) error {
	var results, file, date, baseCommit, candCommit string
	err := parseFlags("history append", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&results, "results", "benchgate-results/results.json", "results `file` of a complete run")
		fs.StringVar(&file, "history", defaultHistoryFile, "history `file` (JSON Lines) to append to")
		fs.StringVar(&date, "date", "", "the run's date, RFC 3339 `time` (default: the run's start; needed for results compared from files)")
		fs.StringVar(&baseCommit, "baseline-commit", "", "record this baseline `commit` instead of the one in the results")
		fs.StringVar(&candCommit, "candidate-commit", "", "record this candidate `commit` instead of the one in the results")
	})
	if err != nil {
		return err
	}
	res, err := baselines.Read(results)
	if err != nil {
		return withCode(exitUsage, err)
	}
	var opt decide.RecordOptions
	if date != "" {
		if opt.Date, err = time.Parse(time.RFC3339, date); err != nil {
			return withCode(exitUsage, fmt.Errorf("-date: want an RFC 3339 time such as 2026-01-31T02:00:00Z: %v", err))
		}
	}
	opt.BaselineCommit, opt.CandidateCommit, opt.Now = baseCommit, candCommit, time.Now()
	rec, err := decide.Record(res, opt)
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("%s: %w", results, err))
	}
	if held, err := baselines.InHistory(file, rec); err != nil {
		return withCode(exitUsage, err)
	} else if held {
		fmt.Fprintln(stderr, report.HistoryHeld(rec, file))
		return nil
	}
	if err := baselines.AppendHistory(file, rec); err != nil {
		return withCode(exitRunFailed, fmt.Errorf("history: %w", err))
	}
	fmt.Fprintln(stderr, report.HistoryAppended(rec, file))
	return nil
}

// changePointFlags are the change-point options show and drift share.
type changePointFlags struct {
	files importers.FileList
	opt   baselines.ChangePointOptions
}

func (f *changePointFlags) register(fs *flag.FlagSet) {
	f.files = importers.FileList{defaultHistoryFile}
	fs.Var(&f.files, "history", "history `files` (JSON Lines), comma-separated: one, or prune's monthly archives and the history, read as one")
	fs.Float64Var(&f.opt.MaxPValue, "max-pvalue", baselines.DefaultMaxPValue, "a change point needs a t-test `p`-value below this")
	fs.Float64Var(&f.opt.MinMagnitude, "min-magnitude", baselines.DefaultMinMagnitude, "and a relative change of the means of at least this `fraction` (a tiny value such as 1e-9 keeps all)")
	fs.IntVar(&f.opt.MinWindow, "min-window", baselines.DefaultMinWindow, "fewest `points` on each side of a change point (at least 2)")
}

// read reads the history files as one history, its errors an exit code 2.
func (f *changePointFlags) read() ([]baselines.Record, error) {
	if len(f.files) == 0 {
		return nil, withCode(exitUsage, errors.New("-history: want a history file"))
	}
	recs, err := baselines.ReadHistories(f.files)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	return recs, nil
}

func historyShow(args []string, stdout, stderr io.Writer) error {
	var cf changePointFlags
	var sf baselines.SeriesFilter
	var chartDir string
	var last int
	err := parseFlags("history show", args, stderr, func(fs *flag.FlagSet) {
		cf.register(fs)
		fs.StringVar(&sf.Cell, "cell", "*", "cells whose name (\"Q01 c=8\", \"csv/Q01 c=8\") or class matches this `glob`")
		fs.StringVar(&sf.Metric, "metric", "rps", "`metric` to show (rps, p50, p95, p99, error_rate, cpu_per_req, mem_peak, or a Go unit such as sec/op)")
		fs.StringVar(&sf.Target, "target", "candidate", "`target`: candidate, baseline or all")
		fs.StringVar(&sf.Fingerprint, "fingerprint", "", "only the machine whose fingerprint starts with this `prefix`")
		fs.IntVar(&last, "last", 0, "show only the last `n` runs of each series (0: all); change points are found on all")
		fs.StringVar(&chartDir, "charts", "", "also write each series' trend as an SVG chart into this `dir`")
	})
	if err != nil {
		return err
	}
	if err := errors.Join(cf.opt.Check(), sf.Check()); err != nil {
		return withCode(exitUsage, err)
	}
	if last < 0 {
		return withCode(exitUsage, errors.New("-last: want 0 or more runs"))
	}
	recs, err := cf.read()
	if err != nil {
		return err
	}
	in, err := report.SelectHistory(recs, sf, cf.opt, last)
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("%s: %w", cf.files.String(), err))
	}
	if err := report.History(stdout, in); err != nil {
		return withCode(exitRunFailed, err)
	}
	if chartDir != "" {
		if err := report.WriteTrendCharts(chartDir, in); err != nil {
			return withCode(exitRunFailed, err)
		}
	}
	return nil
}

func historyDrift(args []string, stdout, stderr io.Writer) error {
	var cf changePointFlags
	format := report.ForFormatFlag()
	err := parseFlags("history drift", args, stderr, func(fs *flag.FlagSet) {
		cf.register(fs)
		fs.Var(&format, "format", report.FormatUsage)
	})
	if err != nil {
		return err
	}
	if err := cf.opt.Check(); err != nil {
		return withCode(exitUsage, err)
	}
	recs, err := cf.read()
	if err != nil {
		return err
	}
	d := baselines.AnalyzeDrift(recs, cf.opt)
	if err := report.Drift(stdout, report.DriftInput{Result: d, Records: len(recs), File: cf.files.String()}, format.Name); err != nil {
		return withCode(exitRunFailed, err)
	}
	if n := d.Worse(); n > 0 {
		return withCode(exitRegression, fmt.Errorf("drift: %d change point(s) for the worse: %s", n, strings.Join(report.WorseFindings(d), ", ")))
	}
	return nil
}

func historySite(args []string, stderr io.Writer) error {
	var cf changePointFlags
	opt := site.DefaultOptions
	opt.Now = time.Now()
	var out string
	err := parseFlags("history site", args, stderr, func(fs *flag.FlagSet) {
		cf.register(fs)
		fs.StringVar(&out, "out", "", "`dir` to write the site into (replaced as a whole; a new or empty directory, or an earlier site)")
		fs.StringVar(&opt.RepoURL, "repo-url", "", "link commits to this repository's https `url` (https://github.com/OWNER/REPO)")
		fs.IntVar(&opt.Months, "months", opt.Months, "keep only the last `n` months of records before the newest (0: all)")
	})
	if err != nil {
		return err
	}
	if out == "" {
		return withCode(exitUsage, errors.New("-out: want a directory to write the site into"))
	}
	opt.ChangePoints = cf.opt
	if err := errors.Join(cf.opt.Check(), opt.Check()); err != nil {
		return withCode(exitUsage, err)
	}
	if err := site.CheckOut(out); err != nil {
		return withCode(exitUsage, err)
	}
	recs, err := cf.read()
	if err != nil {
		return err
	}
	s, err := site.Build(out, recs, opt)
	var tooMany *site.CellsError
	switch {
	case errors.As(err, &tooMany): // the history's, refused before anything is written
		return withCode(exitUsage, err)
	case err != nil:
		return withCode(exitRunFailed, err)
	}
	fmt.Fprintln(stderr, s.Summary(out))
	return nil
}

func historyPrune(args []string, stderr io.Writer) error {
	var file, archive string
	var months int
	err := parseFlags("history prune", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&file, "history", defaultHistoryFile, "history `file` (JSON Lines) to keep short")
		fs.IntVar(&months, "months", 0, "keep the records of the last `n` months before the newest (required)")
		fs.StringVar(&archive, "archive", "", "append the older records to `dir`/YYYY-MM.jsonl, their month's archive (default: drop them)")
	})
	if err != nil {
		return err
	}
	if months <= 0 {
		return withCode(exitUsage, errors.New("-months: want the number of months to keep, 1 or more"))
	}
	recs, err := baselines.ReadHistory(file)
	if err != nil {
		return withCode(exitUsage, err)
	}
	p, err := baselines.PruneHistory(file, recs, months, archive, time.Now())
	var link *baselines.LinkError
	switch {
	case errors.As(err, &link): // the archive's, refused before anything is written
		return withCode(exitUsage, err)
	case err != nil:
		return withCode(exitRunFailed, err)
	}
	fmt.Fprintln(stderr, report.HistoryPruned(p, file, archive))
	return nil
}
