package report

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/charts"
	"github.com/benchgate/benchgate/gate"
)

func TestThroughputCharts(t *testing.T) {
	t.Parallel()
	cs := ThroughputCharts(fullInput())
	// csv and json Q01 ran at c=1 and c=8; mix only at c=8: no curve.
	var titles []string
	for _, c := range cs {
		titles = append(titles, c.Title)
	}
	if !slices.Equal(titles, []string{"csv · Q01 — rps by concurrency", "json · Q01 — rps by concurrency"}) {
		t.Fatalf("titles %q", titles)
	}
	c := cs[0]
	if c.XLabel != "concurrency" || c.YLabel != "rps (mean, 95% interval)" || !c.LogX {
		t.Errorf("axes %q %q log %v", c.XLabel, c.YLabel, c.LogX)
	}
	if len(c.Series) != 2 || c.Series[0].Name != "baseline" || c.Series[1].Name != "candidate" {
		t.Fatalf("series %+v", c.Series)
	}
	// The points are the decided rps summaries, mean and interval.
	// at is a point with its interval as gate.Summary computes it.
	at := func(x, mean, hw float64) charts.Point {
		s := gate.Summary{Mean: mean, HalfWidth: hw}
		return charts.Point{X: x, Y: mean, Lo: s.Lo(), Hi: s.Hi(), Label: "c=" + strconv.Itoa(int(x))}
	}
	want := []charts.Point{at(1, 812.4, 10.2), at(8, 2410.7, 35.1)}
	if !slices.Equal(c.Series[0].Points, want) {
		t.Errorf("baseline points %+v, want %+v", c.Series[0].Points, want)
	}
	want = []charts.Point{at(1, 820.1, 12.5), at(8, 1980.3, 41.8)}
	if !slices.Equal(c.Series[1].Points, want) {
		t.Errorf("candidate points %+v, want %+v", c.Series[1].Points, want)
	}
	// json Q01 c=1 has one candidate repetition: a point, no interval.
	p := cs[1].Series[1].Points[0]
	if p.X != 1 || p.Y != 801 || p.Lo != 801 || p.Hi != 801 {
		t.Errorf("a one-repetition point %+v", p)
	}

	// Pin sets and variants both named; a pin set with nothing decided
	// has no chart; a grid of one concurrency level has none.
	titles = nil
	for _, c := range ThroughputCharts(pinsInput()) {
		titles = append(titles, c.Title)
	}
	if !slices.Equal(titles, []string{"cpus=1 · csv · Q01 — rps by concurrency", "cpus=2 · csv · Q01 — rps by concurrency"}) {
		t.Errorf("pins titles %q", titles)
	}
	if cs := ThroughputCharts(pinsCancelledInput()); len(cs) != 1 || cs[0].Title != "cpus=1 · csv · Q01 — rps by concurrency" {
		t.Errorf("cancelled pins: %d charts", len(cs))
	}
	if cs := ThroughputCharts(cancelledInput()); len(cs) != 0 {
		t.Errorf("one concurrency level: %d charts", len(cs))
	}
	if cs := ThroughputCharts(Input{}); len(cs) != 0 {
		t.Errorf("empty input: %d charts", len(cs))
	}
}

// TestThroughputChartsOrder: cells out of concurrency order, and a class
// whose cells are not adjacent, still draw one rising curve.
func TestThroughputChartsOrder(t *testing.T) {
	t.Parallel()
	cell := func(class string, c int, rps float64) gate.CellResult {
		return gate.CellResult{Key: gate.CellKey{Class: class, Concurrency: c},
			Decisions: []gate.Decision{dec(gate.RPS, sum(3, rps, 5), sum(3, rps*1.01, 5), gate.Tie, "")}}
	}
	in := Input{Comparison: gate.Comparison{Settings: gate.Settings{Confidence: 0.99}, Cells: []gate.CellResult{
		cell("a", 16, 1600), cell("b", 1, 10), cell("a", 2, 200), cell("b", 2, 20), cell("a", 4, 400),
	}}}
	cs := ThroughputCharts(in)
	if len(cs) != 2 || cs[0].Title != "a — rps by concurrency" || cs[1].Title != "b — rps by concurrency" {
		t.Fatalf("charts %+v", cs)
	}
	var xs []float64
	for _, p := range cs[0].Series[0].Points {
		xs = append(xs, p.X)
	}
	if !slices.Equal(xs, []float64{2, 4, 16}) || !cs[0].LogX || cs[1].LogX {
		t.Errorf("a: x %v, log %v; b: log %v", xs, cs[0].LogX, cs[1].LogX)
	}
	if cs[0].YLabel != "rps (mean, 99% interval)" {
		t.Errorf("y label %q", cs[0].YLabel)
	}
}

