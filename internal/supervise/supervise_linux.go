package supervise

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"
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
