package charts

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/benchgate/benchgate/internal/numtext"
)

// The SVG's size, in pixels.
const (
	Width  = 720
	Height = 360
)

// palette holds the series' colours, in order: blue and vermillion first
// (baseline and candidate), from the Okabe–Ito set that colour-blind
// readers can tell apart. In grey the dash patterns and marker shapes
// still tell the series apart.
var palette = []struct{ hex, name string }{
	{"#0072B2", "blue"},
	{"#D55E00", "orange"},
	{"#009E73", "green"},
	{"#CC79A7", "pink"},
	{"#E69F00", "yellow"},
	{"#56B4E9", "light blue"},
}

// dashes are the series' line patterns, in order: solid first.
var dashes = []string{"", "7 4", "2 3", "9 3 2 3"}

// markers are the series' marker shapes, in order.
var markers = []string{"circle", "square", "triangle", "diamond"}

func colour(i int) string { return palette[i%len(palette)].hex }
func dash(i int) string   { return dashes[i%len(dashes)] }
func marker(i int) string { return markers[i%len(markers)] }

// esc is caller text cleaned to one line of at most limit runes and
// escaped for XML text and attribute values alike.
func esc(s string, limit int) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(cleanText(s, limit))) // a Builder does not fail
	return b.String()
}

// textWidth estimates the width of text at font size 12 in a sans-serif
// font: enough to lay out a legend and leave room for tick labels.
func textWidth(s string, size float64) float64 {
	return float64(utf8.RuneCountInString(s)) * size * 0.6
}

// f2 prints a coordinate.
func f2(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		s = "0"
	}
	return s
}

// axis maps data values to pixels along one axis.
type axis struct {
	log        bool
	lo, hi     float64 // the domain, in log10 units when log
	from, to   float64 // pixels
	ticks      []float64
	tickLabels []string // "" for a tick without a label
}

func (a axis) pos(v float64) float64 {
	if a.log {
		v = math.Log10(v)
	}
	if a.hi == a.lo {
		return (a.from + a.to) / 2
	}
	return a.from + (v-a.lo)/(a.hi-a.lo)*(a.to-a.from)
}

