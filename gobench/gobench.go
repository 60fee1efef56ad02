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
	"strings"

	"golang.org/x/perf/benchfmt"

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

// ParseFile is Parse with the name errors give the input, e.g. a saved
// file's path; "" names it "output".
func ParseFile(r io.Reader, fileName string, rename []scenario.Rename) ([]Result, error) {
	if fileName == "" {
		fileName = "output"
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fileName, err)
	}
	rd := benchfmt.NewReader(bytes.NewReader(data), fileName)
	var out []Result
	var errs []error
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			res := Result{
				Pkg:    rec.GetConfig("pkg"),
				Name:   scenario.ApplyRename(rename, "Benchmark"+rec.Name.String()),
				Iters:  rec.Iters,
				Values: make(map[string]float64, len(rec.Values)),
			}
			finite := true
			for _, v := range rec.Values {
				if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
					// A benchmark's own ReportMetric can say NaN: no
					// statistic can use it, and results cannot store it.
					finite = false
					_, line := rec.Pos()
					errs = append(errs, fmt.Errorf("%s:%d: %s reports %v %s: not a finite number", fileName, line, "Benchmark"+rec.Name.String(), v.Value, v.Unit))
					break
				}
				res.Values[v.Unit] = v.Value
			}
			if finite {
				out = append(out, res)
			}
		case *benchfmt.SyntaxError:
			errs = append(errs, &lineError{err: rec, text: lineText(data, rec.Line)})
		}
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

// lineText returns line n (1-based) of data, trimmed and cut short.
func lineText(data []byte, n int) string {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return ""
		}
		data = data[j+1:]
	}
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	s := strings.TrimSpace(string(data))
	const max = 120
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
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
