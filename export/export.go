// Package export writes what benchgate measured in the formats other
// tools read: Bencher's metric format (BMF), github-action-benchmark's
// custom JSON, and CSV for a spreadsheet.
//
// Everything exported is a history record (benchdata.Record): per run,
// cell, target and metric the mean, the half-width of its interval and the
// repetitions. A results file becomes the record of its one run through
// decide.Record, the decision compare and history append make, so a run
// exports the same numbers whether it is read from its results file or
// from the history it was appended to. BMF and github-action-benchmark
// take one target of one run; CSV takes every row. The formats are built
// whole in memory before anything is written: a name that cannot be
// exported is an error, never half a file.
//
// Names come from the scenario, which a pull request controls. JSON is
// written by encoding/json, so any name stays a string; CSV cells that a
// spreadsheet would run as a formula get a leading apostrophe.
package export

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
)

// The formats.
const (
	BMF = "bmf" // Bencher Metric Format (bmf.go)
	GAB = "gab" // github-action-benchmark's customSmallerIsBetter / customBiggerIsBetter JSON (gab.go)
	CSV = "csv" // one row per run, cell, target and metric (csv.go)
)

// format is one entry of the table of formats: its name, what it is, and
// its writer. A format holds one target of one run (rows: bmf, gab) or
// the rows of every run it is given (runs: csv); a github-action-benchmark
// tool name is gab in its direction (is, direction) and writes nothing of
// its own.
type format struct {
	name, what    string
	is, direction string
	rows          func(rows []row, r benchdata.Record) ([]byte, error)
	runs          func(recs []benchdata.Record, target string) ([]byte, error)
}

// formats is the one table of the names Options.Format takes, in the
// order the help names them: the formats, then github-action-benchmark's
// tool names. compare -import reads a file back by the name it was
// exported as (bmf, gab and the tool names). Formats, FormatUsage,
// Directions and Check's errors are made from it, and New writes with it.
var formats = []format{
	{name: BMF, what: "Bencher", rows: func(rows []row, _ benchdata.Record) ([]byte, error) { return bmfBytes(rows) }},
	{name: GAB, what: "github-action-benchmark, with -direction", rows: gabBytes},
	{name: CSV, what: "a row per run, cell, target and metric", runs: csvBytes},
	{name: "customSmallerIsBetter", what: "gab -direction smaller", is: GAB, direction: "smaller"},
	{name: "customBiggerIsBetter", what: "gab -direction bigger", is: GAB, direction: "bigger"},
}

// formatOf is the entry of formats named name; ok false for none.
func formatOf(name string) (f format, ok bool) {
	i := slices.IndexFunc(formats, func(f format) bool { return f.name == name })
	if i < 0 {
		return format{}, false
	}
	return formats[i], true
}

// Formats lists the names Options.Format takes, in formats' order.
var Formats = func() []string {
	var names []string
	for _, f := range formats {
		names = append(names, f.name)
	}
	return names
}()

// FormatUsage is the usage of a -format flag over Formats.
var FormatUsage = func() string {
	var list []string
	for _, f := range formats {
		list = append(list, f.name+" ("+f.what+")")
	}
	return "the `format`: " + strings.Join(list, ", ")
}()

// Source is what is exported: the record of a results file's run, or the
// records of a history.
type Source struct {
	// Name is the file read, named in errors.
	Name string
	// History is set when the records are a history's, in date order; a
	// results file gives one record.
	History bool
	Records []benchdata.Record
}

// undated stands in for the start time that results compared from files
// lack while decide.Record makes their record; the record's date is then
// reset to zero. An export needs no date: CSV leaves the column empty.
var undated = time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC)

// FromResults is the source of a results file read from name: the record
// of its run, decided by decide.Record. Only a complete run is exported:
// a cancelled or failed one measured fewer rounds than it planned, and
// its numbers are not comparable with the runs a dashboard holds.
func FromResults(res *benchdata.Results, name string) (Source, error) {
	if err := decide.Unfinished(res); err != nil {
		return Source{}, fmt.Errorf("%s: only a complete run is exported: %w", name, err)
	}
	var opt decide.RecordOptions
	if res.Env.Start.IsZero() {
		opt.Date = undated
	}
	rec, err := decide.Record(res, opt)
	if err != nil {
		return Source{}, fmt.Errorf("%s: %w", name, err)
	}
	if opt.Date.Equal(undated) {
		rec.Date = time.Time{}
	}
	return Source{Name: name, Records: []benchdata.Record{rec}}, nil
}

