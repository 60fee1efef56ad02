package charts

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Timeline is a trend over time: one line per series through its points'
// means, each point's interval drawn as a band around the line, with
// vertical marks at given x values (a history's change points, a change
// of baseline) and x ticks the caller names (months, say). X is in the
// caller's unit, typically days; it is the same model as Chart's series,
// drawn for many points rather than a few.
type Timeline struct {
	Title  string
	YLabel string
	// YUnit is the unit of the points' Y, as Chart's: the y axis's ticks
	// print in it.
	YUnit  string
	Series []Series
	// Ticks are the x axis' ticks; those outside the points' range are
	// left out, and labels are thinned out when they would overlap.
	Ticks []Tick
	Marks []Mark
}

// Tick is one labelled tick of a Timeline's x axis.
type Tick struct {
	X     float64
	Label string
}

// MarkKind says what a Timeline's mark stands for, and so how it is drawn:
// each kind has its own colour and its own line pattern, so the kinds tell
// apart in grey too.
type MarkKind int

// The kinds of mark.
const (
	// MarkNeutral: grey, dotted (a change of baseline commit).
	MarkNeutral MarkKind = iota
	// MarkWorse: black, solid and thicker (a change for the worse).
	MarkWorse
	// MarkBetter: bluish green, dashed (a change for the better).
	MarkBetter
)

func (k MarkKind) class() string {
	switch k {
	case MarkWorse:
		return "worse"
	case MarkBetter:
		return "better"
	}
	return "neutral"
}

func (k MarkKind) style() (col, dash, width string) {
	switch k {
	case MarkWorse:
		return "#111111", "", "2"
	case MarkBetter:
		return "#009E73", "6 3", "2"
	}
	return "#777777", "2 3", "1.5"
}

// Mark is a vertical line at X across a Timeline's plot, with a short
// Label above it ("−14% c36..c37") and a longer Text as its tooltip. Data
// are extra attributes for a reader's script or a test: each key is
// reduced to [a-z0-9-] and written as data-KEY, its value escaped.
type Mark struct {
	X     float64
	Kind  MarkKind
	Label string
	Text  string
	Data  [][2]string
}

// Timeline sizes, in pixels.
const (
	TimelineWidth  = 760
	TimelineHeight = 300
)

// timelineMarkers is how many markers a series of a timeline gets at most:
// every point up to this many, else this many evenly spaced, so that the
// shapes (not only colour and dash) tell the series apart without
// covering the line. A marker has no tooltip: the page's table holds
// every point.
const timelineMarkers = 16

