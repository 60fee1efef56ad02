package charts

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// throughput is a chart as the report draws one: rps by concurrency,
// baseline and candidate, with intervals.
func throughput() Chart {
	return Chart{
		Title: "search — rps by concurrency · cpus=1 · csv", XLabel: "concurrency", YLabel: "rps (mean, 95% interval)", LogX: true,
		Series: []Series{
			{Name: "baseline", Points: []Point{
				{X: 1, Y: 812.4, Lo: 802.2, Hi: 822.6, Label: "c=1"},
				{X: 4, Y: 1904.25, Lo: 1850.5, Hi: 1958, Label: "c=4"},
				{X: 8, Y: 2410.7, Lo: 2375.6, Hi: 2445.8, Label: "c=8"},
				{X: 32, Y: 2598.1, Lo: 2500.3, Hi: 2695.9, Label: "c=32"},
			}},
			{Name: "candidate", Points: []Point{
				{X: 1, Y: 820.1, Lo: 807.6, Hi: 832.6, Label: "c=1"},
				{X: 4, Y: 1702, Lo: 1650, Hi: 1760, Label: "c=4"},
				{X: 8, Y: 1980.3, Lo: 1938.5, Hi: 2022.1, Label: "c=8"},
				{X: 32, Y: 2004.9, Lo: 1900.2, Hi: 2109.6, Label: "c=32"},
			}},
		},
	}
}

// element is one start element of a parsed SVG.
type element struct {
	name  string
	attrs map[string]string
	text  string // character data directly inside it
}

// parseSVG parses an SVG strictly, failing the test on any XML error, and
// returns its elements in document order.
func parseSVG(t *testing.T, svg []byte) []element {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	d.Strict = true
	var out []element
	var open []int
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			open = append(open, len(out)-1)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			if len(open) > 0 {
				out[open[len(open)-1]].text += string(tok)
			}
		case xml.ProcInst, xml.Directive:
			t.Errorf("unexpected %T in SVG", tok)
		}
	}
	if len(out) == 0 || out[0].name != "svg" {
		t.Fatalf("no svg root element:\n%s", svg)
	}
	return out
}

func render(t *testing.T, c Chart) ([]byte, []element) {
	t.Helper()
	var b bytes.Buffer
	if err := SVG(&b, c); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), parseSVG(t, b.Bytes())
}

// points are the data points an SVG's markers carry.
func points(es []element) []element {
	var out []element
	for _, e := range es {
		if e.attrs["class"] == "point" {
			out = append(out, e)
		}
	}
	return out
}

func attrFloat(t *testing.T, e element, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.attrs[name], 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, e.attrs[name], err)
	}
	return v
}

// selfContained checks that an SVG holds only drawing elements: no
// script, style, link, image, foreign object or event handler.
func selfContained(t *testing.T, es []element) {
	t.Helper()
	allowed := []string{"svg", "title", "rect", "text", "g", "line", "path", "circle"}
	for _, e := range es {
		if !slices.Contains(allowed, e.name) {
			t.Errorf("element <%s> in SVG", e.name)
		}
		for a, v := range e.attrs {
			if strings.HasPrefix(strings.ToLower(a), "on") || a == "href" || a == "style" {
				t.Errorf("attribute %s=%q on <%s>", a, v, e.name)
			}
			if a != "xmlns" && strings.Contains(v, "://") {
				t.Errorf("link %s=%q on <%s>", a, v, e.name)
			}
		}
	}
}

