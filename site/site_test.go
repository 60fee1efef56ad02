package site

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
)

// stepHistory is the history the tests know by heart: 60 nights of 8
// cells on one machine, the candidate's p95 of cell 3 (Q01 c=64) 5× from
// night 40 (commit c040) on, the baseline commit v1.0.0 → v1.1.0 from
// night 20; then 5 nights of 2 cells on another machine.
func stepHistory() []benchdata.Record {
	recs := synthesize(synthOptions{nights: 60, cells: 8, stepAt: 40, stepCell: 3, stepMetric: "p95", baselineAt: 20})
	return append(recs, synthesize(synthOptions{nights: 5, cells: 2, fingerprint: "9e8d7c6b5a49", machine: "AMD EPYC 7763 × 4",
		start: recs[len(recs)-1].Date.AddDate(0, 0, 1)})...)
}

func render(t *testing.T, recs []benchdata.Record, opt Options) (*Site, map[string]string) {
	t.Helper()
	s, err := Render(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range s.Files {
		if _, dup := files[f.Path]; dup {
			t.Fatalf("%s written twice", f.Path)
		}
		files[f.Path] = string(f.Data)
	}
	return s, files
}

func TestRenderStructure(t *testing.T) {
	t.Parallel()
	s, files := render(t, stepHistory(), DefaultOptions)
	if s.Records != 65 || s.Dropped != 0 || s.Cells != 8 || s.Worse != 1 {
		t.Errorf("site of %d records (%d dropped), %d cells, %d worse; want 65, 0, 8, 1", s.Records, s.Dropped, s.Cells, s.Worse)
	}
	for _, p := range []string{"index.html", "site.css", Marker, ".nojekyll"} {
		if _, ok := files[p]; !ok {
			t.Errorf("no %s", p)
		}
	}
	pages := 0
	for p := range files {
		if strings.HasPrefix(p, cellsDir+"/") {
			pages++
		}
	}
	if pages != 8 {
		t.Errorf("%d cell pages, want 8", pages)
	}

	idx := files["index.html"]
	// Regressions first: the row of Q01 c=64, marked worse in words.
	rows := regexp.MustCompile(`<tr class="row (\w+)" data-status="\w+"><th scope="row"><a href="([^"]+)">([^<]+)</a>`).FindAllStringSubmatch(idx, -1)
	if len(rows) != 8 {
		t.Fatalf("index: %d rows, want 8", len(rows))
	}
	if rows[0][1] != "worse" || rows[0][3] != "Q01 c=64" || rows[0][2] != CellPage("demo-api", synthCell(3)) {
		t.Errorf("index: first row %q, want the worse Q01 c=64 linking to its page", rows[0][1:])
	}
	for _, r := range rows[1:] {
		if r[1] != "steady" {
			t.Errorf("index: row %q, want steady", r[1:])
		}
	}
	for _, want := range []string{
		`<span class="badge worse">worse: p95</span>`,
		`<span class="chg worse">&#43;400.0% worse</span>`, // "+" as html/template writes it
		`c039..c040 · 2025-03-13`,
		`<th scope="col" title="higher is better">rps</th>`,
		// The cells whose newest 5 runs are another machine's show the
		// trend of the machine with runs enough, and point to the other.
		`1 other machine(s) or profile(s)`,
		`65 nightly record(s) from 2025-02-01 to 2025-04-06, the last 12 month(s)`,
	} {
		if !strings.Contains(idx, want) {
			t.Errorf("index: no %q", want)
		}
	}
	if strings.Contains(idx, "too few runs") {
		t.Errorf("index: a cell shows a section of too few runs where another has enough")
	}
	if n := strings.Count(idx, `<svg class="spark"`); n != 8*7 {
		t.Errorf("index: %d sparklines, want 56", n)
	}
	checkSVGs(t, "index.html", idx)

	page := files[CellPage("demo-api", synthCell(3))]
	for _, want := range []string{
		`<title>Q01 c=64 · demo-api — benchgate history</title>`,
		`<tr class="change worse" data-metric="p95" data-target="candidate" data-kind="worse" data-from="c039" data-to="c040">`,
		`10.00 s → 50.00 s`, // p95 is in seconds (gate.Registry)
		`<li class="baseline-change" data-from="v1.0.0" data-to="v1.1.0">2025-02-21: baseline`,
		// Night 40: 10 × 0.98 × 5, the interval ±0.1; night 39: 10 × 1.01;
		// in the scale of the table's least mean (9.8).
		`<tr class="mark worse"><td>2025-03-13<td>49.000 s ± 0%<td>5<td>9.800 s ± 1%<td>5<td>candidate change +400.0% (worse)`,
		`<tr><td>2025-03-12<td>10.100 s ± 1%<td>5<td>10.100 s ± 1%<td>5<td>`,
		`<g class="mark worse" data-x="`,
		`data-target="candidate" data-from="c039" data-to="c040" data-change="+400.0%" data-kind="worse">`,
		`<g class="mark neutral"`,
		`<h2>Machine 3f2a9c1b7d4e · profile nightly <span class="badge current">current</span></h2>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page of Q01 c=64: no %q", want)
		}
	}
	if n := strings.Count(page, `<section class="metric"`); n != 7 {
		t.Errorf("page of Q01 c=64: %d metric sections, want 7", n)
	}
	if n := strings.Count(page, "<table class=\"runs\""); n != 7 {
		t.Errorf("page of Q01 c=64: %d tables, want one per chart (7)", n)
	}
	checkSVGs(t, "Q01 c=64", page)

	// Two machines, two sections: the newest (the other machine's 5
	// nights) first, the 60 nights of the first machine after it.
	two := files[CellPage("demo-api", synthCell(0))]
	secs := regexp.MustCompile(`<section class="machine" id="(m\d)" data-fingerprint="(\w+)"`).FindAllStringSubmatch(two, -1)
	if len(secs) != 2 || secs[0][2] != "9e8d7c6b5a49" || secs[1][2] != "3f2a9c1b7d4e" {
		t.Errorf("page of Q01 c=1: sections %q, want 9e8d7c6b5a49 then 3f2a9c1b7d4e", secs)
	}
	if !strings.Contains(two, "5 run(s): too few to look for change points (need 6).") {
		t.Error("page of Q01 c=1: the short machine's section does not say why it has no change points")
	}

	// No page names anything outside the site.
	for p, body := range files {
		if strings.Contains(strings.ReplaceAll(body, `xmlns="http://www.w3.org/2000/svg"`, ""), "http://") || regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(body) {
			t.Errorf("%s links outside the site", p)
		}
	}
}

// checkSVGs parses every inline SVG of a page as strict XML.
func checkSVGs(t *testing.T, name, page string) {
	t.Helper()
	for _, svg := range regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(page, -1) {
		d := xml.NewDecoder(strings.NewReader(svg))
		d.Strict = true
		for {
			_, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: SVG is not well-formed: %v\n%.300s", name, err, svg)
			}
		}
	}
}

func TestHostileNames(t *testing.T) {
	t.Parallel()
	recs := synthesize(synthOptions{nights: 8, cells: 1, stepAt: 4, stepMetric: "rps",
		scenario: `<script>alert("s")</script>`, fingerprint: `fp"><script>alert(1)</script>`, machine: "m\u202eevil</title><script>x</script>"})
	for i := range recs {
		recs[i].Profile = `'><img src=x onerror=alert(2)>`
		recs[i].CandidateCommit = `javascript:alert(3)//"` + string(rune('a'+i))
		recs[i].BaselineCommit = "../../evil?x=<b>#"
		recs[i].RunURL = `javascript:alert(5)//https://x`
		for j := range recs[i].Cells {
			recs[i].Cells[j].Cell = benchdata.Cell{Class: `Q"/><svg onload=alert(4)>`, Variant: "v\x1b[31m", Pins: "{{.}}", Concurrency: 8}
			if recs[i].Cells[j].Metric == "p50" {
				recs[i].Cells[j].Metric = `B/op"><script>`
			}
		}
	}
	hostileCell := benchdata.Cell{Class: `Q"/><svg onload=alert(4)>`, Variant: "v\x1b[31m", Pins: "{{.}}", Concurrency: 8}
	recs[len(recs)-1].Where = []benchdata.RecordWhere{{Cell: hostileCell, Source: "perf<script>", Unit: "request", Base: 1000, Cand: 5000,
		Funcs: []benchdata.RecordFunc{{Name: "main.<script>alert(6)</script>|*x*\u202e", Base: 100, Cand: 4100, Share: 1}}}}
	_, files := render(t, recs, Options{RepoURL: "https://github.com/o/r/", Months: 0})
	if len(files) != 5 {
		t.Fatalf("%d files, want 5", len(files))
	}
	for p, body := range files {
		if !strings.HasSuffix(p, ".html") {
			continue
		}
		for _, bad := range []string{"<script", "<img", "<svg onload", `href="javascript:`, "\u202e", "\x1b", "<b>"} {
			if strings.Contains(body, bad) {
				i := strings.Index(body, bad)
				t.Errorf("%s holds %q: %.120s", p, bad, body[max(0, i-60):])
			}
		}
		for _, href := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(body, -1) {
			h := href[1]
			if !strings.HasPrefix(h, "https://github.com/o/r/") && !strings.HasPrefix(h, "cells/") && !strings.HasPrefix(h, "#") && !strings.HasPrefix(h, "../") && h != "site.css" {
				t.Errorf("%s: link %q", p, h)
			}
		}
		checkSVGs(t, p, body)
	}
	page := files[CellPage(recs[0].Scenario, recs[0].Cells[0].Cell)]
	for _, want := range []string{
		`href="https://github.com/o/r/commit/javascript:alert%283%29%2F%2F%22a"`,
		`href="https://github.com/o/r/commit/..%2F..%2Fevil%3Fx=%3Cb%3E%23"`,
		`m\u202eevil&lt;/title&gt;&lt;script&gt;x&lt;/script&gt;`,
		`&lt;script&gt;alert(&#34;s&#34;)&lt;/script&gt;`,
		`v\x1b[31m`,
		`<code>main.&lt;script&gt;alert(6)&lt;/script&gt;|*x*\u202e</code>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("cell page: no %q", want)
		}
	}
}

func TestRepoURL(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		"javascript:alert(1)", "JavaScript://github.com/x", "http://github.com/o/r", "https://github.com/o/r\"onmouseover=x",
		"https://github.com/o/r'", "https://user:pw@github.com/o/r", "https://github.com/o/r?tab=x", "https://github.com/o/r#x",
		"https:///o/r", "https:github.com/o/r", "https://github.com/o r", "https://github.com/<o>/r", "data:text/html,x",
		"//github.com/o/r", "https://github.com/o/../r", "https://gith\u00fcb.com/o/r",
	} {
		err := Options{RepoURL: bad}.Check()
		if err == nil || !strings.HasPrefix(err.Error(), "-repo-url ") {
			t.Errorf("-repo-url %q: %v, want refused naming the flag", bad, err)
		}
	}
	for in, want := range map[string]string{"https://github.com/o/r": "https://github.com/o/r", "https://github.com/o/r/": "https://github.com/o/r",
		"https://git.example.com:8443/group/sub/r": "https://git.example.com:8443/group/sub/r", "": ""} {
		got, err := repoBase(in)
		if err != nil || got != want {
			t.Errorf("repoBase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if err := (Options{Months: -1}).Check(); err == nil || !strings.HasPrefix(err.Error(), "-months") {
		t.Errorf("-months -1: %v", err)
	}
}

func TestCellPage(t *testing.T) {
	t.Parallel()
	// Stable: these paths are in PR comments already posted.
	for _, c := range []struct {
		scenario string
		cell     benchdata.Cell
		want     string
	}{
		{"demo-api", benchdata.Cell{Class: "Q01", Concurrency: 8}, "cells/demo-api-q01-c-8-"},
		{"demo-api", benchdata.Cell{Pins: "cpus=1", Variant: "csv", Class: "Search", Concurrency: 4, Rate: 100}, "cells/demo-api-cpus-1-csv-search-c-4-100-s-"},
		{"", benchdata.Cell{Class: "日本"}, "cells/cell-"},
	} {
		got := CellPage(c.scenario, c.cell)
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("CellPage(%q, %+v) = %q, want %q…", c.scenario, c.cell, got, c.want)
		}
		if got != CellPage(c.scenario, c.cell) {
			t.Errorf("CellPage(%q, %+v) is not stable", c.scenario, c.cell)
		}
	}
	if got, want := CellPage("demo-api", benchdata.Cell{Class: "Q01", Concurrency: 8}), "cells/demo-api-q01-c-8-"+cellHash("demo-api", benchdata.Cell{Class: "Q01", Concurrency: 8})+".html"; got != want {
		t.Errorf("CellPage = %q, want %q", got, want)
	}
	// The hash computed by a second tool (Python hashlib over the same bytes).
	if got := cellHash("demo-api", benchdata.Cell{Class: "Q01", Concurrency: 8}); got != "a2b400654a6b" {
		t.Errorf("hash of demo-api Q01 c=8 = %s, want a2b400654a6b (changing it breaks every link already posted)", got)
	}

	// Distinct cells never share a page, however alike their names.
	cells := []struct {
		s string
		c benchdata.Cell
	}{
		{"a", benchdata.Cell{Class: "Q01"}}, {"a", benchdata.Cell{Class: "q01"}}, {"a", benchdata.Cell{Class: "Q-01"}},
		{"a", benchdata.Cell{Class: "Q 01"}}, {"a b", benchdata.Cell{Class: "Q01"}}, {"a", benchdata.Cell{Class: "b Q01"}},
		{"a", benchdata.Cell{Variant: "b", Class: "Q01"}}, {"a", benchdata.Cell{Pins: "b", Class: "Q01"}},
		{"a", benchdata.Cell{Class: "Q01", Concurrency: 8}}, {"a", benchdata.Cell{Class: "Q01", Rate: 8}},
		{"a", benchdata.Cell{Class: "Q01 c=8"}}, {"a", benchdata.Cell{Class: "\xff"}}, {"a", benchdata.Cell{Class: "\xfe"}},
		{"a", benchdata.Cell{Class: "\ufffd"}}, {"", benchdata.Cell{Class: "aQ01"}}, {"aQ", benchdata.Cell{Class: "01"}},
		{"a", benchdata.Cell{Class: strings.Repeat("x", 200) + "1"}}, {"a", benchdata.Cell{Class: strings.Repeat("x", 200) + "2"}},
	}
	seen := map[string]int{}
	shape := regexp.MustCompile(`^cells/[a-z0-9-]{1,48}-[0-9a-f]{12}\.html$`)
	for i, c := range cells {
		p := CellPage(c.s, c.c)
		if !shape.MatchString(p) || strings.Contains(p, "--") {
			t.Errorf("CellPage(%q, %+v) = %q: not cells/SLUG-HASH.html", c.s, c.c, p)
		}
		if j, dup := seen[strings.ToLower(p)]; dup {
			t.Errorf("cells %d and %d share page %s", j, i, p)
		}
		seen[strings.ToLower(p)] = i
	}
}

func TestMonths(t *testing.T) {
	t.Parallel()
	// Two years of nightly records, 2024-01-01 to 2025-12-30.
	recs := synthesize(synthOptions{nights: 730, cells: 1, start: time.Date(2024, 1, 1, 2, 0, 0, 0, time.UTC)})
	for _, c := range []struct{ months, records int }{{12, 366}, {1, 31}, {0, 730}, {60, 730}} {
		s, files := render(t, recs, Options{Months: c.months})
		newest := recs[len(recs)-1].Date
		cutoff := newest.AddDate(0, -c.months, 0)
		want := 0
		for _, r := range recs {
			if c.months == 0 || !r.Date.Before(cutoff) {
				want++
			}
		}
		if want != c.records || s.Records != want || s.Dropped != len(recs)-want {
			t.Errorf("-months %d: %d records shown, %d dropped; want %d, %d", c.months, s.Records, s.Dropped, want, len(recs)-want)
		}
		if day(s.To) != "2025-12-30" || (c.months == 0 && day(s.From) != "2024-01-01") {
			t.Errorf("-months %d: records from %s to %s", c.months, day(s.From), day(s.To))
		}
		page := files[CellPage("demo-api", synthCell(0))]
		rps := page[strings.Index(page, `<table class="runs" data-metric="rps">`):]
		rps = rps[:strings.Index(rps, "</table>")]
		if rows := strings.Count(rps, "<tr><td>20"); rows != want {
			t.Errorf("-months %d: the page has rows of %d nights, want %d", c.months, rows, want)
		}
		if d := s.Dropped; d > 0 && !strings.Contains(files["index.html"], "older record(s) left out") {
			t.Errorf("-months %d: the index does not say %d records were left out", c.months, d)
		}
	}
}

func TestEmptyHistory(t *testing.T) {
	t.Parallel()
	s, files := render(t, nil, DefaultOptions)
	if s.Cells != 0 || len(files) != 4 {
		t.Errorf("empty history: %d cells, files %v", s.Cells, slices.Sorted(mapsKeys(files)))
	}
	if !strings.Contains(files["index.html"], `<p class="empty" id="empty">No records yet`) {
		t.Errorf("empty history: the index does not say so:\n%s", files["index.html"])
	}
	if got := s.Summary("out"); got != "site: 0 cell page(s), 0 with a latest change for the worse, of no records: out/index.html, 7 KB" {
		t.Errorf("Summary = %q", got)
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestBuild(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	out := filepath.Join(parent, "site")
	recs := stepHistory()
	if _, err := Build(out, recs, DefaultOptions); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(out, filepath.FromSlash(CellPage("demo-api", synthCell(7))))
	if _, err := os.Stat(stale); err != nil {
		t.Fatal(err)
	}
	// A history of fewer cells: the pages of cells gone are gone too.
	if _, err := Build(out, synthesize(synthOptions{nights: 6, cells: 2}), DefaultOptions); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale page %s: %v, want it gone", stale, err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 || entries[0].Name() != "site" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("beside the site: %v, want only site", names)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("site directory: %v %v", fi.Mode(), err)
	}

	// Refused, naming the flag and the path: a file, a directory of other
	// things, a symbolic link. Nothing is written.
	file := filepath.Join(parent, "file.html")
	other := filepath.Join(parent, "home")
	link := filepath.Join(parent, "link")
	os.WriteFile(file, []byte("x"), 0o644)
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("keep"), 0o644)
	os.Symlink(out, link)
	for dir, want := range map[string]string{
		file:  "-out " + file + ": a file, not a directory",
		other: "-out " + other + ": a directory that holds no benchgate site",
		link:  "-out " + link + ": a symbolic link",
		"":    "-out: want a directory",
	} {
		_, err := Build(dir, recs, DefaultOptions)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Build(%q): %v, want %q…", dir, err, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(other, "notes.txt")); !bytes.Equal(b, []byte("keep")) {
		t.Error("the directory of other things was touched")
	}
	// An empty directory is fine.
	empty := filepath.Join(parent, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := Build(empty, recs, DefaultOptions); err != nil {
		t.Errorf("Build into an empty directory: %v", err)
	}
}

// TestSameDateRuns: records are runs by the record, not by date and run
// id: two records of one date without run ids are two rows, and a change
// point is marked on the run it names.
func TestSameDateRuns(t *testing.T) {
	t.Parallel()
	rec := func(date, commit string, mean float64) benchdata.Record {
		d, err := time.Parse(time.RFC3339, date)
		if err != nil {
			t.Fatal(err)
		}
		return benchdata.Record{Version: 1, Date: d, Scenario: "s", CandidateCommit: commit, Fingerprint: "fp",
			Cells: []benchdata.RecordCell{{Cell: benchdata.Cell{Class: "Q", Concurrency: 1}, Target: "candidate", Metric: "rps", Mean: mean, N: 1}}}
	}
	recs := []benchdata.Record{rec("2026-02-02T02:00:00Z", "c2", 3), rec("2026-02-01T02:00:00Z", "c0", 1), rec("2026-02-01T02:00:00Z", "c1", 2)}
	_, files := render(t, recs, Options{})
	page := files[CellPage("s", recs[0].Cells[0].Cell)]
	for _, want := range []string{
		"Table of the 3 night(s)",
		"Table of the 3 run(s)",
		// Oldest first, the records of one date in the order given.
		"<tr><td>2026-02-01 02:00<td>1.000 (n=1)<td>1<td>—<td><td>\n<tr><td>2026-02-01 02:00<td>2.000 (n=1)<td>1<td>—<td><td>\n<tr><td>2026-02-02 02:00<td>3.000 (n=1)<td>1<td>—<td><td>\n",
		`<tr><td>2026-02-01 02:00<td><span title="c0">c0</span><td><span title="">—</span><td>` + "\n" +
			`<tr><td>2026-02-01 02:00<td><span title="c1">c1</span><td><span title="">—</span><td>` + "\n" +
			`<tr><td>2026-02-02 02:00<td><span title="c2">c2</span><td><span title="">—</span><td>` + "\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page: no %q", want)
		}
	}
	if got := regexp.MustCompile(`data-series="candidate"[^>]*data-y="([^"]*)"`).FindAllStringSubmatch(page, -1); len(got) != 3 {
		t.Errorf("chart: %d candidate points, want 3", len(got))
	}

	// Nights 3 and 4 share a date; the 5× step in p95 is from night 4 on:
	// the mark is on night 4's row (50.5), not on the first of the date.
	recs = synthesize(synthOptions{nights: 8, cells: 1, stepAt: 4, stepMetric: "p95"})
	for i := range recs {
		recs[i].RunID = ""
	}
	recs[4].Date = recs[3].Date
	_, files = render(t, recs, Options{})
	page = files[CellPage("demo-api", synthCell(0))]
	p95 := page[strings.Index(page, `<table class="runs" data-metric="p95">`):]
	p95 = p95[:strings.Index(p95, "</table>")]
	for _, want := range []string{
		"<tr><td>2025-02-04 02:00<td>9.900 s ± 1%<td>5<td>9.900 s ± 1%<td>5<td>\n" +
			`<tr class="mark worse"><td>2025-02-04 02:00<td>50.500 s ± 0%<td>5<td>10.100 s ± 1%<td>5<td>candidate change`,
		"Table of the 8 night(s), 1 change point(s)",
	} {
		if !strings.Contains(p95, want) && !strings.Contains(page, want) {
			t.Errorf("p95 table: no %q", want)
		}
	}
	if n := strings.Count(p95, "<tr"); n != 8+1 { // and the header's
		t.Errorf("p95 table: %d rows, want 8 and the header", n-1)
	}
}

