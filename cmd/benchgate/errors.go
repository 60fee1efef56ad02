package main

import "errors"

// Exit codes of DESIGN.md.
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