// FromHistory is the source of a history's records (benchdata.ReadHistory)
// read from name. An empty history has nothing to export: an error, so a
// workflow does not upload an empty file as a run.
func FromHistory(recs []benchdata.Record, name string) (Source, error) {
	if len(recs) == 0 {
		return Source{}, fmt.Errorf("%s: the history has no records: nothing to export", name)
	}
	return Source{Name: name, History: true, Records: recs}, nil
}

// Options are the export's choices, the CLI's flags of the same names.
// The zero value of each is its default.
type Options struct {
	// Format is one of Formats: customSmallerIsBetter is gab with
	// Direction smaller, customBiggerIsBetter gab with bigger.
	Format string
	// Target is the side exported: "candidate" or "baseline", and for CSV
	// also "all". "" is candidate for BMF and github-action-benchmark,
	// which chart one build, and all for CSV.
	Target string
	// Run is the run id of the history record BMF and
	// github-action-benchmark export ("" the latest), or the one run CSV
	// exports ("" all). A results file holds one run: Run must be "".
	Run string
	// Direction is, for github-action-benchmark, which metrics the file
	// holds: "smaller" (customSmallerIsBetter: latency, errors, CPU,
	// memory, most Go units) or "bigger" (customBiggerIsBetter:
	// throughput and rates). Required for GAB, refused for the others.
	Direction string
}

// Directions are the values of Options.Direction, with the
// github-action-benchmark tool each one's file is read as (formats).
var Directions = func() map[string]string {
	dirs := map[string]string{}
	for _, f := range formats {
		if f.is == GAB {
			dirs[f.direction] = f.name
		}
	}
	return dirs
}()

// gabTool is o with Format a github-action-benchmark tool name made gab
// and the tool's direction, which a Direction given too must be.
func (o Options) gabTool() (Options, error) {
	f, ok := formatOf(o.Format)
	if !ok || f.is == "" {
		return o, nil
	}
	if o.Direction != "" && o.Direction != f.direction {
		return o, fmt.Errorf("-direction %q: -format %s is %s -direction %s", o.Direction, f.name, f.is, f.direction)
	}
	o.Format, o.Direction = f.is, f.direction
	return o, nil
}

// Check says what is wrong with o whatever the source: an unknown format,
// target or direction, or an option the format does not take. Its errors
// name the flags.
func (o Options) Check() error {
	o, err := o.gabTool()
	if err != nil {
		return err
	}
	var errs []error
	f, known := formatOf(o.Format)
	switch {
	case o.Format == "":
		errs = append(errs, fmt.Errorf("export needs -format: %s", strings.Join(Formats, ", ")))
	case !known:
		errs = append(errs, fmt.Errorf("-format %q: want %s", o.Format, strings.Join(Formats, ", ")))
	}
	one := f.rows != nil
	switch {
	case o.Target == "", o.Target == "candidate", o.Target == "baseline":
	case o.Target == "all" && one:
		errs = append(errs, fmt.Errorf("-target all: -format %s exports one target, candidate or baseline", o.Format))
	case o.Target != "all":
		errs = append(errs, fmt.Errorf("-target %q: want candidate, baseline or (csv) all", o.Target))
	}
	switch _, ok := Directions[o.Direction]; {
	case o.Format == GAB && o.Direction == "":
		errs = append(errs, errors.New("-format gab needs -direction smaller or bigger: github-action-benchmark reads one direction per file (tool: customSmallerIsBetter or customBiggerIsBetter); export each to its own file"))
	case o.Format == GAB && !ok:
		errs = append(errs, fmt.Errorf("-direction %q: want smaller or bigger", o.Direction))
	case o.Format != GAB && o.Direction != "":
		errs = append(errs, errors.New("-direction goes with -format gab"))
	}
	return errors.Join(errs...)
}