// manyCells is one record of n cells of one metric, at date.
func manyCells(n int, date time.Time) benchdata.Record {
	r := benchdata.Record{Version: 1, Date: date, Scenario: "s", Fingerprint: "fp"}
	for i := range n {
		r.Cells = append(r.Cells, benchdata.RecordCell{Cell: benchdata.Cell{Class: fmt.Sprintf("Q%05d", i), Concurrency: 1},
			Target: "candidate", Metric: "rps", Mean: 1, N: 1})
	}
	return r
}

// TestMaxCells: a site of more than MaxCells cells is refused before
// anything is rendered or written, saying how many and what to do; cells
// only of records -months leaves out do not count.
func TestMaxCells(t *testing.T) {
	t.Parallel()
	newest := time.Date(2026, 2, 1, 2, 0, 0, 0, time.UTC)
	recs := []benchdata.Record{manyCells(MaxCells+1, newest)}
	_, err := Render(recs, DefaultOptions)
	var ce *CellsError
	if !errors.As(err, &ce) || ce.Cells != MaxCells+1 {
		t.Fatalf("Render of %d cells: %v, want a CellsError of %d cells", MaxCells+1, err, MaxCells+1)
	}
	want := "site: the 1 record(s) of the last 12 month(s) hold 10001 distinct cells (scenario and cell), each a page; " +
		"a site holds at most 10000: keep fewer months (-months), or give a history of fewer scenarios or cells"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if _, err := Render(recs, Options{}); err == nil || !strings.HasPrefix(err.Error(), "site: the history's 1 record(s) hold 10001 distinct cells") {
		t.Errorf("-months 0: %v", err)
	}

	parent := t.TempDir()
	if _, err := Build(filepath.Join(parent, "p", "site"), recs, DefaultOptions); !errors.As(err, &ce) {
		t.Errorf("Build: %v, want a CellsError", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("Build refused wrote %v", entries)
	}

	// Two years ago: outside -months 12, its cells not the site's.
	recs = []benchdata.Record{manyCells(MaxCells+1, newest.AddDate(-2, 0, 0)), manyCells(2, newest)}
	s, _ := render(t, recs, DefaultOptions)
	if s.Cells != 2 || s.Dropped != 1 {
		t.Errorf("site of %d cells, %d records dropped; want 2, 1", s.Cells, s.Dropped)
	}
}

// TestBuildOut: -out is resolved against the working directory, which
// (or whose parents) a build refuses to replace, as it does the root.
func TestBuildOut(t *testing.T) {
	parent := t.TempDir()
	t.Chdir(parent)
	recs := synthesize(synthOptions{nights: 2, cells: 1})
	if _, err := Build("public", recs, DefaultOptions); err != nil {
		t.Fatal(err)
	}
	os.Mkdir("empty", 0o755)
	for _, c := range []struct{ wd, out, want string }{
		{"empty", ".", "-out .: the working directory, or one holding it: "},
		{"public", ".", "-out .: the working directory, or one holding it: "},
		{"public/cells", "..", "-out ..: the working directory, or one holding it: "},
		{"public", parent + "/public", "-out " + parent + "/public: the working directory, or one holding it: "},
		{".", "/", "-out /: the root directory, which a site cannot replace"},
	} {
		t.Chdir(filepath.Join(parent, c.wd))
		_, err := Build(c.out, recs, DefaultOptions)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("in %s, Build(%q): %v, want %q…", c.wd, c.out, err, c.want)
		}
		if err := CheckOut(c.out); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("in %s, CheckOut(%q): %v, want %q…", c.wd, c.out, err, c.want)
		}
	}
	t.Chdir(parent)
	var names []string
	for _, dir := range []string{".", "empty"} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			names = append(names, filepath.Join(dir, e.Name()))
		}
	}
	if want := []string{"empty", "public"}; !slices.Equal(names, want) {
		t.Errorf("left %v, want %v", names, want)
	}
	if _, err := os.Stat(filepath.Join("public", "index.html")); err != nil {
		t.Errorf("the site refused to replace: %v", err)
	}
	// From the directory above, the same directories are fine.
	for _, out := range []string{"empty", "public", "./public/", "new/site"} {
		if _, err := Build(out, recs, DefaultOptions); err != nil {
			t.Errorf("Build(%q): %v", out, err)
		}
	}
}

