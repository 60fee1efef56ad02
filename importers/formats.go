package importers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/internal/textsafe"
)

// formats is the one table of what the importers read: a load tool's
// reports (Read) or a benchmark suite's files (ReadSuite), one entry
// each. Tools, Formats, Names, the errors that list the names, compare's
// help (Help) and the table in docs/importers.md (TestFormatsTable) are
// made from it: a new tool or format is its entry and its parser.
//
// init sets it, as the parsers' errors look their file's entry up in it.
var formats []format

func init() {
	formats = table()
	Tools = namesOf(func(f *format) bool { return f.load != nil })
	Formats = namesOf(func(f *format) bool { return f.suite != nil })
}

func table() []format {
	return []format{
		{name: "vegeta", reads: "vegeta report -type=json", what: "vegeta JSON report",
			identity: []string{"latencies", "status_codes", "requests"}, load: parseVegeta},
		{name: "ghz", reads: "ghz --format json", what: "ghz JSON report",
			identity: []string{"count", "total", "latencyDistribution", "statusCodeDistribution"}, load: parseGhz},
		{name: "oha", reads: "oha --json", what: "oha JSON report",
			identity: []string{"summary", "latencyPercentiles", "statusCodeDistribution"}, load: parseOha},
		{name: "k6", reads: "k6 --summary-export, or handleSummary() data as JSON", what: "k6 summary",
			identity: []string{"metrics"}, load: parseK6},

		{name: FormatGABSmaller, reads: "github-action-benchmark JSON, all better lower", cells: "`name`",
			what: "github-action-benchmark custom JSON", suite: gabParser(gabLower)},
		{name: FormatGABBigger, reads: "github-action-benchmark JSON, all better higher", cells: "`name`",
			what: "github-action-benchmark custom JSON", suite: gabParser(gabHigher)},
		{name: FormatGAB, reads: "github-action-benchmark JSON, /s units better higher", cells: "`name`",
			what: "github-action-benchmark custom JSON", suite: gabParser(gabByUnit)},
		{name: "bmf", reads: "Bencher Metric Format JSON", cells: "key",
			what: "Bencher Metric Format JSON", suite: parseBMF},
		{name: "pytest-benchmark", reads: "pytest-benchmark --benchmark-json", cells: "`fullname`",
			what: "pytest-benchmark JSON", identity: []string{"benchmarks", "machine_info"}, suite: parsePytest},
		{name: "googlebenchmark", reads: "Google Benchmark --benchmark_format=json", cells: "`run_name`",
			what: "Google Benchmark JSON", identity: []string{"context", "benchmarks"}, suite: parseGoogleBenchmark},
		{name: "criterion", reads: "a target/criterion directory, or cargo-criterion JSON", cells: "`full_id` (`id`)",
			what: "criterion output", suite: parseCriterion},
		{name: "hyperfine", reads: "hyperfine --export-json", cells: "`command`",
			what: "hyperfine JSON export", identity: []string{"results"}, unlike: []string{"metrics"}, suite: parseHyperfine},
		{name: "jmh", reads: "JMH -rf json", cells: "`benchmark` and `params`",
			what: "JMH JSON result", suite: parseJMH},
	}
}

// format is one tool or file format the importers read.
type format struct {
	// name is what "compare -import" takes, and the results' kind:
	// import:NAME.
	name string
	// reads says in one line which files: the tool's command that
	// writes them.
	reads string
	// cells says, in Markdown, what of a suite's file names a
	// benchmark, its cell (docs/importers.md's table); a load tool's
	// report is one cell, named by -class.
	cells string
	// what names its file in errors: "not a vegeta JSON report".
	what string
	// identity lists the top-level fields its file always has, which
	// tell it from the others' (in the order a missing one is named);
	// unlike, fields its file never has.
	identity, unlike []string
	// Exactly one of load and suite is set: a load tool's report, one
	// file a repetition of one cell (Read), or a benchmark suite's file,
	// each benchmark a cell (ReadSuite).
	load  func(top jobj) (measurement, error)
	suite suiteParser
}

// github-action-benchmark's tool names for its custom JSON, which say
// which way every value improves, and benchgate export's name for it
// (-format gab), read with each metric in its own direction.
const (
	FormatGABSmaller = "customSmallerIsBetter"
	FormatGABBigger  = "customBiggerIsBetter"
	FormatGAB        = "gab"
)

// formatNamed is the entry of formats named name, or nil.
func formatNamed(name string) *format {
	for i := range formats {
		if formats[i].name == name {
			return &formats[i]
		}
	}
	return nil
}

// namesOf lists the names of the entries keep accepts, in table order.
func namesOf(keep func(f *format) bool) []string {
	var names []string
	for i := range formats {
		if keep(&formats[i]) {
			names = append(names, formats[i].name)
		}
	}
	return names
}

// Tools lists the load tools whose reports Read understands, in the
// order a report's fields are matched against theirs.
var Tools []string

// Formats lists the benchmark-suite formats ReadSources and ReadSuite
// understand. Results imported from them are marked Suite: they hold
// benchmarks, as a gobench run's do.
var Formats []string

// Names lists every name "benchgate compare -import" takes: the load
// tools, then the benchmark-suite formats.
func Names() []string { return slices.Concat(Tools, Formats) }

// unknownFormat is the error for a name that is neither a load tool nor
// a suite format.
func unknownFormat(name string) error {
	return fmt.Errorf("import: unknown tool or format %s: want one of %s", textsafe.Quote(name, textsafe.QuoteRunes), strings.Join(Names(), ", "))
}

// sniff names the entry of the same kind as f (a load tool's, a suite
// format's) whose identity the top-level fields top has, or nil.
func sniff(f *format, top map[string]jval) *format {
	has := func(ks []string) bool {
		for _, k := range ks {
			if _, ok := top[k]; !ok {
				return false
			}
		}
		return true
	}
	for i := range formats {
		t := &formats[i]
		if (t.load != nil) != (f.load != nil) || len(t.identity) == 0 || !has(t.identity) {
			continue
		}
		if !slices.ContainsFunc(t.unlike, func(k string) bool { _, ok := top[k]; return ok }) {
			return t
		}
	}
	return nil
}

// article is the indefinite article before a name: "an oha JSON report".
func article(s string) string {
	if strings.HasPrefix(s, "o") {
		return "an"
	}
	return "a"
}

// Help lists what "compare -import" takes, a line a name, under two
// headings: the load tools, whose reports are one file per repetition of
// one cell, and the suite formats, each benchmark of a file a cell.
// compare's help text shows it.
func Help() string {
	width := 0
	for _, f := range formats {
		width = max(width, len(f.name))
	}
	var b strings.Builder
	for _, kind := range []struct {
		head string
		load bool
	}{
		{"a load tool's reports, one file per repetition of one cell:", true},
		{"a benchmark suite's files, each benchmark a cell:", false},
	} {
		b.WriteString(kind.head + "\n")
		for _, f := range formats {
			if (f.load != nil) == kind.load {
				fmt.Fprintf(&b, "  %-*s  %s\n", width, f.name, f.reads)
			}
		}
	}
	return b.String()
}
