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
		fmt.Fprintln(os.Stderr, "benchgate:", err)
	}
	return exitCode(err)
}