func TestSVGDataPoints(t *testing.T) {
	t.Parallel()
	c := throughput()
	raw, es := render(t, c)
	selfContained(t, es)
	if w, h := es[0].attrs["width"], es[0].attrs["height"]; w != "720" || h != "360" {
		t.Errorf("size %sx%s, want 720x360", w, h)
	}
	got := points(es)
	want := 0
	for _, s := range c.Series {
		for _, p := range s.Points {
			want++
			i := slices.IndexFunc(got, func(e element) bool {
				return e.attrs["data-series"] == s.Name && attrFloat(t, e, "data-x") == p.X
			})
			if i < 0 {
				t.Errorf("no marker for %s x=%v", s.Name, p.X)
				continue
			}
			e := got[i]
			if attrFloat(t, e, "data-y") != p.Y || attrFloat(t, e, "data-lo") != p.Lo || attrFloat(t, e, "data-hi") != p.Hi {
				t.Errorf("%s x=%v: marker y=%s lo=%s hi=%s, want %v %v %v", s.Name, p.X,
					e.attrs["data-y"], e.attrs["data-lo"], e.attrs["data-hi"], p.Y, p.Lo, p.Hi)
			}
			if e.attrs["data-label"] != p.Label {
				t.Errorf("%s x=%v: label %q, want %q", s.Name, p.X, e.attrs["data-label"], p.Label)
			}
		}
	}
	if len(got) != want {
		t.Errorf("%d markers, want %d", len(got), want)
	}
	// The two series look different without colour: dash and shape.
	var lines []element
	for _, e := range es {
		if e.attrs["class"] == "line" {
			lines = append(lines, e)
		}
	}
	if len(lines) != 2 || lines[0].attrs["stroke-dasharray"] == lines[1].attrs["stroke-dasharray"] ||
		lines[0].attrs["stroke"] == lines[1].attrs["stroke"] {
		t.Errorf("the two series' lines are not told apart: %v", lines)
	}
	if got[0].name == got[len(got)-1].name {
		t.Errorf("both series' markers are <%s>", got[0].name)
	}
	// An interval bar per point, a legend entry per series, the title.
	n := strings.Count(string(raw), `class="interval"`)
	if n != want {
		t.Errorf("%d interval bars, want %d", n, want)
	}
	for _, e := range es {
		if e.attrs["class"] == "title" && e.text != c.Title {
			t.Errorf("title %q, want %q", e.text, c.Title)
		}
	}
	var legend []string
	for _, e := range es {
		if e.attrs["class"] == "legend-entry" {
			legend = append(legend, e.attrs["data-series"])
		}
	}
	if !slices.Equal(legend, []string{"baseline", "candidate"}) {
		t.Errorf("legend %v", legend)
	}
	// Markers lie within the plot, in the order of their values.
	for _, e := range got {
		cx, cy := markerCentre(t, e)
		if cx < 0 || cx > Width || cy < 0 || cy > Height {
			t.Errorf("marker at (%v, %v) outside the picture", cx, cy)
		}
	}
	_, yLow := markerCentre(t, got[0])  // baseline c=1, 812.4
	_, yHigh := markerCentre(t, got[2]) // baseline c=8, 2410.7
	if yHigh >= yLow {
		t.Errorf("a higher value is drawn lower: %v vs %v", yHigh, yLow)
	}
}

// markerCentre is the centre of a circle or square marker.
func markerCentre(t *testing.T, e element) (float64, float64) {
	t.Helper()
	switch e.name {
	case "circle":
		return attrFloat(t, e, "cx"), attrFloat(t, e, "cy")
	case "rect":
		return attrFloat(t, e, "x") + attrFloat(t, e, "width")/2, attrFloat(t, e, "y") + attrFloat(t, e, "height")/2
	}
	t.Fatalf("marker <%s>", e.name)
	return 0, 0
}