func TestThroughputChartsGoBench(t *testing.T) {
	t.Parallel()
	in := fullInput()
	in.Results.Kind = "gobench"
	if cs := ThroughputCharts(in); cs != nil {
		t.Errorf("gobench results: %d charts", len(cs))
	}
	if md := markdown(t, in); strings.Contains(md, "Throughput by concurrency") {
		t.Error("gobench report has a throughput chart")
	}
	if md := markdown(t, goBenchInput()); strings.Contains(md, "mermaid") {
		t.Error("gobench report has a mermaid chart")
	}
}

func TestMarkdownCharts(t *testing.T) {
	t.Parallel()
	md := markdown(t, fullInput())
	sec := between(t, md, "### Throughput by concurrency\n\n", "### Errors\n")
	if n := strings.Count(sec, "```mermaid\n"); n != 2 {
		t.Errorf("%d mermaid blocks, want 2:\n%s", n, sec)
	}
	if strings.Count(sec, "<details>") != 2 || strings.Count(sec, "</details>") != 2 {
		t.Errorf("each chart not in its fold:\n%s", sec)
	}
	for _, want := range []string{
		"<details><summary>csv · Q01 — rps by concurrency</summary>\n\n```mermaid\n",
		"    line [812.4, 2410.7]\n    line [820.1, 1980.3]\n```\n\nLines: `baseline` blue, `candidate` orange.\n\n</details>\n\n",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("section lacks %q:\n%s", want, sec)
		}
	}
	// The section follows the verdict tables, which stay as they are.
	if i, j := strings.Index(md, "| json | "), strings.Index(md, "### Throughput by concurrency"); j < 0 || strings.Index(md, "### json") > j {
		t.Errorf("charts before the tables (%d, %d)", i, j)
	}
}

func between(t *testing.T, s, from, to string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		t.Fatalf("no %q in:\n%s", from, s)
	}
	sec, _, ok := strings.Cut(rest, to)
	if !ok {
		t.Fatalf("no %q after %q", to, from)
	}
	return sec
}

// hostileChartClasses are class names written to close the chart's fold
// and its code block, run a script, ping a team and break a mermaid
// string: one short enough to show whole in a chart's title, one cut there.
var hostileChartClasses = []string{
	"</details>\n``<b>\"]@t",
	"</summary></details>\n```\n<script>alert(1)</script>\"]@team",
}

func TestMarkdownChartsHostileClass(t *testing.T) {
	t.Parallel()
	for i, class := range hostileChartClasses {
		in := fullInput()
		for i := range in.Comparison.Cells {
			if in.Comparison.Cells[i].Key.Class == "Q01" {
				in.Comparison.Cells[i].Key.Class = class
			}
		}
		for _, f := range []func(*testing.T, Input) string{
			markdown,
			func(t *testing.T, in Input) string { return comment(t, in, CommentOptions{}) },
		} {
			md := f(t, in)
			sec := between(t, md, "### Throughput by concurrency\n\n", "### Errors\n")
			if strings.Count(sec, "<details>") != 2 || strings.Count(sec, "</details>") != 2 || strings.Count(sec, "</summary>") != 2 {
				t.Errorf("folds broken:\n%s", sec)
			}
			if n := strings.Count(sec, "```"); n != 4 {
				t.Errorf("%d fences, want 4:\n%s", n, sec)
			}
			for _, bad := range []string{"<script", "<b>", "@t"} {
				if strings.Contains(sec, bad) {
					t.Errorf("section contains %q:\n%s", bad, sec)
				}
			}
			if i > 0 {
				continue
			}
			for _, want := range []string{
				"<details><summary>csv · &#60;/details&#62; &#96;&#96;&#60;b&#62;\"&#93;@&#8203;t — rps by concurrency</summary>",
				`    title "csv · (/details) ''(b)')_t — rps by concurrency"`,
			} {
				if !strings.Contains(sec, want) {
					t.Errorf("section lacks %q:\n%s", want, sec)
				}
			}
		}
	}
}

