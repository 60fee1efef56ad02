package doctor

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fatih/color"
)

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

// visible shows control characters and invalid UTF-8 as escapes: a
// process name or an engine's message must not drive the terminal.
func visible(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
