package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/charts"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/textsafe"
)

// chartsDir is the folder of the results directory the SVG charts go to.
const chartsDir = "charts"

// WriteCharts writes one SVG chart per throughput chart of in
// (ClassCharts: rps by concurrency per pin set, variant and class) to
// dir/charts/rps-NAME.svg, NAME made of the pin set, variant and class
// (chartFileNames). It first removes the .svg files an earlier run left
// in dir/charts, so the folder shows this run's charts only, and creates
// the folder only when there is a chart to write. A dir/charts that is a
// symbolic link or not a directory is refused rather than written
// through.
func WriteCharts(dir string, in Input) error {
	folder := filepath.Join(dir, chartsDir)
	fi, err := os.Lstat(folder)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("charts: %w", err)
	case !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("charts: %s is not a directory", folder)
	default:
		if err := removeStaleCharts(folder); err != nil {
			return err
		}
	}
	cs := ClassCharts(in)
	if len(cs) == 0 {
		return nil
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	for i, name := range chartFileNames(cs) {
		if !filepath.IsLocal(name) || filepath.Base(name) != name {
			return fmt.Errorf("charts: refusing file name %q", name) // chartFileNames makes none such
		}
		c := cs[i].Chart
		path := filepath.Join(folder, name)
		if err := benchdata.WriteFile(path, func(w io.Writer) error { return charts.SVG(w, c) }); err != nil {
			return fmt.Errorf("charts: %w", err)
		}
		// WriteFile's temporary file is private; a chart is for anyone
		// who can read the results.
		if err := os.Chmod(path, 0o644); err != nil {
			return fmt.Errorf("charts: %w", err)
		}
	}
	return nil
}

// WriteTrendCharts writes each series' trend of in, its last in.Last runs
// when that is positive, as dir/trend-CELL-METRIC-TARGET-FINGERPRINT.svg
// (each part reduced by safeNamePart, a name taken by an earlier series
// getting "-2", "-3" …): each run's mean and interval, labelled with the
// commit of the series' target. dir is created when missing.
func WriteTrendCharts(dir string, in HistoryInput) error {
	taken := map[string]bool{}
	for _, hs := range in.Series {
		s := hs.Series
		pts := s.Points
		if in.Last > 0 && len(pts) > in.Last {
			pts = pts[len(pts)-in.Last:]
		}
		tp := make([]TrendPoint, len(pts))
		for i, p := range pts {
			tp[i] = TrendPoint{Date: p.Date, Commit: p.CandidateCommit, Mean: p.Mean, Lo: p.Mean - p.HalfWidth, Hi: p.Mean + p.HalfWidth}
			if s.Key.Target == "baseline" {
				tp[i].Commit = p.BaselineCommit
			}
		}
		k := s.Key
		c := TrendChart(fmt.Sprintf("%s %s (%s) — %s", k.Cell, k.Metric, k.Target, scenarioName(k.Scenario, k.Profile)), gate.Metric(k.Metric).Unit(), tp)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		name := uniqueName(taken, "trend-"+safeNamePart(k.Cell.String())+"-"+safeNamePart(k.Metric)+"-"+safeNamePart(k.Target)+"-"+safeNamePart(k.Fingerprint))
		if err := benchdata.WriteFile(filepath.Join(dir, name), func(w io.Writer) error { return charts.SVG(w, c) }); err != nil {
			return err
		}
	}
	return nil
}

// removeStaleCharts removes the .svg files of folder (regular files and
// symbolic links; a link is removed, not what it points to), leaving
// anything else there alone.
func removeStaleCharts(folder string) error {
	entries, err := os.ReadDir(folder)
	if err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	for _, e := range entries {
		t := e.Type()
		if !strings.EqualFold(filepath.Ext(e.Name()), ".svg") || !(t.IsRegular() || t&fs.ModeSymlink != 0) {
			continue
		}
		if err := os.Remove(filepath.Join(folder, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("charts: %w", err)
		}
	}
	return nil
}

// chartNamePartBytes caps each part of a chart's file name.
const chartNamePartBytes = 60

// chartFileNames names each chart's file "rps-PINS_VARIANT_CLASS.svg",
// leaving out an empty pin set or variant, each part reduced to
// [A-Za-z0-9._-] (safeNamePart). Names are unique even on a file system
// that ignores case: a later chart whose name is taken gets "-2", "-3" …
func chartFileNames(cs []ClassChart) []string {
	taken := map[string]bool{}
	out := make([]string, len(cs))
	for i, c := range cs {
		var parts []string
		for _, p := range []string{c.Pins, c.Variant} {
			if p != "" {
				parts = append(parts, safeNamePart(p))
			}
		}
		parts = append(parts, safeNamePart(c.Class))
		out[i] = uniqueName(taken, "rps-"+strings.Join(parts, "_"))
	}
	return out
}

// uniqueName is base.svg, or when taken holds that name in any case,
// base-2.svg, base-3.svg … whichever is free first; it adds the name to
// taken.
func uniqueName(taken map[string]bool, base string) string {
	name := base + ".svg"
	for n := 2; taken[strings.ToLower(name)]; n++ {
		name = base + "-" + strconv.Itoa(n) + ".svg"
	}
	taken[strings.ToLower(name)] = true
	return name
}

// safeNamePart reduces a name to letters, digits, '.', '_' and '-' of
// ASCII: any other run of characters becomes one '-', leading and
// trailing '.' and '-' go (no "..", no hidden file), and the result is cut
// to chartNamePartBytes; a name with nothing left is "x".
func safeNamePart(s string) string {
	return textsafe.Slug(s, func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
	}, ".-", chartNamePartBytes, "x")
}
