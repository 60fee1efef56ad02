package export

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/perf/benchunit"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/importers"
)

// TestRoundTrip exports bmf and both gab files of a results file and reads
// each back with the importer of its format (importers.ReadSources, as
// "compare -import" reads them, the file on both sides), by
// github-action-benchmark's tool names and by export's own name, gab:
// the import has the exported cells, and each metric's mean is the one
// exported. Read as gab, each metric goes in the direction the export
// split it by.
//
// The importers read other tools' files, whose names carry no benchgate
// cell: a benchmark's name is its cell's class, whole. So a cell comes
// back under its name (bmf: "csv/Q01 c=8"; gab: "csv/Q01 c=8 p95"), and a
// metric under the name its format gives it: in bmf, Bencher's
// throughput is ops/s and latency sec/op; in gab, the unit is the metric,
// tidied as benchstat tidies units. Names with quotes, commas, formula
// prefixes and markup come back as they went.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	type key struct{ cell, metric string }
	// gab's cell's name is the cell's and the metric, and its metric
	// the unit, tidied.
	gabBack := func(c benchdata.RecordCell) key {
		_, unit := benchunit.Tidy(1, gate.Metric(c.Metric).Unit())
		return key{GABName(c.Cell, c.Metric), unit}
	}
	for name, res := range map[string]*benchdata.Results{"load": loadResults(), "gobench": gobenchResults(), "hostile": printableResults()} {
		src := fromResults(t, res)
		for _, tc := range []struct {
			tool string
			opt  Options
			// back is the cell's name and the metric an exported row
			// is imported as.
			back func(c benchdata.RecordCell) key
		}{
			{"bmf", Options{Format: BMF}, func(c benchdata.RecordCell) key {
				m, _ := Measure(c.Metric)
				switch m {
				case "throughput":
					m = "ops/s"
				case "latency":
					m = "sec/op"
				}
				return key{c.Cell.String(), m}
			}},
			{importers.FormatGABSmaller, Options{Format: GAB, Direction: "smaller"}, gabBack},
			{importers.FormatGABBigger, Options{Format: GAB, Direction: "bigger"}, gabBack},
			// By the name it is exported as: gab, each metric in its
			// own direction, which is the one the export split by.
			{importers.FormatGAB, Options{Format: GAB, Direction: "smaller"}, gabBack},
			{importers.FormatGAB, Options{Format: GAB, Direction: "bigger"}, gabBack},
			// By github-action-benchmark's tool names, on both sides.
			{importers.FormatGABSmaller, Options{Format: importers.FormatGABSmaller}, gabBack},
			{importers.FormatGABBigger, Options{Format: importers.FormatGABBigger}, gabBack},
		} {
			t.Run(name+"/"+tc.opt.Format+"-"+tc.opt.Direction+"/"+tc.tool, func(t *testing.T) {
				t.Parallel()
				out := export(t, src, tc.opt)
				file := filepath.Join(t.TempDir(), "export.json")
				if err := os.WriteFile(file, out, 0o644); err != nil {
					t.Fatal(err)
				}
				imp, err := importers.ReadSources(importers.Sources{Tool: tc.tool, Baseline: []string{file}, Candidate: []string{file}}, importers.Options{}, "benchgate test")
				if err != nil {
					t.Fatalf("import of the export: %v\n%s", err, out)
				}
				c, err := decide.Results(imp)
				if err != nil {
					t.Fatal(err)
				}
				got := map[key]float64{}
				for _, cr := range c.Cells {
					for _, d := range cr.Decisions {
						k := key{cr.Key.String(), string(d.Metric)}
						got[k] = d.Candidate.Mean
						if d.Baseline.Mean != d.Candidate.Mean {
							t.Errorf("%v: baseline %v, candidate %v from one file", k, d.Baseline.Mean, d.Candidate.Mean)
						}
					}
				}
				o, _ := tc.opt.gabTool()
				rows, err := rowsOf(src, src.Records[0], o)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					k := tc.back(r.c)
					g, ok := got[k]
					if !ok {
						t.Errorf("%s %s exported, but not imported as %v (imported: %v)", r.name, r.metric, k, got)
						continue
					}
					delete(got, k)
					if !near(g, r.c.Mean) {
						t.Errorf("%s %s: exported mean %v, imported %v", r.name, r.metric, r.c.Mean, g)
					}
				}
				for k := range got {
					t.Errorf("imported %v, which the export does not hold", k)
				}
				if tc.tool == BMF {
					return
				}
				// Every metric of a file read by a tool name is decided in
				// the file's direction; read as gab, in its name's, which
				// is the file's but for a Go unit the results declared
				// better higher (hits/op): the file does not say.
				for _, r := range imp.Rungs {
					for m := range r.Values {
						higher, ok := imp.Scenario.Gate.HigherBetterFor[gate.Metric(m)]
						if !ok {
							higher = gate.Metric(m).HigherIsBetter()
						}
						want := o.Direction == "bigger"
						if tc.tool == importers.FormatGAB && m == "hits/op" {
							want = false
						}
						if higher != want {
							t.Errorf("%s %s: imported better higher %v from the %s file", r.Cell.Class, m, higher, o.Direction)
						}
					}
				}
			})
		}
	}
}

// printableResults is hostileResults without the names that hold a
// control character (a line break, a tab), which the importers refuse in
// a benchmark's name.
func printableResults() *benchdata.Results {
	var cells []benchdata.Cell
	for _, c := range hostileResults().Plan.Cells {
		if !strings.ContainsFunc(c.Class, unicode.IsControl) {
			cells = append(cells, c)
		}
	}
	return loadResults(cells...)
}

// near says whether a and b are equal but for the rounding of a unit's
// scaling (ns and seconds).
func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// TestFormatNamesImport: every format export writes but csv, by every
// name it takes, is a name compare -import reads it back by.
func TestFormatNamesImport(t *testing.T) {
	t.Parallel()
	for _, f := range Formats {
		if f != CSV && !slices.Contains(importers.Names(), f) {
			t.Errorf("export -format %s: compare -import takes no %s (it takes %v)", f, f, importers.Names())
		}
	}
}
