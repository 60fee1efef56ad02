package importers

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchgate/benchgate/baselines"
)

// Each suite parser reads a file a pull request may write. Beyond not
// panicking, what a fuzzed file imports must be what a results file can
// hold: names that pass checkName, finite values, bounded samples, and
// results that read back.

func fuzzSuite(f *testing.F, format string, seeds ...string) {
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sf := &suiteFile{path: "f.json", format: format, data: data}
		benches, err := parseSuite(suiteParsers[format], sf)
		if err != nil {
			return
		}
		res := &baselines.Results{Version: baselines.FormatVersion, Kind: "import:" + format}
		for _, b := range benches {
			if err := checkName(b.name); err != nil {
				t.Fatalf("name %q: %v", b.name, err)
			}
			for m, xs := range b.samples {
				if len(xs) > MaxSuiteSamples {
					t.Fatalf("%s: %d samples", m, len(xs))
				}
				for k, x := range xs {
					if math.IsNaN(x) || math.IsInf(x, 0) {
						t.Fatalf("%s: %v", m, x)
					}
					if k < 4 {
						res.Rungs = append(res.Rungs, baselines.Rung{Cell: baselines.Cell{Class: b.name}, Values: map[string]float64{string(m): x}})
					}
				}
			}
		}
		out, err := json.Marshal(res)
		if err != nil {
			t.Fatalf("the imported rungs cannot be stored: %v", err)
		}
		if _, err := baselines.Parse(out, "imported"); err != nil {
			t.Fatalf("the imported rungs do not read back: %v", err)
		}
	})
}

func seeds(dir string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join("testdata", dir, n)
	}
	return out
}

func FuzzGABSmaller(f *testing.F) {
	fuzzSuite(f, FormatGABSmaller, seeds("gab", "smaller-baseline-1.json", "bigger-baseline-1.json")...)
}

func FuzzBMF(f *testing.F) { fuzzSuite(f, "bmf", seeds("bmf", "baseline-1.json")...) }

func FuzzPytestBenchmark(f *testing.F) {
	fuzzSuite(f, "pytest-benchmark", seeds("pytest-benchmark", "baseline-1.json", "no-data.json")...)
}

func FuzzGoogleBenchmark(f *testing.F) {
	fuzzSuite(f, "googlebenchmark", seeds("googlebenchmark", "baseline-1.json", "aggregates-only.json")...)
}

// FuzzCriterionMessages fuzzes cargo-criterion's messages; a criterion
// directory's files are objects read by the same accessors.
func FuzzCriterionMessages(f *testing.F) {
	fuzzSuite(f, "criterion", seeds("criterion", "messages-baseline.json")...)
}

func FuzzHyperfine(f *testing.F) {
	fuzzSuite(f, "hyperfine", seeds("hyperfine", "baseline-1.json", "failing.json")...)
}

func FuzzJMH(f *testing.F) { fuzzSuite(f, "jmh", seeds("jmh", "baseline-1.json")...) }
