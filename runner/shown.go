package runner

import (
	"bytes"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/benchgate/benchgate/scenario"
)

// What benchgate stores of a run and shows of it (results.json, from which
// the report, the comment, the job summary and the annotations are made;
// the progress lines; the error of a failed run) holds text a target wrote
// and text of the requests. The first is capped where it is stored: a
// target that answers a 3 MB reason phrase must not fill a log or push the
// verdict tables out of a job summary (GitHub keeps 1 MiB of one). The
// second is redacted: a request carries the values of ${VAR}, and an API
// key is one (see scenario.Redact). Redaction comes before the cap, so a
// cut never leaves part of a secret.
const (
	// maxReason bounds a Disagreement's Reason; maxSideError each
	// side's "request failed" error in it, so that both fit whole, with
	// the side's name and the marker of a cut.
	maxReason    = 512
	maxSideError = 192
	// maxPath bounds a Disagreement's Path (JSON keys come from the
	// target).
	maxPath = 512
	// maxExcerpt bounds each answer's excerpt; agreement already cuts
	// them to agreement.ExcerptRunes runes, which this never cuts.
	maxExcerpt = 1 << 10
	// maxTarget bounds a request's path and query as stored.
	maxTarget = 1 << 10
	// maxErrText bounds the text of an error a target caused (a failed
	// health check, a gRPC status message, a call that does not fit),
	// and maxErrLine each of a TargetError's output lines.
	maxErrText = 1 << 10
	maxErrLine = 512
)

// capText cuts s to at most n bytes and a marker saying how many were cut,
// on a rune boundary. Text that fits is returned as is.
func capText(s string, n int) string {
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

// A redactor hides a scenario's secrets: *scenario.Scenario is one. A
// service holds one rather than its Scenario, for what it writes of its
// commands and its output (see Target and dockerTarget); nil, as in a
// service made in a test, hides nothing.
type redactor interface {
	Redact(string) string
	HasSecrets() bool
}

var _ redactor = (*scenario.Scenario)(nil)

// redactText is r.Redact(s), or s when r is nil.
func redactText(r redactor, s string) string {
	if r == nil {
		return s
	}
	return r.Redact(s)
}

// redactedLine is commandLine of argv with each argument redacted of r's
// secrets first: quoting for the shell would otherwise hide the form of a
// secret with a quote or a space from Redact.
func redactedLine(r redactor, argv []string) string {
	if r == nil || !r.HasSecrets() {
		return commandLine(argv)
	}
	shown := make([]string, len(argv))
	for i, a := range argv {
		shown[i] = r.Redact(a)
	}
	return commandLine(shown)
}

// shownErr is err with its text redacted of sc's secrets and capped at
// maxErrText: for an error that quotes a request and what a target said.
func shownErr(sc redactor, err error) error {
	return shown(sc, err, maxErrText)
}

// redactErr is err with its text redacted of sc's secrets, for the error a
// run ends with: a *TargetError quotes the expanded build command and the
// target's output, each capped already.
func redactErr(sc redactor, err error) error {
	return shown(sc, err, -1)
}

func shown(sc redactor, err error, max int) error {
	if err == nil {
		return nil
	}
	text := redactText(sc, err.Error())
	if max >= 0 {
		text = capText(text, max)
	}
	if text == err.Error() {
		return err
	}
	return &shownError{text, err}
}

// maxRedactLine is the longest line a redactWriter holds back: a longer
// one is written in pieces, and a secret across a piece's end is missed.
const maxRedactLine = 64 << 10

// redactWriter writes to w what is written to it, a line at a time, with
// sc's secrets replaced; Flush writes an unterminated last line. Without
// secrets it writes through.
type redactWriter struct {
	sc  redactor
	w   io.Writer
	buf []byte
}

// newRedactWriter makes a redactWriter; sc may be nil, to write through.
func newRedactWriter(sc redactor, w io.Writer) *redactWriter {
	return &redactWriter{sc: sc, w: w}
}

func (r *redactWriter) Write(p []byte) (int, error) {
	if r.sc == nil || !r.sc.HasSecrets() {
		return r.w.Write(p)
	}
	r.buf = append(r.buf, p...)
	for {
		i := bytes.IndexByte(r.buf, '\n')
		if i < 0 && len(r.buf) < maxRedactLine {
			return len(p), nil
		}
		if i < 0 {
			i = len(r.buf) - 1
		}
		if _, err := io.WriteString(r.w, r.sc.Redact(string(r.buf[:i+1]))); err != nil {
			return len(p), err
		}
		r.buf = r.buf[i+1:]
	}
}

// Flush writes what is held back.
func (r *redactWriter) Flush() error {
	if len(r.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(r.w, r.sc.Redact(string(r.buf)))
	r.buf = nil
	return err
}
