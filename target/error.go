package target

import (
	"fmt"
	"strings"
)

// Target phases named by a TargetError.
const (
	PhaseBuild  = "build"
	PhaseStart  = "start"
	PhaseHealth = "health"
	PhaseDied   = "died"
	// PhaseSetup is a compose target's setup step, after its stack is
	// healthy and before the first rung.
	PhaseSetup = "setup"
)

// TargetError is a target that could not be built, started or made healthy,
// or that died during the run. Output holds the last lines the target (or
// its build) wrote, which is usually the only clue to what went wrong.
type TargetError struct {
	Target string // "baseline" or "candidate"
	Phase  string // PhaseBuild, PhaseStart, PhaseHealth, PhaseSetup or PhaseDied
	Err    error
	Output []string
}

// Error is printed to the terminal and stored in results.json, and the
// output lines (and even the error's text, such as a status line) come from
// the PR's code: control characters are escaped, so no escape sequence can
// rewrite the terminal or hide lines, and each is capped (MaxErrText,
// MaxErrLine), so a 3 MB reason phrase cannot fill the log or the results.
func (e *TargetError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s target: %s: %s", e.Target, e.Phase, CapText(Sanitize(fmt.Sprint(e.Err)), MaxErrText))
	if len(e.Output) > 0 {
		fmt.Fprintf(&b, "\nlast %d lines of its output:", len(e.Output))
		for _, l := range e.Output {
			b.WriteString("\n  | ")
			b.WriteString(CapText(Sanitize(l), MaxErrLine))
		}
	}
	return b.String()
}

func (e *TargetError) Unwrap() error { return e.Err }

// DiedError is Service.Died for a target whose exit closes exited (nil
// until it started) and whose Stop closes stopping: nil unless it exited
// while it should have been serving. Then cause says what it exited of
// and gives the tail of its output; a nil cause means it did not die after
// all (a watch that ended without an exit, as Stop raced it).
func DiedError(name string, exited, stopping <-chan struct{}, cause func() (error, []string)) error {
	if exited == nil {
		return nil
	}
	select {
	case <-stopping:
		return nil
	default:
	}
	select {
	case <-exited:
		err, output := cause()
		if err == nil {
			return nil
		}
		return &TargetError{Target: name, Phase: PhaseDied, Err: fmt.Errorf("exited during the run: %v", err), Output: output}
	default:
		return nil
	}
}
