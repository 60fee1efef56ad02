package main

import (
	"os"
	"runtime/debug"
	"syscall"
)

// In the test binary the supervised child can be made to crash, in each of
// the ways that matter and each deterministically, before it runs the CLI:
// BENCHGATE_TEST_CRASH=panic panics in a goroutine (exit 2, "panic: ..."),
// =fatal overflows a small stack (exit 2, "fatal error: stack overflow",
// the path of "fatal error: out of memory" too), =kill dies of SIGKILL, as
// from the kernel's out-of-memory killer. crash.txtar checks what the
// supervisor makes of each.
func init() {
	testCrash = func() {
		switch os.Getenv("BENCHGATE_TEST_CRASH") {
		case "panic":
			done := make(chan struct{})
			go func() { panic("benchgate test crash") }()
			<-done
		case "fatal":
			debug.SetMaxStack(1 << 16)
			var recurse func(int) int
			recurse = func(n int) int { return recurse(n+1) + 1 }
			recurse(0)
		case "kill":
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
}
