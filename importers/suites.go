package importers

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/benchgate/benchgate/scenario"
)

// Benchmark suites: formats in which one file holds many benchmarks, each
// with its own measurements. Each benchmark becomes one cell named by the
// benchmark, and each of its samples one repetition of that cell, as
// GoBench reads go test -bench output; docs/importers.md has the mapping
// of every format.

// Limits of a suite import, besides benchdata.MaxReportBytes a file and
// benchdata.MaxCells cells.
const (
	// MaxSuiteSamples bounds the samples of one benchmark in one file:
	// a hyperfine run of 100,000 runs, a pytest-benchmark of as many
	// rounds. All files' samples together make the results' rungs,
	// bounded by benchdata.MaxRungs.
	MaxSuiteSamples = 100_000
	// maxNameChars bounds a benchmark's name in characters (runes), as
	// Bencher bounds a benchmark name and benchgate's BMF export checks
	// it: a name that exports imports. maxMetricChars bounds a metric's.
	// At most 4 bytes a character, the bytes are bounded too.
	maxNameChars   = 1024
	maxMetricChars = 256
)

// suiteParser reads one file (or, for criterion, a directory) of a
// format into its benchmarks, in file order.
type suiteParser func(f *file) ([]suiteBench, error)

// suiteBench is one benchmark of a file: its samples by metric, each
// sample one repetition. A metric with fewer samples than another is
// missing from the later repetitions.
type suiteBench struct {
	name    string
	metrics []gate.Metric // in the order first given
	samples map[gate.Metric][]float64
	// gated are the metrics the default gate decides this benchmark
	// on: its headline figure (the time per operation, the format's
	// primary score, every value of a format of bare values).
	gated []gate.Metric
	// higher records a direction the format states for a metric, where
	// it states one (true: higher is better).
	higher map[gate.Metric]bool
	// entry, where the name alone does not say which benchmark it is,
	// says it: JMH's benchmark and params, whose values may hold the
	// "," and "=" that join them into the name. Two entries of one name
	// in the files are refused.
	entry string
}

func newBench(name string) suiteBench {
	return suiteBench{name: name, samples: map[gate.Metric][]float64{}}
}

// add appends samples of m; gated marks m as the benchmark's headline.
func (b *suiteBench) add(m gate.Metric, gated bool, xs ...float64) {
	if _, ok := b.samples[m]; !ok {
		b.metrics = append(b.metrics, m)
	}
	b.samples[m] = append(b.samples[m], xs...)
	if gated && !slices.Contains(b.gated, m) {
		b.gated = append(b.gated, m)
	}
}

// direction records that the format says m is better higher (or lower).
func (b *suiteBench) direction(m gate.Metric, higher bool) {
	if b.higher == nil {
		b.higher = map[gate.Metric]bool{}
	}
	b.higher[m] = higher
}

// reps is the number of repetitions: the most samples of a metric.
func (b *suiteBench) reps() int {
	n := 0
	for _, xs := range b.samples {
		n = max(n, len(xs))
	}
	return n
}

