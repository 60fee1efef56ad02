package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/charts"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/report"
)

const historyUsage = `Usage: benchgate history <command> [flags]

Keeps the nightly runs' history and finds where it stepped.

Commands:
  append   add a complete run's record (its decided summaries) to the history file
  show     the trend of each series: date, commits, mean ±half-width, n, change points
  drift    the change points of every series; exits 1 when one is for the worse

The history file holds one JSON record per line (JSON Lines); only records
with the same machine fingerprint are ever compared. See docs/history.md.

Run "benchgate history <command> -h" for a command's flags.
`

const defaultHistoryFile = "benchgate-history/history.jsonl"

// cmdHistory is "benchgate history": append, show and drift.
func cmdHistory(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	_, _ = ctx, getenv
	if len(args) == 0 {
		fmt.Fprint(stderr, historyUsage)
		return withCode(exitUsage, errors.New("history needs a command: append, show or drift"))
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "append":
		return historyAppend(rest, stderr)
	case "show":
		return historyShow(rest, stdout, stderr)
	case "drift":
		return historyDrift(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, historyUsage)
		return nil
	default:
		fmt.Fprint(stderr, historyUsage)
		return withCode(exitUsage, fmt.Errorf("unknown history command %q", sub))
	}
}

const historyAppendSummary = `Decides a results file as "compare" does and appends its record to the
history file: date (the run's start), scenario, profile, commits, machine
fingerprint, and per cell, target and metric the mean, the half-width of
its interval and n. The file and its directory are created when missing.
Only a complete run is history: a cancelled or failed one is refused (exit 2).
A run already in the history (same run id and date) is not appended twice.`

func historyAppend(args []string, stderr io.Writer) error {
	var results, file, date, baseCommit, candCommit string
	err := parseFlags("history append", historyAppendSummary, args, stderr, func(fs *flag.FlagSet) {
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
	if res.Status != "complete" {
		msg := fmt.Sprintf("%s: the run is %s, not complete: only complete runs are history", results, histOrQuoted(res.Status))
		if res.Error != "" {
			msg += "; the run said: " + res.Error
		}
		return withCode(exitUsage, errors.New(msg))
	}
	in, err := decideInput(res)
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("%s: %w", results, err))
	}
	rec := baselines.NewRecord(res, in.Comparison)
	if date != "" {
		t, err := time.Parse(time.RFC3339, date)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("-date: want an RFC 3339 time such as 2026-01-31T02:00:00Z: %v", err))
		}
		rec.Date = t
	}
	if rec.Date.IsZero() {
		return withCode(exitUsage, fmt.Errorf("%s: the results have no start time (compared from files?): give -date", results))
	}
	if baseCommit != "" {
		rec.BaselineCommit = baseCommit
	}
	if candCommit != "" {
		rec.CandidateCommit = candCommit
	}
	if len(rec.Cells) == 0 {
		return withCode(exitUsage, fmt.Errorf("%s: no cell has a measured metric: nothing to keep", results))
	}
	if rec.RunID != "" {
		old, err := baselines.ReadHistory(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return withCode(exitUsage, err)
		default:
			for _, o := range old {
				if o.RunID == rec.RunID && o.Date.Equal(rec.Date) {
					fmt.Fprintf(stderr, "history: run %s of %s is already in %s: not appended again\n",
						histTermText(rec.RunID), rec.Date.UTC().Format(time.RFC3339), histTermText(file))
					return nil
				}
			}
		}
	}
	if err := baselines.AppendHistory(file, rec); err != nil {
		return withCode(exitRunFailed, fmt.Errorf("history: %w", err))
	}
	fmt.Fprintf(stderr, "history: appended %s of %s, candidate %s, machine %s (%d values) to %s\n",
		histTermText(histScenarioName(rec.Scenario, rec.Profile)), rec.Date.UTC().Format("2006-01-02 15:04 MST"),
		histTermText(histShortRef(histOrDash(rec.CandidateCommit))), rec.Fingerprint, len(rec.Cells), histTermText(file))
	return nil
}

// histCpFlags are the change-point options show and drift share.
type histCpFlags struct {
	file string
	opt  baselines.ChangePointOptions
}