func TestSVGGolden(t *testing.T) {
	t.Parallel()
	raw, _ := render(t, throughput())
	path := filepath.Join("testdata", "throughput.svg")
	if *update {
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(raw, want) {
		t.Errorf("SVG differs from %s (run go test -update after checking the change)\n%s", path, raw)
	}
}

// hostile are names a pull request could give a class, written to break
// out of XML text, an attribute, a CDATA section, a line, a mermaid string
// or a markdown fence.
var hostile = []string{
	`<script>alert(1)</script>`,
	`"&'`,
	`]]>`,
	"two\nlines\r\nand\ttab",
	"\x1b[31mred\x00",
	"```\n</details><img src=x onerror=alert(1)>",
	`"] ; line [9999] %%{init: {"theme":"dark"}}%% #35;`,
	"a\u202eb", // a right-to-left override
	"\xff\xfe bad UTF-8",
}

func TestSVGEscapesHostileText(t *testing.T) {
	t.Parallel()
	for _, name := range hostile {
		c := Chart{
			Title: name, XLabel: name, YLabel: name,
			Series: []Series{
				{Name: name, Points: []Point{{X: 1, Y: 2, Lo: 1, Hi: 3, Label: name}, {X: 2, Y: 3, Lo: 3, Hi: 3, Label: name}}},
				{Name: "candidate", Points: []Point{{X: 1, Y: 2.5, Lo: 2.5, Hi: 2.5}}},
			},
		}
		raw, es := render(t, c)
		selfContained(t, es)
		for _, bad := range []string{"<script", "<img", "<details", "]]>", "\x1b", "\x00", "\u202e", "\r", "\t"} {
			if strings.Contains(string(raw), bad) {
				t.Errorf("%q: SVG contains %q", name, bad)
			}
		}
		clean := cleanText(name, nameRunes)
		pts := points(es)
		if len(pts) != 3 {
			t.Fatalf("%q: %d markers, want 3", name, len(pts))
		}
		if got := pts[0].attrs["data-series"]; got != clean {
			t.Errorf("%q: data-series %q, want %q", name, got, clean)
		}
		if strings.ContainsAny(clean, "\n\r\t\x00\x1b") || strings.ContainsRune(clean, '\u202e') {
			t.Errorf("%q: cleaned to %q", name, clean)
		}
		for _, e := range es {
			if e.attrs["class"] == "title" && e.text != cleanText(name, titleRunes) {
				t.Errorf("%q: title reads %q", name, e.text)
			}
		}
	}
}

func TestCleanText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a\nb":                     "a b",
		"  lead  and\t\ttrail \n ": "lead and trail",
		"a\u202eb\u2066c":          "abc",
		// Invisible characters the old bidi list let through: zero-width
		// space and joiner, a tag character, a variation selector.
		"a\u200bb\u200dc\U000e0041d\ufe0fe": "abcde",
		"\xffx":                             "\ufffdx",
		strings.Repeat("x", 50):             strings.Repeat("x", 39) + "…",
	} {
		if got := cleanText(in, nameRunes); got != want {
			t.Errorf("cleanText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{802.2, 2695.9, []float64{500, 1000, 1500, 2000, 2500, 3000}},
		{0.0013, 0.0079, []float64{0, 0.002, 0.004, 0.006, 0.008}},
		{-3, 7, []float64{-4, -2, 0, 2, 4, 6, 8}},
		{5, 5, []float64{4.4, 4.6, 4.8, 5, 5.2, 5.4, 5.6}},
		{0, 0, []float64{-1, -0.5, 0, 0.5, 1}},
		{1, 26, []float64{0, 5, 10, 15, 20, 25, 30}},
		{12000, 14100, []float64{12000, 12500, 13000, 13500, 14000, 14500}},
	} {
		got, step := niceTicks(tc.lo, tc.hi, 6)
		if !slices.Equal(got, tc.want) {
			t.Errorf("niceTicks(%v, %v) = %v (step %v), want %v", tc.lo, tc.hi, got, step, tc.want)
		}
	}
	// Whatever the range: evenly spaced nice steps covering it.
	for _, r := range [][2]float64{{1e-9, 3e-9}, {0.1, 0.3}, {123, 124}, {-1e6, 1e6}, {3.3, 97.1}, {1e12, 5e12}} {
		ticks, step := niceTicks(r[0], r[1], 6)
		if ticks[0] > r[0] || ticks[len(ticks)-1] < r[1] {
			t.Errorf("%v: ticks %v do not cover it", r, ticks)
		}
		if len(ticks) < 3 || len(ticks) > 12 {
			t.Errorf("%v: %d ticks", r, len(ticks))
		}
		m := step / math.Pow(10, math.Floor(math.Log10(step)))
		if !slices.ContainsFunc([]float64{1, 2, 2.5, 5}, func(n float64) bool { return math.Abs(n-m) < 1e-9 }) {
			t.Errorf("%v: step %v is not nice", r, step)
		}
		for i := 1; i < len(ticks); i++ {
			if d := ticks[i] - ticks[i-1]; math.Abs(d-step) > step*1e-6 {
				t.Errorf("%v: ticks %v not %v apart", r, ticks, step)
			}
		}
	}
}

// The axes' labels are numtext's, in the chart's unit: ticks at round
// numbers of the axis' prefix.
func TestAxisTicks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lo, hi float64
		unit   string
		ticks  []float64
		want   []string
	}{
		{0, 0.4, "", []float64{0, 0.1, 0.2, 0.3, 0.4}, []string{"0", "0.1", "0.2", "0.3", "0.4"}},
		{500, 1500, "req/s", []float64{400, 600, 800, 1000, 1200, 1400, 1600}, []string{"400", "600", "800", "1000", "1200", "1400", "1600"}},
		{11500, 12500, "req/s", []float64{11400, 11600, 11800, 12000, 12200, 12400, 12600}, []string{"11.4k", "11.6k", "11.8k", "12.0k", "12.2k", "12.4k", "12.6k"}},
		{2e6, 4e6, "", []float64{2e6, 2.5e6, 3e6, 3.5e6, 4e6}, []string{"2.0M", "2.5M", "3.0M", "3.5M", "4.0M"}},
		{-2.5, 2.5, "", []float64{-3, -2, -1, 0, 1, 2, 3}, []string{"-3", "-2", "-1", "0", "1", "2", "3"}},
		// The history site's stumble: 3.9e-07 sec/op was labelled
		// "0.0000008" at its axis's top.
		{3.5e-7, 8e-7, "sec/op", []float64{3e-7, 4e-7, 5e-7, 6e-7, 7e-7, 8e-7}, []string{"300 ns", "400 ns", "500 ns", "600 ns", "700 ns", "800 ns"}},
		{0, 4.5, "s", []float64{0, 1, 2, 3, 4, 5}, []string{"0", "1 s", "2 s", "3 s", "4 s", "5 s"}},
		// Bytes on round numbers of KiB, not of 1000 bytes.
		{0, 3000, "B/op", []float64{0, 1024, 2048, 3072}, []string{"0", "1 KiB", "2 KiB", "3 KiB"}},
		{0, 1800, "B/op", []float64{0, 512, 1024, 1536, 2048}, []string{"0", "0.5 KiB", "1.0 KiB", "1.5 KiB", "2.0 KiB"}},
	} {
		ticks, labels := axisTicks(tc.lo, tc.hi, 6, tc.unit)
		if !slices.EqualFunc(ticks, tc.ticks, func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }) || !slices.Equal(labels, tc.want) {
			t.Errorf("axisTicks(%v, %v, %q) = %v %q, want %v %q", tc.lo, tc.hi, tc.unit, ticks, labels, tc.ticks, tc.want)
		}
	}
}