// TimelineSVG writes t as a self-contained SVG document of TimelineWidth ×
// TimelineHeight pixels: title, legend, axes, and per series a band over
// the intervals, a line through the means and markers (each carrying its
// point as data, as SVG's do: class="point", data-series, data-x, data-y,
// data-lo, data-hi, data-label); the marks with their labels on top. It
// has no script, style sheet, external font or link, and every text is
// escaped, so it may be written inline into an HTML page. Coordinates are
// rounded to a tenth of a pixel: a year of nightly points stays small.
func TimelineSVG(w io.Writer, t Timeline) error {
	ss := prepare(Chart{Series: t.Series})
	var all []Point
	for _, s := range ss {
		all = append(all, s.points...)
	}
	yt, ylabels, left := yTicks(all, 5, t.YUnit)
	right := float64(TimelineWidth - 16)
	legend := legendLayout(ss, left, right)

	xa := axis{from: left, to: right, lo: 0, hi: 1}
	if len(all) > 0 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range all {
			lo, hi = min(lo, p.X), max(hi, p.X)
		}
		if hi == lo {
			lo, hi = lo-1, hi+1
		}
		pad := (hi - lo) * 0.02
		xa.lo, xa.hi = lo-pad, hi+pad
	}
	marks := slices.Clone(t.Marks)
	marks = slices.DeleteFunc(marks, func(m Mark) bool { return !finite(m.X) || m.X < xa.lo || m.X > xa.hi })
	slices.SortStableFunc(marks, func(a, b Mark) int { return cmpFloat(a.X, b.X) })
	rows := markRows(marks, xa)
	nrows := 0
	for _, r := range rows {
		nrows = max(nrows, r+1)
	}
	top := 44.0 + 18*float64(legend.rows) + 14*float64(nrows)
	bottom := float64(TimelineHeight - 40)
	ya := axis{lo: yt[0], hi: yt[len(yt)-1], from: bottom, to: top}

	var b bytes.Buffer
	title := esc(t.Title, titleRunes)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" font-family="sans-serif" font-size="12">`+"\n",
		TimelineWidth, TimelineHeight, TimelineWidth, TimelineHeight, title)
	fmt.Fprintf(&b, "<title>%s</title>\n", title)
	fmt.Fprintf(&b, `<rect class="background" width="%d" height="%d" fill="#ffffff"/>`+"\n", TimelineWidth, TimelineHeight)
	fmt.Fprintf(&b, `<text class="title" x="%s" y="22" font-size="14" font-weight="bold" fill="#111111">%s</text>`+"\n", f1(left), title)

	b.WriteString(`<g class="grid" stroke="#e4e4e4" stroke-width="1">`)
	for _, v := range yt {
		y := ya.pos(v)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(left), f1(y), f1(right), f1(y))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<g class="axes" stroke="#444444" stroke-width="1"><line class="x-axis" x1="%s" y1="%s" x2="%s" y2="%s"/><line class="y-axis" x1="%s" y1="%s" x2="%s" y2="%s"/></g>`+"\n",
		f1(left), f1(bottom), f1(right), f1(bottom), f1(left), f1(top), f1(left), f1(bottom))
	b.WriteString(`<g class="y-ticks" font-size="11" fill="#333333" text-anchor="end">`)
	for i, v := range yt {
		fmt.Fprintf(&b, `<text x="%s" y="%s" dominant-baseline="middle" data-value="%s">%s</text>`,
			f1(left-8), f1(ya.pos(v)), number(v), esc(ylabels[i], tickRunes))
	}
	b.WriteString("</g>\n")
	b.WriteString(`<g class="x-ticks" font-size="11" fill="#333333" text-anchor="middle">`)
	lastEnd := math.Inf(-1)
	for _, tk := range t.Ticks {
		if !finite(tk.X) || tk.X < xa.lo || tk.X > xa.hi {
			continue
		}
		x := xa.pos(tk.X)
		label := cleanText(tk.Label, tickRunes)
		half := textWidth(label, 11) / 2
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#444444"/>`, f1(x), f1(bottom), f1(x), f1(bottom+5))
		if x-half < lastEnd+6 || x+half > float64(TimelineWidth) || x-half < 0 {
			continue
		}
		lastEnd = x + half
		fmt.Fprintf(&b, `<text x="%s" y="%s" data-value="%s">%s</text>`, f1(x), f1(bottom+18), number(tk.X), esc(tk.Label, tickRunes))
	}
	b.WriteString("</g>\n")
	if t.YLabel != "" {
		cy := (top + bottom) / 2
		fit := min(labelRunes, int((bottom-top)/textWidth("x", 12)))
		fmt.Fprintf(&b, `<text class="y-label" x="16" y="%s" text-anchor="middle" fill="#222222" transform="rotate(-90 16 %s)">%s</text>`+"\n",
			f1(cy), f1(cy), esc(t.YLabel, max(fit, 4)))
	}
	legend.write(&b, ss)
	if len(all) == 0 {
		fmt.Fprintf(&b, `<text class="no-data" x="%s" y="%s" text-anchor="middle" fill="#666666">no data</text>`+"\n",
			f1((left+right)/2), f1((top+bottom)/2))
	}

	// Bands first, under every line; then lines and markers per series.
	// Paths are in whole pixels, relative after their first point: a
	// year of nights is a few kilobytes a series.
	for _, s := range ss {
		if len(s.points) < 2 {
			continue
		}
		var d pathBuilder
		for _, p := range s.points {
			d.to(xa.pos(p.X), ya.pos(p.Hi))
		}
		for i := len(s.points) - 1; i >= 0; i-- {
			p := s.points[i]
			d.to(xa.pos(p.X), ya.pos(p.Lo))
		}
		fmt.Fprintf(&b, `<path class="band" data-series="%s" d="%sz" fill="%s" fill-opacity="0.16" stroke="none"/>`+"\n",
			esc(s.name, nameRunes), d.String(), colour(s.index))
	}
	for _, s := range ss {
		name := esc(s.name, nameRunes)
		col := colour(s.index)
		fmt.Fprintf(&b, `<g class="series" data-series="%s">`+"\n", name)
		if len(s.points) > 1 {
			var d pathBuilder
			for _, p := range s.points {
				d.to(xa.pos(p.X), ya.pos(p.Y))
			}
			fmt.Fprintf(&b, `<path class="line" d="%s" fill="none" stroke="%s" stroke-width="1.5" stroke-linejoin="round"`, d.String(), col)
			if ds := dash(s.index); ds != "" {
				fmt.Fprintf(&b, ` stroke-dasharray="%s"`, ds)
			}
			b.WriteString("/>\n")
		}
		for _, i := range spread(len(s.points), timelineMarkers) {
			p := s.points[i]
			x, y := xa.pos(p.X), ya.pos(p.Y)
			attrs := fmt.Sprintf(`class="point" data-series="%s" data-x="%s" data-y="%s" data-lo="%s" data-hi="%s" data-label="%s" fill="%s" stroke="#ffffff" stroke-width="1"`,
				name, number(p.X), number(p.Y), number(p.Lo), number(p.Hi), esc(p.Label, tickRunes), col)
			b.WriteString(markerElement(marker(s.index), x, y, 3.5, attrs, ""))
		}
		b.WriteString("</g>\n")
	}

	for i, m := range marks {
		col, ds, sw := m.Kind.style()
		x := xa.pos(m.X)
		fmt.Fprintf(&b, `<g class="mark %s" data-x="%s"`, m.Kind.class(), number(m.X))
		for _, kv := range m.Data {
			if k := dataKey(kv[0]); k != "" {
				fmt.Fprintf(&b, ` data-%s="%s"`, k, esc(kv[1], labelRunes))
			}
		}
		b.WriteString(">")
		if m.Text != "" {
			fmt.Fprintf(&b, "<title>%s</title>", esc(m.Text, 2*labelRunes))
		}
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"`, f1(x), f1(top-2), f1(x), f1(bottom), col, sw)
		if ds != "" {
			fmt.Fprintf(&b, ` stroke-dasharray="%s"`, ds)
		}
		b.WriteString("/>")
		if rows[i] >= 0 && m.Label != "" {
			anchor, tx := "middle", x
			half := textWidth(cleanText(m.Label, tickRunes+8), 11) / 2
			switch {
			case x-half < left:
				anchor, tx = "start", x-4
			case x+half > right:
				anchor, tx = "end", x+4
			}
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="%s" fill="%s">%s</text>`,
				f1(tx), f1(top-8-14*float64(nrows-1-rows[i])), anchor, col, esc(m.Label, tickRunes+8))
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// markRows gives each mark's label a row above the plot, the first in
// which it does not overlap the label before it; -1 when three rows are
// not enough (the mark is drawn, its label left to its tooltip).
func markRows(marks []Mark, xa axis) []int {
	const maxRows = 3
	ends := []float64{}
	rows := make([]int, len(marks))
	for i, m := range marks {
		rows[i] = -1
		if m.Label == "" {
			continue
		}
		x := xa.pos(m.X)
		half := textWidth(cleanText(m.Label, tickRunes+8), 11) / 2
		for r := 0; r < maxRows; r++ {
			if r == len(ends) {
				ends = append(ends, math.Inf(-1))
			}
			if x-half > ends[r]+6 {
				ends[r] = x + half
				rows[i] = r
				break
			}
		}
	}
	return rows
}

// spread picks at most k indexes of n, evenly spaced, the first and the
// last included: all of them when n <= k.
func spread(n, k int) []int {
	if n <= k {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, 0, k)
	for j := range k {
		i := int(math.Round(float64(j) * float64(n-1) / float64(k-1)))
		if len(out) == 0 || out[len(out)-1] != i {
			out = append(out, i)
		}
	}
	return out
}

// dataKey reduces a data attribute's name to lower-case ASCII letters,
// digits and '-'.
func dataKey(k string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pathBuilder writes an SVG path through points in whole pixels: an
// absolute move to the first, then relative lines ("l") to the others.
type pathBuilder struct {
	b       strings.Builder
	x, y    int
	started bool
}

func (p *pathBuilder) to(fx, fy float64) {
	x, y := int(math.Round(fx)), int(math.Round(fy))
	if !p.started {
		p.b.WriteString("M" + strconv.Itoa(x) + " " + strconv.Itoa(y) + "l")
		p.started = true
		p.x, p.y = x, y
		return
	}
	dx, dy := x-p.x, y-p.y
	if p.b.Len() > 0 && !strings.HasSuffix(p.b.String(), "l") {
		p.b.WriteByte(' ')
	}
	p.b.WriteString(strconv.Itoa(dx))
	if dy >= 0 {
		p.b.WriteByte(' ')
	}
	p.b.WriteString(strconv.Itoa(dy))
	p.x, p.y = x, y
}

func (p *pathBuilder) String() string { return strings.TrimSuffix(p.b.String(), "l") }

// f1 prints a coordinate to a tenth of a pixel.
func f1(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	if s == "-0" {
		s = "0"
	}
	return s
}
