package supervise

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary is its own child: with SUPERVISE_TEST set, a process
// started by Run does what the mode says instead of running the tests, and
// mode "supervisor" is a process that runs such a child, for the test of
// what a second signal does to the supervisor itself.
func TestMain(m *testing.M) {
	if mode := os.Getenv("SUPERVISE_TEST"); mode != "" {
		if mode == "supervisor" {
			os.Setenv("SUPERVISE_TEST", "stubborn")
			ex, err := Run([]string{"child"})
			if err != nil {
				os.Exit(100)
			}
			os.Exit(ex.Code)
		}
		if Child() {
			os.Exit(child(mode))
		}
		os.Exit(101) // started with the mode, but not by Run
	}
	os.Exit(m.Run())
}

// child plays a supervised child; $SUPERVISE_FILE is where it reports.
func child(mode string) int {
	report := func(s string) { os.WriteFile(os.Getenv("SUPERVISE_FILE"), []byte(s), 0o644) }
	switch mode {
	case "exit2":
		return 2
	case "panic":
		go panic("supervise test: boom")
		select {}
	case "kill":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	case "env":
		_, set := os.LookupEnv(marker)
		report(strconv.FormatBool(set))
		return 0
	case "term":
		// Exits 7 on SIGTERM, as benchgate exits 3 once a signal has
		// cancelled its run.
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM)
		report("ready")
		<-sigs
		return 7
	case "stubborn":
		// Takes any number of signals as one request that it never
		// completes: only a kill ends it.
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
		report(strconv.Itoa(os.Getpid()))
		time.Sleep(time.Hour) // not select{}: that is a deadlock, a crash
	}
	return 102
}

func runMode(t *testing.T, mode string) (Exit, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "report")
	t.Setenv("SUPERVISE_TEST", mode)
	t.Setenv("SUPERVISE_FILE", file)
	ex, err := Run([]string{"child"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	return ex, string(b)
}

func TestExitCodePassesThrough(t *testing.T) {
	ex, _ := runMode(t, "exit2")
	if ex.Code != 2 || ex.Crashed() || ex.Signal != 0 || ex.Crash != "" {
		t.Errorf("exit 2: %+v, want code 2 and no crash", ex)
	}
}

func TestPanicIsACrash(t *testing.T) {
	ex, _ := runMode(t, "panic")
	if !ex.Crashed() || ex.Code != 2 {
		t.Errorf("panic: %+v, want a crash of exit code 2", ex)
	}
	if got, want := ex.Reason(), "panic: supervise test: boom"; got != want {
		t.Errorf("Reason() = %q, want %q", got, want)
	}
	if !strings.Contains(ex.Crash, "goroutine ") {
		t.Errorf("the crash report has no traceback:\n%s", ex.Crash)
	}
}

func TestKillIsACrash(t *testing.T) {
	ex, _ := runMode(t, "kill")
	if !ex.Crashed() || ex.Signal != syscall.SIGKILL {
		t.Errorf("SIGKILL: %+v, want a crash by SIGKILL", ex)
	}
	if got := ex.Reason(); !strings.HasPrefix(got, "killed by SIGKILL") {
		t.Errorf("Reason() = %q", got)
	}
}

func TestMarkerNotInherited(t *testing.T) {
	_, set := runMode(t, "env")
	if set != "false" {
		t.Errorf("the child's environment still has %s: %q", marker, set)
	}
}

// TestForwardsSignal sends SIGTERM to the supervisor (this process): the
// child gets it, and its own exit code is the supervisor's answer.
func TestForwardsSignal(t *testing.T) {
	file := filepath.Join(t.TempDir(), "report")
	t.Setenv("SUPERVISE_TEST", "term")
	t.Setenv("SUPERVISE_FILE", file)
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if b, _ := os.ReadFile(file); string(b) == "ready" {
				syscall.Kill(os.Getpid(), syscall.SIGTERM)
				return
			}
		}
	}()
	ex, err := Run([]string{"child"})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Code != 7 || ex.Crashed() || ex.KilledBy != 0 {
		t.Errorf("after SIGTERM: %+v, want the child's exit 7", ex)
	}
}

// TestSecondSignalKills: the first SIGTERM goes to the child, which does
// not stop; the second kills the child at once, and the supervisor dies of
// that signal, as an unsupervised program would have.
func TestSecondSignalKills(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "report")
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "SUPERVISE_TEST=supervisor", "SUPERVISE_FILE="+file)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var childPid int
	for deadline := time.Now().Add(time.Minute); childPid == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child never started")
		}
		b, _ := os.ReadFile(file)
		childPid, _ = strconv.Atoi(string(b))
	}
	cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond)
	if err := syscall.Kill(childPid, 0); err != nil {
		t.Errorf("the first SIGTERM ended the stubborn child: %v", err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("the supervisor ended with %v, want death by SIGTERM", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if err := syscall.Kill(childPid, 0); errors.Is(err, syscall.ESRCH) {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(childPid, syscall.SIGKILL)
			t.Fatalf("child %d outlived the second signal", childPid)
		}
	}
}

func TestReason(t *testing.T) {
	for _, tc := range []struct {
		ex   Exit
		want string
	}{
		{Exit{Crash: "\nruntime stack:\nruntime.throw({0x4f3b5e?, 0x200000008?})\n\t/usr/local/go/src/runtime/panic.go:1229 +0x48\n\ngoroutine 1 gp=0x1 m=0 mp=0x2 [running]:\n"}, `a fatal error of the Go runtime (its "fatal error:" line above says which)`},
		{Exit{Crash: "goroutine 1 [running]:\nmain.main()\n"}, `a fatal error of the Go runtime (its "fatal error:" line above says which)`},
		{Exit{Crash: "fatal error: out of memory\n"}, "fatal error: out of memory"},
		{Exit{Crash: "panic: x [recovered]\n\tpanic: y\n"}, "panic: x [recovered]"},
		{Exit{Crash: "\nSIGQUIT: quit\nPC=0x0\n"}, "SIGQUIT: quit"},
		{Exit{Crash: "panic: " + strings.Repeat("é", 400)}, "panic: " + strings.Repeat("é", (maxReason-len("panic: "))/2) + "…"},
		{Exit{Signal: syscall.SIGKILL, Code: -1}, "killed by SIGKILL (the kernel's out-of-memory killer sends it)"},
		{Exit{Signal: syscall.SIGSEGV, Code: -1}, "killed by signal segmentation fault"},
	} {
		if got := tc.ex.Reason(); got != tc.want {
			t.Errorf("Reason() of %+v = %q, want %q", tc.ex, got, tc.want)
		}
	}
	if (Exit{Signal: syscall.SIGKILL, KilledBy: syscall.SIGINT}).Crashed() {
		t.Error("a child killed on a second signal counts as a crash")
	}
}
