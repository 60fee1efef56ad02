// Package gobench reads the output of go test -bench: the results of one
// run of a test binary (or a saved file of many), each benchmark with its
// measurements by unit, tidied to base units as benchstat shows them
// (sec/op, B/op, allocs/op, B/s and custom units), and names the cells of
// a gobench comparison. It runs nothing: runner executes the binaries.
package gobench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"

	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/benchgate/benchgate/scenario"
)

// Result is one benchmark result line.
type Result struct {
	// Pkg is the import path from the "pkg:" line in force at the result;
	// "" when the output had none.
	Pkg string
	// Name is the benchmark's full name as go test prints it, "Benchmark"
	// prefix, sub-benchmarks and -cpu suffix kept
	// ("BenchmarkInsert/rows=100-4"), after the rename rules.
	Name string
	// Iters is the number of iterations the values are averaged over.
	Iters int
	// Values are the measurements by tidied unit: ns/op becomes sec/op,
	// MB/s becomes B/s (see golang.org/x/perf/benchunit.Tidy); B/op,
	// allocs/op and custom units (b.ReportMetric) are kept as written.
	Values map[string]float64
	// GOOS, GOARCH and CPU are the "goos:", "goarch:" and "cpu:" lines in
	// force at the result, the machine it ran on as go test names it; ""
	// when the output had none.
	GOOS, GOARCH, CPU string
}

// Parse reads go test -bench output from r. Every line that is not a
// benchmark result, a configuration line ("pkg: ...") or a unit metadata
// line is ignored, as benchstat does: test logs, PASS, ok lines.
//
// A line that starts like a result but cannot be read (typically a
// benchmark that printed to standard output in the middle of its own
// result line) is a syntax error: Parse returns every result it could read
// together with an error listing each bad line with its line number (a
// join of errors wrapping *benchfmt.SyntaxError). The caller decides
// whether a lost result is fatal; runner's is.
//
// rename rewrites each result's Name, the bare benchmark name (see
// scenario.ApplyRename); nil for none. A gobench scenario's Rename rules
// match package-qualified cell names instead: pass nil here and give them
// to Cell.
func Parse(r io.Reader, rename []scenario.Rename) ([]Result, error) {
	return ParseFile(r, "", rename)
}

// Limits of one go test -bench output. A pull request's benchmark writes
// the output the runner parses, and a saved output comes from the user:
// both are read in bounded memory and time. Past a limit the output is
// refused, never read in part.
const (
	// MaxOutputBytes bounds an output.
	MaxOutputBytes = 256 << 20
	// MaxResults bounds the benchmark results of an output: 10,000
	// benchmarks at -count 10. Two sides' results make a results file's
	// rungs (benchdata.MaxRungs is twice this).
	MaxResults = 100_000
	// MaxValues bounds the measurements of all results together (five
	// units a result at MaxResults: benchdata.MaxRungEntries over two
	// sides).
	MaxValues = 500_000
	// maxListed is how many bad lines an error lists; it counts the rest.
	maxListed = 20
)