func (f *histCpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.file, "history", defaultHistoryFile, "history `file` (JSON Lines)")
	fs.Float64Var(&f.opt.MaxPValue, "max-pvalue", baselines.DefaultMaxPValue, "a change point needs a t-test `p`-value below this")
	fs.Float64Var(&f.opt.MinMagnitude, "min-magnitude", baselines.DefaultMinMagnitude, "and a relative change of the means of at least this `fraction` (a tiny value such as 1e-9 keeps all)")
	fs.IntVar(&f.opt.MinWindow, "min-window", baselines.DefaultMinWindow, "fewest `points` on each side of a change point (at least 2)")
}

func (f *histCpFlags) check() error {
	switch {
	case !(f.opt.MaxPValue > 0 && f.opt.MaxPValue <= 1):
		return errors.New("-max-pvalue: want a p-value in (0, 1]")
	case !(f.opt.MinMagnitude > 0):
		return errors.New("-min-magnitude: want a fraction above 0 (a tiny value such as 1e-9 keeps every change)")
	case f.opt.MinWindow < 2:
		return errors.New("-min-window: want at least 2 points")
	}
	return nil
}

// read reads the history file, its errors an exit code 2.
func (f *histCpFlags) read() ([]baselines.Record, error) {
	recs, err := baselines.ReadHistory(f.file)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	return recs, nil
}

const historyShowSummary = `Prints the trend of each series of the history that matches the filters: one
row per run with its date, the candidate and baseline commits, the metric's
mean ±half-width and n. A change point is marked on the first run after it,
with the change, its p-value and whether it is for the worse. Only runs on
the same machine fingerprint form a series.`

func historyShow(args []string, stdout, stderr io.Writer) error {
	var cf histCpFlags
	var cellGlob, metric, target, fingerprint, chartDir string
	var last int
	err := parseFlags("history show", historyShowSummary, args, stderr, func(fs *flag.FlagSet) {
		cf.register(fs)
		fs.StringVar(&cellGlob, "cell", "*", "cells whose name (\"Q01 c=8\", \"csv/Q01 c=8\") or class matches this `glob`")
		fs.StringVar(&metric, "metric", "rps", "`metric` to show (rps, p50, p95, p99, error_rate, cpu_per_req, mem_peak, or a Go unit such as sec/op)")
		fs.StringVar(&target, "target", "candidate", "`target`: candidate, baseline or all")
		fs.StringVar(&fingerprint, "fingerprint", "", "only the machine whose fingerprint starts with this `prefix`")
		fs.IntVar(&last, "last", 0, "show only the last `n` runs of each series (0: all); change points are found on all")
		fs.StringVar(&chartDir, "charts", "", "also write each series' trend as an SVG chart into this `dir`")
	})
	if err != nil {
		return err
	}
	if err := cf.check(); err != nil {
		return withCode(exitUsage, err)
	}
	if _, err := path.Match(cellGlob, ""); err != nil {
		return withCode(exitUsage, fmt.Errorf("-cell %q: %v", cellGlob, err))
	}
	switch target {
	case "candidate", "baseline", "all":
	default:
		return withCode(exitUsage, fmt.Errorf("-target %q: want candidate, baseline or all", target))
	}
	if last < 0 {
		return withCode(exitUsage, errors.New("-last: want 0 or more runs"))
	}
	recs, err := cf.read()
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return withCode(exitUsage, fmt.Errorf("%s: no records yet", cf.file))
	}
	machines := map[string]string{}
	for _, r := range recs {
		machines[r.Fingerprint] = r.Machine // the newest, as recs are in date order
	}
	var shown int
	written := map[string]bool{}
	metrics := map[string]bool{}
	for _, s := range baselines.HistorySeries(recs) {
		k := s.Key
		metrics[k.Metric] = true
		if k.Metric != metric || (target != "all" && k.Target != target) ||
			!strings.HasPrefix(k.Fingerprint, fingerprint) || !histCellMatches(cellGlob, k.Cell) {
			continue
		}
		if shown > 0 {
			fmt.Fprintln(stdout)
		}
		shown++
		histShowSeries(stdout, s, machines[k.Fingerprint], cf.opt, last)
		if chartDir != "" {
			if err := histTrendChart(chartDir, s, last, written); err != nil {
				return withCode(exitRunFailed, err)
			}
		}
	}
	if shown == 0 {
		var have []string
		for m := range metrics {
			have = append(have, m)
		}
		return withCode(exitUsage, fmt.Errorf("%s: no series of metric %s, target %s, cell %s%s (metrics in the history: %s)",
			cf.file, histTermText(metric), target, histTermText(cellGlob), map[bool]string{true: ", fingerprint " + histTermText(fingerprint)}[fingerprint != ""],
			histTermText(strings.Join(histSortedMetrics(have), ", "))))
	}
	return nil
}

