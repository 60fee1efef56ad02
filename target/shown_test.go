package target

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCapText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc… (3 bytes cut)"},
		{"aéb", 2, "a… (3 bytes cut)"}, // never half of é
		{"éé", 2, "é… (2 bytes cut)"},
	} {
		if got := CapText(tt.in, tt.n); got != tt.want {
			t.Errorf("CapText(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// secretKey is the secret keyRedactor hides, with the characters a
// query, a path and JSON escape.
const secretKey = "sk+live/Q7x9=="

// keyRedactor hides secretKey as ${API_KEY}, as a scenario with
// API_KEY=secretKey in its environment does.
type keyRedactor struct{}

func (keyRedactor) Redact(s string) string { return strings.ReplaceAll(s, secretKey, "${API_KEY}") }
func (keyRedactor) HasSecrets() bool       { return true }

// TestRedactWriter: a command's output is redacted line by line, a secret
// split across writes included, and an unterminated last line on Flush.
func TestRedactWriter(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	w := NewRedactWriter(keyRedactor{}, &b)
	for _, p := range []string{"key sk+li", "ve/Q7x9==\nnext ", secretKey} {
		w.Write([]byte(p))
	}
	w.Flush()
	if got, want := b.String(), "key ${API_KEY}\nnext ${API_KEY}"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var through strings.Builder
	w = NewRedactWriter(nil, &through)
	w.Write([]byte("no redactor: " + secretKey))
	if through.String() != "no redactor: "+secretKey {
		t.Errorf("without a redactor: %q", through.String())
	}
}

// TestShownErr: an error's text is redacted (and capped by ShownErr), and
// it still unwraps to what it was.
func TestShownErr(t *testing.T) {
	t.Parallel()
	sc := keyRedactor{}
	te := &TargetError{Target: "baseline", Phase: PhaseBuild, Err: fmt.Errorf("make KEY=%s: exit status 2", secretKey)}
	err := RedactErr(sc, fmt.Errorf("starting: %w", te))
	if got, want := err.Error(), "starting: baseline target: build: make KEY=${API_KEY}: exit status 2"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var as *TargetError
	if !errors.As(err, &as) || as != te {
		t.Error("no longer the *TargetError")
	}
	long := ShownErr(sc, fmt.Errorf("%s %s", secretKey, strings.Repeat("x", 3<<20)))
	if n := len(long.Error()); n > MaxErrText+32 || !strings.HasPrefix(long.Error(), "${API_KEY} xxx") {
		t.Errorf("%d bytes: %.80s", n, long.Error())
	}
	if plain := errors.New("plain"); ShownErr(sc, plain) != plain {
		t.Error("an error with nothing to hide is wrapped")
	}
}
