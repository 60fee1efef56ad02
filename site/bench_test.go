package site

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkSiteYear builds the site of a synthetic year: 365 nights of a
// 200-cell grid, the 7 service metrics of both targets, 2% noise, a 5×
// step in one cell. It reports the build time (Render and the writing of
// every file), the site's total size, the index's, the largest page's,
// and, when a Chromium is found, the time the index takes to load in it
// (navigation start to the load event, from the file system). Run it with
//
//	go test -run '^$' -bench SiteYear -benchtime 1x ./site
func BenchmarkSiteYear(b *testing.B) {
	recs := synthesize(synthOptions{nights: 365, cells: 200, noise: 0.02, stepAt: 300, stepCell: 17, stepMetric: "p99", baselineAt: 200})
	dir := filepath.Join(b.TempDir(), "site")
	var s *Site
	start := time.Now()
	for b.Loop() {
		var err error
		if s, err = Build(dir, recs, DefaultOptions); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "build-ms")
	// Build writes each file as it is made: the figures are the files'.
	var index, largest int64
	var largestPath string
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(dir, path)
		switch rel = filepath.ToSlash(rel); {
		case rel == "index.html":
			index = fi.Size()
		case strings.HasSuffix(rel, ".html") && fi.Size() > largest:
			largest, largestPath = fi.Size(), rel
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(s.Bytes())/(1<<20), "total-MB")
	b.ReportMetric(float64(index)/1024, "index-KB")
	b.ReportMetric(float64(largest)/1024, "page-KB")
	b.ReportMetric(float64(files), "files")
	b.Logf("%s; largest page %s", s.Summary(dir), largestPath)
	if chromium() == "" {
		b.Log("no chromium: index load time not measured")
		return
	}
	br := newBrowser(b)
	var best float64
	for i := range 3 { // the first load warms the browser's caches
		ms := br.open(b, filepath.Join(dir, "index.html"))
		if i == 0 || ms < best {
			best = ms
		}
		b.Logf("index load %d: %.0f ms", i+1, ms)
	}
	b.ReportMetric(best, "index-load-ms")
	page := filepath.Join(dir, filepath.FromSlash(largestPath))
	b.ReportMetric(br.open(b, page), "page-load-ms")
}
