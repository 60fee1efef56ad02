package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/benchgate/benchgate/internal/environ"
	"github.com/benchgate/benchgate/internal/supervise"
)

// Process is how benchgate runs as a process: the CLI itself (Run), and
// how it says its own errors and warnings on stderr.
type Process struct {
	// Run is the whole CLI, run in this process.
	Run func(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error
	// PrintError and Warn print benchgate's own messages on stderr.
	PrintError, Warn func(msg string)
	// Crash, set only by a test, crashes the supervised child.
	Crash func()
}

// Main runs the CLI and returns the exit code. The CLI runs in a
// supervised child of this process (package supervise): Go exits 2 on a
// crash, the code of an invalid input, and only a parent can tell the
// two apart, so a crash exits ExitRunFailed and says it is one. Each of
// the two processes first overwrites the runner's credentials in its
// initial environment block (package environ), which /proc/PID/environ
// shows to anything it starts.
func (p Process) Main(args []string) int {
	child := supervise.Child()
	scrubErr := environ.Scrub()
	if !child {
		ex, err := supervise.Run(append([]string{"benchgate"}, args...))
		if err == nil {
			return p.supervisedExit(ex)
		}
		p.Warn("cannot start a supervised child (" + err.Error() + "): running unsupervised, so a crash exits 2, not 3")
	}
	if scrubErr != nil {
		p.Warn("the runner's credentials may still be readable in /proc/" + strconv.Itoa(os.Getpid()) + "/environ: " + scrubErr.Error())
	}
	if child && p.Crash != nil {
		p.Crash()
	}
	return p.runHere(args, child)
}

// runHere runs the CLI in this process with SIGINT/SIGTERM cancelling the
// run, and returns the exit code.
func (p Process) runHere(args []string, supervised bool) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !supervised {
		// The first signal cancels the run, which then stops its
		// targets and writes what it measured; a second one kills
		// benchgate at once. Supervised, the supervisor counts them,
		// since a signal sent to the process group (a terminal's ^C)
		// arrives here twice: once sent, once forwarded.
		go func() {
			<-ctx.Done()
			stop()
		}()
	}
	err := p.Run(ctx, args, os.Stdout, os.Stderr, os.Getenv)
	if err != nil && !errors.Is(err, ErrSilent) {
		p.PrintError("benchgate: " + err.Error())
	}
	return ExitCode(err)
}

// supervisedExit is the exit code of a supervised child's end. A crash
// says so after the runtime's report (which the child printed on stderr)
// and is ExitRunFailed: never a code that blames the input.
func (p Process) supervisedExit(ex supervise.Exit) int {
	switch {
	case ex.Crashed():
		p.PrintError(CrashMessage(ex.Reason()))
		return ExitRunFailed
	case ex.KilledBy != 0:
		// Run could not die of the second signal (process 1 of a
		// container ignores it): the run was stopped all the same.
		p.PrintError("benchgate: stopped at once by a second " + ex.KilledBy.String())
		return ExitRunFailed
	}
	return ex.Code
}
