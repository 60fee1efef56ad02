package main

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/importers"
	"github.com/benchgate/benchgate/internal/cli"
	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/site"
)

const defaultHistoryFile = "benchgate-history/history.jsonl"

// historyCommands is "benchgate history": append, show, drift, site and prune.
var historyCommands = command{Name: "history", Missing: "history needs a command: append, show, drift, site or prune", Sub: []command{
	{Name: "append", Define: historyAppend},
	{Name: "show", Define: historyShow},
	{Name: "drift", Define: historyDrift},
	{Name: "site", Define: historySite},
	{Name: "prune", Define: historyPrune},
}}

func historyAppend(c *call, fs *flag.FlagSet) (func() error, error) {
	var results, file, date string
	var opt decide.RecordOptions
	fs.StringVar(&results, "results", "benchgate-results/results.json", "results `file` of a complete run")
	fs.StringVar(&file, "history", defaultHistoryFile, "history `file` (JSON Lines) to append to")
	fs.StringVar(&date, "date", "", "the run's date, RFC 3339 `time` (default: the run's start; needed for results compared from files)")
	fs.StringVar(&opt.BaselineCommit, "baseline-commit", "", "record this baseline `commit` instead of the one in the results")
	fs.StringVar(&opt.CandidateCommit, "candidate-commit", "", "record this candidate `commit` instead of the one in the results")
	fs.StringVar(&opt.RunURL, "run-url", "", "the workflow run's page, an https `URL` the history site links a cell's latest profiles to (default: the action's run, when it ran the gate)")
	return func() error {
		res, err := benchdata.Read(results)
		if err != nil {
			return cli.WithCode(cli.ExitUsage, err)
		}
		if date != "" {
			if opt.Date, err = time.Parse(time.RFC3339, date); err != nil {
				return cli.WithCode(cli.ExitUsage, fmt.Errorf("-date: want an RFC 3339 time such as 2026-01-31T02:00:00Z: %v", err))
			}
		}
		opt.Now = time.Now()
		rec, err := decide.Record(res, opt)
		if err != nil {
			return cli.WithCode(cli.ExitUsage, fmt.Errorf("%s: %w", results, err))
		}
		rec.Where = report.WhereRecords(report.LoadWhere(filepath.Dir(results), res))
		if held, err := benchdata.InHistory(file, rec); err != nil {
			return cli.WithCode(cli.ExitUsage, err)
		} else if held {
			fmt.Fprintln(c.stderr, report.HistoryHeld(rec, file))
			return nil
		}
		if err := benchdata.AppendHistory(file, rec); err != nil {
			return cli.WithCode(cli.ExitRunFailed, fmt.Errorf("history: %w", err))
		}
		fmt.Fprintln(c.stderr, report.HistoryAppended(rec, file))
		return nil
	}, nil
}

// changePointFlags are the change-point options show, drift and site share.
type changePointFlags struct {
	files importers.FileList
	opt   benchdata.ChangePointOptions
}

func (f *changePointFlags) register(fs *flag.FlagSet) {
	f.files = importers.FileList{defaultHistoryFile}
	fs.Var(&f.files, "history", "history `files` (JSON Lines), comma-separated: one, or prune's monthly archives and the history, read as one")
	fs.Float64Var(&f.opt.MaxPValue, "max-pvalue", benchdata.DefaultMaxPValue, "a change point needs a t-test `p`-value below this")
	fs.Float64Var(&f.opt.MinMagnitude, "min-magnitude", benchdata.DefaultMinMagnitude, "and a relative change of the means of at least this `fraction` (a tiny value such as 1e-9 keeps all)")
	fs.IntVar(&f.opt.MinWindow, "min-window", benchdata.DefaultMinWindow, "fewest `points` on each side of a change point (at least 2)")
}

// read reads the history files as one history, its errors an exit code 2.
func (f *changePointFlags) read() ([]benchdata.Record, error) {
	if len(f.files) == 0 {
		return nil, cli.WithCode(cli.ExitUsage, errors.New("-history: want a history file"))
	}
	recs, err := benchdata.ReadHistories(f.files)
	return recs, cli.WithCode(cli.ExitUsage, err)
}

