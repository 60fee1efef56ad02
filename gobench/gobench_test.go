package gobench

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/benchgate/benchgate/scenario"
)

func parseFile(t *testing.T, name string, rename []scenario.Rename) ([]Result, error) {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return ParseFile(f, name, rename)
}

// approx compares tidied values, which are products of the printed
// decimal and a power of ten.
func approx(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	m := b
	if m < 0 {
		m = -m
	}
	return d <= 1e-9*m
}

// two-packages.txt is real output of
// go test -run '^$' -bench . -benchmem -cpu 1,4 -benchtime 2000x ./...
// on a module with a root package and internal/store, both with a
// BenchmarkLookup; BenchmarkInsert has sub-benchmarks with b.SetBytes and
// a custom unit from b.ReportMetric, and BenchmarkLookup logs (b.Log).
func TestParseRealOutput(t *testing.T) {
	t.Parallel()
	rs, err := parseFile(t, "two-packages.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		pkg, name string
		iters     int
		values    map[string]float64
	}
	wants := []want{
		{"example.com/shop", "BenchmarkInsert/rows=10", 2000, map[string]float64{"sec/op": 84.41e-9, "B/s": 947.70e6, "rows/op": 10, "B/op": 80, "allocs/op": 1}},
		{"example.com/shop", "BenchmarkInsert/rows=10-4", 2000, map[string]float64{"sec/op": 91.00e-9, "B/s": 879.15e6, "rows/op": 10, "B/op": 80, "allocs/op": 1}},
		{"example.com/shop", "BenchmarkInsert/rows=100", 2000, map[string]float64{"sec/op": 135.1e-9, "B/s": 5922.20e6, "rows/op": 100, "B/op": 896, "allocs/op": 1}},
		{"example.com/shop", "BenchmarkInsert/rows=100-4", 2000, map[string]float64{"sec/op": 173.0e-9, "B/s": 4624.26e6, "rows/op": 100, "B/op": 896, "allocs/op": 1}},
		{"example.com/shop", "BenchmarkLookup", 2000, map[string]float64{"sec/op": 14.49e-9, "B/op": 0, "allocs/op": 0}},
		{"example.com/shop", "BenchmarkLookup-4", 2000, map[string]float64{"sec/op": 24.67e-9, "B/op": 0, "allocs/op": 0}},
		{"example.com/shop/internal/store", "BenchmarkLookup", 2000, map[string]float64{"sec/op": 75.25e-9, "B/op": 128, "allocs/op": 1}},
		{"example.com/shop/internal/store", "BenchmarkLookup-4", 2000, map[string]float64{"sec/op": 56.46e-9, "B/op": 128, "allocs/op": 1}},
	}
	if len(rs) != len(wants) {
		t.Fatalf("%d results, want %d: %+v", len(rs), len(wants), rs)
	}
	for i, w := range wants {
		r := rs[i]
		if r.Pkg != w.pkg || r.Name != w.name || r.Iters != w.iters {
			t.Errorf("result %d: %s %s (%d iterations), want %s %s (%d)", i, r.Pkg, r.Name, r.Iters, w.pkg, w.name, w.iters)
		}
		if r.GOOS != "linux" || r.GOARCH != "amd64" || r.CPU != "Intel(R) Xeon(R) Processor @ 2.80GHz" {
			t.Errorf("result %d: machine %q %q %q", i, r.GOOS, r.GOARCH, r.CPU)
		}
		if len(r.Values) != len(w.values) {
			t.Errorf("result %d (%s): values %v, want %v", i, r.Name, r.Values, w.values)
		}
		for u, v := range w.values {
			if got, ok := r.Values[u]; !ok || !approx(got, v) {
				t.Errorf("result %d (%s): %s = %v (present %v), want %v", i, r.Name, u, got, ok, v)
			}
		}
		for _, untidy := range []string{"ns/op", "MB/s"} {
			if _, ok := r.Values[untidy]; ok {
				t.Errorf("result %d (%s): untidied unit %s kept", i, r.Name, untidy)
			}
		}
	}

	// The two BenchmarkLookup of the two packages are different cells.
	cells := map[string]bool{}
	for _, r := range rs {
		c := CellName(r.Pkg, "example.com/shop", r.Name)
		if cells[c] {
			t.Errorf("cell %q twice", c)
		}
		cells[c] = true
	}
	for _, c := range []string{"BenchmarkLookup", "BenchmarkLookup-4", "internal/store.BenchmarkLookup", "internal/store.BenchmarkLookup-4", "BenchmarkInsert/rows=100-4"} {
		if !cells[c] {
			t.Errorf("no cell %q in %v", c, cells)
		}
	}
}

