package doctor

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"

	"github.com/benchgate/benchgate/internal/textsafe"
)

// Formats are the renderings Write knows, the default first.
var Formats = []string{"terminal", "json"}

// Write writes r in format, one of Formats; colour, in the terminal form,
// only when asked.
func Write(w io.Writer, r *Report, format string, useColor bool) error {
	if format == "json" {
		return WriteJSON(w, r)
	}
	return WriteTerminal(w, r, useColor)
}

// WriteJSON writes the report as one indented JSON object:
//
//	{"root": "/", "scenario": "...", "profile": "...",
//	 "checks": [{"id", "title", "status", "found", "notes", "fix"}, ...],
//	 "summary": {"ok", "warn", "fail", "skip"}}
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// titleWidth is the width of the title column of the terminal form.
const titleWidth = 15

// WriteTerminal writes the report for a person: one line per check with
// its status, title and finding, then its notes and fixes indented, and a
// summary line. Colour only when asked.
func WriteTerminal(w io.Writer, r *Report, useColor bool) error {
	bw := bufio.NewWriter(w)
	paint := map[Status]*color.Color{
		OK:   color.New(color.FgGreen),
		Warn: color.New(color.FgYellow),
		Fail: color.New(color.FgRed, color.Bold),
		Skip: color.New(color.Faint),
	}
	for _, c := range paint {
		if useColor {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	head := "benchgate doctor: this machine for stable benchmarking"
	if r.Root != "/" {
		head += " (read under " + visible(r.Root) + ")"
	}
	fmt.Fprintln(bw, head)
	if r.Scenario != "" {
		s := "scenario " + visible(r.Scenario)
		if r.Profile != "" {
			s += ", profile " + visible(r.Profile)
		}
		fmt.Fprintln(bw, s)
	}
	fmt.Fprintln(bw)
	indent := strings.Repeat(" ", 6+titleWidth)
	for _, c := range r.Checks {
		status := fmt.Sprintf("%-5s", c.Status)
		fmt.Fprintf(bw, "%s %-*s %s\n", paint[c.Status].Sprint(status), titleWidth-1, c.Title, visible(c.Found))
		for _, n := range c.Notes {
			fmt.Fprintf(bw, "%s- %s\n", indent, visible(n))
		}
		for _, x := range c.Fix {
			fmt.Fprintf(bw, "%sfix: %s\n", indent, visible(x))
		}
	}
	s := r.Summary
	fmt.Fprintf(bw, "\n%d OK, %d WARN, %d FAIL, %d SKIP: ", s.OK, s.Warn, s.Fail, s.Skip)
	switch {
	case s.Fail > 0:
		fmt.Fprintln(bw, paint[Fail].Sprint("this machine cannot run the scenario as written (exit 1)"))
	case s.Warn > 0:
		fmt.Fprintln(bw, "benchmarks run here, with the noise the warnings name")
	default:
		fmt.Fprintln(bw, "ready for stable benchmarking")
	}
	return bw.Flush()
}

// visible shows a finding as one line by textsafe's rule: controls, invalid
// UTF-8, bidi and invisible characters as escapes, so a process name or an
// engine's message cannot drive the terminal, break the layout or reorder
// the text.
func visible(s string) string { return textsafe.Line(s) }