func historyShow(c *call, fs *flag.FlagSet) (func() error, error) {
	var cf changePointFlags
	var sf benchdata.SeriesFilter
	var chartDir string
	cf.register(fs)
	fs.StringVar(&sf.Cell, "cell", "*", "cells whose name (\"Q01 c=8\", \"csv/Q01 c=8\") or class matches this `glob`")
	fs.StringVar(&sf.Metric, "metric", "rps", "`metric` to show (rps, p50, p95, p99, error_rate, cpu_per_req, mem_peak, or a Go unit such as sec/op)")
	fs.StringVar(&sf.Target, "target", "candidate", "`target`: candidate, baseline or all")
	fs.StringVar(&sf.Fingerprint, "fingerprint", "", "only the machine whose fingerprint starts with this `prefix`")
	fs.IntVar(&sf.Last, "last", 0, "show only the last `n` runs of each series (0: all); change points are found on all")
	fs.StringVar(&chartDir, "charts", "", "also write each series' trend as an SVG chart into this `dir`")
	return func() error {
		if err := errors.Join(cf.opt.Check(), sf.Check()); err != nil {
			return cli.WithCode(cli.ExitUsage, err)
		}
		recs, err := cf.read()
		if err != nil {
			return err
		}
		in, err := report.SelectHistory(recs, sf, cf.opt)
		if err != nil {
			return cli.WithCode(cli.ExitUsage, fmt.Errorf("%s: %w", cf.files.String(), err))
		}
		return cli.WithCode(cli.ExitRunFailed, report.ShowHistory(c.stdout, in, chartDir))
	}, nil
}

func historyDrift(c *call, fs *flag.FlagSet) (func() error, error) {
	var cf changePointFlags
	format := report.ForFormatFlag()
	cf.register(fs)
	fs.Var(&format, "format", report.FormatUsage)
	return func() error {
		if err := cf.opt.Check(); err != nil {
			return cli.WithCode(cli.ExitUsage, err)
		}
		recs, err := cf.read()
		if err != nil {
			return err
		}
		d := benchdata.AnalyzeDrift(recs, cf.opt)
		if err := report.Drift(c.stdout, report.DriftInput{Result: d, Records: len(recs), File: cf.files.String()}, format.Name); err != nil {
			return cli.WithCode(cli.ExitRunFailed, err)
		}
		return cli.WithCode(cli.ExitRegression, report.DriftOutcome(d))
	}, nil
}

func historySite(c *call, fs *flag.FlagSet) (func() error, error) {
	var cf changePointFlags
	opt := site.DefaultOptions
	opt.Now = time.Now()
	var out string
	cf.register(fs)
	fs.StringVar(&out, "out", "", "`dir` to write the site into (replaced as a whole; a new or empty directory, or an earlier site)")
	fs.StringVar(&opt.RepoURL, "repo-url", "", "link commits to this repository's https `url` (https://github.com/OWNER/REPO)")
	fs.IntVar(&opt.Months, "months", opt.Months, "keep only the last `n` months of records before the newest (0: all)")
	return func() error {
		if out == "" {
			return cli.WithCode(cli.ExitUsage, errors.New("-out: want a directory to write the site into"))
		}
		opt.ChangePoints = cf.opt
		if err := errors.Join(cf.opt.Check(), opt.Check()); err != nil {
			return cli.WithCode(cli.ExitUsage, err)
		}
		if err := site.CheckOut(out); err != nil {
			return cli.WithCode(cli.ExitUsage, err)
		}
		recs, err := cf.read()
		if err != nil {
			return err
		}
		s, err := site.Build(out, recs, opt)
		var tooMany *site.CellsError
		switch {
		case errors.As(err, &tooMany): // the history's, refused before anything is written
			return cli.WithCode(cli.ExitUsage, err)
		case err != nil:
			return cli.WithCode(cli.ExitRunFailed, err)
		}
		fmt.Fprintln(c.stderr, s.Summary(out))
		return nil
	}, nil
}

func historyPrune(c *call, fs *flag.FlagSet) (func() error, error) {
	var file, archive string
	var months int
	fs.StringVar(&file, "history", defaultHistoryFile, "history `file` (JSON Lines) to keep short")
	fs.IntVar(&months, "months", 0, "keep the records of the last `n` months before the newest (required)")
	fs.StringVar(&archive, "archive", "", "append the older records to `dir`/YYYY-MM.jsonl, their month's archive (default: drop them)")
	return func() error {
		if months <= 0 {
			return cli.WithCode(cli.ExitUsage, errors.New("-months: want the number of months to keep, 1 or more"))
		}
		recs, err := benchdata.ReadHistory(file)
		if err != nil {
			return cli.WithCode(cli.ExitUsage, err)
		}
		p, err := benchdata.PruneHistory(file, recs, months, archive, time.Now())
		var link *benchdata.LinkError
		switch {
		case errors.As(err, &link): // the archive's, refused before anything is written
			return cli.WithCode(cli.ExitUsage, err)
		case err != nil:
			return cli.WithCode(cli.ExitRunFailed, err)
		}
		fmt.Fprintln(c.stderr, report.HistoryPruned(p, file, archive))
		return nil
	}, nil
}
