// Package charts draws line charts of measured means with their intervals:
// as a self-contained SVG file (SVG), and as a mermaid xychart block that
// GitHub renders in markdown (Mermaid). A Chart is a plain value that the
// report builds; each renderer is a function over it, so one chart model
// serves both media and the layout stays apart from the data. It is pure:
// no I/O but the writer SVG is given, nothing but the standard library,
// internal/textsafe and internal/numtext, which prints the y axis's ticks
// and the tooltips in the chart's unit (Chart.YUnit) as the reports print
// its values.
//
// Every text of a Chart (title, axis labels, series names, tick labels) may
// come from a pull request — a class name is whatever the scenario says —
// so each renderer neutralises it for its medium: XML-escaped in SVG,
// reduced to a safe set of characters in mermaid. Points that are not
// finite numbers (or not positive on a logarithmic axis) are left out
// rather than drawn wrong.
package charts
