package report

import (
	"fmt"
	"slices"
	"strings"
)

// FormatUsage is the usage of a -format flag over Formats.
const FormatUsage = "report on stdout in this `format`: terminal, markdown or json"

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

// ForFormatFlag is a -format flag taking what ForFormat and Calibration
// render, their aliases too; terminal by default.
func ForFormatFlag() FormatFlag {
	return FormatFlag{Name: "terminal", check: func(s string) error {
		_, err := ForFormat(s, Input{}, TerminalOptions{})
		return err
	}}
}

// NewFormatFlag is a -format flag taking one of names (two or more), the
// first by default.
func NewFormatFlag(names ...string) FormatFlag {
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return FormatFlag{Name: names[0], check: func(s string) error {
		if !slices.Contains(names, s) {
			return fmt.Errorf("%q is not %s", s, want)
		}
		return nil
	}}
}
