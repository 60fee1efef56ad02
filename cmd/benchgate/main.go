// Command benchgate is a performance-regression gate: it measures a baseline
// and a candidate build of a service under the identical seeded workload,
// interleaved, decides every cell with a pre-registered tie rule, reports,
// and exits non-zero on a pre-declared regression.
//
// main is a few lines over run, so the whole CLI is testable in-process.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/benchgate/benchgate/ghaction"
)

func main() { os.Exit(mainExit(os.Args[1:])) }

// mainExit runs the CLI with SIGINT/SIGTERM cancelling the run and returns
// the exit code.
func mainExit(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal cancels the run, which then stops its targets and
	// writes what it measured; a second one kills benchgate at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, args, os.Stdout, os.Stderr, os.Getenv)
	if err != nil && !errors.Is(err, errSilent) {
		msg := "benchgate: " + err.Error() + "\n"
		if os.Getenv("GITHUB_ACTIONS") == "true" {
			// Errors carry text a pull request controls (target output,
			// values from a fork's results file): in a workflow log it
			// must not be read as workflow commands.
			ghaction.WriteUntrusted(os.Stderr, msg)
		} else {
			fmt.Fprint(os.Stderr, msg)
		}
	}
	return exitCode(err)
}
