// Command benchgate is a performance-regression gate: it measures a baseline
// and a candidate build of a service under the identical seeded workload,
// interleaved, decides every cell with a pre-registered tie rule, reports,
// and exits non-zero on a pre-declared regression.
//
// main is a few lines over run, so the whole CLI is testable in-process;
// mainExit runs it as benchgate's process (cli.Process: the supervisor
// and the scrub of the environment).
package main

import (
	"os"

	"github.com/benchgate/benchgate/ghaction"
	"github.com/benchgate/benchgate/internal/cli"
)

func main() { os.Exit(mainExit(os.Args[1:])) }

// mainExit runs the CLI as benchgate's process and returns the exit code.
func mainExit(args []string) int {
	return cli.Process{Run: run, PrintError: printError, Warn: warn, Crash: testCrash}.Main(args)
}

// testCrash, set only in the test binary (crash_test.go), crashes the
// supervised child as BENCHGATE_TEST_CRASH says.
var testCrash func()

// printError and warn print benchgate's own messages on stderr
// (ghaction.PrintError and PrintWarning).
func printError(msg string) {
	ghaction.PrintError(os.Stderr, os.Getenv("GITHUB_ACTIONS") == "true", msg)
}

func warn(msg string) {
	ghaction.PrintWarning(os.Stderr, os.Getenv("GITHUB_ACTIONS") == "true", msg)
}
