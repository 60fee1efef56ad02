package target

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestKillCgroupSparesBenchgate gives killCgroup a group listing
// benchgate's own pid besides a child's, as a v1 group does while a
// borrowed thread is still in it: the child dies, benchgate does not, and
// its thread is sent home. The directories are plain ones: there is no
// cgroup.kill, so the pids are signalled one by one, as on v1.
func TestKillCgroupSparesBenchgate(t *testing.T) {
	t.Parallel()
	dir, home := t.TempDir(), t.TempDir()
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	procs := fmt.Sprintf("%d\n%d\n", os.Getpid(), child.Process.Pid)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := strconv.Itoa(unix.Gettid())
	for name, text := range map[string]string{"cgroup.procs": procs, "tasks": tid + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "tasks"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	killCgroup(dir, home)
	err := child.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("child: %v, want killed by SIGKILL", err)
	}
	// Still here, so benchgate was not signalled.
	if b, _ := os.ReadFile(filepath.Join(home, "tasks")); string(b) != tid {
		t.Errorf("home tasks %q, want the thread %s sent home", b, tid)
	}
}
