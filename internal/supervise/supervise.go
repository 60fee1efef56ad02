// Package supervise runs a program as a child of itself, so that a crash
// can be told from an ordinary exit. Go's runtime exits 2 on an unrecovered
// panic and on a fatal error such as "out of memory", the code a CLI may
// well give an invalid input; only another process can tell them apart.
//
// Run starts the same executable again with this process's arguments,
// standard files and environment, plus a marker variable and a pipe that
// the child, through Child, makes its runtime's crash output: a crash
// report arrives there as well as on stderr. The supervisor forwards
// SIGINT and SIGTERM, kills the child at once on a second one, and has the
// kernel kill the child if the supervisor dies. It costs one exec.
package supervise

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// marker tells a child started by Run that it is one; crashFD is the
// descriptor of its crash pipe (the first of exec.Cmd's ExtraFiles).
const (
	marker  = "BENCHGATE_SUPERVISED"
	crashFD = 3
)

// maxCrash bounds the crash report kept: its first lines say what it was,
// and a dump of every goroutine can run to megabytes.
const maxCrash = 64 << 10

// Child reports whether this process was started by Run, and if so makes
// the crash pipe its runtime's crash output and takes the marker out of
// its environment, so that what it starts is not taken for a child of Run.
// Call it first thing, before anything that could crash or start a
// process.
func Child() bool {
	if os.Getenv(marker) == "" {
		return false
	}
	os.Unsetenv(marker)
	var st syscall.Stat_t
	if err := syscall.Fstat(crashFD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return true // not Run's pipe: no crash output, and nothing of ours to close
	}
	f := os.NewFile(crashFD, "crash-output")
	// SetCrashOutput keeps a close-on-exec duplicate; closing the
	// inherited descriptor keeps it from every process the child starts,
	// so the pipe ends when the child does.
	debug.SetCrashOutput(f, debug.CrashOptions{})
	f.Close()
	return true
}

// Exit is how a supervised child ended.
type Exit struct {
	Code   int            // its exit code, or -1 when a signal killed it
	Signal syscall.Signal // the signal that killed it, or 0
	Crash  string         // the start of its crash report, "" if none
	// KilledBy is the second SIGINT or SIGTERM that made Run kill the
	// child, or 0.
	KilledBy syscall.Signal
}

// Crashed reports whether the child crashed: its runtime wrote a crash
// report, or a signal killed it that was not Run's own (the kernel's
// out-of-memory killer sends SIGKILL).
func (e Exit) Crashed() bool {
	return e.Crash != "" || e.Signal != 0 && e.KilledBy == 0
}

// Reason is the line that says what the crash was: the report's "panic:"
// line, or its first line unless a traceback starts there (a fatal
// signal's "SIGSEGV: segmentation violation" does not), cut to maxReason bytes, since a
// panic's value may be any text; else what killed the child. The runtime
// prints a fatal error's own line ("fatal error: out of memory") before it
// copies its output to the crash pipe, so that line is on stderr only.
func (e Exit) Reason() string {
	var first string
	seen := false
	for line := range strings.Lines(e.Crash) {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			return cut(l)
		}
		if !seen && l != "" {
			seen = true
			if l != "runtime stack:" && !strings.HasPrefix(l, "goroutine ") {
				first = l
			}
		}
	}
	switch {
	case first != "":
		return cut(first)
	case e.Crash != "":
		return `a fatal error of the Go runtime (its "fatal error:" line above says which)`
	case e.Signal == syscall.SIGKILL:
		return "killed by SIGKILL (the kernel's out-of-memory killer sends it)"
	case e.Signal != 0:
		return "killed by signal " + e.Signal.String()
	}
	return ""
}

const maxReason = 300

func cut(s string) string {
	if len(s) <= maxReason {
		return s
	}
	s = s[:maxReason]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// Run runs this executable as a supervised child with argv (argv[0] is the
// name it is started under) and waits for it. An error means no child
// could be started: the caller can run in its own process instead. After
// a second signal, Run kills the child and then tries to die of that
// signal, as an unsupervised program would have; it returns only where
// that signal cannot kill it (as process 1 of a container).
func Run(argv []string) (Exit, error) {
	exe, err := os.Executable()
	if err != nil {
		return Exit{}, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return Exit{}, err
	}
	defer pr.Close()
	cmd := &exec.Cmd{
		Path:       exe,
		Args:       argv,
		Env:        append(os.Environ(), marker+"=1"),
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		ExtraFiles: []*os.File{pw},
		// The child dies with the supervisor: a SIGKILLed benchgate
		// stops at once, as it did before it had a supervisor.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	// Linux sends Pdeathsig when the thread that forked the child ends,
	// not the process; this goroutine keeps its thread to itself until
	// the child is gone, and none of Go's threads ends otherwise.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return Exit{}, err
	}

	crash := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		io.CopyN(&b, pr, maxCrash)
		io.Copy(io.Discard, pr) // a full pipe would block the crashing child
		crash <- b.String()
	}()
	killed := make(chan syscall.Signal, 1)
	done := make(chan struct{})
	go func() {
		first := true
		for {
			select {
			case s := <-sigs:
				if first {
					// A signal sent to the group (a terminal's ^C)
					// reaches the child too: it takes a repeat as
					// the same request, so this is harmless.
					cmd.Process.Signal(s)
					first = false
					continue
				}
				killed <- s.(syscall.Signal)
				cmd.Process.Kill()
				return
			case <-done:
				return
			}
		}
	}()
	cmd.Wait()
	close(done)

	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	ex := Exit{Code: cmd.ProcessState.ExitCode()}
	if ws.Signaled() {
		ex.Signal = ws.Signal()
	}
	select {
	case ex.KilledBy = <-killed:
	default:
	}
	select {
	case ex.Crash = <-crash:
	case <-time.After(time.Second):
		// Only a process that inherited the pipe before Child closed it
		// can hold it open; the child is gone, and so is its report.
	}
	if ex.KilledBy != 0 {
		signal.Reset(ex.KilledBy)
		syscall.Kill(os.Getpid(), ex.KilledBy)
		time.Sleep(100 * time.Millisecond) // the signal is on its way
	}
	return ex, nil
}
