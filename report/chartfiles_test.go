package report

import (
	"encoding/xml"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// chartsInput is a decided grid: two pin sets, a variant, classes at c=1, 4 and 16, one of them
// named to climb out of the results directory, two whose names differ only
// in characters a file name cannot hold or in case, and one measured at a
// single concurrency level (no chart).
func chartsInput() Input {
	sum := func(mean, hw float64) gate.Summary {
		return gate.Summary{N: 3, Mean: mean, HalfWidth: hw, SD: hw / 2, Median: mean, Min: mean - hw, Max: mean + hw}
	}
	var cells []gate.CellResult
	add := func(pins, class string, c int, base, cand float64) {
		cells = append(cells, gate.CellResult{
			Key:     gate.CellKey{Pins: pins, Variant: "csv", Class: class, Concurrency: c},
			Gated:   []gate.Metric{gate.RPS},
			Verdict: gate.Tie,
			Decisions: []gate.Decision{{Metric: gate.RPS, Baseline: sum(base, base/50), Candidate: sum(cand, cand/40),
				Delta: (cand - base) / base, Verdict: gate.Tie, Reason: "intervals overlap"}},
		})
	}
	for _, pins := range []string{"cpus=1", "cpus=2"} {
		for _, c := range []int{1, 4, 16} {
			f := float64(c)
			add(pins, "Q01", c, 500*f, 510*f)
			add(pins, "../../escape", c, 100*f, 90*f)
			add(pins, "a/b", c, 10*f, 11*f)
			add(pins, "a:b", c, 20*f, 21*f)
			add(pins, "A:B", c, 30*f, 31*f)
		}
		add(pins, "single", 8, 1000, 1000)
	}
	res := &benchdata.Results{Version: benchdata.FormatVersion, Status: "complete",
		Scenario: benchdata.ScenarioInfo{Name: "charts"}, Plan: benchdata.Plan{PinSets: []string{"cpus=1", "cpus=2"}, Rounds: 3}}
	return Input{Results: res, Comparison: gate.Comparison{Settings: gate.DefaultSettings, Cells: cells, Outcome: gate.Pass}}
}

// svgPoints parses an SVG file strictly and returns its data points as
// "series x y".
func svgPoints(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return svgDataPoints(t, f)
}

// svgDataPoints parses an SVG document strictly and returns its data
// points as "series x y".
func svgDataPoints(t *testing.T, r io.Reader) []string {
	t.Helper()
	d := xml.NewDecoder(r)
	var out []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		a := map[string]string{}
		for _, at := range se.Attr {
			a[at.Name.Local] = at.Value
		}
		if a["class"] == "point" {
			out = append(out, a["data-series"]+" "+a["data-x"]+" "+a["data-y"])
		}
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteCharts(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	out := filepath.Join(root, "results")
	folder := filepath.Join(out, "charts")
	if err := os.MkdirAll(filepath.Join(folder, "nested.svg"), 0o755); err != nil {
		t.Fatal(err)
	}
	// What an earlier run left: its charts go, anything else stays.
	for _, f := range []string{"rps-old.svg", "OTHER.SVG", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(folder, f), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(root, "outside.svg")
	if err := os.WriteFile(outside, []byte("not ours"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(folder, "link.svg")); err != nil {
		t.Fatal(err)
	}

	in := chartsInput()
	if err := WriteCharts(out, in); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "not ours" {
		t.Errorf("the file a stale link pointed to was touched: %q, %v", b, err)
	}
	if names := listDir(t, root); !slices.Equal(names, []string{"outside.svg", "results"}) {
		t.Errorf("written outside the results: %q", names)
	}
	if names := listDir(t, out); !slices.Equal(names, []string{"charts"}) {
		t.Errorf("results directory holds %q", names)
	}

	// One file per chart, named from pin set, variant and class, each
	// holding its chart's data points.
	cs := ClassCharts(in)
	if len(cs) != 10 {
		t.Fatalf("%d charts, want 10 (5 classes × 2 pin sets; single has one level)", len(cs))
	}
	names := chartFileNames(cs)
	wantNames := []string{
		"rps-cpus-1_csv_Q01.svg", "rps-cpus-1_csv_escape.svg", "rps-cpus-1_csv_a-b.svg", "rps-cpus-1_csv_a-b-2.svg", "rps-cpus-1_csv_A-B-3.svg",
		"rps-cpus-2_csv_Q01.svg", "rps-cpus-2_csv_escape.svg", "rps-cpus-2_csv_a-b.svg", "rps-cpus-2_csv_a-b-2.svg", "rps-cpus-2_csv_A-B-3.svg",
	}
	if !slices.Equal(names, wantNames) {
		t.Errorf("file names %q, want %q", names, wantNames)
	}
	// The stale charts and the link went; the folder inside and the other
	// file stayed.
	want := append([]string{"nested.svg", "notes.txt"}, wantNames...)
	slices.Sort(want)
	if got := listDir(t, folder); !slices.Equal(got, want) {
		t.Errorf("charts folder holds %q, want %q", got, want)
	}
	for i, c := range cs {
		var wantPts []string
		for _, s := range c.Chart.Series {
			for _, p := range s.Points {
				wantPts = append(wantPts, s.Name+" "+strconv.FormatFloat(p.X, 'g', -1, 64)+" "+strconv.FormatFloat(p.Y, 'g', -1, 64))
			}
		}
		gotPts := svgPoints(t, filepath.Join(folder, names[i]))
		if !slices.Equal(gotPts, wantPts) || len(gotPts) != 6 {
			t.Errorf("%s: points %q, want %q", names[i], gotPts, wantPts)
		}
	}
	if pts := svgPoints(t, filepath.Join(folder, "rps-cpus-2_csv_Q01.svg")); !slices.Contains(pts, "candidate 16 8160") {
		t.Errorf("cpus=2 Q01 lacks the candidate at c=16: %q", pts)
	}

	// A second run with no chart removes the first run's and writes none.
	single := chartsInput()
	single.Comparison.Cells = slices.DeleteFunc(single.Comparison.Cells, func(c gate.CellResult) bool { return c.Key.Class != "single" })
	if err := WriteCharts(out, single); err != nil {
		t.Fatal(err)
	}
	if names := listDir(t, folder); !slices.Equal(names, []string{"nested.svg", "notes.txt"}) {
		t.Errorf("after a run without charts: %q", names)
	}
	// Nor does it create the folder.
	fresh := filepath.Join(root, "fresh")
	if err := WriteCharts(fresh, single); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a run without charts created %s: %v", fresh, err)
	}
}

// TestWriteChartsSymlink: a charts folder that links elsewhere is refused,
// and nothing there is removed.
func TestWriteChartsSymlink(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	elsewhere := filepath.Join(root, "elsewhere")
	out := filepath.Join(root, "results")
	for _, d := range []string{elsewhere, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	keep := filepath.Join(elsewhere, "precious.svg")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(out, "charts")); err != nil {
		t.Fatal(err)
	}
	err := WriteCharts(out, chartsInput())
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("err = %v, want a refusal", err)
	}
	if names := listDir(t, elsewhere); !slices.Equal(names, []string{"precious.svg"}) {
		t.Errorf("the linked folder now holds %q", names)
	}
	// A file where the folder should be is refused too.
	out2 := filepath.Join(root, "results2")
	if err := os.MkdirAll(out2, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out2, "charts"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteCharts(out2, chartsInput()); err == nil {
		t.Error("a file named charts was not refused")
	}
}

func TestSafeNamePart(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Q01":                               "Q01",
		"cpus=1-3 memory=2GiB":              "cpus-1-3-memory-2GiB",
		"../../etc/passwd":                  "etc-passwd",
		"..":                                "x",
		"":                                  "x",
		".hidden":                           "hidden",
		"-rf":                               "rf",
		"naïve/été":                         "na-ve-t",
		"a\x00b\nc":                         "a-b-c",
		strings.Repeat("z", 99):             strings.Repeat("z", 60),
		"x" + strings.Repeat("/", 70) + "y": "x-y",
	} {
		got := safeNamePart(in)
		if got != want {
			t.Errorf("safeNamePart(%q) = %q, want %q", in, got, want)
		}
		if strings.Trim(got, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			t.Errorf("safeNamePart(%q) = %q holds other characters", in, got)
		}
		if !fs.ValidPath(got) || got == "." || got == ".." {
			t.Errorf("safeNamePart(%q) = %q is not a plain name", in, got)
		}
	}
}

func TestWriteTrendCharts(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "trends", "nightly")
	cand := trendSeries()
	base := trendSeries()
	base.Key.Target = "baseline"
	// A class that differs from Q01 only in case takes the next free name.
	lower := trendSeries()
	lower.Key.Cell.Class = "q01"
	in := HistoryInput{Series: []HistorySeries{{Series: cand}, {Series: base}, {Series: lower}}, Last: 2}
	if err := WriteTrendCharts(dir, in); err != nil {
		t.Fatal(err)
	}
	names := []string{"trend-Q01-c-8-rps-candidate-3f2a.svg", "trend-Q01-c-8-rps-baseline-3f2a.svg", "trend-q01-c-8-rps-candidate-3f2a-2.svg"}
	if got, want := listDir(t, dir), slices.Sorted(slices.Values(names)); !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
	// The last two runs, each with its interval, labelled with the commit
	// of the series' target (the fifth run has no baseline commit: its
	// date).
	for i, want := range [][]string{
		{`data-label="0123456"`, `data-label="c6"`},
		{`data-label="2026-03-05"`, `data-label="v1"`},
	} {
		path := filepath.Join(dir, names[i])
		if pts := svgPoints(t, path); !slices.Equal(pts, []string{"mean 1 901.5", "mean 2 899"}) {
			t.Errorf("%s: points %q", names[i], pts)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		svg := string(b)
		for _, w := range append(want, `data-lo="892"`, `data-hi="906"`) {
			if !strings.Contains(svg, w) {
				t.Errorf("%s lacks %s", names[i], w)
			}
		}
		if title := "Q01 c=8 rps (" + []string{"candidate", "baseline"}[i] + ") — demo-api (nightly)"; !strings.Contains(svg, title) {
			t.Errorf("%s lacks the title %q", names[i], title)
		}
	}
}

// TestShowHistory: the tables History writes, and the charts only when a
// directory is given.
func TestShowHistory(t *testing.T) {
	t.Parallel()
	in := HistoryInput{Series: []HistorySeries{{Series: trendSeries()}}}
	var want strings.Builder
	if err := History(&want, in); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, chartDir := range []string{"", filepath.Join(dir, "trends")} {
		var got strings.Builder
		if err := ShowHistory(&got, in, chartDir); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("charts %q: wrote\n%s\nwant\n%s", chartDir, got.String(), want.String())
		}
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"trends"}) {
		t.Errorf("wrote %q, want only the trends directory", got)
	}
	if got := listDir(t, filepath.Join(dir, "trends")); len(got) != 1 {
		t.Errorf("trend charts %q, want one", got)
	}
}