func TestCommentDropsChartsFirst(t *testing.T) {
	t.Parallel()
	in := fullInput()
	whole := comment(t, in, CommentOptions{})
	if !strings.Contains(whole, "```mermaid") {
		t.Fatal("no chart in the comment's fold")
	}
	n := runes(whole)
	opt := CommentOptions{MaxRunes: n - 1}
	got := comment(t, in, opt)
	checkComment(t, got, opt)
	if strings.Contains(got, "mermaid") || strings.Contains(got, "Throughput by concurrency") || !strings.Contains(got, "<details><summary>Full report") {
		t.Errorf("one rune short: the charts did not leave the fold first:\n%s", got)
	}
	if !strings.Contains(got, "### Claims") {
		t.Error("the rest of the fold left with the charts")
	}

	// In a job summary the charts are kept longer than the larger parts.
	full := markdown(t, in)
	sum := jobSummary(t, in, SummaryOptions{MaxBytes: len(full) - 1})
	if !strings.Contains(sum, "```mermaid") || !strings.Contains(sum, "this leaves out the error distribution.") {
		t.Errorf("summary one byte short:\n%s", sum)
	}
	secs := map[sectionID]int{}
	for _, s := range newModel(in).sections() {
		secs[s.id] = len(s.text)
	}
	sum = jobSummary(t, in, SummaryOptions{MaxBytes: len(full) - secs[secErrors] - secs[secThreats] - secs[secEnvironment]})
	if strings.Contains(sum, "```mermaid") || !strings.Contains(sum, "the throughput charts") {
		t.Errorf("summary short of the charts too:\n%s", sum)
	}
}

func TestTrendChart(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2026, 9, d, 2, 0, 0, 0, time.UTC) }
	pts := []TrendPoint{
		{Date: day(3), Commit: "cccccccccccccccccccccccccccccccccccccccc", Mean: 1150, Lo: 1140, Hi: 1160},
		{Date: day(1), Commit: "aaaaaaa1111111111111111111111111111111aa", Mean: 1000, Lo: 990, Hi: 1010},
		{Date: day(2), Mean: 1010}, // no commit, no interval
	}
	c := TrendChart("Q01 c=8 — candidate rps", "req/s", pts)
	if c.Title != "Q01 c=8 — candidate rps" || c.YUnit != "req/s" || len(c.Series) != 1 || c.LogX {
		t.Fatalf("chart %+v", c)
	}
	want := []charts.Point{
		{X: 1, Y: 1000, Lo: 990, Hi: 1010, Label: "aaaaaaa"},
		{X: 2, Y: 1010, Label: "2026-09-02"},
		{X: 3, Y: 1150, Lo: 1140, Hi: 1160, Label: "ccccccc"},
	}
	if !slices.Equal(c.Series[0].Points, want) {
		t.Errorf("points %+v, want %+v", c.Series[0].Points, want)
	}
	if pts[0].Mean != 1150 {
		t.Error("TrendChart reordered the caller's slice")
	}
	var b bytes.Buffer
	if err := charts.SVG(&b, c); err != nil {
		t.Fatal(err)
	}
	if pts := svgDataPoints(t, &b); !slices.Equal(pts, []string{"mean 1 1000", "mean 2 1010", "mean 3 1150"}) {
		t.Errorf("SVG points %v", pts)
	}
}