func TestLogX(t *testing.T) {
	t.Parallel()
	if got := logTicks(1, 64); !slices.Equal(got, []float64{1, 2, 5, 10, 20, 50}) {
		t.Errorf("logTicks(1, 64) = %v", got)
	}
	if got := logTicks(0.5, 20000); !slices.Equal(got, []float64{1, 10, 100, 1000, 10000}) {
		t.Errorf("logTicks(0.5, 20000) = %v", got)
	}
	// Unlabelled points at 1, 2, 4, … 64 on a log axis lie evenly spaced;
	// a point at x <= 0 cannot be drawn and is left out.
	var ps []Point
	for _, x := range []float64{0, -1, 1, 2, 4, 8, 16, 32, 64} {
		ps = append(ps, Point{X: x, Y: x + 10, Lo: x + 10, Hi: x + 10})
	}
	raw, es := render(t, Chart{Title: "log", LogX: true, Series: []Series{{Name: "s", Points: ps}}})
	pts := points(es)
	if len(pts) != 7 {
		t.Fatalf("%d markers, want 7:\n%s", len(pts), raw)
	}
	var gaps []float64
	for i := 1; i < len(pts); i++ {
		a, _ := markerCentre(t, pts[i-1])
		b, _ := markerCentre(t, pts[i])
		gaps = append(gaps, b-a)
	}
	for _, g := range gaps {
		if math.Abs(g-gaps[0]) > 0.02 {
			t.Errorf("log axis: gaps between doublings %v, want equal", gaps)
			break
		}
	}
	var ticks []string
	for i, e := range es {
		if e.attrs["class"] == "x-ticks" {
			for _, c := range es[i+1:] {
				if c.name != "text" || c.attrs["data-value"] == "" || c.attrs["class"] != "" {
					break
				}
				ticks = append(ticks, c.text)
			}
		}
	}
	if !slices.Equal(ticks, []string{"1", "2", "5", "10", "20", "50"}) {
		t.Errorf("log x ticks %q", ticks)
	}
}

