// Command benchgate is a performance-regression gate: it measures a baseline
// and a candidate build of a service under the identical seeded workload,
// interleaved, decides every cell with a pre-registered tie rule, reports,
// and exits non-zero on a pre-declared regression.
//
// main is a few lines over run, so the whole CLI is testable in-process;
// mainExit adds the supervisor and the scrub of the environment.
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/benchgate/benchgate/ghaction"
	"github.com/benchgate/benchgate/internal/cli"
	"github.com/benchgate/benchgate/internal/environ"
	"github.com/benchgate/benchgate/internal/supervise"
)

func main() { os.Exit(mainExit(os.Args[1:])) }

// mainExit runs the CLI and returns the exit code. The CLI runs in a
// supervised child of this process (package supervise): Go exits 2 on a
// crash, the code of an invalid scenario, and only a parent can tell the
// two apart, so a crash exits cli.ExitRunFailed and says it is one. Each of
// the two processes first overwrites the runner's credentials in its
// initial environment block (package environ), which /proc/PID/environ
// shows to anything it starts.
func mainExit(args []string) int {
	child := supervise.Child()
	scrubErr := environ.Scrub()
	if !child {
		ex, err := supervise.Run(append([]string{"benchgate"}, args...))
		if err == nil {
			return supervisedExit(ex)
		}
		warn("cannot start a supervised child (" + err.Error() + "): running unsupervised, so a crash exits 2, not 3")
	}
	if scrubErr != nil {
		warn("the runner's credentials may still be readable in /proc/" + strconv.Itoa(os.Getpid()) + "/environ: " + scrubErr.Error())
	}
	if child && testCrash != nil {
		testCrash()
	}
	return runCLI(args, child)
}

// testCrash, set only in the test binary (crash_test.go), crashes the
// supervised child as BENCHGATE_TEST_CRASH says.
var testCrash func()

// runCLI runs the CLI in this process with SIGINT/SIGTERM cancelling the
// run, and returns the exit code.
func runCLI(args []string, supervised bool) int {
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
	err := run(ctx, args, os.Stdout, os.Stderr, os.Getenv)
	if err != nil && !errors.Is(err, cli.ErrSilent) {
		printError("benchgate: " + err.Error())
	}
	return cli.ExitCode(err)
}

// supervisedExit is the exit code of a supervised child's end. A crash
// says so after the runtime's report (which the child printed on stderr)
// and is cli.ExitRunFailed: never a code that blames the input.
func supervisedExit(ex supervise.Exit) int {
	switch {
	case ex.Crashed():
		printError(cli.CrashMessage(ex.Reason()))
		return cli.ExitRunFailed
	case ex.KilledBy != 0:
		// Run could not die of the second signal (process 1 of a
		// container ignores it): the run was stopped all the same.
		printError("benchgate: stopped at once by a second " + ex.KilledBy.String())
		return cli.ExitRunFailed
	}
	return ex.Code
}

// printError and warn print benchgate's own messages on stderr
// (ghaction.PrintError and PrintWarning).
func printError(msg string) {
	ghaction.PrintError(os.Stderr, os.Getenv("GITHUB_ACTIONS") == "true", msg)
}

func warn(msg string) {
	ghaction.PrintWarning(os.Stderr, os.Getenv("GITHUB_ACTIONS") == "true", msg)
}