// ReadSuite imports the benchmarks of a suite format's files: each file
// of baseline and of candidate holds any number of benchmarks, and every
// sample of a benchmark (every file's value, for a format of one value a
// benchmark) is one repetition of its cell on that side. A file that
// cannot be read, is not of the format, or holds a value of the wrong
// type or a name that cannot be a cell's is an error naming the file and
// the benchmark or field. tool is the results' Tool ("benchgate
// VERSION"); opt.Scenario, when not nil, gives the gate section and the
// rename rules of its gobench section.
func ReadSuite(format string, baseline, candidate []string, opt Options, tool string) (*benchdata.Results, error) {
	sf := formatNamed(format)
	if sf == nil || sf.suite == nil {
		return nil, unknownFormat(format)
	}
	switch {
	case len(baseline) == 0 || len(candidate) == 0:
		return nil, fmt.Errorf("import: %s needs baseline and candidate files (any number a side: each holds every benchmark)", format)
	case opt.Class != "":
		return nil, fmt.Errorf("import: -class names the one cell of a load tool's reports; %s files name their benchmarks, each its own cell", format)
	}
	var rename []scenario.Rename
	if sc := opt.Scenario; sc != nil && sc.GoBench != nil {
		rename = sc.GoBench.Rename
	}
	if tool == "" {
		tool = "benchgate import"
	}
	name := opt.Name
	if name == "" && opt.Scenario != nil {
		name = opt.Scenario.Name
	}
	if name == "" {
		name = "imported " + format + " results"
	}
	res := &benchdata.Results{
		Version: benchdata.FormatVersion,
		Tool:    tool,
		Kind:    benchdata.ImportedKind(format),
		Suite:   true,
		Scenario: benchdata.ScenarioInfo{
			Name: name,
		},
		Env: benchdata.Environment{
			Baseline:  benchdata.TargetInfo{Name: "baseline", Kind: "import", Spec: strings.Join(baseline, ", ")},
			Candidate: benchdata.TargetInfo{Name: "candidate", Kind: "import", Spec: strings.Join(candidate, ", ")},
		},
		Rungs:  []benchdata.Rung{},
		Status: "complete",
	}

	type cellInfo struct {
		source string // the benchmark's name before renaming
		entry  string // and its suiteBench.entry
		file   string // the file it was first read from
		gated  []gate.Metric
		sides  [2]map[gate.Metric]bool // metrics each side measured
		rounds [2]int
	}
	cells := map[string]*cellInfo{}
	var order []string
	higher := map[gate.Metric]bool{}
	rungs, entries := 0, 0
	for s, paths := range [][]string{baseline, candidate} {
		target := []string{"baseline", "candidate"}[s]
		for _, p := range paths {
			f := &file{path: p, format: format}
			benches, err := parseSuite(sf.suite, f)
			if err != nil {
				return nil, err
			}
			for i := range benches {
				b := &benches[i]
				class := scenario.ApplyRename(rename, b.name)
				if err := checkName(class); err != nil {
					return nil, f.benchErrf(b.name, "renamed to %s, which %v", textsafe.Quote(class, textsafe.QuoteRunes), err)
				}
				c := cells[class]
				if c == nil {
					if len(cells) == benchdata.MaxCells {
						return nil, f.benchErrf(b.name, "more than %d distinct benchmarks in the files, more than a results file can hold", benchdata.MaxCells)
					}
					c = &cellInfo{source: b.name, entry: b.entry, file: p, sides: [2]map[gate.Metric]bool{{}, {}}}
					cells[class] = c
					order = append(order, class)
				} else if c.source != b.name {
					return nil, fmt.Errorf("%s: benchmarks %s and %s are both named %s (by the rename rules?): their samples would mix", p, textsafe.Quote(c.source, textsafe.QuoteRunes), textsafe.Quote(b.name, textsafe.QuoteRunes), textsafe.Quote(class, textsafe.QuoteRunes))
				} else if c.entry != b.entry {
					return nil, f.benchErrf(b.name, "is the name of %s here and of %s in %s: their samples would mix (a param value holds \",\" or \"=\"?)", b.entry, c.entry, c.file)
				}
				for _, m := range b.gated {
					if !slices.Contains(c.gated, m) {
						c.gated = append(c.gated, m)
					}
				}
				for m, h := range b.higher {
					if prev, ok := higher[m]; ok && prev != h {
						return nil, f.benchErrf(b.name, "metric %s is better %s here but %s in another benchmark", textsafe.Quote(string(m), textsafe.QuoteRunes), betterWord(h), betterWord(prev))
					}
					higher[m] = h
				}
				n := b.reps()
				if rungs += n; rungs > benchdata.MaxRungs {
					return nil, f.benchErrf(b.name, "more than %d samples in the files together, more than a results file can hold", benchdata.MaxRungs)
				}
				cell := benchdata.Cell{Class: class}
				for k := range n {
					v := make(map[string]float64, len(b.metrics))
					for _, m := range b.metrics {
						if xs := b.samples[m]; k < len(xs) {
							v[string(m)] = xs[k]
							c.sides[s][m] = true
						}
					}
					if entries += len(v); entries > benchdata.MaxRungEntries {
						return nil, f.benchErrf(b.name, "more than %d values in the files together, more than a results file can hold", benchdata.MaxRungEntries)
					}
					res.Rungs = append(res.Rungs, benchdata.Rung{
						Cell: cell, Round: c.rounds[s], Target: target, Order: "AB", Position: s, Values: v,
					})
					c.rounds[s]++
				}
			}
		}
	}

	// Every repetition is used, as GoBench uses them: a benchmark's
	// sample count may differ between sides and benchmarks, and each
	// side's summary stands on all of its own (benchdata.Results
	// .Benchmarks: RoundsDone is the most any benchmark has).
	rounds := 0
	for _, class := range order {
		c := cells[class]
		res.Plan.Cells = append(res.Plan.Cells, benchdata.Cell{Class: class})
		rounds = max(rounds, c.rounds[0], c.rounds[1])
	}
	res.Plan.Rounds, res.RoundsDone = rounds, map[string]int{"": rounds}

	// The default gate decides each benchmark on its headline metrics,
	// where both sides measured them: a benchmark added or removed by the
	// change is shown, not failed, as with Go benchmarks.
	var metrics []gate.Metric
	gatedBy := map[gate.Metric][]string{}
	measured := map[gate.Metric]int{} // cells measuring m at all
	for _, class := range order {
		c := cells[class]
		for m := range c.sides[0] {
			if c.sides[1][m] {
				measured[m]++
			}
		}
		for _, m := range c.gated {
			if !c.sides[0][m] || !c.sides[1][m] {
				continue
			}
			if _, ok := gatedBy[m]; !ok {
				metrics = append(metrics, m)
			}
			gatedBy[m] = append(gatedBy[m], class)
		}
	}
	g := defaultGate(gate.Metric("sec/op"))
	g.FailOn = nil
	for _, m := range metrics {
		r := gate.Rule{Metric: m}
		if len(gatedBy[m]) < len(order) {
			for _, class := range gatedBy[m] {
				r.Classes = append(r.Classes, escapeGlob(class))
			}
		}
		g.FailOn = append(g.FailOn, r)
	}
	if len(g.FailOn) == 0 {
		// No benchmark was measured on both sides: a rule that gates
		// nothing leaves the gate inconclusive, never a pass by silence.
		m := gate.Metric("sec/op")
		for _, class := range order {
			if gs := cells[class].gated; len(gs) > 0 {
				m = gs[0]
				break
			}
		}
		g.FailOn = []gate.Rule{{Metric: m}}
	}
	if sc := opt.Scenario; sc != nil {
		g = sc.Info.Gate
		res.Scenario.File, res.Scenario.Hash, res.Scenario.Source = sc.Info.File, sc.Info.Hash, sc.Info.Source
	}
	// The format's directions, where a scenario's gate.metrics better:
	// says nothing of the metric.
	if len(higher) > 0 {
		hb := make(map[gate.Metric]bool, len(higher)+len(g.HigherBetterFor))
		for m, h := range higher {
			hb[m] = h
		}
		for m, h := range g.HigherBetterFor {
			hb[m] = h
		}
		g.HigherBetterFor = hb
	}
	res.Scenario.Gate = g
	res.Scenario.Load.Repetitions = res.Plan.Rounds
	return res, nil
}

