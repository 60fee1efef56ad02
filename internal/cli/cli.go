// Package cli is the shape of benchgate's command line, apart from what
// any command does: a table of commands and families of them (Command),
// how arguments find their command (Dispatch), how flags are parsed and
// their errors said (Parse), and the exit codes that tell a regression
// from a bad input from a run that failed (WithCode, ExitCode).
package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/internal/textsafe"
)

// Exit codes, as the usage text and the README list them: a script tells
// a regression from a bad input from a run that failed by the code
// alone. A crash of benchgate is ExitRunFailed, never ExitUsage, although
// the Go runtime exits 2 (see CrashMessage).
const (
	ExitPass       = 0
	ExitRegression = 1
	ExitUsage      = 2
	ExitRunFailed  = 3
)

// exitError carries an exit code with the error that caused it.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

// WithCode gives err the exit code code; a nil err stays nil.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// ErrSilent marks an error whose message has already been shown (usage
// text after -h, say); main prints nothing more.
var ErrSilent = errors.New("silent")

// ExitCode maps an error to the process exit code: an error that knows
// its code says it; any other error means the run itself failed.
func ExitCode(err error) int {
	if err == nil {
		return ExitPass
	}
	var c interface{ ExitCode() int }
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return ExitRunFailed
}

// CrashMessage is what benchgate says after a crash of its own (a panic,
// a fatal error of the Go runtime such as out of memory, a kill by the
// kernel), whose report the runtime has printed above it. The exit code
// is ExitRunFailed: a crash must never read as a fault of the input.
func CrashMessage(reason string) string {
	return "benchgate crashed: " + reason + "; this is a bug in benchgate, not in your input: please report it, with the output above, at https://github.com/benchgate/benchgate/issues"
}

// Command is one command, or a family of them (Sub, Missing being what a
// family says when no command is given), run with a C (the call: its
// context, where it prints, its environment). Define registers the
// command's flags on fs and returns what runs once they are parsed; Raw
// parses its arguments itself. Args is what follows the command in its
// usage line ("[flags]" when empty), Max how many arguments may follow
// its flags.
type Command[C any] struct {
	Name, Args, Missing string
	Aliases             []string
	Max                 int
	Define              func(c C, fs *flag.FlagSet) (func() error, error)
	Raw                 func(c C, args []string) error
	Sub                 []Command[C]
}

// Line is where a command line prints, and the help text of each command
// by its name ("history drift"; "usage" for the whole CLI's).
type Line struct {
	Stdout, Stderr io.Writer
	Help           func(name string) string
	// DidYouMean is the name among names closest to a mistyped one, ""
	// when none is close.
	DidYouMean func(name string, names []string) string
}

// Dispatch runs the command of the family fam that args name, with c, or
// its help.
func Dispatch[C any](l Line, c C, fam Command[C], args []string) error {
	text := cmp.Or(fam.Name, "usage")
	if len(args) == 0 {
		fmt.Fprint(l.Stderr, l.Help(text))
		return WithCode(ExitUsage, errors.New(fam.Missing))
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 && name == "help" {
			// "benchgate help gate" is "benchgate gate -h", and
			// "benchgate history help drift" "benchgate history drift -h".
			if fam.Name != "" {
				rest = rest[:1]
			}
			return Dispatch(l, c, fam, append(slices.Clone(rest), "-h"))
		}
		fmt.Fprint(l.Stdout, l.Help(text))
		return nil
	}
	var names []string
	for _, cmd := range fam.Sub {
		if cmd.Name == name || slices.Contains(cmd.Aliases, name) {
			return Exec(l, c, cmd, strings.TrimSpace(fam.Name+" "+cmd.Name), rest)
		}
		names = append(names, cmd.Name)
	}
	return WithCode(ExitUsage, l.unknownCommand(fam.Name, name, append(names, "help")))
}

// Exec runs cmd, named name ("history drift"), with args.
func Exec[C any](l Line, c C, cmd Command[C], name string, args []string) error {
	switch {
	case cmd.Sub != nil:
		return Dispatch(l, c, cmd, args)
	case cmd.Raw != nil:
		return cmd.Raw(c, args)
	}
	fs := flag.NewFlagSet("benchgate "+name, flag.ContinueOnError)
	run, err := cmd.Define(c, fs)
	if err != nil {
		return err
	}
	if err := l.Parse(fs, name, cmp.Or(cmd.Args, "[flags]"), args, cmd.Max); err != nil {
		return err
	}
	return run()
}

// unknownCommand is the error of a command not among names, under parent
// ("" or "history"): the closest name when one is close, and where the
// list is, never the whole usage, which would scroll the error away.
func (l Line) unknownCommand(parent, cmd string, names []string) error {
	what, list := "command", "benchgate help"
	if parent != "" {
		what, list = parent+" command", "benchgate "+parent+" help"
	}
	msg := fmt.Sprintf("unknown %s %s", what, textsafe.Quote(cmd, textsafe.QuoteRunes))
	if l.DidYouMean != nil {
		if d := l.DidYouMean(cmd, names); d != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", d)
		}
	}
	return fmt.Errorf("%s; %s lists them", msg, list)
}

// ParseFlagSet parses args into a flag set register defines (Parse), for
// a command that parses its own arguments.
func (l Line) ParseFlagSet(name, usage string, args []string, max int, register func(*flag.FlagSet)) (*flag.FlagSet, error) {
	fs := flag.NewFlagSet("benchgate "+name, flag.ContinueOnError)
	register(fs)
	return fs, l.Parse(fs, name, usage, args, max)
}

// Parse parses args into fs, the flags of the command name, whose errors
// and -h go to Stderr, -h showing the command's help text and usage, what
// follows the command in its usage line. Up to max arguments may follow
// the flags (fs.Args). A -h returns ErrSilent with exit 0; a bad flag or
// argument, exit 2.
func (l Line) Parse(fs *flag.FlagSet, name, usage string, args []string, max int) error {
	// The flag package prints a bad flag's error and then the usage; the
	// whole usage after it would scroll the error away, so it is printed
	// for -h only, and an error ends with where the flags are listed.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(l.Stderr, "Usage: benchgate %s %s\n\n%s\n\nFlags:\n", name, usage, strings.TrimSuffix(l.Help(name), "\n"))
			fs.SetOutput(l.Stderr)
			fs.PrintDefaults()
			return WithCode(ExitPass, ErrSilent)
		}
		return WithCode(ExitUsage, fmt.Errorf("%s: %v; benchgate %s -h lists its flags", name, err, name))
	}
	if fs.NArg() > max {
		return WithCode(ExitUsage, fmt.Errorf("%s: unexpected argument %s; benchgate %s -h says what it takes",
			name, textsafe.Quote(fs.Arg(max), textsafe.QuoteRunes), name))
	}
	return nil
}

// Given reports whether the flag name was set on the command line.
func Given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// Checked is a flag's value of a string that check accepts, set into p as
// it is parsed: a bad value is a usage error naming its flag (flag's
// "invalid value … for flag -NAME: …") before anything runs.
func Checked(p *string, check func(string) error) flag.Value { return &checked{p, check} }

type checked struct {
	p     *string
	check func(string) error
}

// String is flag.Value's; flag calls it on a zero checked too.
func (c *checked) String() string {
	if c.p == nil {
		return ""
	}
	return *c.p
}

// Set is flag.Value's.
func (c *checked) Set(s string) error {
	if err := c.check(s); err != nil {
		return err
	}
	*c.p = s
	return nil
}
