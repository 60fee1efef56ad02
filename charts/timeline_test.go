package charts

import (
	"bytes"
	"strings"
	"testing"
)

func TestTimelineSVG(t *testing.T) {
	t.Parallel()
	var base, cand Series
	base.Name, cand.Name = "baseline", `cand"<x>`
	for i := range 100 {
		y := 10.0
		if i >= 60 {
			y = 50
		}
		base.Points = append(base.Points, Point{X: float64(i), Y: 10, Lo: 9.5, Hi: 10.5, Label: "v1"})
		cand.Points = append(cand.Points, Point{X: float64(i), Y: y, Lo: y - 1, Hi: y + 1, Label: "c<1>"})
	}
	tl := Timeline{
		Title: `p95 <script>alert(1)</script>`, YLabel: "p95", Series: []Series{base, cand},
		Ticks: []Tick{{X: 0, Label: "Jan"}, {X: 31, Label: "Feb"}, {X: 500, Label: "out of range"}},
		Marks: []Mark{
			{X: 59.5, Kind: MarkWorse, Label: "+400% c59..c60", Text: "p95 <worse>", Data: [][2]string{{"from", `c"59`}, {"To!", "c60"}}},
			{X: 20.5, Kind: MarkNeutral, Label: "baseline → v1.1"},
			{X: -50, Kind: MarkBetter, Label: "outside"},
		},
	}
	var b bytes.Buffer
	if err := TimelineSVG(&b, tl); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	els := parseSVG(t, b.Bytes()) // strict XML
	count := func(class string) int {
		n := 0
		for _, e := range els {
			if e.attrs["class"] == class {
				n++
			}
		}
		return n
	}
	if n := count("point"); n != 2*timelineMarkers {
		t.Errorf("%d markers, want %d", n, 2*timelineMarkers)
	}
	if count("mark worse") != 1 || count("mark neutral") != 1 || count("mark better") != 0 {
		t.Errorf("marks: worse %d, neutral %d, better %d; want 1, 1, 0 (the one outside the range left out)", count("mark worse"), count("mark neutral"), count("mark better"))
	}
	for _, e := range els {
		if e.attrs["class"] == "mark worse" && (e.attrs["data-from"] != `c"59` || e.attrs["data-to"] != "c60" || e.attrs["data-x"] != "59.5") {
			t.Errorf("worse mark's data: %v", e.attrs)
		}
	}
	for _, bad := range []string{"<script", "<x>", "<worse>", "out of range", "outside"} {
		if strings.Contains(svg, bad) {
			t.Errorf("SVG holds %q", bad)
		}
	}
	if !strings.Contains(svg, `aria-label="p95 &lt;script&gt;alert(1)&lt;/script&gt;"`) {
		t.Error("no escaped aria-label")
	}
	if !strings.Contains(svg, `stroke-dasharray="7 4"`) || !strings.Contains(svg, "<rect") {
		t.Error("the candidate is not dashed with square markers")
	}
}

func TestSparklineSVG(t *testing.T) {
	t.Parallel()
	vals := make([]float64, 365)
	for i := range vals {
		vals[i] = 10
		if i >= 300 {
			vals[i] = 50
		}
	}
	var b bytes.Buffer
	if err := SparklineSVG(&b, Sparkline{Values: vals, Mark: 300, MarkKind: MarkWorse, Label: `p95 "<b>"`, Width: 100, MaxPoints: 50}); err != nil {
		t.Fatal(err)
	}
	els := parseSVG(t, b.Bytes())
	var pts, marks int
	for _, e := range els {
		switch {
		case e.name == "polyline":
			pts = len(strings.Fields(e.attrs["points"]))
		case e.attrs["class"] == "mark worse":
			marks++
		}
	}
	if pts != 50 || marks != 1 {
		t.Errorf("%d points, %d marks; want 50, 1", pts, marks)
	}
	if !strings.Contains(b.String(), `aria-label="p95 &#34;&lt;b&gt;&#34;"`) {
		t.Errorf("label not escaped: %s", b.String())
	}
	// Run 41 holds values 299–305: the change at 300 is in it.
	if got, want := mkBucket(vals, 300, 50), 41; got != want {
		t.Errorf("mark in run %d, want %d", got, want)
	}
	b.Reset()
	if err := SparklineSVG(&b, Sparkline{Mark: -1}); err != nil || !strings.Contains(b.String(), "stroke-dasharray") {
		t.Errorf("empty sparkline: %v %s", err, b.String())
	}
}

func mkBucket(v []float64, mark, k int) int { _, m := bucket(v, mark, k); return m }
