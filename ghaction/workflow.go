package ghaction

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/benchgate/benchgate/internal/textsafe"
)

// The runner unescapes a command's message and properties by replacing
// these sequences back; a single-pass replacer escapes '%' first in effect,
// so a literal "%0A" in the text survives as "%250A" instead of becoming a
// line break.
var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// EscapeData makes s the message of a workflow command: textsafe.Text
// first, so that no escape sequence, bidi control or invisible character
// reaches the log or the annotation, then the runner's escapes, so that no
// text can end the command's line and start a command of its own. The
// runner reads back textsafe.Text(s), newlines and tabs included.
func EscapeData(s string) string { return dataEscaper.Replace(textsafe.Text(s)) }

// EscapeProperty makes s a property value of a workflow command: a title or
// a file name is one line, so textsafe.Line first, then beyond EscapeData's
// escapes ':' and ',', which would otherwise end the property list ("::")
// or start another property. The runner reads back textsafe.Line(s).
func EscapeProperty(s string) string { return propertyEscaper.Replace(textsafe.Line(s)) }

// Annotate writes an annotation command, ::level title=T,file=F,line=N::message,
// leaving out an empty (or blank) title or file and a line below 1. level is the
// command's name and cannot be escaped, so only error, warning and notice are
// accepted. Title, file and message may come from a pull request or a
// target: they go through EscapeProperty and EscapeData, so the line is one
// command, this one, whatever they hold.
func Annotate(w io.Writer, level, title, message string, file string, line int) error {
	switch level {
	case "error", "warning", "notice":
	default:
		return fmt.Errorf("annotation level %q: want error, warning or notice", level)
	}
	var props []string
	// The runner trims the property list, so a value's outer spaces would
	// not reach it anyway: they are left out, and a value of spaces with them.
	if t := strings.TrimSpace(EscapeProperty(title)); t != "" {
		props = append(props, "title="+t)
	}
	if f := strings.TrimSpace(EscapeProperty(file)); f != "" {
		props = append(props, "file="+f)
	}
	if line > 0 {
		props = append(props, "line="+strconv.Itoa(line))
	}
	cmd := "::" + level
	if len(props) > 0 {
		cmd += " " + strings.Join(props, ",")
	}
	_, err := io.WriteString(commandWriter(w), cmd+"::"+EscapeData(message)+"\n")
	return err
}

// commandWriter is where a workflow command of benchgate's own goes: w, or
// under a LogWriter (which would neutralise it) the writer beneath, after
// the log's unfinished line, so that the command starts a line and the log
// stays in order. Commands and log can then share one writer.
func commandWriter(w io.Writer) io.Writer {
	if l, ok := w.(*LogWriter); ok {
		l.Flush()
		return l.w
	}
	return w
}

// Warning writes a warning annotation with no title or location.
func Warning(w io.Writer, msg string) error { return Annotate(w, "warning", "", msg, "", 0) }

// Notice writes a notice annotation with no title or location.
func Notice(w io.Writer, msg string) error { return Annotate(w, "notice", "", msg, "", 0) }

// PrintError writes one of benchgate's own messages, a line, on w (its
// stderr). Errors carry text a pull request controls (target output,
// values from a fork's results file): in a workflow (inWorkflow) it must
// not be read as workflow commands (WriteUntrusted), and on a terminal it
// must not carry escape sequences nor reorder what is shown (textsafe.Text
// keeps its newlines and tabs only).
func PrintError(w io.Writer, inWorkflow bool, msg string) {
	msg += "\n"
	if inWorkflow {
		WriteUntrusted(w, msg)
	} else {
		io.WriteString(w, textsafe.Text(msg))
	}
}

// PrintWarning writes a warning of benchgate's that does not change the
// outcome: an annotation in a workflow, a line saying it is one elsewhere.
func PrintWarning(w io.Writer, inWorkflow bool, msg string) {
	if inWorkflow {
		Warning(w, "benchgate: "+msg)
	} else {
		PrintError(w, false, "benchgate: warning: "+msg)
	}
}

// WriteUntrusted writes text to w as textsafe.Text shows it, with workflow
// commands stopped around it: the runner then takes a line "::error::…",
// "::add-mask::…" or "…##[set-output name=x;]…" in it for just a line. The
// token that resumes commands is random, so the text cannot hold it in
// advance, and checked not to occur in text (in any case: the runner
// compares command names ignoring case). A missing final newline is added,
// so that the resume command starts its own line.
func WriteUntrusted(w io.Writer, text string) error { return writeUntrusted(w, text, rand.Reader) }

