package importers

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
)

// maxErrBytes bounds an error about a file whatever the file holds: a
// name, key or value read from it is quoted cut to textsafe.QuoteRunes
// characters, so a 10 MB one makes an error of a few hundred bytes, not
// one 10 MB line of a workflow log.
const maxErrBytes = 4 << 10

// longText is 10 MB of one name: ten million characters, a few of them
// not ASCII, so that a cut must fall on a rune boundary.
var longText = "é" + strings.Repeat("x", 10_000_000-2) + "é"

// withLong writes src with its first old replaced by new, in which every
// "LONG" is longText.
func withLong(t *testing.T, src, old, new string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, old) {
		t.Fatalf("%s holds no %q", src, old)
	}
	s = strings.Replace(s, old, strings.ReplaceAll(new, "LONG", longText), 1)
	p := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestErrorsQuoteLongNamesCut: a name, metric, key or value of 10 MB in
// any importer's file is refused with an error of a few KB that says how
// long the text was.
func TestErrorsQuoteLongNamesCut(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, format, src, old, new string
	}{
		{"gab name", FormatGABSmaller, "gab/smaller-baseline-1.json", `"parse/small"`, `"LONG"`},
		{"gab unit", FormatGABSmaller, "gab/smaller-baseline-1.json", `"ns/op"`, `"LONG"`},
		{"gab bad value", FormatGABSmaller, "gab/smaller-baseline-1.json", `"parse/small"`, `"LONG", "x": 1, "value": "y"`},
		{"bmf name", "bmf", "bmf/baseline-1.json", `"parse::small"`, `"LONG"`},
		{"bmf metric", "bmf", "bmf/baseline-1.json", `"latency"`, `"LONG"`},
		{"bmf bad value", "bmf", "bmf/baseline-1.json", `"value": 803.9`, `"value": "LONG"`},
		{"hyperfine command", "hyperfine", "hyperfine/baseline-1.json", `"sleep $WORK"`, `"LONG"`},
		{"googlebenchmark name", "googlebenchmark", "googlebenchmark/baseline-1.json", `"run_name": "BM_Sum/1024"`, `"run_name": "LONG"`},
		{"googlebenchmark run_type", "googlebenchmark", "googlebenchmark/baseline-1.json", `"run_type": "iteration"`, `"run_type": "LONG"`},
		{"googlebenchmark time_unit", "googlebenchmark", "googlebenchmark/baseline-1.json", `"time_unit": "ns"`, `"time_unit": "LONG"`},
		{"pytest-benchmark name", "pytest-benchmark", "pytest-benchmark/baseline-1.json", `"fullname": "`, `"fullname": "LONG`},
		{"jmh name", "jmh", "jmh/baseline-1.json", `"org.example.bench.MapBench.put"`, `"LONG"`},
		{"jmh mode", "jmh", "jmh/baseline-1.json", `"mode": "thrpt"`, `"mode": "LONG"`},
		{"criterion id", "criterion", "criterion/messages-baseline.json", `"sum 1000"`, `"LONG"`},
		{"vegeta status", "vegeta", "vegeta/status-errors.json", `"500":20`, `"LONG":-1`},
		{"vegeta time", "vegeta", "vegeta/status-errors.json", `"2026-11-30T03:13:10.927383532Z"`, `"LONG"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := filepath.Join("testdata", c.src)
			bad := withLong(t, src, c.old, c.new)
			var err error
			if slices.Contains(Formats, c.format) {
				_, err = ReadSuite(c.format, []string{bad}, []string{src}, Options{}, "")
			} else {
				_, err = Read(c.format, []string{bad}, []string{src}, Options{})
			}
			checkBounded(t, err)
		})
	}
}

func checkBounded(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("imported")
	}
	if msg := err.Error(); len(msg) > maxErrBytes {
		t.Fatalf("an error of %d bytes: %.300s…", len(msg), msg)
	}
	if !strings.Contains(err.Error(), "…") {
		t.Errorf("the error does not say it cut a text: %s", err)
	}
}

// TestGoBenchCollisionErrorBounded: two benchmarks of 60,000-character
// names (near the longest line go test -bench output may hold) renamed to
// one cell make an error of a few KB.
func TestGoBenchCollisionErrorBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := strings.Repeat("x", 60_000)
	out := "pkg: example.com/m\nBenchmarkA" + long + " 1 1 ns/op\nBenchmarkB" + long + " 1 1 ns/op\n"
	old, new := filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt")
	for _, p := range []string{old, new} {
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sc := &Scenario{Scenario: &scenario.Scenario{GoBench: &scenario.GoBench{Rename: []scenario.Rename{
		{Pattern: regexp.MustCompile(`^.*$`), Replace: "all" + long},
	}}}, Info: benchdata.ScenarioInfo{Name: "bench", Gate: defaultGate("sec/op")}}
	_, err := GoBench(old, new, "benchgate v1", Options{Scenario: sc})
	checkBounded(t, err)
	if !strings.Contains(err.Error(), "are both named all") {
		t.Errorf("error: %.500s", err)
	}
}