func histCellMatches(glob string, c baselines.Cell) bool {
	for _, name := range []string{c.String(), c.Class} {
		if ok, _ := path.Match(glob, name); ok {
			return true
		}
	}
	return false
}

// histShowSeries prints one series as a table, change points marked.
func histShowSeries(w io.Writer, s baselines.Series, machine string, opt baselines.ChangePointOptions, last int) {
	k := s.Key
	fmt.Fprintf(w, "%s · %s · %s %s\n", histTermText(histScenarioName(k.Scenario, k.Profile)), histTermText(k.Cell.String()), k.Target, histTermText(k.Metric))
	fmt.Fprintf(w, "machine %s: %s\n", histTermText(k.Fingerprint), histTermText(histOrDash(machine)))
	marks := map[int]baselines.ChangePoint{}
	mixed := strings.HasPrefix(k.Fingerprint, baselines.MixedPrefix)
	var cps []baselines.ChangePoint
	if !mixed {
		cps = baselines.ChangePoints(s.Means(), opt)
	}
	for _, cp := range cps {
		marks[cp.Index] = cp
	}
	worse := 0
	for _, cp := range cps {
		if histIsWorse(k.Metric, cp) {
			worse++
		}
	}
	switch {
	case mixed:
		fmt.Fprintf(w, "%d run(s) whose shards ran on different machines: no change points are looked for\n", len(s.Points))
	case len(s.Points) < 2*opt.WithDefaults().MinWindow:
		fmt.Fprintf(w, "%d run(s): too few to look for change points (need %d)\n", len(s.Points), 2*opt.WithDefaults().MinWindow)
	case len(cps) == 0:
		fmt.Fprintf(w, "%d runs, no change point\n", len(s.Points))
	default:
		fmt.Fprintf(w, "%d runs, %d change point(s), %d for the worse\n", len(s.Points), len(cps), worse)
	}
	from := 0
	if last > 0 && len(s.Points) > last {
		from = len(s.Points) - last
		fmt.Fprintf(w, "(%d earlier run(s) not shown)\n", from)
	}
	dec := histSeriesDecimals(s.Points)
	tw := histTable(w)
	fmt.Fprintln(tw, "date\tcandidate\tbaseline\tmean ±hw\tn\t")
	for i := from; i < len(s.Points); i++ {
		p := s.Points[i]
		mark := ""
		if cp, ok := marks[i]; ok {
			mark = fmt.Sprintf("◀ change %s (%s → %s, p %s)", histPercent(cp.Change), histNum(cp.Before), histNum(cp.After), histPvalue(cp.PValue))
			if histIsWorse(k.Metric, cp) {
				mark += " WORSE"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", p.Date.UTC().Format("2006-01-02 15:04"),
			histTermText(histShortRef(histOrDash(p.CandidateCommit))), histTermText(histShortRef(histOrDash(p.BaselineCommit))),
			histMeanHW(p.Mean, p.HalfWidth, p.N, dec), p.N, mark)
	}
	tw.Flush()
}

// histTable is a tabwriter for a table whose lines are written without
// the padding of their last cell.
func histTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(&trimWriter{w: w}, 0, 0, 2, ' ', 0)
}

// trimWriter drops the spaces before each newline: it holds back a run
// of spaces until it sees what follows them.
type trimWriter struct {
	w      io.Writer
	spaces int
}

