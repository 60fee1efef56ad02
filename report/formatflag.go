package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// formats is the one table of the media a document is rendered in: each
// name with its aliases, in the order a usage line lists them. ForFormat,
// Calibration and Drift read a format through canonical, and Formats,
// FormatUsage and the error for an unknown one are made from it.
var formats = []struct {
	name    string
	aliases []string
}{
	{"terminal", []string{"text"}},
	{"markdown", []string{"md"}},
	{"json", nil},
}

// Formats a caller may ask ForFormat, Calibration or Drift for, in the
// order a usage line lists them (aliases aside).
var Formats = func() []string {
	var names []string
	for _, f := range formats {
		names = append(names, f.name)
	}
	return names
}()

// FormatUsage is the usage of a -format flag over Formats.
var FormatUsage = "report on stdout in this `format`: " + orList(Formats)

// canonical is a format's name for name or one of its aliases; an error
// naming the formats for any other.
func canonical(name string) (string, error) {
	for _, f := range formats {
		if name == f.name || slices.Contains(f.aliases, name) {
			return f.name, nil
		}
	}
	return "", fmt.Errorf("report: unknown format %q (want %s)", name, orList(Formats))
}

// orList is "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// FormatFlag is a -format flag (a flag.Value): a renderer's name, checked as
// it is parsed, so that an unknown one is a usage error before anything
// runs.
type FormatFlag struct {
	Name  string
	check func(name string) error
}

func (f *FormatFlag) String() string { return f.Name }

func (f *FormatFlag) Set(s string) error {
	if err := f.check(s); err != nil {
		return err
	}
	f.Name = s
	return nil
}

// ForFormatFlag is a -format flag taking what ForFormat, Calibration and
// Drift render, their aliases too; terminal by default.
func ForFormatFlag() FormatFlag {
	return FormatFlag{Name: Formats[0], check: func(s string) error {
		_, err := canonical(s)
		return err
	}}
}

// NewFormatFlag is a -format flag taking one of names (two or more), the
// first by default.
func NewFormatFlag(names ...string) FormatFlag {
	want := orList(names)
	return FormatFlag{Name: names[0], check: func(s string) error {
		if !slices.Contains(names, s) {
			return fmt.Errorf("%q is not %s", s, want)
		}
		return nil
	}}
}

// document is one kind of report — the comparison, the calibration, the
// drift — as one function per format of the table above, so every
// document reads its format the same way (render) and a new format is a
// row of formats and a function of each document.
type document[T any] struct {
	terminal, markdown, json func(io.Writer, T) error
}

// render writes in as d in format, a name or alias of Formats.
func (d document[T]) render(w io.Writer, in T, format string) error {
	name, err := canonical(format)
	if err != nil {
		return err
	}
	switch name {
	case "terminal":
		return d.terminal(w, in)
	case "markdown":
		return d.markdown(w, in)
	}
	return d.json(w, in)
}

// text is a renderer writing what f makes of its input.
func text[T any](f func(T) string) func(io.Writer, T) error {
	return func(w io.Writer, in T) error {
		_, err := io.WriteString(w, f(in))
		return err
	}
}
