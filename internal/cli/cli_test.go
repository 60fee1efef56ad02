package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestDispatch: arguments find their command in a family, its flags
// parsed; a mistyped command is exit 2 with the closest name; -h prints
// the help and usage and is exit 0 and silent; a stray argument is exit 2.
func TestDispatch(t *testing.T) {
	t.Parallel()
	var ran []string
	table := Command[*[]string]{Missing: "no command given", Sub: []Command[*[]string]{
		{Name: "greet", Define: func(c *[]string, fs *flag.FlagSet) (func() error, error) {
			who := fs.String("who", "world", "whom to `greet`")
			return func() error { *c = append(*c, "hello "+*who); return nil }, nil
		}},
		{Name: "fail", Raw: func(c *[]string, args []string) error { return WithCode(ExitRegression, errors.New("regressed")) }},
	}}
	var out, errw bytes.Buffer
	l := Line{Stdout: &out, Stderr: &errw, Help: func(name string) string { return "help of " + name + "\n" },
		DidYouMean: func(name string, names []string) string {
			if name == "gret" {
				return "greet"
			}
			return ""
		}}
	if err := Dispatch(l, &ran, table, []string{"greet", "-who", "you"}); err != nil || strings.Join(ran, ",") != "hello you" {
		t.Fatalf("greet: %v, ran %v", err, ran)
	}
	if err := Dispatch(l, &ran, table, []string{"fail"}); ExitCode(err) != ExitRegression {
		t.Errorf("a command's own code: %v, exit %d", err, ExitCode(err))
	}
	err := Dispatch(l, &ran, table, []string{"gret"})
	if ExitCode(err) != ExitUsage || err.Error() != `unknown command "gret" (did you mean greet?); benchgate help lists them` {
		t.Errorf("mistyped: %v, exit %d", err, ExitCode(err))
	}
	err = Dispatch(l, &ran, table, []string{"greet", "-h"})
	if ExitCode(err) != ExitPass || !errors.Is(err, ErrSilent) || !strings.Contains(errw.String(), "Usage: benchgate greet [flags]\n\nhelp of greet\n\nFlags:\n  -who greet") {
		t.Errorf("-h: %v, exit %d, stderr %q", err, ExitCode(err), errw.String())
	}
	err = Dispatch(l, &ran, table, []string{"greet", "stray"})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), `greet: unexpected argument "stray"`) {
		t.Errorf("a stray argument: %v", err)
	}
	if err := Dispatch(l, &ran, table, nil); ExitCode(err) != ExitUsage || err.Error() != "no command given" || !strings.Contains(errw.String(), "help of usage") {
		t.Errorf("no command: %v", err)
	}
	if ExitCode(nil) != ExitPass || ExitCode(errors.New("x")) != ExitRunFailed || WithCode(ExitUsage, nil) != nil {
		t.Error("ExitCode of nil and of a plain error, or WithCode of nil")
	}
}

// TestChecked: a checked flag takes what its check accepts, refuses the
// rest with the check's reason and the flag's name, and keeps its default
// until set; its usage shows the default it was registered with.
func TestChecked(t *testing.T) {
	t.Parallel()
	check := func(s string) error {
		if !strings.HasPrefix(s, "ok") {
			return fmt.Errorf("%q is not ok", s)
		}
		return nil
	}
	v := "ok-default"
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(Checked(&v, check), "v", "a `value`")
	if err := fs.Parse(nil); err != nil || v != "ok-default" {
		t.Errorf("no flag: %q, %v", v, err)
	}
	if err := fs.Parse([]string{"-v", "ok-1"}); err != nil || v != "ok-1" {
		t.Errorf("-v ok-1: %q, %v", v, err)
	}
	err := fs.Parse([]string{"-v", "bad"})
	if err == nil || err.Error() != `invalid value "bad" for flag -v: "bad" is not ok` || v != "ok-1" {
		t.Errorf("-v bad: %q, %v", v, err)
	}
	var usage strings.Builder
	fs.SetOutput(&usage)
	fs.PrintDefaults()
	if !strings.Contains(usage.String(), "a value (default ok-default)") {
		t.Errorf("usage: %s", usage.String())
	}
}