func (t *trimWriter) Write(p []byte) (int, error) {
	var b strings.Builder
	for _, c := range p {
		switch c {
		case ' ':
			t.spaces++
			continue
		case '\n':
			t.spaces = 0
		}
		b.WriteString(strings.Repeat(" ", t.spaces))
		t.spaces = 0
		b.WriteByte(c)
	}
	if _, err := io.WriteString(t.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// histIsWorse is a drift finding's rule: by the metric's direction.
func histIsWorse(metric string, cp baselines.ChangePoint) bool {
	return cp.Change != 0 && (cp.Change < 0) == gate.Metric(metric).HigherIsBetter()
}

const historyDriftSummary = `Looks for change points in every series of the history (each machine
fingerprint, scenario, profile, cell, target and metric on its own) with
E-divisive means and a Student t test, as Hunter/Otava do, and names the
commit range of each: the candidate commits of the last run before it and
the first run after it. Machines with too few records are listed as skipped.

Exits 1 when any change point is for the worse (throughput down; latency,
errors, CPU or memory up), 0 otherwise, 2 on a bad history file: a nightly
workflow can alert on it.`

func historyDrift(args []string, stdout, stderr io.Writer) error {
	var cf histCpFlags
	var format string
	err := parseFlags("history drift", historyDriftSummary, args, stderr, func(fs *flag.FlagSet) {
		cf.register(fs)
		fs.StringVar(&format, "format", "terminal", "output on stdout: terminal, markdown or json")
	})
	if err != nil {
		return err
	}
	if err := cf.check(); err != nil {
		return withCode(exitUsage, err)
	}
	var show func(io.Writer, baselines.DriftResult, int, string) error
	switch format {
	case "terminal":
		show = histDriftTerminal
	case "markdown":
		show = histDriftMarkdown
	case "json":
		show = func(w io.Writer, d baselines.DriftResult, _ int, _ string) error {
			b, err := json.MarshalIndent(d, "", "  ")
			if err != nil {
				return err
			}
			_, err = w.Write(append(b, '\n'))
			return err
		}
	default:
		return withCode(exitUsage, fmt.Errorf("-format %q: want terminal, markdown or json", format))
	}
	recs, err := cf.read()
	if err != nil {
		return err
	}
	d := baselines.AnalyzeDrift(recs, cf.opt)
	if err := show(stdout, d, len(recs), cf.file); err != nil {
		return withCode(exitRunFailed, err)
	}
	if n := d.Worse(); n > 0 {
		var names []string
		for _, f := range d.Findings {
			if f.Worse {
				names = append(names, histTermText(fmt.Sprintf("%s %s %s in %s..%s", f.Cell, f.Target, f.Metric, histShortRef(histOrDash(f.FromCommit)), histShortRef(histOrDash(f.ToCommit)))))
			}
		}
		return withCode(exitRegression, fmt.Errorf("drift: %d change point(s) for the worse: %s", n, strings.Join(names, ", ")))
	}
	return nil
}

func histDriftHeadline(d baselines.DriftResult, records int) string {
	series := 0
	for _, g := range d.Fingerprints {
		series += g.Series
	}
	if records == 0 {
		return "no records yet"
	}
	return fmt.Sprintf("%d change point(s), %d for the worse, in %d series of %d record(s) on %d machine(s)",
		len(d.Findings), d.Worse(), series, records, len(d.Fingerprints))
}

func histDriftParams(o baselines.ChangePointOptions) string {
	return fmt.Sprintf("E-divisive means, split tested by a Student t test: p < %g, change ≥ %s, ≥ %d runs each side",
		o.MaxPValue, strconv.FormatFloat(o.MinMagnitude*100, 'f', -1, 64)+"%", o.MinWindow)
}

func histDriftTerminal(w io.Writer, d baselines.DriftResult, records int, file string) error {
	fmt.Fprintf(w, "benchgate history drift: %s (%s)\n", histDriftHeadline(d, records), histTermText(file))
	fmt.Fprintf(w, "%s\n", histDriftParams(d.Options))
	if len(d.Findings) > 0 {
		fmt.Fprintln(w)
		tw := histTable(w)
		fmt.Fprintln(tw, "\tmachine\tscenario\tcell\ttarget\tmetric\tchange\tbefore → after\tp\tcommits\tdates\t")
		for _, f := range d.Findings {
			verdict := "better"
			if f.Worse {
				verdict = "WORSE"
			}
			commits := histTermText(histShortRef(histOrDash(f.FromCommit))) + ".." + histTermText(histShortRef(histOrDash(f.ToCommit)))
			if f.Target == "baseline" && f.FromBaseline == f.ToBaseline {
				commits += " (baseline unchanged)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s → %s\t%s\t%s\t%s → %s\t\n", verdict, histTermText(f.Fingerprint),
				histTermText(histScenarioName(f.Scenario, f.Profile)), histTermText(f.Cell.String()), f.Target, histTermText(f.Metric),
				histPercent(f.Change.Change), histNum(f.Change.Before), histNum(f.Change.After), histPvalue(f.Change.PValue), commits,
				f.FromDate.UTC().Format("2006-01-02"), f.ToDate.UTC().Format("2006-01-02"))
		}
		tw.Flush()
	}
	if len(d.Fingerprints) > 0 {
		fmt.Fprintln(w, "\nmachines:")
		for _, g := range d.Fingerprints {
			what := fmt.Sprintf("%d series tested", g.Series)
			if g.Short > 0 {
				what += fmt.Sprintf(", %d too short", g.Short)
			}
			if g.Skipped != "" {
				what = "skipped: " + g.Skipped
			}
			fmt.Fprintf(w, "  %s  %d record(s), %s … %s  %s  — %s\n", histTermText(g.Fingerprint), g.Records,
				g.First.UTC().Format("2006-01-02"), g.Last.UTC().Format("2006-01-02"), what, histTermText(histOrDash(g.Machine)))
		}
	}
	return nil
}

func histDriftMarkdown(w io.Writer, d baselines.DriftResult, records int, file string) error {
	esc := report.EscapeMarkdown
	var b strings.Builder
	fmt.Fprintf(&b, "## benchgate history: drift\n\n")
	head := histDriftHeadline(d, records)
	if d.Worse() > 0 {
		head = "**" + head + "**"
	}
	fmt.Fprintf(&b, "%s, from %s.\n\n", head, esc(file))
	if len(d.Findings) > 0 {
		b.WriteString("| | machine | scenario | cell | target | metric | change | before → after | p | commits | dates |\n")
		b.WriteString("| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |\n")
		for _, f := range d.Findings {
			verdict := "better"
			if f.Worse {
				verdict = "**worse**"
			}
			commits := esc(histShortRef(histOrDash(f.FromCommit))) + ".." + esc(histShortRef(histOrDash(f.ToCommit)))
			if f.Target == "baseline" && f.FromBaseline == f.ToBaseline {
				commits += " (baseline unchanged)"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s → %s | %s | %s | %s → %s |\n", verdict, esc(f.Fingerprint),
				esc(histScenarioName(f.Scenario, f.Profile)), esc(f.Cell.String()), f.Target, esc(f.Metric),
				histPercent(f.Change.Change), histNum(f.Change.Before), histNum(f.Change.After), histPvalue(f.Change.PValue), commits,
				f.FromDate.UTC().Format("2006-01-02"), f.ToDate.UTC().Format("2006-01-02"))
		}
		b.WriteString("\n")
	}
	if len(d.Fingerprints) > 0 {
		b.WriteString("Machines (only runs on the same fingerprint are compared):\n\n")
		for _, g := range d.Fingerprints {
			what := fmt.Sprintf("%d series tested", g.Series)
			if g.Short > 0 {
				what += fmt.Sprintf(", %d too short", g.Short)
			}
			if g.Skipped != "" {
				what = "skipped: " + esc(g.Skipped)
			}
			fmt.Fprintf(&b, "- %s (%s): %d record(s), %s … %s, %s\n", esc(g.Fingerprint), esc(histOrDash(g.Machine)), g.Records,
				g.First.UTC().Format("2006-01-02"), g.Last.UTC().Format("2006-01-02"), what)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s.\n", esc(histDriftParams(d.Options)))
	_, err := io.WriteString(w, b.String())
	return err
}

func histScenarioName(name, profile string) string {
	if name == "" {
		name = "(unnamed scenario)"
	}
	if profile != "" {
		name += " (" + profile + ")"
	}
	return name
}

func histOrDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func histOrQuoted(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// histShortRef abbreviates a git hash as git does and leaves a tag or a
// short name alone, up to a sane length.
func histShortRef(c string) string {
	if len(c) > 7 && strings.Trim(strings.ToLower(c), "0123456789abcdef") == "" {
		return c[:7]
	}
	if r := []rune(c); len(r) > 40 {
		return string(r[:39]) + "…"
	}
	return c
}

// histNum prints a value with 4 significant digits, without an exponent in
// the range of benchmark figures.
func histNum(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	a := math.Abs(v)
	if a >= 1e9 || a < 1e-6 {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return strconv.FormatFloat(v, 'f', histDecimals(a), 64)
}

func histDecimals(a float64) int {
	return min(max(3-int(math.Floor(math.Log10(a))), 0), 9)
}

// histSeriesDecimals is the decimals one table prints its means at: 4
// significant digits of its smallest mean; -1 when a mean needs an
// exponent.
func histSeriesDecimals(ps []baselines.SeriesPoint) int {
	lo := math.Inf(1)
	for _, p := range ps {
		a := math.Abs(p.Mean)
		if a >= 1e9 || a > 0 && a < 1e-6 || math.IsNaN(a) {
			return -1
		}
		if a > 0 {
			lo = min(lo, a)
		}
	}
	if math.IsInf(lo, 1) {
		return 0
	}
	return histDecimals(lo)
}

// histMeanHW prints mean ±half-width at d decimals (-1: 4 significant
// digits each); one repetition has no interval.
func histMeanHW(m, hw float64, n, d int) string {
	f := func(v float64) string {
		if d < 0 {
			return strconv.FormatFloat(v, 'g', 4, 64)
		}
		return strconv.FormatFloat(v, 'f', d, 64)
	}
	if n < 2 {
		return f(m) + " (n=1)"
	}
	return f(m) + " ±" + f(hw)
}

// histPercent prints a relative change as a signed percentage.
func histPercent(f float64) string {
	p := f * 100
	if math.Abs(p) < 0.05 {
		return "0.0%"
	}
	return fmt.Sprintf("%+.1f%%", p)
}

func histPvalue(p float64) string {
	if p < 1e-300 {
		return "< 1e-300"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

func histSortedMetrics(ms []string) []string {
	rank := func(m string) string {
		for i, x := range []string{"rps", "p50", "p95", "p99", "error_rate", "cpu_per_req", "mem_peak"} {
			if m == x {
				return strconv.Itoa(i)
			}
		}
		return "9" + m
	}
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && rank(ms[j]) < rank(ms[j-1]); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	return ms
}

// histTermText makes an untrusted string (a class, scenario or commit name
// from a history file) inert on a terminal, as the report does.
func histTermText(s string) string { return report.TerminalText(s) }

// histTrendChart writes one series' trend as DIR/trend-<cell>-<metric>-
// <target>-<fingerprint>.svg: each run's mean and interval, labelled with
// its candidate commit. written dedupes names across series.
func histTrendChart(dir string, s baselines.Series, last int, written map[string]bool) error {
	pts := s.Points
	if last > 0 && len(pts) > last {
		pts = pts[len(pts)-last:]
	}
	tp := make([]report.TrendPoint, len(pts))
	for i, p := range pts {
		tp[i] = report.TrendPoint{Date: p.Date, Commit: p.CandidateCommit, Mean: p.Mean, Lo: p.Mean - p.HalfWidth, Hi: p.Mean + p.HalfWidth}
		if s.Key.Target == "baseline" {
			tp[i].Commit = p.BaselineCommit
		}
	}
	k := s.Key
	c := report.TrendChart(fmt.Sprintf("%s %s (%s) — %s", k.Cell, k.Metric, k.Target, histScenarioName(k.Scenario, k.Profile)), tp)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := "trend-" + safeNamePart(k.Cell.String()) + "-" + safeNamePart(k.Metric) + "-" + safeNamePart(k.Target) + "-" + safeNamePart(k.Fingerprint)
	name := base
	for i := 2; written[strings.ToLower(name)]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	written[strings.ToLower(name)] = true
	return baselines.WriteFile(filepath.Join(dir, name+".svg"), func(w io.Writer) error { return charts.SVG(w, c) })
}