func TestOnePoint(t *testing.T) {
	t.Parallel()
	raw, es := render(t, Chart{Title: "one", XLabel: "c", YLabel: "rps",
		Series: []Series{{Name: "baseline", Points: []Point{{X: 8, Y: 1234.5, Lo: 1234.5, Hi: 1234.5, Label: "c=8"}}}}})
	pts := points(es)
	if len(pts) != 1 || pts[0].attrs["data-x"] != "8" || pts[0].attrs["data-y"] != "1234.5" {
		t.Fatalf("markers %v", pts)
	}
	if strings.Contains(string(raw), `class="line"`) || strings.Contains(string(raw), `class="interval"`) {
		t.Error("one point without interval drew a line or an interval bar")
	}
	noNonFinite(t, raw)
	// Also on a log axis, and with a zero value.
	for _, c := range []Chart{
		{LogX: true, Series: []Series{{Name: "s", Points: []Point{{X: 4, Y: 0}}}}},
		{Series: []Series{{Name: "s", Points: []Point{{X: 0, Y: -3}}}}},
	} {
		raw, es := render(t, c)
		noNonFinite(t, raw)
		if len(points(es)) != 1 {
			t.Errorf("%+v: %d markers", c, len(points(es)))
		}
	}
}

func noNonFinite(t *testing.T, out []byte) {
	t.Helper()
	for _, bad := range []string{"NaN", "Inf"} { // as Go prints them
		if bytes.Contains(out, []byte(bad)) {
			t.Errorf("output contains %q:\n%s", bad, out)
		}
	}
}

func TestNonFinitePointsLeftOut(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	c := Chart{Title: "holes", LogX: true, Series: []Series{{Name: "s", Points: []Point{
		{X: 1, Y: 10, Lo: 9, Hi: 11},
		{X: 2, Y: nan, Lo: 1, Hi: 2},
		{X: nan, Y: 5},
		{X: inf, Y: 5},
		{X: 3, Y: -inf},
		{X: 4, Y: 12, Lo: nan, Hi: inf}, // drawn, without interval
		{X: 5, Y: 13, Lo: 14, Hi: 15},   // an interval that misses Y: none
		{X: 6, Y: 14},                   // Lo and Hi left 0: none
	}}}}
	raw, es := render(t, c)
	noNonFinite(t, raw)
	pts := points(es)
	var xs []string
	for _, p := range pts {
		xs = append(xs, p.attrs["data-x"])
		if p.attrs["data-x"] != "1" && (p.attrs["data-lo"] != p.attrs["data-y"] || p.attrs["data-hi"] != p.attrs["data-y"]) {
			t.Errorf("x=%s: interval %s..%s kept", p.attrs["data-x"], p.attrs["data-lo"], p.attrs["data-hi"])
		}
	}
	if !slices.Equal(xs, []string{"1", "4", "5", "6"}) {
		t.Errorf("drawn x %v, want 1 4 5 6", xs)
	}
	if n := strings.Count(string(raw), `class="interval"`); n != 1 {
		t.Errorf("%d interval bars, want 1", n)
	}
	m := Mermaid(c)
	noNonFinite(t, []byte(m))
	// Nothing drawable at all.
	raw, es = render(t, Chart{Series: []Series{{Name: "s", Points: []Point{{X: nan, Y: nan}}}}})
	noNonFinite(t, raw)
	if len(points(es)) != 0 || !strings.Contains(string(raw), "no data") {
		t.Errorf("an empty chart:\n%s", raw)
	}
	if m := Mermaid(Chart{Series: []Series{{Name: "s"}}}); m != "" {
		t.Errorf("Mermaid of no points = %q, want \"\"", m)
	}
}