// SVG writes c as a self-contained SVG document of Width × Height pixels:
// the title, a legend, axes with ticks at nice values (or at the points'
// labels), and per series a line through its points, a marker on each and
// a bar over each interval. It has no script, style sheet, external font
// or link. Each marker carries its point as data: class="point",
// data-series, data-x, data-y, data-lo, data-hi and data-label, the
// numbers exact, so a test or a reader's script can check what is drawn.
func SVG(w io.Writer, c Chart) error {
	ss := prepare(c)
	var all []Point
	labelled := false
	for _, s := range ss {
		all = append(all, s.points...)
		for _, p := range s.points {
			labelled = labelled || strings.TrimSpace(p.Label) != ""
		}
	}

	// The y axis: nice ticks over every mean and interval. The frame:
	// room on the left for the widest tick label, on the top for the
	// title and the legend's rows.
	yt, ylabels, left := yTicks(all, 6, c.YUnit)
	right := float64(Width - 24)
	legend := legendLayout(ss, left, right)
	top := 44.0 + 18*float64(legend.rows)
	bottom := float64(Height - 56)

	ya := axis{lo: yt[0], hi: yt[len(yt)-1], from: bottom, to: top, ticks: yt, tickLabels: ylabels}
	xa := xAxis(c.LogX, labelled, ss, all, left, right)

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" font-family="sans-serif" font-size="12">`+"\n",
		Width, Height, Width, Height)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(c.Title, titleRunes))
	fmt.Fprintf(&b, `<rect class="background" width="%d" height="%d" fill="#ffffff"/>`+"\n", Width, Height)
	fmt.Fprintf(&b, `<text class="title" x="%d" y="22" text-anchor="middle" font-size="15" font-weight="bold" fill="#111111">%s</text>`+"\n",
		Width/2, esc(c.Title, titleRunes))

	// Grid and axes.
	b.WriteString(`<g class="grid" stroke="#e4e4e4" stroke-width="1">` + "\n")
	for _, v := range ya.ticks {
		y := ya.pos(v)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", f2(left), f2(y), f2(right), f2(y))
	}
	b.WriteString("</g>\n")
	b.WriteString(`<g class="axes" stroke="#444444" stroke-width="1">` + "\n")
	fmt.Fprintf(&b, `<line class="x-axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", f2(left), f2(bottom), f2(right), f2(bottom))
	fmt.Fprintf(&b, `<line class="y-axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", f2(left), f2(top), f2(left), f2(bottom))
	for _, v := range ya.ticks {
		y := ya.pos(v)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", f2(left-5), f2(y), f2(left), f2(y))
	}
	for _, v := range xa.ticks {
		x := xa.pos(v)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", f2(x), f2(bottom), f2(x), f2(bottom+5))
	}
	b.WriteString("</g>\n")
	b.WriteString(`<g class="y-ticks" font-size="11" fill="#333333" text-anchor="end">` + "\n")
	for i, v := range ya.ticks {
		fmt.Fprintf(&b, `<text x="%s" y="%s" dominant-baseline="middle" data-value="%s">%s</text>`+"\n",
			f2(left-8), f2(ya.pos(v)), number(v), esc(ya.tickLabels[i], tickRunes))
	}
	b.WriteString("</g>\n")
	b.WriteString(`<g class="x-ticks" font-size="11" fill="#333333" text-anchor="middle">` + "\n")
	for i, v := range xa.ticks {
		if xa.tickLabels[i] == "" {
			continue
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" data-value="%s">%s</text>`+"\n",
			f2(xa.pos(v)), f2(bottom+18), number(v), esc(xa.tickLabels[i], tickRunes))
	}
	b.WriteString("</g>\n")
	if c.XLabel != "" {
		fmt.Fprintf(&b, `<text class="x-label" x="%s" y="%s" text-anchor="middle" fill="#222222">%s</text>`+"\n",
			f2((left+right)/2), f2(bottom+42), esc(c.XLabel, labelRunes))
	}
	if c.YLabel != "" {
		// Written along the plot's height, it is cut to fit there.
		cy := (top + bottom) / 2
		fit := min(labelRunes, int((bottom-top)/textWidth("x", 12)))
		fmt.Fprintf(&b, `<text class="y-label" x="16" y="%s" text-anchor="middle" fill="#222222" transform="rotate(-90 16 %s)">%s</text>`+"\n",
			f2(cy), f2(cy), esc(c.YLabel, fit))
	}

	legend.write(&b, ss)

	if len(all) == 0 {
		fmt.Fprintf(&b, `<text class="no-data" x="%s" y="%s" text-anchor="middle" fill="#666666">no data</text>`+"\n",
			f2((left+right)/2), f2((top+bottom)/2))
	}

	// The series: interval bars under the line, markers on top. Series
	// sharing an x are set a few pixels apart so that every interval
	// shows; the data attributes keep the exact values.
	n := float64(len(ss))
	for k, s := range ss {
		off := 0.0
		if n > 1 {
			off = (float64(k) - (n-1)/2) * min(4, 16/n)
		}
		name := esc(s.name, nameRunes)
		col := colour(s.index)
		fmt.Fprintf(&b, `<g class="series" data-series="%s">`+"\n", name)
		if len(s.points) > 1 {
			var d strings.Builder
			for i, p := range s.points {
				cmd := "L"
				if i == 0 {
					cmd = "M"
				}
				fmt.Fprintf(&d, "%s%s %s ", cmd, f2(xa.pos(p.X)+off), f2(ya.pos(p.Y)))
			}
			fmt.Fprintf(&b, `<path class="line" d="%s" fill="none" stroke="%s" stroke-width="2"`, strings.TrimSpace(d.String()), col)
			if ds := dash(s.index); ds != "" {
				fmt.Fprintf(&b, ` stroke-dasharray="%s"`, ds)
			}
			b.WriteString("/>\n")
		}
		for _, p := range s.points {
			if p.Hi <= p.Lo {
				continue
			}
			x, ylo, yhi := xa.pos(p.X)+off, ya.pos(p.Lo), ya.pos(p.Hi)
			fmt.Fprintf(&b, `<path class="interval" d="M%s %s V%s M%s %s H%s M%s %s H%s" stroke="%s" stroke-width="1.5" fill="none"/>`+"\n",
				f2(x), f2(ylo), f2(yhi), f2(x-4), f2(ylo), f2(x+4), f2(x-4), f2(yhi), f2(x+4), col)
		}
		for _, p := range s.points {
			x, y := xa.pos(p.X)+off, ya.pos(p.Y)
			attrs := fmt.Sprintf(`class="point" data-series="%s" data-x="%s" data-y="%s" data-lo="%s" data-hi="%s" data-label="%s" fill="%s" stroke="#ffffff" stroke-width="1"`,
				name, number(p.X), number(p.Y), number(p.Lo), number(p.Hi), esc(p.Label, tickRunes), col)
			sc := numtext.ScaleOf(c.YUnit, p.Y, p.Lo, p.Hi)
			tip := name + ", " + pointName(p) + ": " + sc.Format(p.Y)
			if p.Hi > p.Lo {
				tip += " (" + sc.Format(p.Lo) + " – " + sc.Format(p.Hi) + ")"
			}
			b.WriteString(markerElement(marker(s.index), x, y, 4.5, attrs, tip))
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// pointName is a point's x as a tooltip names it, escaped.
func pointName(p Point) string {
	if strings.TrimSpace(p.Label) != "" {
		return esc(p.Label, tickRunes)
	}
	return plainNumber(p.X)
}

// markerElement draws one marker of shape centred on (x, y) with radius r,
// carrying attrs and, unless tip is "", a tooltip (both escaped already).
func markerElement(shape string, x, y, r float64, attrs, tip string) string {
	var tag, geom string
	switch shape {
	case "square":
		s := r * 0.9
		tag, geom = "rect", fmt.Sprintf(`x="%s" y="%s" width="%s" height="%s"`, f2(x-s), f2(y-s), f2(2*s), f2(2*s))
	case "triangle":
		tag, geom = "path", fmt.Sprintf(`d="M%s %s L%s %s L%s %s Z"`, f2(x), f2(y-r*1.1), f2(x+r), f2(y+r*0.8), f2(x-r), f2(y+r*0.8))
	case "diamond":
		tag, geom = "path", fmt.Sprintf(`d="M%s %s L%s %s L%s %s L%s %s Z"`, f2(x), f2(y-r*1.2), f2(x+r), f2(y), f2(x), f2(y+r*1.2), f2(x-r), f2(y))
	default:
		tag, geom = "circle", fmt.Sprintf(`cx="%s" cy="%s" r="%s"`, f2(x), f2(y), f2(r))
	}
	if tip == "" {
		return "<" + tag + " " + geom + " " + attrs + "/>"
	}
	return "<" + tag + " " + geom + " " + attrs + "><title>" + tip + "</title></" + tag + ">\n"
}

// xAxis lays out the x axis. With labelled points the ticks are the
// points' x values, named by their labels (thinned out when they would
// overlap); otherwise nice numbers, or powers of ten on a log axis.
func xAxis(logX, labelled bool, ss []series, all []Point, left, right float64) axis {
	a := axis{log: logX, from: left, to: right}
	tr := func(v float64) float64 {
		if logX {
			return math.Log10(v)
		}
		return v
	}
	if len(all) == 0 {
		a.lo, a.hi = 0, 1 // no ticks: nothing to place
		return a
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range all {
		lo, hi = min(lo, p.X), max(hi, p.X)
	}
	pad := func(l, h float64) (float64, float64) {
		if h == l {
			d := 1.0
			if !logX && l != 0 {
				d = math.Abs(l) * 0.5
			} else if logX {
				d = 0.5
			}
			return l - d, h + d
		}
		d := (h - l) * 0.05
		return l - d, h + d
	}
	switch {
	case labelled:
		a.lo, a.hi = pad(tr(lo), tr(hi))
		names := map[float64]string{}
		var xs []float64
		for _, s := range ss {
			for _, p := range s.points {
				l, seen := names[p.X]
				if !seen {
					xs = append(xs, p.X)
				}
				if l == "" {
					names[p.X] = strings.TrimSpace(p.Label)
				}
			}
		}
		slices.Sort(xs)
		widest := 0.0
		for _, x := range xs {
			if names[x] == "" {
				names[x] = plainNumber(x)
			}
			widest = max(widest, textWidth(cleanText(names[x], tickRunes), 11))
		}
		fit := max(1, int((right-left)/(widest+10)))
		every := (len(xs) + fit - 1) / fit
		for i, x := range xs {
			a.ticks = append(a.ticks, x)
			if i%every == 0 {
				a.tickLabels = append(a.tickLabels, names[x])
			} else {
				a.tickLabels = append(a.tickLabels, "")
			}
		}
	case logX:
		a.lo, a.hi = pad(tr(lo), tr(hi))
		a.ticks = logTicks(math.Pow(10, a.lo), math.Pow(10, a.hi))
		// Ticks a factor apart: each in the prefix that suits it
		// ("1", "10", "100", "1000", "10k"), as short as it is.
		for _, v := range a.ticks {
			ax := numtext.AxisOf("", v, v)
			a.tickLabels = append(a.tickLabels, ax.Labels([]float64{v / ax.Per()}, 0)[0])
		}
	default:
		a.ticks, a.tickLabels = axisTicks(lo, hi, 8, "")
		a.lo, a.hi = a.ticks[0], a.ticks[len(a.ticks)-1]
	}
	return a
}

// legendBox is the legend's layout: one entry per series, wrapped into
// rows under the title.
type legendBox struct {
	rows int
	at   [][2]float64 // each series' entry's left end and baseline
}

func legendLayout(ss []series, left, right float64) legendBox {
	var l legendBox
	if len(ss) == 0 {
		return l
	}
	l.rows = 1
	x := left
	for _, s := range ss {
		w := 34 + textWidth(cleanText(s.name, nameRunes), 12) + 18
		if x > left && x+w > right {
			l.rows++
			x = left
		}
		l.at = append(l.at, [2]float64{x, 24 + 18*float64(l.rows)})
		x += w
	}
	return l
}

func (l legendBox) write(b *bytes.Buffer, ss []series) {
	if len(ss) == 0 {
		return
	}
	b.WriteString(`<g class="legend">` + "\n")
	for k, s := range ss {
		x, y := l.at[k][0], l.at[k][1]
		col := colour(s.index)
		fmt.Fprintf(b, `<g class="legend-entry" data-series="%s">`, esc(s.name, nameRunes))
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"`, f2(x), f2(y-4), f2(x+28), f2(y-4), col)
		if ds := dash(s.index); ds != "" {
			fmt.Fprintf(b, ` stroke-dasharray="%s"`, ds)
		}
		b.WriteString("/>")
		b.WriteString(legendMarker(marker(s.index), x+14, y-4, 4, col))
		fmt.Fprintf(b, `<text x="%s" y="%s" fill="#222222">%s</text></g>`+"\n", f2(x+34), f2(y), esc(s.name, nameRunes))
	}
	b.WriteString("</g>\n")
}

// legendMarker is a series' marker in the legend, without data.
func legendMarker(shape string, x, y, r float64, col string) string {
	return markerElement(shape, x, y, r, fmt.Sprintf(`fill="%s" stroke="#ffffff" stroke-width="1"`, col), "")
}

// yTicks are the y axis's nice ticks over every mean and interval of all
// (about n of them), values of unit, their labels, and the frame's left
// edge: room for the widest label. Every chart of this package lays its y
// axis out so.
func yTicks(all []Point, n int, unit string) (ticks []float64, labels []string, left float64) {
	ylo, yhi := 0.0, 1.0
	if len(all) > 0 {
		ylo, yhi = math.Inf(1), math.Inf(-1)
		for _, p := range all {
			ylo, yhi = min(ylo, p.Lo), max(yhi, p.Hi)
		}
	}
	ticks, labels = axisTicks(ylo, yhi, n, unit)
	widest := 0.0
	for _, l := range labels {
		widest = max(widest, textWidth(l, 11))
	}
	return ticks, labels, max(56, 30+widest+8)
}
