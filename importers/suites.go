package importers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/scenario"
)

// Benchmark suites: formats in which one file holds many benchmarks, each
// with its own measurements. Each benchmark becomes one cell named by the
// benchmark, and each of its samples one repetition of that cell, as
// GoBench reads go test -bench output; docs/importers.md has the mapping
// of every format.

// Formats lists the benchmark-suite formats ReadSources and ReadSuite
// understand: github-action-benchmark's custom JSON (by its tool names),
// Bencher Metric Format, pytest-benchmark, Google Benchmark, criterion,
// hyperfine and JMH.
// The list is the results format's (baselines.BenchmarkFormats): results
// of these kinds hold benchmarks, as a gobench run's do.
var Formats = baselines.BenchmarkFormats

// github-action-benchmark's tool names for its custom JSON: the name says
// which way every value improves.
const (
	FormatGABSmaller = "customSmallerIsBetter"
	FormatGABBigger  = "customBiggerIsBetter"
)

// Limits of a suite import, besides baselines.MaxReportBytes a file and
// baselines.MaxCells cells.
const (
	// MaxSuiteSamples bounds the samples of one benchmark in one file:
	// a hyperfine run of 100,000 runs, a pytest-benchmark of as many
	// rounds. All files' samples together make the results' rungs,
	// bounded by baselines.MaxRungs.
	MaxSuiteSamples = 100_000
	// maxNameBytes bounds a benchmark's name (Bencher's limit for a
	// benchmark name is 1,024 characters), maxMetricBytes a metric's.
	maxNameBytes   = 1024
	maxMetricBytes = 256
)

// suiteParser reads one file (or, for criterion, a directory) of a
// format into its benchmarks, in file order.
type suiteParser func(f *suiteFile) ([]suiteBench, error)

var suiteParsers = map[string]suiteParser{
	FormatGABSmaller:   parseGAB,
	FormatGABBigger:    parseGAB,
	"bmf":              parseBMF,
	"pytest-benchmark": parsePytest,
	"googlebenchmark":  parseGoogleBenchmark,
	"criterion":        parseCriterion,
	"hyperfine":        parseHyperfine,
	"jmh":              parseJMH,
}

// suiteWhat names each format's file in errors: "a.json: not a
// hyperfine JSON export: ...".
var suiteWhat = map[string]string{
	FormatGABSmaller:   "github-action-benchmark custom JSON",
	FormatGABBigger:    "github-action-benchmark custom JSON",
	"bmf":              "Bencher Metric Format JSON",
	"pytest-benchmark": "pytest-benchmark JSON",
	"googlebenchmark":  "Google Benchmark JSON",
	"criterion":        "criterion output",
	"hyperfine":        "hyperfine JSON export",
	"jmh":              "JMH JSON result",
}

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

// suiteFile is one file of a format being read.
type suiteFile struct {
	path   string
	format string
	// data, when not nil, is the file's content (tests, fuzzing):
	// nothing is read from path.
	data []byte
}

// errf is an error about the file: "a.json: hyperfine JSON export: ...".
func (f *suiteFile) errf(format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", f.path, suiteWhat[f.format], fmt.Sprintf(format, args...))
}

