package main

import "errors"

// Exit codes, as usageText and the README list them: a script tells a
// regression from a bad input from a run that failed by the code alone.
// A crash of benchgate is exitRunFailed, never exitUsage, although the Go
// runtime exits 2 (see crashMessage).
const (
	exitPass       = 0
	exitRegression = 1
	exitUsage      = 2
	exitRunFailed  = 3
)

// exitError carries an exit code with the error that caused it.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// errSilent marks an error whose message has already been shown (usage
// text after -h, say); main prints nothing more.
var errSilent = errors.New("silent")

// exitCode maps an error to the process exit code: an error that knows its
// code says it; any other error means the run itself failed.
func exitCode(err error) int {
	if err == nil {
		return exitPass
	}
	var c interface{ ExitCode() int }
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return exitRunFailed
}

// crashMessage is what benchgate says after a crash of its own (a panic, a
// fatal error of the Go runtime such as out of memory, a kill by the
// kernel), whose report the runtime has printed above it. The exit code
// is exitRunFailed: a crash must never read as a fault of the input.
func crashMessage(reason string) string {
	return "benchgate crashed: " + reason + "; this is a bug in benchgate, not in your input: please report it, with the output above, at https://github.com/benchgate/benchgate/issues"
}
