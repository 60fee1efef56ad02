package report

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/benchgate/benchgate/gate"
	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
)

// TerminalOptions shape the terminal report.
type TerminalOptions struct {
	// Color marks verdicts with ANSI colours. Leave it false for anything
	// that is not an interactive terminal; ColorFor decides for a file.
	Color bool
}

// ColorFor reports whether output to f should be coloured: only when f is a
// terminal and the user has not opted out with NO_COLOR (https://no-color.org)
// or TERM=dumb.
func ColorFor(f *os.File) bool {
	if f == nil {
		return false
	}
	return colorFor(f.Fd(), os.Getenv)
}

func colorFor(fd uintptr, getenv func(string) string) bool {
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}

// Terminal writes a compact report: the outcome, one aligned table per
// variant and the failures. Untrusted names are shown with control
// characters escaped, so a class name cannot move the cursor or recolour the
// terminal; with opt.Color false the output holds no escape sequence at all.
func Terminal(w io.Writer, in Input, opt TerminalOptions) error {
	m := newModel(in)
	paint := newPalette(opt.Color)
	var b strings.Builder
	r := m.in.Results

	name := r.Scenario.Name
	if name == "" {
		name = "(unnamed scenario)"
	}
	outcome := m.outcomeText(false)
	fmt.Fprintf(&b, "benchgate: %s — %s\n", cleanTerminal(name), paint.outcome(m.in.Comparison.Outcome, outcome))
	fmt.Fprintf(&b, "baseline%s vs candidate%s · %s × %s · %s intervals, tie within %s\n",
		termCommit(r.Env.Baseline.Commit), termCommit(r.Env.Candidate.Commit),
		plural(len(m.in.Comparison.Cells), "cell", "cells"), plural(m.in.Rounds, "round", "rounds"),
		fraction(m.in.Comparison.Settings.Confidence), fraction(m.in.Comparison.Settings.TieWithin))
	if s := m.statusText(false); s != "" {
		fmt.Fprintf(&b, "%s\n", paint.warn.Sprint(s))
	}

	for _, t := range m.tables {
		b.WriteString("\n")
		switch {
		case t.variant != "":
			fmt.Fprintf(&b, "%s\n", cleanTerminal(t.variant))
		case len(m.tables) > 1:
			b.WriteString("(no variant)\n")
		}
		// The verdict is the last column so its colour codes, which
		// tabwriter would count as width, cannot misalign anything.
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		u := t.unit.name
		head := []string{"class", "c", "baseline rps", "baseline p95 " + u, "candidate rps", "candidate p95 " + u}
		if t.hasErrors {
			head = append(head, "baseline err", "candidate err")
		}
		head = append(head, "Δ rps")
		// Columns align right, for the numbers; names read better on the
		// left, so they are padded to one width first.
		width := utf8.RuneCountInString("class")
		for _, r := range t.rows {
			width = max(width, utf8.RuneCountInString(cleanTerminal(r.key.Class)))
		}
		pad := func(s string) string { return s + strings.Repeat(" ", width-utf8.RuneCountInString(s)) }
		head[0] = pad(head[0])
		fmt.Fprintf(tw, "%s\t  verdict\n", strings.Join(head, "\t"))
		for _, r := range t.rows {
			cells := []string{pad(cleanTerminal(r.key.Class)), strconv.Itoa(r.key.Concurrency), r.baseRPS, r.baseP95, r.candRPS, r.candP95}
			if t.hasErrors {
				cells = append(cells, r.baseErr, r.candErr)
			}
			cells = append(cells, r.delta)
			fmt.Fprintf(tw, "%s\t  %s\n", strings.Join(cells, "\t"), paint.verdict(r, verdictText(r, false)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	if len(m.failures) > 0 {
		b.WriteString("\nfailures:\n")
		for _, it := range m.failures {
			fmt.Fprintf(&b, "  %s\n", failureText(it, false))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func termCommit(c string) string {
	if c == "" {
		return ""
	}
	return " " + cleanTerminal(shortCommit(c))
}

// palette holds colours fixed on or off, whatever fatih/color guessed from
// the process's own stdout: the writer may be anything.
type palette struct {
	bad, good, warn *color.Color
}

func newPalette(on bool) palette {
	p := palette{
		bad:  color.New(color.FgRed, color.Bold),
		good: color.New(color.FgGreen),
		warn: color.New(color.FgYellow),
	}
	for _, c := range []*color.Color{p.bad, p.good, p.warn} {
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}

func (p palette) verdict(r row, s string) string {
	switch {
	case r.verdict == gate.Regression || r.errorFailure:
		return p.bad.Sprint(s)
	case r.verdict == gate.Improvement:
		return p.good.Sprint(s)
	case r.verdict == gate.Inconclusive:
		return p.warn.Sprint(s)
	}
	return s
}

func (p palette) outcome(o gate.Outcome, s string) string {
	switch o {
	case gate.Fail:
		return p.bad.Sprint(s)
	case gate.Pass:
		return p.good.Sprint(s)
	}
	return p.warn.Sprint(s)
}