// benchErrf is an error about one benchmark of the file.
func (f *suiteFile) benchErrf(bench, format string, args ...any) error {
	return f.errf("benchmark %q: %s", bench, fmt.Sprintf(format, args...))
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
func ReadSuite(format string, baseline, candidate []string, opt Options, tool string) (*baselines.Results, error) {
	parse, ok := suiteParsers[format]
	if !ok {
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
	res := &baselines.Results{
		Version: baselines.FormatVersion,
		Tool:    tool,
		Kind:    "import:" + format,
		Scenario: baselines.ScenarioInfo{
			Name: name,
		},
		Env: baselines.Environment{
			Baseline:  baselines.TargetInfo{Name: "baseline", Kind: "import", Spec: strings.Join(baseline, ", ")},
			Candidate: baselines.TargetInfo{Name: "candidate", Kind: "import", Spec: strings.Join(candidate, ", ")},
		},
		Rungs:  []baselines.Rung{},
		Status: "complete",
	}

	type cellInfo struct {
		source string // the benchmark's name before renaming
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
			f := &suiteFile{path: p, format: format}
			benches, err := parseSuite(parse, f)
			if err != nil {
				return nil, err
			}
			for i := range benches {
				b := &benches[i]
				class := scenario.ApplyRename(rename, b.name)
				if err := checkName(class); err != nil {
					return nil, f.benchErrf(b.name, "renamed to %q, which %v", class, err)
				}
				c := cells[class]
				if c == nil {
					if len(cells) == baselines.MaxCells {
						return nil, f.benchErrf(b.name, "more than %d distinct benchmarks in the files, more than a results file can hold", baselines.MaxCells)
					}
					c = &cellInfo{source: b.name, sides: [2]map[gate.Metric]bool{{}, {}}}
					cells[class] = c
					order = append(order, class)
				} else if c.source != b.name {
					return nil, fmt.Errorf("%s: benchmarks %q and %q are both named %q (by the rename rules?): their samples would mix", p, c.source, b.name, class)
				}
				for _, m := range b.gated {
					if !slices.Contains(c.gated, m) {
						c.gated = append(c.gated, m)
					}
				}
				for m, h := range b.higher {
					if prev, ok := higher[m]; ok && prev != h {
						return nil, f.benchErrf(b.name, "metric %q is better %s here but %s in another benchmark", m, betterWord(h), betterWord(prev))
					}
					higher[m] = h
				}
				n := b.reps()
				if rungs += n; rungs > baselines.MaxRungs {
					return nil, f.benchErrf(b.name, "more than %d samples in the files together, more than a results file can hold", baselines.MaxRungs)
				}
				cell := baselines.Cell{Class: class}
				for k := range n {
					v := make(map[string]float64, len(b.metrics))
					for _, m := range b.metrics {
						if xs := b.samples[m]; k < len(xs) {
							v[string(m)] = xs[k]
							c.sides[s][m] = true
						}
					}
					if entries += len(v); entries > baselines.MaxRungEntries {
						return nil, f.benchErrf(b.name, "more than %d values in the files together, more than a results file can hold", baselines.MaxRungEntries)
					}
					res.Rungs = append(res.Rungs, baselines.Rung{
						Cell: cell, Round: c.rounds[s], Target: target, Order: "AB", Position: s, Values: v,
					})
					c.rounds[s]++
				}
			}
		}
	}

	// Every repetition is used, as GoBench uses them: a benchmark's
	// sample count may differ between sides and benchmarks, and each
	// side's summary stands on all of its own (baselines.Results
	// .Benchmarks: RoundsDone is the most any benchmark has).
	rounds := 0
	for _, class := range order {
		c := cells[class]
		res.Plan.Cells = append(res.Plan.Cells, baselines.Cell{Class: class})
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

// unknownFormat is the error for a name that is neither a load tool nor
// a suite format.
func unknownFormat(name string) error {
	return fmt.Errorf("import: unknown tool or format %q: want one of %s", name, strings.Join(Names(), ", "))
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
func parseSuite(parse suiteParser, f *suiteFile) ([]suiteBench, error) {
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
func checkBench(f *suiteFile, b *suiteBench) error {
	if err := badName(f, b.name); err != nil {
		return err
	}
	for _, m := range b.metrics {
		if err := checkMetric(m); err != nil {
			return f.benchErrf(b.name, "metric %q %v", m, err)
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
func badName(f *suiteFile, name string) error {
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
	case len(s) > maxNameBytes:
		return fmt.Errorf("is %d bytes long, more than %d", len(s), maxNameBytes)
	}
	return checkText(s)
}

// checkMetric is checkName for a metric's name.
func checkMetric(m gate.Metric) error {
	switch {
	case m == "":
		return errors.New("is empty")
	case len(m) > maxMetricBytes:
		return fmt.Errorf("is %d bytes long, more than %d", len(m), maxMetricBytes)
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

// jval is one JSON value of a suite file, with the benchmark and field
// path it is at for errors.
type jval struct {
	f     *suiteFile
	bench string // "" outside a benchmark
	path  string // "stats.mean", "benchmarks[3]"
	raw   json.RawMessage
}

func (v jval) errf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if v.path != "" {
		msg = fmt.Sprintf("field %q %s", v.path, msg)
	}
	if v.bench != "" {
		return v.f.benchErrf(v.bench, "%s", msg)
	}
	return v.f.errf("%s", msg)
}

func (v jval) null() bool { return len(v.raw) == 0 || isNull(v.raw) }

func (v jval) child(seg string, raw json.RawMessage) jval {
	p := seg
	if v.path != "" && !strings.HasPrefix(seg, "[") {
		p = v.path + "." + seg
	} else if v.path != "" {
		p = v.path + seg
	}
	return jval{f: v.f, bench: v.bench, path: p, raw: raw}
}

// in is v as the value of benchmark name, paths starting afresh.
func (v jval) in(name string) jval { return jval{f: v.f, bench: name, raw: v.raw} }

// object decodes v as an object.
func (v jval) object() (jobj, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v.raw, &m); err != nil || m == nil {
		return jobj{}, v.errf("is not an object: %s", short(v.raw))
	}
	return jobj{v: v, m: m}, nil
}

// array decodes v as an array of at most max elements.
func (v jval) array(max int) ([]jval, error) {
	var a []json.RawMessage
	if err := json.Unmarshal(v.raw, &a); err != nil || a == nil {
		return nil, v.errf("is not an array: %s", short(v.raw))
	}
	if len(a) > max {
		return nil, v.errf("has %d elements, more than %d", len(a), max)
	}
	out := make([]jval, len(a))
	for i, r := range a {
		out[i] = v.child("["+strconv.Itoa(i)+"]", r)
	}
	return out, nil
}

// num decodes v as a finite number.
func (v jval) num() (float64, error) {
	var x float64
	if err := json.Unmarshal(v.raw, &x); err != nil || v.null() {
		return 0, v.errf("is not a number: %s", short(v.raw))
	}
	return x, nil
}

// nums decodes v as an array of at most MaxSuiteSamples numbers.
func (v jval) nums() ([]float64, error) {
	elems, err := v.array(MaxSuiteSamples)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(elems))
	for i, e := range elems {
		if out[i], err = e.num(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// str decodes v as a string.
func (v jval) str() (string, error) {
	var s string
	if err := json.Unmarshal(v.raw, &s); err != nil {
		return "", v.errf("is not a string: %s", short(v.raw))
	}
	return s, nil
}

// jobj is a decoded JSON object of a suite file.
type jobj struct {
	v jval
	m map[string]json.RawMessage
}

// get returns field k, and false when it is missing or null.
func (o jobj) get(k string) (jval, bool) {
	r, ok := o.m[k]
	if !ok || isNull(r) {
		return jval{}, false
	}
	return o.v.child(k, r), true
}

// need returns field k; missing or null is an error.
func (o jobj) need(k string) (jval, error) {
	v, ok := o.get(k)
	if !ok {
		return jval{}, o.missing(k)
	}
	return v, nil
}

func (o jobj) missing(k string) error {
	c := o.v.child(k, nil)
	if _, ok := o.m[k]; ok {
		return c.errf("is null")
	}
	if c.bench != "" {
		return c.f.benchErrf(c.bench, "no field %q", c.path)
	}
	return c.f.errf("no field %q", c.path)
}

func (o jobj) num(k string) (float64, error) {
	v, err := o.need(k)
	if err != nil {
		return 0, err
	}
	return v.num()
}

func (o jobj) str(k string) (string, error) {
	v, err := o.need(k)
	if err != nil {
		return "", err
	}
	return v.str()
}

// optStr is field k as a string, "" when missing or null.
func (o jobj) optStr(k string) (string, error) {
	v, ok := o.get(k)
	if !ok {
		return "", nil
	}
	return v.str()
}

// readSuiteFile reads a suite file of at most baselines.MaxReportBytes.
func readSuiteFile(f *suiteFile) (jval, error) {
	if f.data != nil {
		return suiteBytes(f, f.data)
	}
	b, err := baselines.ReadFileLimited(f.path, baselines.MaxReportBytes)
	if err != nil {
		return jval{}, err
	}
	return suiteBytes(f, b)
}

// suiteBytes is the top-level JSON value of a file's bytes.
func suiteBytes(f *suiteFile, b []byte) (jval, error) {
	if len(strings.TrimSpace(string(b))) == 0 {
		return jval{}, fmt.Errorf("%s: empty file, not a %s", f.path, suiteWhat[f.format])
	}
	if !json.Valid(b) {
		var x any
		err := json.Unmarshal(b, &x)
		return jval{}, fmt.Errorf("%s: not a %s: %v", f.path, suiteWhat[f.format], err)
	}
	return jval{f: f, raw: b}, nil
}

// topObject reads f as a JSON object with the fields the format's files
// always have; another format's file is named as such.
func topObject(f *suiteFile, v jval, want ...string) (jobj, error) {
	o, err := v.object()
	if err != nil {
		return jobj{}, fmt.Errorf("%s: not a %s: the file holds %s, not an object", f.path, suiteWhat[f.format], jsonKind(v.raw))
	}
	for _, k := range want {
		if _, ok := o.m[k]; !ok {
			msg := fmt.Sprintf("%s: not a %s: no field %q", f.path, suiteWhat[f.format], k)
			if t := sniffSuite(o.m); t != "" && suiteWhat[t] != suiteWhat[f.format] {
				msg += fmt.Sprintf(" (it looks like a %s)", suiteWhat[t])
			}
			return jobj{}, errors.New(msg)
		}
	}
	return o, nil
}

// sniffSuite names the format a top-level object looks like, for
// errors: "" when none.
func sniffSuite(top map[string]json.RawMessage) string {
	has := func(ks ...string) bool {
		for _, k := range ks {
			if _, ok := top[k]; !ok {
				return false
			}
		}
		return true
	}
	switch {
	case has("benchmarks", "machine_info"):
		return "pytest-benchmark"
	case has("benchmarks", "context"):
		return "googlebenchmark"
	case has("results") && !has("metrics"):
		return "hyperfine"
	}
	return ""
}

// jsonKind names the kind of a JSON value: "an array", "a number".
func jsonKind(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "nothing"
	}
	switch s[0] {
	case '[':
		return "an array"
	case '{':
		return "an object"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// timeUnits are the seconds in a unit of time as the formats write it.
var timeUnits = map[string]float64{
	"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1, "sec": 1,
}

// secPerOp is the metric of a time per operation (per iteration, per
// run), as Go benchmarks name it.
const secPerOp gate.Metric = "sec/op"

// objectKeys lists the keys of the JSON object b in file order, each
// once: the order a file gives its benchmarks is the order a report shows
// them.
func objectKeys(b []byte) ([]string, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var keys []string
	seen := map[string]bool{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return nil, err
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// Names lists every name "benchgate compare -import" takes: the load
// tools, then the benchmark-suite formats.
func Names() []string { return slices.Concat(Tools, Formats) }
