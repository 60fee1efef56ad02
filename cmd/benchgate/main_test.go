package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The scripts in testdata/script drive the real CLI end to end: real child
// processes as targets, real HTTP load on loopback, exit codes checked.
// "benchgate" is this binary run as the CLI; "expect-exit N benchgate ARGS"
// runs the CLI and succeeds only when it exits with N, so scripts pin exact
// exit codes.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"benchgate": func() { os.Exit(mainExit(os.Args[1:])) },
		"expect-exit": func() {
			want, err := strconv.Atoi(os.Args[1])
			if err != nil || len(os.Args) < 3 || os.Args[2] != "benchgate" {
				fmt.Fprintln(os.Stderr, "usage: expect-exit CODE benchgate ARGS...")
				os.Exit(100)
			}
			if got := mainExit(os.Args[3:]); got != want {
				fmt.Fprintf(os.Stderr, "expect-exit: benchgate exited %d, want %d\n", got, want)
				os.Exit(101)
			}
			os.Exit(0)
		},
	})
}

func TestScripts(t *testing.T) {
	bin := t.TempDir()
	build := func(name, pkg string, ldflags string) string {
		out := filepath.Join(bin, name)
		args := []string{"build", "-o", out}
		if ldflags != "" {
			args = append(args, "-ldflags", ldflags)
		}
		cmd := exec.Command("go", append(args, pkg)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
		return out
	}
	demo := build("demo", "../../examples/demo", "")
	demoSlow := build("demo-slow", "../../examples/demo", "-X main.defaultSlow=search=5")
	faulty := build("faulty", "./testdata/faulty", "")
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}

	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("DEMO", demo)
			env.Setenv("DEMO_SLOW", demoSlow)
			env.Setenv("FAULTY", faulty)
			env.Setenv("NO_COLOR", "1")
			env.Setenv("REPO", repo)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"no-process": cmdNoProcess,
			"wait-file":  cmdWaitFile,
		},
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") != "",
	})
}

// cmdNoProcess asserts that the process whose id is in each named file has
// gone: benchgate must leave nothing behind.
func cmdNoProcess(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: no-process PIDFILE...")
	}
	for _, f := range args {
		pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(f)))
		if err != nil {
			ts.Fatalf("%s: %v", f, err)
		}
		err = syscall.Kill(pid, 0)
		if !errors.Is(err, syscall.ESRCH) {
			ts.Fatalf("process %d from %s is still there (kill 0: %v)", pid, f, err)
		}
	}
}

// cmdWaitFile waits until a file contains a text: scripts use it to act at a
// point of a run that does not depend on timing. The wait is bounded so a
// broken run fails the script instead of hanging it.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: wait-file FILE TEXT")
	}
	path := ts.MkAbs(args[0])
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), args[1]) {
			return
		}
	}
	ts.Fatalf("%s never contained %q", args[0], args[1])
}
