package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/gate"
)

func TestTerminalColor(t *testing.T) {
	t.Parallel()
	render := func(in Input, c bool) string {
		t.Helper()
		var b strings.Builder
		if err := Terminal(&b, in, TerminalOptions{Color: c}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	const (
		red    = "\x1b[31;1m"
		green  = "\x1b[32m"
		yellow = "\x1b[33m"
	)
	on := render(fullInput(), true)
	for _, want := range []string{red + "REGRESSION", green + "improvement", yellow + "inconclusive", red + "tie, ERROR RATE"} {
		if !strings.Contains(on, want) {
			t.Errorf("coloured output lacks %q:\n%s", want, on)
		}
	}
	if !strings.Contains(on, "\x1b[0m") {
		t.Errorf("colours are not reset after each verdict:\n%q", on)
	}
	if strings.Contains(on, "m tie") || strings.Contains(on, "tie\x1b") {
		t.Errorf("a plain tie is coloured:\n%q", on)
	}

	// Without colour there is no escape byte at all, even when a class
	// name carries its own escape sequence.
	hostile := fullInput()
	hostile.Comparison.Cells[0].Key.Class = "\x1b[2J\x1b[31mQ01"
	hostile.Comparison.Failures[0].Key.Class = "\x1b]8;;http://x\x07link"
	hostile.Results.Scenario.Name = "demo\x1b[0m"
	for _, in := range []Input{fullInput(), cancelledInput(), hostile} {
		if off := render(in, false); strings.ContainsRune(off, '\x1b') {
			t.Errorf("uncoloured output has an escape sequence:\n%q", off)
		}
	}
	if on := render(hostile, true); strings.Contains(on, "\x1b[2J") || strings.Contains(on, "\x1b]8") {
		t.Errorf("a name's escape sequence reached the terminal:\n%q", on)
	}
}

func TestColorFor(t *testing.T) {
	t.Parallel()
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ColorFor(f) {
		t.Error("ColorFor(regular file) = true")
	}
	if ColorFor(nil) {
		t.Error("ColorFor(nil) = true")
	}
	if ColorFor(new(bytes.Buffer)) {
		t.Error("ColorFor(a buffer) = true")
	}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	if colorFor(f.Fd(), env()) {
		t.Error("colorFor(regular file) = true")
	}
	// A terminal, if the test has one, still loses colour to NO_COLOR and
	// TERM=dumb; without one, this checks the opt-out wins first.
	for _, e := range []func(string) string{env("NO_COLOR", "1"), env("TERM", "dumb")} {
		if colorFor(os.Stdout.Fd(), e) {
			t.Error("colour despite opt-out")
		}
	}
}

func TestTerminalVerdictWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    row
		want string
	}{
		{row{verdict: gate.Tie}, "tie"},
		{row{verdict: gate.Regression, gatedRegression: true}, "REGRESSION"},
		{row{verdict: gate.Regression}, "regression (not gated)"},
		{row{verdict: gate.Regression, gatedRegression: true, carriers: []gate.Metric{gate.P95}}, "REGRESSION (p95)"},
		{row{verdict: gate.Inconclusive, reason: "need >= 2 repetitions, have 1"}, "inconclusive: need >= 2 repetitions, have 1"},
		{row{verdict: gate.Tie, errorFailure: true}, "tie, ERROR RATE OVER LIMIT"},
	} {
		if got := verdictText(tc.r, false); got != tc.want {
			t.Errorf("verdictText(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
	if got := verdictText(row{verdict: gate.Regression, gatedRegression: true, carriers: []gate.Metric{gate.P95}}, true); got != "**regression** (p95)" {
		t.Errorf("markdown gated p95 regression = %q", got)
	}
}
