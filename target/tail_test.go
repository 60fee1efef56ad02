package target

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"plain\ttext, héllo ✓", "plain\ttext, héllo ✓"},
		{"\x1b[2J\x1b[Hgone", `\x1b[2J\x1b[Hgone`},
		{"a\rb\nc\x00\x07", `a\rb\nc\x00\a`},
		{"abc\u202edcba \u2066x\u2069 ad\u200bmin", `abc\u202edcba \u2066x\u2069 ad\u200bmin`},
		{"del\x7f", `del\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bad \x9b31m", `bad \x9b31m`},
		{"\ufffd stays", "\ufffd stays"},
	} {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Sanitize(c.want); got != c.want {
			t.Errorf("sanitize is not idempotent on %q: %q", c.want, got)
		}
	}
}

// Output of PR code is shown on terminals: escape sequences arrive as text.
func TestTargetErrorEscapesControls(t *testing.T) {
	t.Parallel()
	w := NewTail(5)
	io.WriteString(w, "\x1b]0;title\x07ok\r\n\x1b[1A\x1b[2Kall tests passed")
	if got, want := w.Lines(), []string{`\x1b]0;title\aok`, `\x1b[1A\x1b[2Kall tests passed`}; !slices.Equal(got, want) {
		t.Errorf("Lines = %q, want %q", got, want)
	}
	e := &TargetError{Target: "candidate", Phase: PhaseDied, Err: errors.New("GET /healthz: 500 \x1b[31mred"),
		Output: []string{"raw \x1b[2J line"}}
	msg := e.Error()
	if strings.ContainsAny(msg, "\x1b\x07\r") || !strings.Contains(msg, `500 \x1b[31mred`) || !strings.Contains(msg, `| raw \x1b[2J line`) {
		t.Errorf("message %q", msg)
	}
}

func TestLineTail(t *testing.T) {
	t.Parallel()
	w := NewTail(3)
	io.WriteString(w, "a\nb\r\nc")
	io.WriteString(w, "d\ne\nf")
	if got, want := w.Lines(), []string{"cd", "e", "f"}; !slices.Equal(got, want) {
		t.Errorf("Lines = %q, want %q", got, want)
	}
	io.WriteString(w, "\n")
	if got, want := w.Lines(), []string{"cd", "e", "f"}; !slices.Equal(got, want) {
		t.Errorf("after newline: Lines = %q, want %q", got, want)
	}
}
