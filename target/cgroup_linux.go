package target

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/internal/linux"
)

// CgroupDirs is where a cgroup's accounting is read: a command target's
// own cgroup, or a container's when it is visible here. One reader
// (CgroupMeter) serves both, so Source "cgroup" means the same figures
// whichever kind of target it measured.
type CgroupDirs struct {
	Version int    // 1 or 2
	MemDir  string // memory.* files; on v2 everything is here
	CPUDir  string // cpuacct.usage (v1) or cpu.stat (v2); "" for none
}

// ProcCgroups reads /proc/<pid>/cgroup, the groups of process pid.
func ProcCgroups(pid int) (linux.SelfCgroups, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return linux.SelfCgroups{V1: map[string]string{}}, err
	}
	return linux.ParseSelfCgroups(string(b)), nil
}

// ReadCgroupMounts is the cgroup mounts of /proc/self/mountinfo.
func ReadCgroupMounts() ([]linux.CgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return linux.ReadCgroupMounts(f)
}

// LocateCgroup is the directory of group path in the v2 hierarchy
// (controller "") or the v1 hierarchy of controller.
func LocateCgroup(mounts []linux.CgroupMount, controller, path string) (string, error) {
	return linux.CgroupDir(mounts, controller, path, isDir)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// WriteCgroupFile writes a control file in one write(2), as the kernel
// wants; O_TRUNC is refused by some cgroup files, so none is asked for.
func WriteCgroupFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// CgroupMemLimit is the group's memory limit in bytes; -1 for none ("max"
// on v2).
func CgroupMemLimit(cg CgroupDirs) (int64, error) {
	name := "memory.max"
	if cg.Version == 1 {
		name = "memory.limit_in_bytes"
	}
	b, err := os.ReadFile(filepath.Join(cg.MemDir, name))
	if err != nil {
		return 0, err
	}
	if string(bytes.TrimSpace(b)) == "max" {
		return -1, nil
	}
	return parseCgroupInt(b)
}

// parseCgroupInt parses a one-number cgroup file.
func parseCgroupInt(b []byte) (int64, error) {
	return strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
}

// RemoveCgroupDir kills whatever is still in the group dir and removes
// it. A target's Stop calls it once the target's process group is gone,
// and the sweep once it killed a dead run's processes, so what is left is
// a process that left its group (setsid) but not the cgroup: a cgroup
// with a process in it cannot be removed. home is benchgate's own group
// in dir's v1 hierarchy, where a thread of benchgate found in dir is sent
// (see killCgroup); "" for none.
func RemoveCgroupDir(dir, home string) error {
	var err error
	// Retried: SIGKILL takes effect asynchronously, and a thread of
	// benchgate's own that a pinned fork could not bring home leaves
	// only once its goroutine exits, just after the target did.
	for try := 0; try < 300; try++ {
		if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) {
			return err
		}
		killCgroup(dir, home)
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

// killCgroup SIGKILLs every process in dir but benchgate itself: at once
// through cgroup.kill (v2, Linux 5.14+), else one by one. On v1 a thread
// of benchgate's that a pinned fork borrowed and could not bring back
// puts benchgate's own pid in cgroup.procs: that pid is never signalled
// (nor cgroup.kill used, which would kill it too); the thread is sent home
// instead (v1 home, its group in that hierarchy), and RemoveCgroupDir
// retries until it is out.
func killCgroup(dir, home string) {
	self := os.Getpid()
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	mine := slices.Contains(pids, self)
	if !mine && WriteCgroupFile(filepath.Join(dir, "cgroup.kill"), "1") == nil {
		return
	}
	for _, pid := range pids {
		if pid != self {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if mine && home != "" {
		threadsHome(dir, home)
	}
}

// threadsHome moves the threads of benchgate listed in dir's v1 "tasks"
// file to the group home: one write per thread, as "tasks" takes them.
func threadsHome(dir, home string) {
	b, _ := os.ReadFile(filepath.Join(dir, "tasks"))
	for _, f := range strings.Fields(string(b)) {
		if _, err := os.Stat("/proc/self/task/" + f); err == nil {
			WriteCgroupFile(filepath.Join(home, "tasks"), f)
		}
	}
}
