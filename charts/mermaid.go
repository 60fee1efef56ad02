package charts

import (
	"slices"
	"strings"
	"unicode"
)

// Mermaid returns c as markdown that GitHub renders as a chart: a
// ```mermaid fenced xychart-beta block with the title, the x axis's
// categories (the points' labels, or their x), a y axis over nice values
// and one line per series, then a line of text that names the lines by
// colour, since an xychart has no legend. Mermaid draws neither intervals
// nor a numeric x scale: the categories are evenly spaced, and only x
// values every series has a point at are drawn (the text names the others).
//
// Caller text is reduced to letters, digits, spaces and a few harmless
// punctuation marks; quotes, brackets, backticks, "%%", '#', ';', '<', '>',
// '&' and every control character are replaced, so nothing can end a
// quoted string, the block or its fence, start a mermaid directive or
// comment, or reach markdown or HTML. The names in the text line are in
// code spans, with no backtick to end them.
//
// It returns "" when no x value has a point in every series that has any.
func Mermaid(c Chart) string {
	var ss []series
	for _, s := range prepare(c) {
		if len(s.points) > 0 {
			ss = append(ss, s)
		}
	}
	if len(ss) == 0 {
		return ""
	}
	// The categories: x values every series has a point at.
	has := map[float64]int{}
	labels := map[float64]string{}
	var xs []float64
	for _, s := range ss {
		seen := map[float64]bool{}
		for _, p := range s.points {
			if seen[p.X] {
				continue
			}
			seen[p.X] = true
			if has[p.X] == 0 {
				xs = append(xs, p.X)
			}
			has[p.X]++
			if labels[p.X] == "" {
				labels[p.X] = strings.TrimSpace(p.Label)
			}
		}
	}
	slices.Sort(xs)
	var shared, left []float64
	for _, x := range xs {
		if labels[x] == "" {
			labels[x] = plainNumber(x)
		}
		if has[x] == len(ss) {
			shared = append(shared, x)
		} else {
			left = append(left, x)
		}
	}
	if len(shared) == 0 {
		return ""
	}

	lo, hi := 0.0, 0.0
	values := make([][]string, len(ss))
	for k, s := range ss {
		for _, x := range shared {
			i := slices.IndexFunc(s.points, func(p Point) bool { return p.X == x })
			y := s.points[i].Y
			if k == 0 && len(values[0]) == 0 {
				lo, hi = y, y
			}
			lo, hi = min(lo, y), max(hi, y)
			values[k] = append(values[k], plainNumber(y))
		}
	}
	ticks, _ := niceTicks(lo, hi, 6)

	var b strings.Builder
	colours := make([]string, len(ss))
	for k, s := range ss {
		colours[k] = colour(s.index)
	}
	b.WriteString("```mermaid\n")
	// The palette is fixed text, so the colours the line below names are
	// the ones drawn whatever GitHub's theme.
	b.WriteString(`%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "` + strings.Join(colours, ", ") + `"}}}}%%` + "\n")
	b.WriteString("xychart-beta\n")
	if t := mermaidText(c.Title, titleRunes); t != "" {
		b.WriteString(`    title "` + t + `"` + "\n")
	}
	cats := make([]string, len(shared))
	for i, x := range shared {
		cats[i] = `"` + mermaidText(labels[x], tickRunes) + `"`
	}
	b.WriteString("    x-axis ")
	if l := mermaidText(c.XLabel, labelRunes); l != "" {
		b.WriteString(`"` + l + `" `)
	}
	b.WriteString("[" + strings.Join(cats, ", ") + "]\n")
	b.WriteString("    y-axis ")
	if l := mermaidText(c.YLabel, labelRunes); l != "" {
		b.WriteString(`"` + l + `" `)
	}
	b.WriteString(plainNumber(ticks[0]) + " --> " + plainNumber(ticks[len(ticks)-1]) + "\n")
	for _, v := range values {
		b.WriteString("    line [" + strings.Join(v, ", ") + "]\n")
	}
	b.WriteString("```\n\n")

	names := make([]string, len(ss))
	for k, s := range ss {
		names[k] = codeSpan(s.name, s.index) + " " + palette[s.index%len(palette)].name
	}
	b.WriteString("Lines: " + strings.Join(names, ", ") + ".")
	if len(left) > 0 {
		ls := make([]string, len(left))
		for i, x := range left {
			ls[i] = "`" + mermaidText(labels[x], tickRunes) + "`"
		}
		b.WriteString(" Not drawn, for want of a point on every line: " + strings.Join(ls, ", ") + ".")
	}
	b.WriteString("\n")
	return b.String()
}

// codeSpan shows a series' name in a markdown code span; a name with
// nothing left to show is "series N".
func codeSpan(name string, index int) string {
	t := mermaidText(name, nameRunes)
	if strings.TrimSpace(t) == "" {
		t = "series " + plainNumber(float64(index+1))
	}
	return "`" + t + "`"
}

// mermaidText is caller text fit for a quoted mermaid string and a markdown
// code span: one line of letters, digits, spaces and -_.,:=/+()'·—–…×±
// and a '%' not after another, quotes and backticks as ', brackets and
// braces as parentheses, anything else as _.
func mermaidText(s string, limit int) string {
	s = cleanText(s, limit)
	var b strings.Builder
	prev := rune(0)
	for _, r := range s {
		switch {
		case r == '%' && prev != '%':
			// One '%' is text ("95% interval"); two start a comment or
			// a directive.
			b.WriteRune(r)
		case r == '"' || r == '`':
			b.WriteByte('\'')
		case r == '[' || r == '{' || r == '<':
			b.WriteByte('(')
		case r == ']' || r == '}' || r == '>':
			b.WriteByte(')')
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == ' ' || strings.ContainsRune("-_.,:=/+()'·—–…×±", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		prev = r
	}
	return strings.TrimSpace(b.String())
}
