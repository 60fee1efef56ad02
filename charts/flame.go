package charts

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"github.com/benchgate/benchgate/internal/numtext"
)

// Flame is a differential flame graph of two profiles of one cell: the
// call tree, the root at the bottom, each frame as wide as the
// candidate's CPU on that call path, coloured by how its own CPU (not its
// callees') changed: red grew, blue shrank, the stronger the more, grey
// within Floor. It reads without script: every frame's figures are in its
// tooltip (an SVG title) and the wide ones are labelled.
type Flame struct {
	Title string
	// Unit is the values' unit ("ns", per request or op).
	Unit string
	Root *FlameNode
	// Floor is the least change of a frame's own CPU that is coloured
	// (the diff's noise floor); smaller changes are grey.
	Floor float64
	// Width in pixels; 0 for FlameWidth.
	Width int
}

// FlameNode is a function on one call path, with its cumulative CPU on
// each side.
type FlameNode struct {
	Name       string
	Base, Cand float64
	Children   []*FlameNode
}

// Flame graph layout, and the bound on what one graph draws.
const (
	FlameWidth     = 1200
	flameRow       = 17
	flameTop       = 44
	flameMinPixels = 0.5
	// FlameMaxFrames is the most frames one graph draws; the narrowest
	// are left out beyond it.
	FlameMaxFrames = 4000
)

// self is a node's own CPU on each side: its cumulative less its
// children's.
func (n *FlameNode) self() (base, cand float64) {
	base, cand = n.Base, n.Cand
	for _, c := range n.Children {
		base -= c.Base
		cand -= c.Cand
	}
	return max(base, 0), max(cand, 0)
}

// SVG writes the graph as a self-contained SVG document.
func (f Flame) SVG(w io.Writer) error {
	width := float64(f.Width)
	if width <= 0 {
		width = FlameWidth
	}
	if f.Root == nil || !(f.Root.Cand > 0) {
		return fmt.Errorf("flame graph %q: the candidate's profile holds no CPU", cleanText(f.Title, 80))
	}
	scale := (width - 20) / f.Root.Cand
	// The strongest own change sets the colours' scale.
	var maxDelta float64
	var depth int
	frames := 0
	var walk func(n *FlameNode, d int)
	walk = func(n *FlameNode, d int) {
		if n.Cand*scale < flameMinPixels || frames >= FlameMaxFrames {
			return
		}
		frames++
		depth = max(depth, d)
		b, c := n.self()
		maxDelta = max(maxDelta, math.Abs(c-b))
		for _, ch := range n.Children {
			walk(ch, d+1)
		}
	}
	walk(f.Root, 0)
	height := float64(flameTop + (depth+1)*flameRow + 10)

	var buf bytes.Buffer
	fmt.Fprintf(&buf, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="sans-serif" font-size="11" role="img">`+"\n",
		f2(width), f2(height), f2(width), f2(height))
	fmt.Fprintf(&buf, "<title>%s</title>\n", esc(f.Title, 200))
	buf.WriteString(`<rect width="100%" height="100%" fill="#ffffff"/>` + "\n")
	fmt.Fprintf(&buf, `<text x="10" y="18" font-size="14">%s</text>`+"\n", esc(f.Title, 160))
	fmt.Fprintf(&buf, `<text x="10" y="34" fill="#555555">width: the candidate's CPU on the path (%s a unit in all); colour: the frame's own CPU, red grew, blue shrank (grey: within the noise floor); hover a frame for its figures</text>`+"\n",
		esc(numtext.Value(f.Root.Cand, f.Unit), 40))
	frames = 0
	var draw func(n *FlameNode, x float64, d int)
	draw = func(n *FlameNode, x float64, d int) {
		wpx := n.Cand * scale
		if wpx < flameMinPixels || frames >= FlameMaxFrames {
			return
		}
		frames++
		y := height - 10 - float64(d+1)*flameRow
		b, c := n.self()
		fmt.Fprintf(&buf, `<g><title>%s</title><rect x="%s" y="%s" width="%s" height="%d" fill="%s" stroke="#ffffff" stroke-width="0.5"/>`,
			esc(flameTip(n, b, c, f.Unit), 400), f2(x), f2(y), f2(wpx), flameRow-1, flameColour(c-b, maxDelta, f.Floor))
		if label := fitLabel(n.Name, wpx); label != "" {
			fmt.Fprintf(&buf, `<text x="%s" y="%s">%s</text>`, f2(x+3), f2(y+12), esc(label, 200))
		}
		buf.WriteString("</g>\n")
		cx := x
		for _, ch := range n.Children {
			draw(ch, cx, d+1)
			cx += ch.Cand * scale
		}
	}
	draw(f.Root, 10, 0)
	buf.WriteString("</svg>\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// flameTip is a frame's tooltip: its name, cumulative and own CPU on each
// side and the change.
func flameTip(n *FlameNode, selfBase, selfCand float64, unit string) string {
	v := func(x float64) string { return numtext.Value(x, unit) }
	return fmt.Sprintf("%s — total: baseline %s, candidate %s (%s); own: baseline %s, candidate %s (%s)",
		cleanText(n.Name, 300), v(n.Base), v(n.Cand), change(n.Base, n.Cand), v(selfBase), v(selfCand), change(selfBase, selfCand))
}

func change(b, c float64) string {
	switch {
	case b == 0 && c == 0:
		return "none"
	case b == 0:
		return "new"
	}
	return numtext.Percent(c/b - 1)
}

// flameColour is red for growth, blue for a fall, its strength the share
// of the strongest change; grey within floor.
func flameColour(delta, maxDelta, floor float64) string {
	if maxDelta == 0 || math.Abs(delta) <= floor {
		return "#d9d9d9"
	}
	s := math.Min(math.Abs(delta)/maxDelta, 1)
	fade := int(math.Round(220 - 190*s)) // 220 pale … 30 strong
	if delta > 0 {
		return fmt.Sprintf("#%02x%02x%02x", 230, fade, fade)
	}
	return fmt.Sprintf("#%02x%02x%02x", fade, fade, 230)
}

// fitLabel is as much of name as fits in w pixels at 11 px, "" for
// nothing useful.
func fitLabel(name string, w float64) string {
	name = cleanText(name, 300)
	fit := int((w - 6) / 6.6)
	n := utf8.RuneCountInString(name)
	switch {
	case fit < 3:
		return ""
	case n <= fit:
		return name
	}
	r := []rune(name)
	return string(r[:fit-2]) + ".."
}
