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
	"strings"
	"syscall"
	"unicode/utf8"

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
			// The same text on a terminal must not carry escape sequences.
			fmt.Fprint(os.Stderr, visible(msg))
		}
	}
	return exitCode(err)
}

// visible shows control characters other than newline and tab, and
// invalid UTF-8, as escapes, so text from a target or a results file
// cannot drive the terminal it is printed on.
func visible(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