// TestBuildFails: a build that fails part way (a disk full) leaves the
// old site as it was and nothing beside it.
func TestBuildFails(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	out := filepath.Join(parent, "site")
	if _, err := Build(out, synthesize(synthOptions{nights: 2, cells: 1}), DefaultOptions); err != nil {
		t.Fatal(err)
	}
	full := errors.New("no space left on device")
	err := write(out, func(emit func(string, []byte) error) error {
		if err := emit("index.html", []byte("new")); err != nil {
			return err
		}
		return full
	})
	if !errors.Is(err, full) {
		t.Errorf("write: %v, want %v", err, full)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 || entries[0].Name() != "site" {
		t.Errorf("beside the site: %v, want only site", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "index.html")); bytes.Equal(b, []byte("new")) || len(b) == 0 {
		t.Errorf("the old site's index.html: %.40q", b)
	}

	// A first build into p/q/site that fails takes back p and q as well.
	err = write(filepath.Join(parent, "p", "q", "site"), func(emit func(string, []byte) error) error { return full })
	if !errors.Is(err, full) {
		t.Errorf("write: %v, want %v", err, full)
	}
	if _, err := os.Stat(filepath.Join(parent, "p")); !os.IsNotExist(err) {
		t.Errorf("a failed build left the directories it made: %v", err)
	}
}

// TestDeclaredDirection: a metric the gate decided better higher (an
// imported customBiggerIsBetter "score") that halves is for the worse on
// the site, and its chart says higher is better, though its name alone
// would say lower.
func TestDeclaredDirection(t *testing.T) {
	t.Parallel()
	var recs []benchdata.Record
	cell := benchdata.Cell{Class: "bench"}
	for i := range 12 {
		v := 100.0
		if i >= 6 {
			v = 50
		}
		recs = append(recs, benchdata.Record{Version: benchdata.HistoryVersion, Date: time.Date(2026, 5, 1+i, 2, 0, 0, 0, time.UTC),
			Scenario: "suite", Fingerprint: "f1", CandidateCommit: fmt.Sprintf("c%02d", i), HigherBetter: map[string]bool{"score": true},
			Cells: []benchdata.RecordCell{{Cell: cell, Target: "candidate", Metric: "score", Mean: v * (1 + 0.001*float64(i%3)), HalfWidth: 1, N: 5}}})
	}
	s, files := render(t, recs, DefaultOptions)
	if s.Worse != 1 {
		t.Errorf("%d cells worse, want 1: a higher-is-better score that halved", s.Worse)
	}
	if !strings.Contains(files[CellPage("suite", cell)], "higher is better") || strings.Contains(files[CellPage("suite", cell)], "lower is better") {
		t.Errorf("the cell's page does not say score is better higher")
	}
}

// TestWhere: a cell's page shows where it got slower in the newest run of
// its section that profiled it (not an older one), with the run's page
// linked when the record has one; a cell no run profiled shows none.
func TestWhere(t *testing.T) {
	t.Parallel()
	recs := synthesize(synthOptions{nights: 8, cells: 2})
	profiled, other := recs[0].Cells[0].Cell, benchdata.Cell{}
	for _, c := range recs[0].Cells {
		if c.Cell != profiled {
			other = c.Cell
		}
	}
	recs[4].Where = []benchdata.RecordWhere{{Cell: profiled, Source: "perf", Unit: "request", Base: 1000, Cand: 1500,
		Funcs: []benchdata.RecordFunc{{Name: "main.olderWork", Base: 100, Cand: 600, Share: 1}}}}
	recs[6].RunURL = "https://github.com/o/r/actions/runs/42"
	recs[6].Where = []benchdata.RecordWhere{{Cell: profiled, Source: "pprof", Unit: "request", Base: 1000, Cand: 5000,
		Funcs: []benchdata.RecordFunc{{Name: "main.search", Base: 600, Cand: 4400, Share: 0.95}, {Name: "main.newHelper", Cand: 200, Share: 0.05}}}}
	_, files := render(t, recs, Options{Months: 0})
	page := files[CellPage(recs[0].Scenario, profiled)]
	for _, want := range []string{
		"<h3>Where it got slower</h3>",
		`from pprof profiles of both targets under its load: CPU per request 1.000 µs → 5.000 µs (&#43;400.0%).`,
		`<a class="run" href="https://github.com/o/r/actions/runs/42">The run</a>`,
		`<tr><td><code>main.search</code></td><td class="num">600.0 ns</td><td class="num">4.400 µs</td><td class="num">&#43;633.3%</td><td class="num">95%</td></tr>`,
		`<td><code>main.newHelper</code></td><td class="num">0 s</td><td class="num">200.0 ns</td><td class="num">new</td><td class="num">5%</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("profiled cell's page: no %q", want)
		}
	}
	if strings.Contains(page, "main.olderWork") {
		t.Error("the page shows an older run's profile, not the newest")
	}
	if p := files[CellPage(recs[0].Scenario, other)]; p == "" || strings.Contains(p, "Where it got slower") {
		t.Errorf("a cell never profiled: page of %d bytes, shows a where section: %v", len(p), strings.Contains(p, "Where it got slower"))
	}
}
