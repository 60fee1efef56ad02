package runner

import (
	"os"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/target/process"
	"github.com/benchgate/benchgate/target/targettest"
)

func TestPinGenerator(t *testing.T) {
	// Not parallel: pinning the generator sets the mask of every thread of
	// the process, and the locked goroutines below end their threads,
	// which would SIGKILL (Pdeathsig) any target another test forked on
	// one of them.
	var proc unix.CPUSet
	if err := unix.SchedGetaffinity(os.Getpid(), &proc); err != nil {
		t.Fatal(err)
	}
	if !proc.IsSet(0) {
		t.Skipf("CPU 0 is not ours to run on (affinity %s)", process.FormatCPUSet(proc))
	}
	before := targettest.ThreadMasks(t)
	procs := runtime.GOMAXPROCS(0)

	// The last CPU a unix.CPUSet holds, which no machine here has.
	for _, bad := range []string{"x", strconv.Itoa(len(unix.CPUSet{})*64 - 1)} {
		if restore, _, err := pinGenerator(bad); err == nil {
			restore()
			t.Errorf("pinGenerator(%q) took, want an error", bad)
		}
	}
	targettest.CheckMasksRestored(t, before, proc)

	restore, applied, err := pinGenerator("0")
	if err != nil {
		t.Fatal(err)
	}
	if applied != "cpuset 0 (affinity, GOMAXPROCS 1)" {
		t.Errorf("applied %q", applied)
	}
	// A thread created now inherits the mask of its creator: start some.
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() {
			runtime.LockOSThread()
			<-done
		}()
	}
	runtime.Gosched()
	masks := targettest.ThreadMasks(t)
	var cpu0 unix.CPUSet
	cpu0.Set(0)
	for tid, m := range masks {
		if m != cpu0 {
			t.Errorf("pinned: thread %d has affinity %s, want 0", tid, process.FormatCPUSet(m))
		}
	}
	if len(masks) < 2 {
		t.Errorf("only %d threads looked at", len(masks))
	}
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("GOMAXPROCS %d while pinned to one CPU", n)
	}
	if n := processCPUSeconds(); n <= 0 {
		t.Errorf("processCPUSeconds %v", n)
	}
	restore()
	restore() // a second call changes nothing
	close(done)
	targettest.CheckMasksRestored(t, before, proc)
	if n := runtime.GOMAXPROCS(0); n != procs {
		t.Errorf("GOMAXPROCS %d after restore, was %d", n, procs)
	}
}

func TestProcessCPUSeconds(t *testing.T) {
	t.Parallel()
	first := processCPUSeconds()
	if first <= 0 {
		t.Fatalf("processCPUSeconds %v: the test has run code already", first)
	}
	// Spin until the clock moves: no duration is assumed.
	x := 1
	for processCPUSeconds() == first {
		for i := 0; i < 1e5; i++ {
			x = x*31 + i
		}
	}
	if last := processCPUSeconds(); last < first {
		t.Errorf("went back from %v to %v (%d)", first, last, x)
	}
}
