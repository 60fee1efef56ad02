package target

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/benchgate/benchgate/scenario"
)

// What a target writes (its output, the status line of its health check)
// is stored and shown: in results.json, in the progress lines, in the
// error of a failed run. It is capped where it is stored, so a target
// that answers a 3 MB reason phrase cannot fill a log or push the verdict
// tables out of a job summary (GitHub keeps 1 MiB of one). What benchgate
// writes of a scenario (a command line, a URL, a request) is redacted: it
// holds the values of ${VAR}, and an API key is one (see scenario.Redact).
// Redaction comes before the cap, so a cut never leaves part of a secret.
const (
	// MaxErrText bounds the text of an error a target caused (a failed
	// health check, a gRPC status message, a call that does not fit),
	// and MaxErrLine each of a TargetError's output lines.
	MaxErrText = 1 << 10
	MaxErrLine = 512
)

// CapText cuts s to at most n bytes and a marker saying how many were cut,
// on a rune boundary. Text that fits is returned as is.
func CapText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := n
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "… (" + strconv.Itoa(len(s)-end) + " bytes cut)"
}

// shownError is an error whose text is redacted and capped; it unwraps to
// the original, so that errors.Is and errors.As still see it, but prints
// only the shown text.
type shownError struct {
	text string
	err  error
}

func (e *shownError) Error() string { return e.text }
func (e *shownError) Unwrap() error { return e.err }

// A Redactor hides a scenario's secrets: *scenario.Scenario is one. A
// service holds one rather than its Scenario, for what it writes of its
// commands and its output; nil, as in a service made in a test, hides
// nothing.
type Redactor interface {
	Redact(string) string
	HasSecrets() bool
}

var _ Redactor = (*scenario.Scenario)(nil)

// RedactText is r.Redact(s), or s when r is nil.
func RedactText(r Redactor, s string) string {
	if r == nil {
		return s
	}
	return r.Redact(s)
}

// RedactedLine is CommandLine of argv with each argument redacted of r's
// secrets first: quoting for the shell would otherwise hide the form of a
// secret with a quote or a space from Redact.
func RedactedLine(r Redactor, argv []string) string {
	if r == nil || !r.HasSecrets() {
		return CommandLine(argv)
	}
	shown := make([]string, len(argv))
	for i, a := range argv {
		shown[i] = r.Redact(a)
	}
	return CommandLine(shown)
}

// CommandLine renders argv so that a reader can paste it into a shell.
func CommandLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// ShownErr is err with its text redacted of r's secrets and capped at
// MaxErrText: for an error that quotes a request and what a target said.
func ShownErr(r Redactor, err error) error {
	return shown(r, err, MaxErrText)
}

// RedactErr is err with its text redacted of r's secrets, for the error a
// run ends with: a *TargetError quotes the expanded build command and the
// target's output, each capped already.
func RedactErr(r Redactor, err error) error {
	return shown(r, err, -1)
}

func shown(r Redactor, err error, max int) error {
	if err == nil {
		return nil
	}
	text := RedactText(r, err.Error())
	if max >= 0 {
		text = CapText(text, max)
	}
	if text == err.Error() {
		return err
	}
	return &shownError{text, err}
}

// maxRedactLine is the longest line a RedactWriter holds back: a longer
// one is written in pieces, and a secret across a piece's end is missed.
const maxRedactLine = 64 << 10

// RedactWriter writes to w what is written to it, a line at a time, with
// r's secrets replaced; Flush writes an unterminated last line. Without
// secrets it writes through.
type RedactWriter struct {
	r   Redactor
	w   io.Writer
	buf []byte
}

// NewRedactWriter makes a RedactWriter; r may be nil, to write through.
func NewRedactWriter(r Redactor, w io.Writer) *RedactWriter {
	return &RedactWriter{r: r, w: w}
}

func (rw *RedactWriter) Write(p []byte) (int, error) {
	if rw.r == nil || !rw.r.HasSecrets() {
		return rw.w.Write(p)
	}
	rw.buf = append(rw.buf, p...)
	for {
		i := bytes.IndexByte(rw.buf, '\n')
		if i < 0 && len(rw.buf) < maxRedactLine {
			return len(p), nil
		}
		if i < 0 {
			i = len(rw.buf) - 1
		}
		if _, err := io.WriteString(rw.w, rw.r.Redact(string(rw.buf[:i+1]))); err != nil {
			return len(p), err
		}
		rw.buf = rw.buf[i+1:]
	}
}

// Flush writes what is held back.
func (rw *RedactWriter) Flush() error {
	if len(rw.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(rw.w, rw.r.Redact(string(rw.buf)))
	rw.buf = nil
	return err
}
