//go:build linux

package runner

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/process"
)

// pinGenerator pins the load generator, that is all of benchgate, to cpus:
// the affinity of every thread of the process (sched_setaffinity applies to
// one thread, and threads started later inherit the mask of the thread
// that creates them), and GOMAXPROCS to the number of CPUs, so the Go
// scheduler does not run more threads than it has CPUs. restore puts the
// previous masks and GOMAXPROCS back; it may be called more than once.
// Starting a target while pinned is fine: the target gets its own mask.
func pinGenerator(cpus string) (restore func(), applied string, err error) {
	set, err := process.ParseCPUSet(cpus)
	if err != nil {
		return nil, "", err
	}
	if err := process.CheckOnline(set); err != nil {
		return nil, "", fmt.Errorf("generator cpuset %s: %v", cpus, err)
	}
	// A target start borrows a thread to fork with its own mask: it must
	// not be caught with that mask here, nor given it back by undo.
	defer process.LockAffinity()()

	// Threads created after the pin by a thread that had not been pinned
	// yet get this, the process's (main thread's) mask, back.
	var procMask unix.CPUSet
	if err := unix.SchedGetaffinity(os.Getpid(), &procMask); err != nil {
		return nil, "", fmt.Errorf("generator cpuset %s: reading affinity: %v", cpus, err)
	}
	old := map[int]unix.CPUSet{}
	err = eachThread(func(tid int) error {
		var m unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &m); err != nil {
			return err
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			return err
		}
		old[tid] = m
		return nil
	})
	undo := func() {
		eachThread(func(tid int) error {
			m, ok := old[tid]
			if !ok {
				m = procMask
			}
			return unix.SchedSetaffinity(tid, &m)
		})
	}
	if err == nil {
		// The kernel narrows a mask to what benchgate's cpuset cgroup
		// allows without an error; a generator on fewer CPUs than asked
		// would be a different experiment, so that is an error too.
		var got unix.CPUSet
		if err = unix.SchedGetaffinity(0, &got); err == nil && got != set {
			err = fmt.Errorf("affinity reads back as %s", process.FormatCPUSet(got))
		}
	}
	if err != nil {
		undo()
		return nil, "", fmt.Errorf("generator cpuset %s: %v", cpus, err)
	}
	procs := set.Count()
	prevProcs := runtime.GOMAXPROCS(procs)
	var once sync.Once
	restore = func() {
		once.Do(func() {
			defer process.LockAffinity()()
			undo()
			// Setting GOMAXPROCS stops the runtime from following the
			// CPUs it may use (affinity, cgroup quota). Unless the user
			// fixed it with the environment variable, hand it back to the
			// runtime, which recomputes it from the restored masks.
			if os.Getenv("GOMAXPROCS") == "" {
				runtime.SetDefaultGOMAXPROCS()
			} else {
				runtime.GOMAXPROCS(prevProcs)
			}
		})
	}
	return restore, fmt.Sprintf("cpuset %s (affinity, GOMAXPROCS %d)", process.FormatCPUSet(set), procs), nil
}

// eachThread calls fn once for every thread of benchgate, including the
// threads that appear while it runs: it lists /proc/self/task again until
// a pass finds no thread it has not seen. A thread that is missed by the
// last listing was created during it by a thread fn had already seen, so
// it inherited that thread's mask. A thread that exits meanwhile (ESRCH)
// is skipped. The first other error is returned after all threads had
// their turn.
func eachThread(fn func(tid int) error) error {
	seen := map[int]bool{}
	var first error
	for pass := 0; pass < 100; pass++ {
		tids, err := target.ProcIDs("/proc/self/task")
		if err != nil {
			return err
		}
		fresh := false
		for _, tid := range tids {
			if seen[tid] {
				continue
			}
			seen[tid], fresh = true, true
			if err := fn(tid); err != nil && !errors.Is(err, unix.ESRCH) && first == nil {
				first = fmt.Errorf("thread %d: %w", tid, err)
			}
		}
		if !fresh {
			return first
		}
	}
	if first == nil {
		first = errors.New("threads keep appearing")
	}
	return first
}

// processCPUSeconds is the CPU time, user and system, benchgate has used so
// far: the generator's own cost, read before and after each rung. Reaped
// targets are not in it (they are RUSAGE_CHILDREN).
func processCPUSeconds() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
