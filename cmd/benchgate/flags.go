package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/runner"
)

// formatFlag is a -format flag: a renderer's name, checked as it is parsed,
// so that an unknown one is a usage error before anything runs.
type formatFlag struct {
	name  string
	check func(name string) error
}

func (f *formatFlag) String() string { return f.name }

func (f *formatFlag) Set(s string) error {
	if err := f.check(s); err != nil {
		return err
	}
	f.name = s
	return nil
}

// reportFormat is the -format of compare and gate: a format report.ForFormat
// renders.
func reportFormat() formatFlag {
	return formatFlag{name: "terminal", check: func(s string) error {
		_, err := report.ForFormat(s, report.Input{}, report.TerminalOptions{})
		return err
	}}
}

const reportFormatUsage = "report on stdout in this `format`: terminal, markdown or json"

// formatOneOf is a -format flag taking one of names (two or more), the
// first by default.
func formatOneOf(names ...string) formatFlag {
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return formatFlag{name: names[0], check: func(s string) error {
		if !slices.Contains(names, s) {
			return fmt.Errorf("%q is not %s", s, want)
		}
		return nil
	}}
}

// shardFlag is -shard i/n: part i of a grid split in n.
type shardFlag runner.Shard

func (s *shardFlag) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

func (s *shardFlag) Set(v string) error {
	i, n, ok := strings.Cut(v, "/")
	idx, err1 := strconv.Atoi(i)
	cnt, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || cnt < 1 || idx < 1 || idx > cnt {
		return fmt.Errorf("-shard %q: want i/n with 1 <= i <= n, e.g. 2/3", v)
	}
	*s = shardFlag{Index: idx, Count: cnt}
	return nil
}

// fileList is a comma-separated list of files; blanks around a name and
// empty names are dropped.
type fileList []string

func (l *fileList) String() string { return strings.Join(*l, ",") }

func (l *fileList) Set(s string) error {
	*l = nil
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			*l = append(*l, f)
		}
	}
	return nil
}

// runFlags are the flags run, gate and calibrate share. Their values when
// registered are their defaults: a hand-run benchgate's (defaultRunFlags),
// or the action's inputs.
type runFlags struct {
	scenario string
	profile  string
	out      string
	budget   time.Duration
	shard    runner.Shard // run only: a part of the grid
	// allowDataOutside lifts the confinement of data files to the
	// scenario's directory tree (scenario.LoadOptions).
	allowDataOutside bool
}

func defaultRunFlags() runFlags {
	return runFlags{scenario: "benchgate.yml", out: "benchgate-results"}
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.scenario, "scenario", f.scenario, "scenario `file`")
	fs.StringVar(&f.profile, "profile", f.profile, "profile `name` from the scenario's profiles (e.g. pr, nightly)")
	fs.StringVar(&f.out, "out", f.out, "output `dir`: results.json, report.md, decisions.json, target logs")
	fs.DurationVar(&f.budget, "budget", f.budget, "refuse a plan longer than this `duration` (0: no limit)")
	fs.BoolVar(&f.allowDataOutside, "allow-data-outside", f.allowDataOutside, "let the scenario's data files be outside its directory tree (they must still be regular files)")
}

// parseFlags parses args into a flag set whose errors and -h go to stderr,
// -h showing the command's help text (help). A -h returns errSilent with
// exit 0; a bad flag, exit 2.
func parseFlags(name string, args []string, stderr io.Writer, register func(*flag.FlagSet)) error {
	_, err := parseFlagSet(name, "[flags]", args, 0, stderr, register)
	return err
}

// parseFlagSet is parseFlags for a command that also takes up to max
// arguments after its flags (fs.Args); usage shows how.
func parseFlagSet(name, usage string, args []string, max int, stderr io.Writer, register func(*flag.FlagSet)) (*flag.FlagSet, error) {
	fs := flag.NewFlagSet("benchgate "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: benchgate %s %s\n\n%s\n\nFlags:\n", name, usage, strings.TrimSuffix(help(name), "\n"))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, withCode(exitPass, errSilent)
		}
		return nil, withCode(exitUsage, errSilent)
	}
	if fs.NArg() > max {
		fs.Usage()
		return nil, withCode(exitUsage, fmt.Errorf("unexpected argument %q", fs.Arg(max)))
	}
	return fs, nil
}

// given reports whether the flag name was set on the command line.
func given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}
