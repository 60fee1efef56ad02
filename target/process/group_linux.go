package process

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/target"
)

// RunGrouped runs cmd (built with exec.CommandContext, its Dir and Env
// set) in a process group of its own, its output and errors through a
// pipe of our own to out, and returns Wait's error. The pipe is ours
// rather than one os/exec copies, so Wait returns when the command exits,
// not when the last process holding the pipe does; then whatever it left
// in its group (a daemon, a compiler server, a background job) is killed
// and reaped, since it would compete with the targets during measurement.
// Cancelling ctx kills the whole group. A process that left the group
// (setsid) is out of reach.
func RunGrouped(cmd *exec.Cmd, out io.Writer) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = childAttr()
	cmd.Env = target.WithOwnerEnv(cmd.Env)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	pw.Close() // the child has its copy; ours would keep the pipe open
	if err != nil {
		return err
	}
	untrack := target.TrackGroup(cmd.Process.Pid)
	copied := make(chan struct{})
	go func() {
		io.Copy(out, pr)
		close(copied)
	}()
	err = cmd.Wait()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if waitGroupGone(cmd.Process.Pid) {
		untrack()
	}
	select {
	case <-copied:
	case <-time.After(time.Second):
		// Only a process outside the group can still hold the pipe.
		pr.Close()
		<-copied
	}
	return err
}

// childAttr puts a child in a process group of its own, so Stop and Build
// can signal everything it starts, and kills it when benchgate dies.
//
// Pdeathsig is only a backstop for a SIGKILLed benchgate, which cannot
// stop anything itself: it reaches the direct child only (not the rest of
// its group), and Linux sends it when the thread that forked the child
// exits, not the process. Go keeps its threads unless a goroutine exits
// while locked to one, which the runner does only in forkPinned, and only
// after the target it forked is gone. The rest of the group is killed by
// the next run's sweep (target.SweepLeftovers), which finds it in this
// run's journal.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// ExecGroup runs the command newCmd makes in a process group of its own,
// pinned to cpus and started in cg when they are given, and waits for it.
// Cancelling ctx kills the group; so does the command's exit, for
// whatever it left behind. newCmd may be called twice (a start into a
// cgroup that the kernel refuses is retried without it); it gets the
// context its command must be made with. started, when given, is called
// once the command runs.
func ExecGroup(ctx context.Context, newCmd func(context.Context) *exec.Cmd, cpus *unix.CPUSet, cg *Cgroup, started func(cmd *exec.Cmd, r ForkResult)) error {
	mk := func() *exec.Cmd {
		cmd := newCmd(ctx)
		cmd.SysProcAttr = childAttr()
		cmd.Env = target.WithOwnerEnv(cmd.Env)
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		// Once the group is killed its pipes close; the delay only guards
		// against a process that escaped the group with one of them.
		cmd.WaitDelay = time.Second
		return cmd
	}
	exited := make(chan struct{})
	defer close(exited)
	cmd := mk()
	r := forkPinned(cmd, cpus, cg, true, exited)
	if r.Err != nil && cmd.SysProcAttr.UseCgroupFD {
		cmd = mk()
		r = forkPinned(cmd, cpus, cg, false, exited)
	}
	if r.Err != nil {
		return r.Err
	}
	pgid := cmd.Process.Pid
	untrack := target.TrackGroup(pgid)
	if started != nil {
		started(cmd, r)
	}
	err := cmd.Wait()
	syscall.Kill(-pgid, syscall.SIGKILL)
	if waitGroupGone(pgid) {
		untrack()
	}
	return err
}

// waitGroupGone waits until the kernel has removed every process of the
// group: SIGKILL is delivered asynchronously, and orphans are reaped by
// init, not by us. It gives up after a few seconds rather than hang a run,
// and says whether the group is gone.
func waitGroupGone(pgid int) bool {
	for i := 0; i < 300; i++ {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// ExitText is how a process ended, as Wait's error says it: "exit status
// 0" when it says nothing.
func ExitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