// ParseFile is Parse with the name errors give the input, e.g. a saved
// file's path; "" names it "output". It reads at most MaxOutputBytes of
// r.
func ParseFile(r io.Reader, fileName string, rename []scenario.Rename) ([]Result, error) {
	if fileName == "" {
		fileName = "output"
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxOutputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fileName, err)
	}
	if len(data) > MaxOutputBytes {
		return nil, fmt.Errorf("%s: more than %d bytes of go test -bench output: refused", fileName, MaxOutputBytes)
	}
	rd := benchfmt.NewReader(bytes.NewReader(data), fileName)
	var out []Result
	var errs []error
	lines := lineFinder{data: data, line: 1}
	bad, values := 0, 0
	addBad := func(err error) {
		if bad++; bad <= maxListed {
			errs = append(errs, err)
		}
	}
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			if len(out) == MaxResults {
				_, line := rec.Pos()
				return nil, fmt.Errorf("%s:%d: more than %d benchmark results in one output: refused", fileName, line, MaxResults)
			}
			if values += len(rec.Values); values > MaxValues {
				_, line := rec.Pos()
				return nil, fmt.Errorf("%s:%d: more than %d measurements in one output: refused", fileName, line, MaxValues)
			}
			res := Result{
				Pkg:    rec.GetConfig("pkg"),
				Name:   scenario.ApplyRename(rename, "Benchmark"+rec.Name.String()),
				Iters:  rec.Iters,
				Values: make(map[string]float64, len(rec.Values)),
				GOOS:   rec.GetConfig("goos"),
				GOARCH: rec.GetConfig("goarch"),
				CPU:    rec.GetConfig("cpu"),
			}
			finite := true
			for _, v := range rec.Values {
				if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
					// A benchmark's own ReportMetric can say NaN: no
					// statistic can use it, and results cannot store it.
					finite = false
					_, line := rec.Pos()
					addBad(fmt.Errorf("%s:%d: %s reports %v %s: not a finite number", fileName, line,
						textsafe.Clip("Benchmark"+rec.Name.String(), textsafe.QuoteRunes), v.Value, textsafe.Clip(v.Unit, textsafe.QuoteRunes)))
					break
				}
				res.Values[v.Unit] = v.Value
			}
			if finite {
				out = append(out, res)
			}
		case *benchfmt.SyntaxError:
			addBad(&lineError{err: rec, text: lines.text(rec.Line)})
		}
	}
	if bad > maxListed {
		errs = append(errs, fmt.Errorf("%s: and %d more lines that could not be read", fileName, bad-maxListed))
	}
	if err := rd.Err(); err != nil {
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// lineError is a syntax error with the text of its line, which says more
// than benchfmt's message alone ("parsing iteration count").
type lineError struct {
	err  *benchfmt.SyntaxError
	text string
}

func (e *lineError) Error() string {
	if e.text == "" {
		return e.err.Error()
	}
	return fmt.Sprintf("%s: %q", e.err.Error(), e.text)
}

func (e *lineError) Unwrap() error { return e.err }

// lineFinder finds lines of data by number, in increasing order, in one
// pass over data whatever the number of lines asked for.
type lineFinder struct {
	data []byte
	off  int // where line starts
	line int
}

// text returns line n (1-based) trimmed and cut short; "" when n is
// before the last line asked for or past the end.
func (f *lineFinder) text(n int) string {
	for f.line < n {
		j := bytes.IndexByte(f.data[f.off:], '\n')
		if j < 0 {
			return ""
		}
		f.off += j + 1
		f.line++
	}
	if f.line != n {
		return ""
	}
	data := f.data[f.off:]
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	const max = 120
	data = bytes.TrimLeftFunc(data, unicode.IsSpace)
	if len(data) > 4*max {
		data = data[:4*max] // max runes need no more
	}
	s := strings.TrimSpace(string(data))
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "…"
	}
	return s
}

// Procs is the GOMAXPROCS a benchmark ran with, read from its name as go
// test writes it: the "-N" suffix, absent (1) when it ran with one. A
// sub-benchmark's own trailing "-digits" (BenchmarkRead/size-1024, at
// GOMAXPROCS 1) reads the same way: the name alone cannot tell them apart.
func Procs(name string) int {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return 1
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 1 || name[i+1] == '+' {
		return 1
	}
	return n
}

// CellName is the class of a benchmark's cell: the package path relative
// to the module, then "." and the name, so equal benchmark names in two
// packages never collide: "internal/store.BenchmarkInsert-4". The module's
// root package's benchmarks are their names alone, "BenchmarkInsert-4"
// (no other package's cell can be named so). When modulePath is ""
// or not a prefix of pkg, the full package path is used; when pkg is ""
// (output without a "pkg:" line) the name alone.
func CellName(pkg, modulePath, name string) string {
	rel := RelPackage(pkg, modulePath)
	if pkg == "" || rel == "." {
		return name
	}
	return rel + "." + name
}

// Cell is the cell of a result as a gobench scenario names it: CellName,
// then rewritten by the first matching rename rule (scenario.GoBench's
// Rename, which match package-qualified names).
func Cell(pkg, modulePath, name string, rename []scenario.Rename) string {
	return scenario.ApplyRename(rename, CellName(pkg, modulePath, name))
}

// RelPackage is pkg relative to modulePath: "internal/store", "." for the
// module's root package, pkg itself when modulePath is "" or not its
// prefix.
func RelPackage(pkg, modulePath string) string {
	switch {
	case modulePath == "":
		return pkg
	case pkg == modulePath:
		return "."
	case strings.HasPrefix(pkg, modulePath+"/"):
		return pkg[len(modulePath)+1:]
	}
	return pkg
}
