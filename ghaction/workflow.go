package ghaction

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The runner unescapes a command's message and properties by replacing
// these sequences back; a single-pass replacer escapes '%' first in effect,
// so a literal "%0A" in the text survives as "%250A" instead of becoming a
// line break.
var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// EscapeData escapes the message of a workflow command, so that no text can
// end the command's line and start a command of its own.
func EscapeData(s string) string { return dataEscaper.Replace(s) }

// EscapeProperty escapes a property value of a workflow command. Beyond
// EscapeData it escapes ':' and ',', which would otherwise end the property
// list ("::") or start another property.
func EscapeProperty(s string) string { return propertyEscaper.Replace(s) }

// Annotate writes an annotation command, ::level title=T,file=F,line=N::message,
// leaving out an empty title, an empty file and a line below 1. level is the
// command's name and cannot be escaped, so only error, warning and notice are
// accepted.
func Annotate(w io.Writer, level, title, message string, file string, line int) error {
	switch level {
	case "error", "warning", "notice":
	default:
		return fmt.Errorf("annotation level %q: want error, warning or notice", level)
	}
	var props []string
	if title != "" {
		props = append(props, "title="+EscapeProperty(title))
	}
	if file != "" {
		props = append(props, "file="+EscapeProperty(file))
	}
	if line > 0 {
		props = append(props, "line="+strconv.Itoa(line))
	}
	cmd := "::" + level
	if len(props) > 0 {
		cmd += " " + strings.Join(props, ",")
	}
	_, err := io.WriteString(w, cmd+"::"+EscapeData(message)+"\n")
	return err
}

// Warning writes a warning annotation with no title or location.
func Warning(w io.Writer, msg string) error { return Annotate(w, "warning", "", msg, "", 0) }

// Notice writes a notice annotation with no title or location.
func Notice(w io.Writer, msg string) error { return Annotate(w, "notice", "", msg, "", 0) }

// StopCommands makes the runner stop interpreting workflow commands in the
// log until resume is called, so that text a pull request controls (a
// target's log) can be printed as it is: a line "::error::…" or
// "::add-mask::…" in it is then just a line. The token that ends the pause
// is random, so the text cannot hold it in advance. If err is not nil the
// pause may not be in effect, and the text must not be printed.
// Calling resume again does nothing.
func StopCommands(w io.Writer) (resume func() error, err error) {
	return stopCommands(w, nil)
}

// WriteUntrusted writes text to w with workflow commands stopped around it,
// checking that the token resuming them does not occur in text. A missing
// final newline is added, so that the resume command starts its own line.
func WriteUntrusted(w io.Writer, text string) error {
	resume, err := stopCommands(w, []string{text})
	if err != nil {
		return err
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err = io.WriteString(w, text)
	// Resume even after a failed write: a log left with commands stopped
	// would swallow the step's later annotations.
	if rerr := resume(); err == nil {
		err = rerr
	}
	return err
}

func stopCommands(w io.Writer, avoid []string) (func() error, error) {
	token, err := randomToken("benchgate-", avoid)
	if err != nil {
		return nil, err
	}
	if _, err := io.WriteString(w, "::stop-commands::"+token+"\n"); err != nil {
		return nil, err
	}
	done := false
	return func() error {
		if done {
			return nil
		}
		done = true
		_, err := io.WriteString(w, "::"+token+"::\n")
		return err
	}, nil
}
