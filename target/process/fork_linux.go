package process

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// ForkResult is how a pinned start went.
type ForkResult struct {
	Err    error // cmd.Start's
	CPUErr error // the forking thread's affinity could not be set
	Joined bool  // the child started inside the cgroup
}

// forkPinned starts cmd so that the target and everything it starts has
// the affinity cpus and runs in cg from its first instruction: a child
// inherits the affinity and the cgroups of the thread that forks it, so a
// thread of ours takes them on for the fork. Setting them in the child
// after the start would miss whatever it forked meanwhile, such as the
// server a shell wrapper starts. On cgroup v2 the kernel puts the child
// into the group itself (clone3 CLONE_INTO_CGROUP) when useFD; on v1 the
// thread joins the group through its "tasks" file (which moves one
// thread, unlike cgroup.procs) and leaves it after the fork.
//
// The borrowed thread gets its mask and groups back and is returned to
// the runtime rather than discarded: discarding it (a goroutine exiting
// locked) would fire the target's Pdeathsig, which is tied to the thread
// that forked it, and kill the target at once. Should restoring fail, the
// thread must serve nobody else with the target's mask, so its goroutine
// stays locked to it until the target has exited, then exits locked and
// the runtime ends the thread.
func forkPinned(cmd *exec.Cmd, cpus *unix.CPUSet, cg *Cgroup, useFD bool, exited <-chan struct{}) ForkResult {
	if cpus == nil && cg == nil {
		return ForkResult{Err: cmd.Start()}
	}
	if cg != nil && cg.Version == 2 && useFD {
		fd, err := unix.Open(cg.MemDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			defer unix.Close(fd)
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		}
	}
	done := make(chan ForkResult)
	go func() {
		runtime.LockOSThread()
		r, clean := forkOnThisThread(cmd, cpus, cg)
		done <- r
		if !clean {
			if r.Err == nil {
				<-exited
			}
			return
		}
		runtime.UnlockOSThread()
	}()
	return <-done
}

// forkOnThisThread is forkPinned's work on the locked thread; clean is
// false when the thread could not be put back as it was.
func forkOnThisThread(cmd *exec.Cmd, cpus *unix.CPUSet, cg *Cgroup) (r ForkResult, clean bool) {
	// The generator's pin must not rewrite this thread's mask meanwhile.
	defer LockAffinity()()
	clean = true
	var prev unix.CPUSet
	pinned := false
	if cpus != nil {
		if err := unix.SchedGetaffinity(0, &prev); err != nil {
			r.CPUErr = err
		} else if err := unix.SchedSetaffinity(0, cpus); err != nil {
			r.CPUErr = err
		} else {
			pinned = true
		}
	}
	var homes []*os.File
	if cg != nil && cg.Version == 1 {
		homes, r.Joined = cg.enterV1()
	}
	r.Err = cmd.Start()
	if cg != nil && cg.Version == 2 {
		r.Joined = cmd.SysProcAttr.UseCgroupFD
	}
	if r.Err != nil {
		r.Joined = false
	}
	tid := strconv.Itoa(unix.Gettid())
	for _, h := range homes {
		if _, err := h.WriteString(tid); err != nil {
			clean = false
		}
		h.Close()
	}
	if pinned {
		if err := unix.SchedSetaffinity(0, &prev); err != nil {
			clean = false
		}
	}
	return r, clean
}