func TestProcs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want int
	}{
		{"BenchmarkA", 1}, {"BenchmarkA-4", 4}, {"BenchmarkInsert/rows=100-16", 16}, {"BenchmarkInsert/rows=100", 1},
		{"BenchmarkRead/size-1024", 1024}, // a sub-benchmark's own digits read the same
		{"BenchmarkA-", 1}, {"BenchmarkA-x", 1}, {"BenchmarkA-0", 1}, {"BenchmarkA-+3", 1}, {"", 1},
	} {
		if got := Procs(tc.name); got != tc.want {
			t.Errorf("Procs(%q) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// malformed.txt holds real output of a benchmark that printed to standard
// output in the middle of its own result line and of one that failed
// (b.Fatal), and lines damaged by hand.
func TestParseMalformed(t *testing.T) {
	t.Parallel()
	rs, err := parseFile(t, "malformed.txt", nil)
	if err == nil {
		t.Fatal("no error")
	}
	var names []string
	for _, r := range rs {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "BenchmarkGood-2 BenchmarkAlsoGood-2" {
		t.Errorf("results %q, want the two well-formed lines", got)
	}
	if v := rs[len(rs)-1].Values; !approx(v["sec/op"], 100e-9) || !approx(v["B/s"], 1.5e6) {
		t.Errorf("BenchmarkAlsoGood-2 values %v", v)
	}
	msg := err.Error()
	for _, want := range []string{
		`malformed.txt:7: parsing iteration count: invalid syntax: "BenchmarkPrint-2   \tprinted"`,
		"malformed.txt:9: missing measurements",
		"malformed.txt:10: parsing measurement: invalid syntax",
		"malformed.txt:11: missing units",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != 4 {
		t.Errorf("%d error lines, want 4:\n%s", n, msg)
	}
	var se *benchfmt.SyntaxError
	if !errors.As(err, &se) || se.Line != 7 {
		t.Errorf("errors.As *benchfmt.SyntaxError: %v", se)
	}
}

func TestParseNoFileName(t *testing.T) {
	t.Parallel()
	_, err := Parse(strings.NewReader("BenchmarkX-2 12\n"), nil)
	if err == nil || !strings.HasPrefix(err.Error(), "output:1: missing measurements") {
		t.Errorf("error %v", err)
	}
}

func TestParseEmpty(t *testing.T) {
	t.Parallel()
	rs, err := Parse(strings.NewReader("PASS\n"), nil)
	if err != nil || len(rs) != 0 {
		t.Errorf("%v, %v", rs, err)
	}
}

// The reference report's two clients: rename rules make their benchmarks
// one cell each, the -8 suffix kept.
func TestParseRename(t *testing.T) {
	t.Parallel()
	out := `goos: linux
goarch: amd64
pkg: example.com/clients
BenchmarkQoordinatorInsert_SingleThread_100rows-8	14	76588191 ns/op	731674 B/op	8015 allocs/op
BenchmarkNcoRestInsert_SingleThread_100rows-8	25	46429086 ns/op	1379349 B/op	15929 allocs/op
BenchmarkOther-8	1	5 ns/op
`
	rules := []scenario.Rename{
		{Pattern: regexp.MustCompile(`^Benchmark(Qoordinator|NcoRest)`), Replace: "BenchmarkClient"},
		{Pattern: regexp.MustCompile(`Other`), Replace: "Unused"},
	}
	rs, err := Parse(strings.NewReader(out), rules)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"BenchmarkClientInsert_SingleThread_100rows-8", "BenchmarkClientInsert_SingleThread_100rows-8", "BenchmarkUnused-8"}
	for i, r := range rs {
		if r.Name != want[i] {
			t.Errorf("result %d: %q, want %q", i, r.Name, want[i])
		}
	}
	if !approx(rs[0].Values["sec/op"], 76588191e-9) || rs[1].Values["allocs/op"] != 15929 {
		t.Errorf("values %v %v", rs[0].Values, rs[1].Values)
	}
}

func TestCellName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ pkg, mod, name, want string }{
		{"example.com/m/internal/store", "example.com/m", "BenchmarkInsert-4", "internal/store.BenchmarkInsert-4"},
		{"example.com/m", "example.com/m", "BenchmarkInsert-4", "BenchmarkInsert-4"},
		{"example.com/m/internal/store", "", "BenchmarkInsert", "example.com/m/internal/store.BenchmarkInsert"},
		{"example.com/mx/store", "example.com/m", "BenchmarkInsert", "example.com/mx/store.BenchmarkInsert"},
		{"other.org/p", "example.com/m", "BenchmarkInsert/rows=100-8", "other.org/p.BenchmarkInsert/rows=100-8"},
		{"", "example.com/m", "BenchmarkInsert", "BenchmarkInsert"},
	} {
		if got := CellName(c.pkg, c.mod, c.name); got != c.want {
			t.Errorf("CellName(%q, %q, %q) = %q, want %q", c.pkg, c.mod, c.name, got, c.want)
		}
	}
}

// A scenario's rename rules match cell names: the reference report's two
// clients, each in its own package, become one cell per benchmark.
func TestCellRename(t *testing.T) {
	t.Parallel()
	rules := []scenario.Rename{
		{Pattern: regexp.MustCompile(`^qoordinator\.BenchmarkQoordinator(.*)`), Replace: "client.Benchmark$1"},
		{Pattern: regexp.MustCompile(`^ncorest\.BenchmarkNcoRest(.*)`), Replace: "client.Benchmark$1"},
	}
	a := Cell("example.com/nco/qoordinator", "example.com/nco", "BenchmarkQoordinatorInsert_SingleThread_100rows-8", rules)
	b := Cell("example.com/nco/ncorest", "example.com/nco", "BenchmarkNcoRestInsert_SingleThread_100rows-8", rules)
	if a != "client.BenchmarkInsert_SingleThread_100rows-8" || a != b {
		t.Errorf("cells %q and %q", a, b)
	}
	if c := Cell("example.com/nco/other", "example.com/nco", "BenchmarkQoordinatorX", rules); c != "other.BenchmarkQoordinatorX" {
		t.Errorf("unmatched cell %q", c)
	}
}

func TestParseNotFinite(t *testing.T) {
	t.Parallel()
	in := "pkg: example.com/m\nBenchmarkA-2 \t 10\t 5 ns/op\nBenchmarkB-2 \t 10\t NaN ns/op\nBenchmarkC-2 \t 10\t 7 ns/op\t +Inf hits/op\n"
	rs, err := ParseFile(strings.NewReader(in), "x.txt", nil)
	if len(rs) != 1 || rs[0].Name != "BenchmarkA-2" {
		t.Errorf("results %+v", rs)
	}
	if err == nil || !strings.Contains(err.Error(), "x.txt:3: BenchmarkB-2 reports NaN sec/op: not a finite number") ||
		!strings.Contains(err.Error(), "x.txt:4: BenchmarkC-2 reports +Inf hits/op") {
		t.Errorf("err = %v", err)
	}
}