func TestManyLabelsThinned(t *testing.T) {
	t.Parallel()
	var ps []Point
	for i := range 60 {
		ps = append(ps, Point{X: float64(i + 1), Y: 100 + float64(i%7), Label: "abcdef" + strconv.Itoa(i)})
	}
	_, es := render(t, Chart{Series: []Series{{Name: "trend", Points: ps}}})
	if n := len(points(es)); n != 60 {
		t.Errorf("%d markers, want 60", n)
	}
	shown := 0
	for i, e := range es {
		if e.attrs["class"] == "x-ticks" {
			for _, c := range es[i+1:] {
				if c.name != "text" || c.attrs["class"] != "" {
					break
				}
				shown++
			}
		}
	}
	if shown == 0 || shown > 12 {
		t.Errorf("%d x tick labels of 60 shown: they would overlap", shown)
	}
}

func TestMermaid(t *testing.T) {
	t.Parallel()
	got := Mermaid(throughput())
	want := "```mermaid\n" +
		`%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "#0072B2, #D55E00"}}}}%%` + "\n" +
		"xychart-beta\n" +
		`    title "search — rps by concurrency · cpus=1 · csv"` + "\n" +
		`    x-axis "concurrency" ["c=1", "c=4", "c=8", "c=32"]` + "\n" +
		`    y-axis "rps (mean, 95% interval)" 500 --> 3000` + "\n" +
		"    line [812.4, 1904.25, 2410.7, 2598.1]\n" +
		"    line [820.1, 1702, 1980.3, 2004.9]\n" +
		"```\n\n" +
		"Lines: `baseline` blue, `candidate` orange.\n"
	if got != want {
		t.Errorf("Mermaid:\n%s\nwant:\n%s", got, want)
	}
}

func TestMermaidSharedCategories(t *testing.T) {
	t.Parallel()
	c := throughput()
	c.Series[1].Points = slices.Delete(c.Series[1].Points, 2, 3) // no candidate at c=8
	got := Mermaid(c)
	if !strings.Contains(got, `["c=1", "c=4", "c=32"]`) || !strings.Contains(got, "line [812.4, 1904.25, 2598.1]") {
		t.Errorf("c=8 not left out of every line:\n%s", got)
	}
	if !strings.Contains(got, "Not drawn, for want of a point on every line: `c=8`.") {
		t.Errorf("c=8 left out unsaid:\n%s", got)
	}
	// Unlabelled points are named by their x.
	u := Chart{Series: []Series{{Name: "s", Points: []Point{{X: 0.5, Y: 1}, {X: 1e-7, Y: 2e9}}}}}
	if got := Mermaid(u); !strings.Contains(got, `x-axis ["0.0000001", "0.5"]`) || !strings.Contains(got, "line [2000000000, 1]") {
		t.Errorf("unlabelled:\n%s", got)
	}
}