// target is the side o exports: "candidate", "baseline" or "all".
func (o Options) target() string {
	switch {
	case o.Target != "":
		return o.Target
	case o.Format == CSV:
		return "all"
	}
	return "candidate"
}

// New checks o against src and builds the export: a function that only
// writes it. Every error is one of the input (the options, the source,
// a name the format cannot hold), found before anything is written.
func New(src Source, o Options) (func(io.Writer) error, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	o, _ = o.gabTool()
	if len(src.Records) == 0 {
		return nil, fmt.Errorf("%s: no run: nothing to export", src.Name)
	}
	if o.Run != "" && !src.History {
		return nil, fmt.Errorf("-run picks a run of a history; %s is a results file, which holds one run", src.Name)
	}
	f, _ := formatOf(o.Format)
	var b []byte
	var err error
	switch {
	case f.runs != nil:
		recs := src.Records
		if o.Run != "" {
			r, err := src.run(o.Run)
			if err != nil {
				return nil, err
			}
			recs = []benchdata.Record{r}
		}
		b, err = f.runs(recs, o.target())
	default:
		var r benchdata.Record
		if r, err = src.run(o.Run); err != nil {
			return nil, err
		}
		var rows []row
		if rows, err = rowsOf(src, r, o); err != nil {
			return nil, fmt.Errorf("%s: %w", src.Name, err)
		}
		b, err = f.rows(rows, r)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.Name, err)
	}
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}, nil
}

// run is the record of run id among src's records: the latest when id is
// "".
func (src Source) run(id string) (benchdata.Record, error) {
	if id == "" {
		return src.Records[len(src.Records)-1], nil
	}
	var found []benchdata.Record
	for _, r := range src.Records {
		if r.RunID == id {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return benchdata.Record{}, fmt.Errorf("-run %q: %s has no run of that id (its latest is the %s)", id, src.Name, describe(src.Records[len(src.Records)-1]))
	}
	var dates []string
	for _, r := range found {
		dates = append(dates, r.Date.UTC().Format(time.RFC3339))
	}
	return benchdata.Record{}, fmt.Errorf("-run %q: %s has %d runs of that id (%s): export them as csv, or remove the duplicates", id, src.Name, len(found), strings.Join(dates, ", "))
}

// describe names a record in errors: "run ID of DATE", either part
// left out when the record lacks it (results compared from files have
// neither).
func describe(r benchdata.Record) string {
	s := "run"
	if r.RunID != "" {
		s += " " + r.RunID
	}
	if !r.Date.IsZero() {
		s += " of " + r.Date.UTC().Format(time.RFC3339)
	}
	return s
}

// row is one metric of one cell of the exported target, for BMF and
// github-action-benchmark: the cell's name (its benchmark), the metric
// and the record's summary of it.
type row struct {
	name   string
	cell   benchdata.Cell
	metric string
	c      benchdata.RecordCell
}

// rowsOf are the rows of r that o exports, in the record's order (the
// comparison's cells, each metric in report order). Two cells of one
// name would be one benchmark, so they are an error, not a merge.
func rowsOf(src Source, r benchdata.Record, o Options) ([]row, error) {
	target := o.target()
	named := map[string]benchdata.Cell{}
	var rows []row
	for _, c := range r.Cells {
		if c.Target != target {
			continue
		}
		if o.Format == GAB && r.HigherIsBetter(c.Metric) != (o.Direction == "bigger") {
			continue
		}
		name := c.Cell.String()
		if prev, ok := named[name]; ok && prev != c.Cell {
			return nil, fmt.Errorf("two cells have the name %q (%+v and %+v): an export names a benchmark by its cell", name, prev, c.Cell)
		}
		named[name] = c.Cell
		rows = append(rows, row{name: name, cell: c.Cell, metric: c.Metric, c: c})
	}
	if len(rows) == 0 {
		what := "metric"
		if o.Format == GAB {
			what = "metric whose " + o.Direction + " value is better"
		}
		return nil, fmt.Errorf("the %s of the %s has no %s: nothing to export", target, describe(r), what)
	}
	return rows, nil
}