// writeUntrusted is WriteUntrusted with the token's randomness read from
// random.
func writeUntrusted(w io.Writer, text string, random io.Reader) error {
	w = commandWriter(w)
	text = textsafe.Text(text)
	token, err := randomToken(random, "benchgate-", []string{strings.ToLower(text)})
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, "::stop-commands::"+token+"\n"); err != nil {
		return err
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err = io.WriteString(w, text)
	// Resume even after a failed write: a log left with commands stopped
	// would swallow the step's later annotations.
	if _, rerr := io.WriteString(w, "::"+token+"::\n"); err == nil {
		err = rerr
	}
	return err
}

// LogWriter writes a step's log, such as benchgate's progress and terminal
// report, so that no line of it is a workflow command, whatever the text
// a pull request or a target put into it: the runner acts on a line that
// starts with "::" after white space, and on "##[name]" (the older form)
// anywhere in a line, so the first ':' of such a start is written "\u003a"
// and the '[' of every "##[" "\u005b": escapes a person reads, and that
// JSON decodes back to the character, so `benchgate compare -format json`
// piped on in a step stays the same data (JSON never starts a line with
// "::"). A line,
// for this, ends at '\n' or '\r', as the runner reads it. Lines are written
// whole; Flush ends an unfinished one. Text written through it is not made
// safe for a terminal: that is textsafe's job, done where the text is made.
// Annotations go to the writer under it, after a Flush.
type LogWriter struct {
	w    io.Writer
	line []byte // the unfinished line
}

// NewLogWriter returns a LogWriter writing to w.
func NewLogWriter(w io.Writer) *LogWriter { return &LogWriter{w: w} }

// StepLog returns w as a step's log: a LogWriter over it, or w itself when
// it is a regular file the output was redirected to (`benchgate compare
// -format json > x.json`), whose bytes must stay as written. flush ends
// the log's unfinished line.
func StepLog(w io.Writer) (log io.Writer, flush func() error) {
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return w, func() error { return nil }
		}
	}
	l := NewLogWriter(w)
	return l, l.Flush
}

// StepLogs is StepLog of a command's stdout and stderr, with one flush of
// both.
func StepLogs(stdout, stderr io.Writer) (outLog, errLog io.Writer, flush func()) {
	outLog, flushOut := StepLog(stdout)
	errLog, flushErr := StepLog(stderr)
	return outLog, errLog, func() { flushOut(); flushErr() }
}

// Write writes every line p completes, and keeps the rest for the next
// Write or Flush.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.line = append(l.line, p...)
	end := bytes.LastIndexAny(l.line, "\r\n") + 1
	if end == 0 {
		return len(p), nil
	}
	text := noCommands(string(l.line[:end]))
	l.line = append(l.line[:0], l.line[end:]...)
	if _, err := io.WriteString(l.w, text); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes an unfinished line with a newline ending it, so that what is
// written next to the writer under it starts a line of its own.
func (l *LogWriter) Flush() error {
	if len(l.line) == 0 {
		return nil
	}
	text := noCommands(string(l.line)) + "\n"
	l.line = l.line[:0]
	_, err := io.WriteString(l.w, text)
	return err
}

// noCommands returns s with no line of it a workflow command, as LogWriter
// says.
func noCommands(s string) string {
	if !strings.Contains(s, "::") && !strings.Contains(s, "##[") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for s != "" {
		line, sep := s, ""
		if i := strings.IndexAny(s, "\r\n"); i >= 0 {
			line, sep, s = s[:i], s[i:i+1], s[i+1:]
		} else {
			s = ""
		}
		// .NET's TrimStart, which the runner uses, trims what Unicode
		// calls white space, as unicode.IsSpace does.
		if t := strings.TrimLeftFunc(line, unicode.IsSpace); strings.HasPrefix(t, "::") {
			k := len(line) - len(t)
			line = line[:k] + `\u003a` + line[k+1:]
		}
		b.WriteString(strings.ReplaceAll(line, "##[", `##\u005b`))
		b.WriteString(sep)
	}
	return b.String()
}
