package importers

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
)

// Each suite parser reads a file a pull request may write. Beyond not
// panicking, an error about a fuzzed file is bounded (maxErrBytes) whatever
// the file holds, and what it imports must be what a results file can
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
	// A name, metric and value far longer than an error may quote.
	long := strings.Repeat("é", 3000)
	f.Add([]byte(`[{"name": "` + long + `", "unit": "` + long + `", "value": "` + long + `"}]`))
	f.Add([]byte(`{"` + long + `": {"` + long + `": {"value": 1}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf := &file{path: "f.json", format: format, data: data}
		benches, err := parseSuite(formatNamed(format).suite, sf)
		if err != nil {
			if len(err.Error()) > maxErrBytes {
				t.Fatalf("an error of %d bytes: %.300s…", len(err.Error()), err)
			}
			return
		}
		res := &benchdata.Results{Version: benchdata.FormatVersion, Kind: "import:" + format}
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
						res.Rungs = append(res.Rungs, benchdata.Rung{Cell: benchdata.Cell{Class: b.name}, Values: map[string]float64{string(m): x}})
					}
				}
			}
		}
		out, err := json.Marshal(res)
		if err != nil {
			t.Fatalf("the imported rungs cannot be stored: %v", err)
		}
		if _, err := benchdata.Parse(out, "imported"); err != nil {
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

// FuzzSplitJSON: the scan that splits a suite file's arrays and objects
// finds the elements and fields encoding/json finds, in any valid JSON.
func FuzzSplitJSON(f *testing.F) {
	for _, s := range []string{`[]`, `{}`, `[1, "a,]", [2, {"b": "}"}], null]`, `{"a\"": {"b": [1, 2]}, "a\"": 3, "c": "\\"}`, " [ \n1 ,\t2 ] "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		sf := &file{path: "f.json", format: "bmf"}
		v, err := parseJSON(sf, data)
		if err != nil {
			t.Fatal(err)
		}
		var a []json.RawMessage
		var m map[string]json.RawMessage
		switch {
		case json.Unmarshal(data, &a) == nil && a != nil:
			elems, err := v.array(len(a))
			if err != nil || len(elems) != len(a) {
				t.Fatalf("%d elements (%v), encoding/json %d", len(elems), err, len(a))
			}
			for i, e := range elems {
				if !bytes.Equal(e.raw, bytes.TrimSpace(a[i])) || !bytes.Equal(sf.text[e.off:e.off+len(e.raw)], e.raw) {
					t.Fatalf("element %d: %q at %d, encoding/json %q", i, e.raw, e.off, a[i])
				}
			}
			if _, err := v.array(len(a) - 1); len(a) > 0 && err == nil {
				t.Fatalf("%d elements within a bound of %d", len(a), len(a)-1)
			}
		case json.Unmarshal(data, &m) == nil && m != nil:
			o, err := v.objectOf(len(data))
			if err != nil || len(o.m) != len(m) || len(o.keys) != len(m) {
				t.Fatalf("%d fields, %d keys (%v), encoding/json %d", len(o.m), len(o.keys), err, len(m))
			}
			for k, raw := range m {
				got, ok := o.m[k]
				if !ok || !bytes.Equal(got.raw, bytes.TrimSpace(raw)) || !bytes.Equal(sf.text[got.off:got.off+len(got.raw)], got.raw) {
					t.Fatalf("field %q: %q, encoding/json %q", k, got.raw, raw)
				}
			}
		}
	})
}
