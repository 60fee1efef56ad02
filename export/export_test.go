package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (run go test -update after checking the change)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// fromResults is FromResults of res, which must succeed.
func fromResults(t *testing.T, res *benchdata.Results) Source {
	t.Helper()
	src, err := FromResults(res, "results.json")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// fromHistory is FromHistory of testdata/history.jsonl.
func fromHistory(t *testing.T) Source {
	t.Helper()
	recs, err := benchdata.ReadHistory("testdata/history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	src, err := FromHistory(recs, "history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// export is New and its writer, both of which must succeed.
func export(t *testing.T, src Source, o Options) []byte {
	t.Helper()
	write, err := New(src, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		golden string
		src    func(*testing.T) Source
		opt    Options
	}{
		{"load.bmf.json", func(t *testing.T) Source { return fromResults(t, loadResults()) }, Options{Format: BMF}},
		{"load-baseline.bmf.json", func(t *testing.T) Source { return fromResults(t, loadResults()) }, Options{Format: BMF, Target: "baseline"}},
		{"load-smaller.gab.json", func(t *testing.T) Source { return fromResults(t, loadResults()) }, Options{Format: GAB, Direction: "smaller"}},
		{"load-bigger.gab.json", func(t *testing.T) Source { return fromResults(t, loadResults()) }, Options{Format: GAB, Direction: "bigger"}},
		{"load.csv", func(t *testing.T) Source { return fromResults(t, loadResults()) }, Options{Format: CSV}},
		{"gobench.bmf.json", func(t *testing.T) Source { return fromResults(t, gobenchResults()) }, Options{Format: BMF}},
		{"gobench-bigger.gab.json", func(t *testing.T) Source { return fromResults(t, gobenchResults()) }, Options{Format: GAB, Direction: "bigger"}},
		{"gobench-smaller.gab.json", func(t *testing.T) Source { return fromResults(t, gobenchResults()) }, Options{Format: GAB, Direction: "smaller"}},
		{"gobench.csv", func(t *testing.T) Source { return fromResults(t, gobenchResults()) }, Options{Format: CSV}},
		// A history: bmf and gab its latest run by date (bg-3, whose
		// candidate p95 has one repetition: no interval), or -run's.
		{"history.bmf.json", fromHistory, Options{Format: BMF}},
		{"history-bg-2.bmf.json", fromHistory, Options{Format: BMF, Run: "bg-2"}},
		{"history-smaller.gab.json", fromHistory, Options{Format: GAB, Direction: "smaller"}},
		{"history.csv", fromHistory, Options{Format: CSV}},
		{"history-bg-1-baseline.csv", fromHistory, Options{Format: CSV, Run: "bg-1", Target: "baseline"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			t.Parallel()
			got := export(t, tc.src(t), tc.opt)
			golden(t, tc.golden, got)
			// Exporting twice gives the same bytes: no map order, no clock.
			if again := export(t, tc.src(t), tc.opt); !bytes.Equal(got, again) {
				t.Error("two exports differ")
			}
		})
	}
}

// TestBMFValues pins the BMF of a cell against the record it comes from:
// the mean, mean ∓ half-width, rps as throughput and sec/op as latency in
// nanoseconds.
func TestBMFValues(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, src Source, bench, measure string, scale float64, c benchdata.RecordCell) {
		t.Helper()
		var got map[string]map[string]map[string]float64
		if err := json.Unmarshal(export(t, src, Options{Format: BMF}), &got); err != nil {
			t.Fatal(err)
		}
		m, ok := got[bench][measure]
		if !ok {
			t.Fatalf("no %s of %q in %v", measure, bench, got)
		}
		want := map[string]float64{"value": c.Mean * scale, "lower_value": (c.Mean - c.HalfWidth) * scale, "upper_value": (c.Mean + c.HalfWidth) * scale}
		for k, w := range want {
			if m[k] != w {
				t.Errorf("%s %s %s = %v, want %v", bench, measure, k, m[k], w)
			}
		}
	}
	load := fromResults(t, loadResults())
	c := find(t, load.Records[0], "csv/Q01 c=8", "candidate", "rps")
	if c.N != 3 || c.HalfWidth <= 0 {
		t.Fatalf("fixture: %+v", c)
	}
	check(t, load, "csv/Q01 c=8", "throughput", 1, c)
	check(t, load, "csv/Q01 c=8", "p95", 1, find(t, load.Records[0], "csv/Q01 c=8", "candidate", "p95"))
	check(t, load, "[cpus=1] Q01 c=64 200/s", "mem_peak", 1, find(t, load.Records[0], "[cpus=1] Q01 c=64 200/s", "candidate", "mem_peak"))
	gb := fromResults(t, gobenchResults())
	c = find(t, gb.Records[0], "benchmod.BenchmarkSum-2", "candidate", "sec/op")
	if want := (629 + 644.9 + 611 + 30) / 3 * 1e-9; abs(c.Mean-want) > 1e-18 {
		t.Fatalf("sec/op mean %v, want %v", c.Mean, want)
	}
	check(t, gb, "benchmod.BenchmarkSum-2", "latency", 1e9, c)
}

func abs(f float64) float64 { return max(f, -f) }

// find is the summary of metric of target in the cell named cell of r.
func find(t *testing.T, r benchdata.Record, cell, target, metric string) benchdata.RecordCell {
	t.Helper()
	for _, c := range r.Cells {
		if c.Cell.String() == cell && c.Target == target && c.Metric == metric {
			return c
		}
	}
	t.Fatalf("no %s %s of %s in the record", target, metric, cell)
	return benchdata.RecordCell{}
}

// TestDirections: a gab file holds the metrics of its direction only,
// each metric in exactly one of the two, by the results' declared
// direction (hits/op: higher_better) or the metric's own.
func TestDirections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		res             *benchdata.Results
		smaller, bigger []string
	}{
		{loadResults(), []string{"p50", "p95", "p99", "error_rate", "cpu_per_req", "mem_peak"}, []string{"rps"}},
		{gobenchResults(), []string{"sec/op", "B/op", "allocs/op"}, []string{"hits/op", "items/s"}},
	} {
		src := fromResults(t, tc.res)
		for dir, want := range map[string][]string{"smaller": tc.smaller, "bigger": tc.bigger} {
			var benches []gabBench
			if err := json.Unmarshal(export(t, src, Options{Format: GAB, Direction: dir}), &benches); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range benches {
				m := b.Name[strings.LastIndexByte(b.Name, ' ')+1:]
				if !slices.Contains(got, m) {
					got = append(got, m)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: metrics %v, want %v", tc.res.Scenario.Name, dir, got, want)
			}
		}
	}
}

// TestToolNames: github-action-benchmark's tool names, as -format, are
// gab in their direction (with it given again or not): the same file.
func TestToolNames(t *testing.T) {
	t.Parallel()
	src := fromResults(t, loadResults())
	for dir, tool := range Directions {
		want := export(t, src, Options{Format: GAB, Direction: dir})
		for _, opt := range []Options{{Format: tool}, {Format: tool, Direction: dir}} {
			if got := export(t, src, opt); !bytes.Equal(got, want) {
				t.Errorf("%+v:\n%s\nwant gab -direction %s:\n%s", opt, got, dir, want)
			}
		}
	}
}

// TestHostileNames: class and variant names a pull request controls
// (quotes, commas, line breaks, formula prefixes, markup) leave every
// format readable: the JSON is valid and decodes to the cells' names, the
// CSV reads back with encoding/csv to the fields written, and no text
// cell a spreadsheet would run as a formula.
func TestHostileNames(t *testing.T) {
	t.Parallel()
	src := fromResults(t, hostileResults())
	var cells []benchdata.Cell
	for _, c := range src.Records[0].Cells {
		if c.Target == "candidate" && c.Metric == "rps" {
			cells = append(cells, c.Cell)
		}
	}
	if len(cells) != len(hostileNames) {
		t.Fatalf("%d cells with rps, want %d", len(cells), len(hostileNames))
	}

	t.Run("bmf", func(t *testing.T) {
		out := export(t, src, Options{Format: BMF})
		if !json.Valid(out) {
			t.Fatalf("not valid JSON:\n%s", out)
		}
		var got map[string]map[string]bmfMetric
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		for _, c := range cells {
			if _, ok := got[c.String()]["throughput"]; !ok {
				t.Errorf("no throughput of %q", c.String())
			}
		}
		if len(got) != len(cells) {
			t.Errorf("%d benchmarks, want %d", len(got), len(cells))
		}
	})
	t.Run("gab", func(t *testing.T) {
		out := export(t, src, Options{Format: GAB, Direction: "bigger"})
		var got []gabBench
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		var names, want []string
		for _, b := range got {
			names = append(names, b.Name)
		}
		for _, c := range cells {
			want = append(want, GABName(c, "rps"))
		}
		if !slices.Equal(names, want) {
			t.Errorf("names %q, want %q", names, want)
		}
	})
	t.Run("csv", func(t *testing.T) {
		out := export(t, src, Options{Format: CSV})
		rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		if !slices.Equal(rows[0], CSVHeader) {
			t.Fatalf("header %q", rows[0])
		}
		col := func(name string) int { return slices.Index(CSVHeader, name) }
		var classes []string
		for i, row := range rows[1:] {
			if len(row) != len(CSVHeader) {
				t.Fatalf("row %d: %d fields, want %d", i+1, len(row), len(CSVHeader))
			}
			for j, f := range row {
				numeric := slices.Contains([]string{"concurrency", "rate", "mean", "half_width", "n"}, CSVHeader[j])
				if f != "" && !numeric && strings.ContainsAny(f[:1], "=+-@\t\r") {
					t.Errorf("row %d: %s %q starts as a formula", i+1, CSVHeader[j], f)
				}
			}
			if row[col("target")] == "candidate" && row[col("metric")] == "rps" {
				classes = append(classes, row[col("class")])
				if v, want := row[col("variant")], Cell(`=v,"x"`); v != "v" && v != want {
					t.Errorf("variant %q, want v or %q", v, want)
				}
			}
		}
		// Read back, each class is the name with an apostrophe before a
		// formula's first character and line feeds for carriage returns:
		// the written field, unchanged by the round trip.
		want := []string{`say "hi"`, `a,b`, "two\nlines", "cr\nlf\n", `'=HYPERLINK("http://x","y")`, "'+1", "'-1+1", "'@SUM(A1)",
			"'\ttab", `<script>alert(1)</script>`, `back\slash`, "ünïcødé ✓", `}{"x":1}`, ""}
		if !slices.Equal(classes, want) {
			t.Errorf("classes read back %q, want %q", classes, want)
		}
		if !bytes.HasSuffix(out, []byte("\r\n")) || bytes.Count(out, []byte("\r\n")) < len(rows) {
			t.Error("lines do not end in CRLF (RFC 4180)")
		}
	})
}

func TestCell(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"": "", "Q01": "Q01", "=1+1": "'=1+1", "+1": "'+1", "-1": "'-1", "@x": "'@x", "\tx": "'\tx",
		"\rx": "'\nx", "a=b": "a=b", " =x": " =x", "a\r\nb": "a\nb", "'x": "'x",
	} {
		if got := Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestErrors: every wrong combination of options and every source that
// cannot be exported is an error naming the flag or the file, before
// anything is written.
func TestErrors(t *testing.T) {
	t.Parallel()
	cancelled := loadResults()
	cancelled.Status, cancelled.Error = "cancelled", "interrupted"
	collide := loadResults(benchdata.Cell{Class: "a c=8"}, benchdata.Cell{Class: "a", Concurrency: 8})
	hist := fromHistory(t)
	dup := hist
	dup.Records = slices.Clone(hist.Records)
	dup.Records = append(dup.Records, dup.Records[0])
	dup.Records[len(dup.Records)-1].Date = t0
	onlyP95 := Source{Name: "x.jsonl", History: true, Records: []benchdata.Record{{Date: t0, RunID: "r1",
		Cells: []benchdata.RecordCell{{Cell: benchdata.Cell{Class: "Q01"}, Target: "candidate", Metric: "p95", Mean: 0.002, N: 3}}}}}
	for _, tc := range []struct {
		name string
		src  func() (Source, error)
		opt  Options
		want string
	}{
		{"no format", nil, Options{}, "export needs -format: bmf, gab, csv, customSmallerIsBetter, customBiggerIsBetter"},
		{"unknown format", nil, Options{Format: "xml"}, `-format "xml": want bmf, gab, csv`},
		{"gab without direction", nil, Options{Format: GAB}, "-format gab needs -direction smaller or bigger"},
		{"bad direction", nil, Options{Format: GAB, Direction: "up"}, `-direction "up": want smaller or bigger`},
		{"direction without gab", nil, Options{Format: BMF, Direction: "smaller"}, "-direction goes with -format gab"},
		{"tool name against its direction", nil, Options{Format: "customSmallerIsBetter", Direction: "bigger"},
			`-direction "bigger": -format customSmallerIsBetter is gab -direction smaller`},
		{"bad target", nil, Options{Format: CSV, Target: "both"}, `-target "both": want candidate, baseline or (csv) all`},
		{"all for bmf", nil, Options{Format: BMF, Target: "all"}, "-target all: -format bmf exports one target"},
		{"run of a results file", nil, Options{Format: CSV, Run: "bg-5f3a"}, "-run picks a run of a history; results.json is a results file"},
		{"cancelled", func() (Source, error) { return FromResults(cancelled, "r/results.json") }, Options{Format: CSV},
			"r/results.json: only a complete run is exported: results of a cancelled run: decided on 3 complete round(s) of 3; the run said: interrupted"},
		{"empty history", func() (Source, error) { return FromHistory(nil, "h.jsonl") }, Options{Format: CSV},
			"h.jsonl: the history has no records: nothing to export"},
		{"unknown run", func() (Source, error) { return hist, nil }, Options{Format: BMF, Run: "bg-9"},
			`-run "bg-9": history.jsonl has no run of that id (its latest is the run bg-3 of 2026-02-07T02:00:00Z)`},
		{"duplicate run", func() (Source, error) { return dup, nil }, Options{Format: CSV, Run: "bg-1"},
			`-run "bg-1": history.jsonl has 2 runs of that id (2026-02-05T02:00:00Z, 2026-02-07T02:00:00Z)`},
		{"nothing bigger", func() (Source, error) { return onlyP95, nil }, Options{Format: GAB, Direction: "bigger"},
			"x.jsonl: the candidate of the run r1 of 2026-02-07T02:00:00Z has no metric whose bigger value is better: nothing to export"},
		{"no such target", func() (Source, error) { return onlyP95, nil }, Options{Format: BMF, Target: "baseline"},
			"x.jsonl: the baseline of the run r1 of 2026-02-07T02:00:00Z has no metric: nothing to export"},
		{"no records", func() (Source, error) { return Source{Name: "none.json"}, nil }, Options{Format: BMF}, "none.json: no run: nothing to export"},
		{"names collide", func() (Source, error) { return FromResults(collide, "c.json") }, Options{Format: BMF},
			`c.json: two cells have the name "a c=8"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := fromResults(t, loadResults())
			if tc.src != nil {
				var err error
				if src, err = tc.src(); err != nil {
					if tc.want == "" || !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("error %q, want %q", err, tc.want)
					}
					return
				}
			}
			_, err := New(src, tc.opt)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tc.want == "":
			case err == nil:
				t.Fatalf("no error, want %q", tc.want)
			case !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q, want %q", err, tc.want)
			}
		})
	}
}
