package charts

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Sparkline is a word-sized trend for a table cell: a line through a
// series' values, oldest first, on a scale of their own (no axes), the
// newest value dotted and one point marked. Label is its accessible name,
// which should say what the line shows in words (the table around it
// carries the numbers).
type Sparkline struct {
	Values []float64
	// Mark is the index of the value to mark with a vertical line (the
	// first run after a change point), drawn as MarkKind says; -1 for
	// none.
	Mark     int
	MarkKind MarkKind
	Label    string
	// Width and Height in pixels; 0 for SparkWidth and SparkHeight.
	Width, Height int
	// MaxPoints caps the points drawn (0: SparkPoints): longer series are
	// cut into that many runs of consecutive values, each drawn at its
	// mean.
	MaxPoints int
}

// Sparkline defaults.
const (
	SparkWidth  = 120
	SparkHeight = 28
	SparkPoints = 60
)

// SparklineSVG writes s as one small inline SVG element: a polyline in
// whole pixels, so that a page of hundreds stays small. Values that are
// not finite are left out. It has no script, style or link, and its label
// is escaped.
func SparklineSVG(w io.Writer, s Sparkline) error {
	width, height := s.Width, s.Height
	if width <= 0 {
		width = SparkWidth
	}
	if height <= 0 {
		height = SparkHeight
	}
	maxPts := s.MaxPoints
	if maxPts <= 1 {
		maxPts = SparkPoints
	}
	vals, mark := bucket(s.Values, s.Mark, maxPts)

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg class="spark" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		width, height, width, height, esc(s.Label, 2*labelRunes))
	if len(vals) == 0 {
		fmt.Fprintf(&b, `<line x1="2" y1="%d" x2="%d" y2="%d" stroke="#bbbbbb" stroke-dasharray="2 3"/></svg>`, height/2, width-2, height/2)
		_, err := w.Write(b.Bytes())
		return err
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	const pad = 3
	xOf := func(i int) int {
		if len(vals) == 1 {
			return width / 2
		}
		return pad + int(math.Round(float64(i)*float64(width-2*pad)/float64(len(vals)-1)))
	}
	yOf := func(v float64) int {
		if hi == lo {
			return height / 2
		}
		return pad + int(math.Round((hi-v)/(hi-lo)*float64(height-2*pad)))
	}
	if mark >= 0 {
		col, ds, _ := s.MarkKind.style()
		// Between the run before the change and the first after it.
		x := float64(xOf(mark))
		if mark > 0 {
			x = float64(xOf(mark-1)+xOf(mark)) / 2
		}
		fmt.Fprintf(&b, `<line class="mark %s" x1="%s" y1="0" x2="%s" y2="%d" stroke="%s" stroke-width="1.5"`, s.MarkKind.class(), f1(x), f1(x), height, col)
		if ds != "" {
			fmt.Fprintf(&b, ` stroke-dasharray="%s"`, ds)
		}
		b.WriteString("/>")
	}
	var pts strings.Builder
	for i, v := range vals {
		if i > 0 {
			pts.WriteByte(' ')
		}
		pts.WriteString(strconv.Itoa(xOf(i)) + "," + strconv.Itoa(yOf(v)))
	}
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5" stroke-linejoin="round"/>`, pts.String(), colour(0))
	last := len(vals) - 1
	fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="2.5" fill="%s"/></svg>`, xOf(last), yOf(vals[last]), colour(0))
	_, err := w.Write(b.Bytes())
	return err
}

// bucket keeps the finite values, and when there are more than k cuts
// them into k runs of consecutive values, each replaced by its mean; mark
// (an index of values, or -1) becomes the index of its run.
func bucket(values []float64, mark, k int) ([]float64, int) {
	var vals []float64
	newMark := -1
	for i, v := range values {
		if !finite(v) {
			continue
		}
		if i == mark {
			newMark = len(vals)
		} else if mark >= 0 && i > mark && newMark < 0 {
			newMark = len(vals)
		}
		vals = append(vals, v)
	}
	n := len(vals)
	if n <= k {
		return vals, newMark
	}
	out := make([]float64, k)
	m := -1
	for j := range k {
		from, to := j*n/k, (j+1)*n/k
		var sum float64
		for _, v := range vals[from:to] {
			sum += v
		}
		out[j] = sum / float64(to-from)
		if newMark >= from && newMark < to {
			m = j
		}
	}
	return out, m
}