func betterWord(higher bool) string {
	if higher {
		return "higher"
	}
	return "lower"
}

// escapeGlob quotes a class name for a fail_on rule's path.Match globs.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// parseSuite reads one file with parse and checks what it holds.
func parseSuite(parse suiteParser, f *file) ([]suiteBench, error) {
	benches, err := parse(f)
	if err != nil {
		return nil, err
	}
	if len(benches) == 0 {
		return nil, f.errf("no benchmarks in the file")
	}
	for i := range benches {
		if err := checkBench(f, &benches[i]); err != nil {
			return nil, err
		}
	}
	return benches, nil
}

// checkBench checks a benchmark's name and metrics, and bounds its
// samples.
func checkBench(f *file, b *suiteBench) error {
	if err := badName(f, b.name); err != nil {
		return err
	}
	for _, m := range b.metrics {
		if err := checkMetric(m); err != nil {
			return f.benchErrf(b.name, "metric %s %v", textsafe.Quote(string(m), textsafe.QuoteRunes), err)
		}
		xs := b.samples[m]
		if len(xs) > MaxSuiteSamples {
			return f.benchErrf(b.name, "%d samples of %s, more than %d", len(xs), m, MaxSuiteSamples)
		}
		for _, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return f.benchErrf(b.name, "%s is %v, not a finite number", m, x)
			}
		}
	}
	return nil
}

// badName is the error for a benchmark's name that cannot be a cell's,
// nil for a good one.
func badName(f *file, name string) error {
	if name == "" {
		return f.errf("a benchmark without a name")
	}
	if err := checkName(name); err != nil {
		return f.benchErrf(name, "the name %v", err)
	}
	return nil
}

// checkName says what is wrong with a benchmark's name as a cell's
// class: reports, PR comments and history show it, so it may be long and
// hold any printable text, but not control characters (a newline would
// forge a line of a log or a table row), bidi controls (which reorder
// what a reader sees) or invalid UTF-8 (read as U+FFFD).
func checkName(s string) error {
	switch {
	case s == "":
		return errors.New("is empty")
	case utf8.RuneCountInString(s) > maxNameChars:
		return fmt.Errorf("is %d characters long, more than %d", utf8.RuneCountInString(s), maxNameChars)
	}
	return checkText(s)
}

// checkMetric is checkName for a metric's name.
func checkMetric(m gate.Metric) error {
	switch {
	case m == "":
		return errors.New("is empty")
	case utf8.RuneCountInString(string(m)) > maxMetricChars:
		return fmt.Errorf("is %d characters long, more than %d", utf8.RuneCountInString(string(m)), maxMetricChars)
	}
	return checkText(string(m))
}

func checkText(s string) error {
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			return fmt.Errorf("holds invalid UTF-8 at byte %d", i)
		case unicode.IsControl(r):
			return fmt.Errorf("holds the control character %U", r)
		case unicode.Is(unicode.Bidi_Control, r):
			return fmt.Errorf("holds the bidi control %U", r)
		}
	}
	return nil
}

// timeUnits are the seconds in a unit of time as the formats write it.
var timeUnits = map[string]float64{
	"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1, "sec": 1,
}

// secPerOp is the metric of a time per operation (per iteration, per
// run), as Go benchmarks name it.
const secPerOp gate.Metric = "sec/op"
