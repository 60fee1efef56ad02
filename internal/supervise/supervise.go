// Package supervise runs a program as a child of itself, so that a crash
// can be told from an ordinary exit. Go's runtime exits 2 on an unrecovered
// panic and on a fatal error such as "out of memory", the code a CLI may
// well give an invalid input; only another process can tell them apart.
//
// Run starts the same executable again with this process's arguments,
// standard files and environment, plus a marker variable and a pipe that
// the child, through Child, makes its runtime's crash output: a crash
// report arrives there as well as on stderr. The supervisor forwards
// SIGINT and SIGTERM, kills the child at once on a second one, and has the
// kernel kill the child if the supervisor dies. It costs one exec.
//
// That is Linux's: elsewhere nothing is supervised.
package supervise

import (
	"strings"
	"syscall"
	"unicode/utf8"
)

// Exit is how a supervised child ended.
type Exit struct {
	Code   int            // its exit code, or -1 when a signal killed it
	Signal syscall.Signal // the signal that killed it, or 0
	Crash  string         // the start of its crash report, "" if none
	// KilledBy is the second SIGINT or SIGTERM that made Run kill the
	// child, or 0.
	KilledBy syscall.Signal
}

// Crashed reports whether the child crashed: its runtime wrote a crash
// report, or a signal killed it that was not Run's own (the kernel's
// out-of-memory killer sends SIGKILL).
func (e Exit) Crashed() bool {
	return e.Crash != "" || e.Signal != 0 && e.KilledBy == 0
}

// Reason is the line that says what the crash was: the report's "panic:"
// line, or its first line unless a traceback starts there (a fatal
// signal's "SIGSEGV: segmentation violation" does not), cut to maxReason bytes, since a
// panic's value may be any text; else what killed the child. The runtime
// prints a fatal error's own line ("fatal error: out of memory") before it
// copies its output to the crash pipe, so that line is on stderr only.
func (e Exit) Reason() string {
	var first string
	seen := false
	for line := range strings.Lines(e.Crash) {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			return cut(l)
		}
		if !seen && l != "" {
			seen = true
			if l != "runtime stack:" && !strings.HasPrefix(l, "goroutine ") {
				first = l
			}
		}
	}
	switch {
	case first != "":
		return cut(first)
	case e.Crash != "":
		return `a fatal error of the Go runtime (its "fatal error:" line above says which)`
	case e.Signal == syscall.SIGKILL:
		return "killed by SIGKILL (the kernel's out-of-memory killer sends it)"
	case e.Signal != 0:
		return "killed by signal " + e.Signal.String()
	}
	return ""
}

const maxReason = 300

func cut(s string) string {
	if len(s) <= maxReason {
		return s
	}
	s = s[:maxReason]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