func TestMermaidHostileNamesStayInside(t *testing.T) {
	t.Parallel()
	for _, name := range hostile {
		c := Chart{Title: name, XLabel: name, YLabel: name, Series: []Series{
			{Name: name, Points: []Point{{X: 1, Y: 1, Label: name}, {X: 2, Y: 2, Label: name + "2"}}},
			{Name: "candidate", Points: []Point{{X: 1, Y: 1.5}, {X: 2, Y: 2.5}}},
		}}
		out := Mermaid(c)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		// The fence opens on the first line and closes once, on a line of
		// its own; nothing after it but the blank line and the legend.
		if lines[0] != "```mermaid" {
			t.Fatalf("%q: first line %q", name, lines[0])
		}
		closing := -1
		for i, l := range lines[1:] {
			if strings.Contains(l, "`") && i+1 < len(lines)-1 {
				if l != "```" || closing >= 0 {
					t.Errorf("%q: backtick inside the block: %q", name, l)
				}
				closing = i + 1
			}
		}
		if closing < 0 || closing != len(lines)-3 || lines[closing+1] != "" {
			t.Fatalf("%q: fence not closed where it should be:\n%s", name, out)
		}
		allowed := []string{"%%{init: ", "xychart-beta", "    title \"", "    x-axis ", "    y-axis ", "    line ["}
		for _, l := range lines[1:closing] {
			if !slices.ContainsFunc(allowed, func(p string) bool { return strings.HasPrefix(l, p) }) {
				t.Errorf("%q: unexpected line in the block: %q", name, l)
			}
			if strings.HasPrefix(l, "%%") {
				continue
			}
			if l := strings.Replace(l, " --> ", " ", 1); strings.Count(l, `"`)%2 != 0 || strings.ContainsAny(l, "<>;#&{}`") || strings.Contains(l, "%%") {
				t.Errorf("%q: unsafe line %q", name, l)
			}
			if strings.HasPrefix(l, "    x-axis ") && strings.Count(l, "[") != 1 {
				t.Errorf("%q: x axis with more than one list: %q", name, l)
			}
			if strings.HasPrefix(l, "    line [") && strings.Count(l, "[") != 1 {
				t.Errorf("%q: line with more than one list: %q", name, l)
			}
		}
		if n := strings.Count(out, "    line ["); n != 2 {
			t.Errorf("%q: %d lines drawn, want 2:\n%s", name, n, out)
		}
		legend := lines[len(lines)-1]
		if !strings.HasPrefix(legend, "Lines: `") || strings.Count(legend, "`")%2 != 0 || strings.ContainsAny(legend, "<>\"\r") {
			t.Errorf("%q: legend line %q", name, legend)
		}
		// Between the code spans, only fixed words.
		parts := strings.Split(legend, "`")
		for i := 0; i < len(parts); i += 2 {
			if strings.Trim(parts[i], "Lines:,. blueorang") != "" {
				t.Errorf("%q: text outside the code spans: %q", name, parts[i])
			}
		}
	}
}

// TestNiceTicksBounded: means a few units apart at 1e17 (a step below the
// values' precision, where counting ticks by k++ never ends) and ranges
// that are not numbers give a few ticks, not a loop.
func TestNiceTicksBounded(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]float64{{1e17, 1e17 + 16}, {1e300, 1.0000000000001e300}, {-1e308, 1e308}, {5, 5}, {0, 0}} {
		ticks, _ := niceTicks(c[0], c[1], 6)
		if len(ticks) == 0 || len(ticks) > 28 {
			t.Errorf("niceTicks(%g, %g): %d ticks", c[0], c[1], len(ticks))
		}
	}
	var b strings.Builder
	ch := Chart{Title: "big", Series: []Series{{Name: "s", Points: []Point{{X: 1, Y: 1e17, Lo: 1e17, Hi: 1e17}, {X: 2, Y: 1e17 + 16, Lo: 1e17 + 16, Hi: 1e17 + 16}}}}}
	if err := SVG(&b, ch); err != nil {
		t.Fatal(err)
	}
	if err := TimelineSVG(&b, Timeline{Series: ch.Series}); err != nil {
		t.Fatal(err)
	}
}
