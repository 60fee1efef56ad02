package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/internal/linux"
)

// affinityMu serialises everything that changes the CPU affinity of
// benchgate's own threads: pinGenerator (and its restore) rewrites every
// thread, and a target start borrows one thread to fork with the target's
// mask. Run concurrently, pinGenerator could catch the borrowed thread with
// the target's mask and later "restore" that mask onto it.
var affinityMu sync.Mutex

// maxCPUs is the number of CPUs a unix.CPUSet can hold (CPU_SETSIZE).
const maxCPUs = len(unix.CPUSet{}) * 64

// parseCPUSet parses a cpuset list (linux.ParseCPUList) into the form
// the affinity calls take. The scenario has checked the syntax already;
// this also reads the kernel's own files, so surrounding space (a file's
// newline) is trimmed. The empty list and CPUs a unix.CPUSet cannot hold
// are refused.
func parseCPUSet(s string) (unix.CPUSet, error) {
	var set unix.CPUSet
	s = strings.TrimSpace(s)
	if s == "" {
		return set, errors.New("empty cpuset")
	}
	cpus, err := linux.ParseCPUList(s)
	if err != nil {
		return set, err
	}
	if n := cpus[len(cpus)-1]; n >= maxCPUs {
		return set, fmt.Errorf("cpuset %q: CPU %d is beyond the %d the kernel interface takes", s, n, maxCPUs)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	return set, nil
}

// formatCPUSet writes set in the kernel's list form, "0-1,3"; "" when empty.
func formatCPUSet(set unix.CPUSet) string {
	var cpus []int
	for c := range maxCPUs {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return linux.FormatCPUList(cpus)
}

// cpuSetMinus is the CPUs of a that are not in b.
func cpuSetMinus(a, b unix.CPUSet) unix.CPUSet {
	var d unix.CPUSet
	for i := range a {
		d[i] = a[i] &^ b[i]
	}
	return d
}

// onlineCPUs is the set of CPUs the kernel has online. A pin naming an
// offline CPU would be refused by sched_setaffinity (or silently shrunk),
// so pins are checked against it first for a readable reason.
func onlineCPUs() (unix.CPUSet, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return unix.CPUSet{}, err
	}
	return parseCPUSet(string(b))
}

// checkOnline explains why set cannot be pinned, or returns nil.
func checkOnline(set unix.CPUSet) error {
	online, err := onlineCPUs()
	if err != nil {
		return err
	}
	if off := cpuSetMinus(set, online); off.Count() > 0 {
		return fmt.Errorf("CPUs %s not online (online: %s)", formatCPUSet(off), formatCPUSet(online))
	}
	return nil
}

// pinGenerator pins the load generator, that is all of benchgate, to cpus:
// the affinity of every thread of the process (sched_setaffinity applies to
// one thread, and threads started later inherit the mask of the thread
// that creates them), and GOMAXPROCS to the number of CPUs, so the Go
// scheduler does not run more threads than it has CPUs. restore puts the
// previous masks and GOMAXPROCS back; it may be called more than once.
// Starting a target while pinned is fine: the target gets its own mask.
func pinGenerator(cpus string) (restore func(), applied string, err error) {
	set, err := parseCPUSet(cpus)
	if err != nil {
		return nil, "", err
	}
	if err := checkOnline(set); err != nil {
		return nil, "", fmt.Errorf("generator cpuset %s: %v", cpus, err)
	}
	affinityMu.Lock()
	defer affinityMu.Unlock()

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
			err = fmt.Errorf("affinity reads back as %s", formatCPUSet(got))
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
			affinityMu.Lock()
			defer affinityMu.Unlock()
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
	return restore, fmt.Sprintf("cpuset %s (affinity, GOMAXPROCS %d)", formatCPUSet(set), procs), nil
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
		tids, err := threadIDs()
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

func threadIDs() ([]int, error) {
	names, err := readDirNames("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(names))
	for _, n := range names {
		if id, err := strconv.Atoi(n); err == nil {
			tids = append(tids, id)
		}
	}
	return tids, nil
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
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

// Memory limits go through a cgroup made for the one target and removed
// when it stops. cgroup v2 is tried first (one directory holds the limit
// and the accounting), then the v1 memory hierarchy, with a cpuacct
// group beside it for CPU accounting where that hierarchy is writable too.

// targetCgroup is the cgroup (v2) or cgroups (v1, one per hierarchy) made
// for one target.
type targetCgroup struct {
	// The accounting: cpuDir is memDir on v2, the cpuacct group on v1,
	// "" when v1 cpuacct could not be used (or the target is not in it).
	cgroupDirs
	dirs []string // every directory made, memory's first
	// homes are benchgate's own groups in the hierarchies of dirs (v1),
	// where the forking thread goes back to (see forkPinned).
	homes []string
	// untrack drops a directory of dirs from the leftover journal once it
	// is removed (see sweep.go); nil for groups benchgate did not make.
	untrack map[string]func()
}

// mkdir makes one of the group's directories, recorded in the leftover
// journal first: a benchgate killed right after the mkdir must not leave
// an unrecorded group.
func (cg *targetCgroup) mkdir(dir string) error {
	untrack := track(leftover{Kind: leftCgroup, Path: dir})
	if err := os.Mkdir(dir, 0o755); err != nil {
		untrack()
		return err
	}
	if cg.untrack == nil {
		cg.untrack = map[string]func(){}
	}
	cg.untrack[dir] = untrack
	cg.dirs = append(cg.dirs, dir)
	return nil
}

// cgroupSeq tells apart the groups of targets of the same name started in
// one benchgate process (one per pin set), should an earlier one have been
// left behind.
var cgroupSeq struct {
	sync.Mutex
	n map[string]int
}

// newTargetCgroup makes a cgroup limiting memory to limit bytes with swap
// off, or says why none could be made: the error holds the reason of each
// version tried.
func newTargetCgroup(name string, limit int64) (*targetCgroup, error) {
	self, err := readSelfCgroups()
	if err != nil {
		return nil, err
	}
	mounts, err := readCgroupMounts()
	if err != nil {
		return nil, err
	}
	// Named with the owner's pid and start time, for people; the sweep
	// goes by the journal.
	me, _ := thisProcess()
	leaf := fmt.Sprintf("benchgate-%s-%d-%d", name, os.Getpid(), me.start)
	cgroupSeq.Lock()
	if cgroupSeq.n == nil {
		cgroupSeq.n = map[string]int{}
	}
	cgroupSeq.n[name]++
	if n := cgroupSeq.n[name]; n > 1 {
		leaf += "-" + strconv.Itoa(n)
	}
	cgroupSeq.Unlock()

	cg, err2 := newCgroupV2(self, mounts, leaf, limit)
	if err2 == nil {
		return cg, nil
	}
	cg, err1 := newCgroupV1(self, mounts, leaf, limit)
	if err1 == nil {
		return cg, nil
	}
	return nil, fmt.Errorf("no writable cgroup (cgroup v2: %v; cgroup v1: %v)", err2, err1)
}

func newCgroupV2(self linux.SelfCgroups, mounts []linux.CgroupMount, leaf string, limit int64) (*targetCgroup, error) {
	if !self.HasV2 {
		return nil, errors.New("benchgate is in no v2 group")
	}
	parent, err := locateCgroup(mounts, "", self.V2)
	if err != nil {
		return nil, err
	}
	ctrl, _ := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	if !hasWord(ctrl, "memory") {
		return nil, fmt.Errorf("memory controller not available in %s (bound to cgroup v1, or not delegated)", self.V2)
	}
	sub, _ := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if !hasWord(sub, "memory") {
		// Left enabled afterwards: the other target's group may use it,
		// and disabling it would drop that group's limit. Typically this
		// fails with EBUSY, because benchgate itself is in the group and
		// v2 lets only groups without processes enable controllers for
		// children (the root group excepted).
		if err := writeCgroupFile(filepath.Join(parent, "cgroup.subtree_control"), "+memory"); err != nil {
			return nil, fmt.Errorf("subtree of %s not delegated: enabling the memory controller: %v", self.V2, err)
		}
	}
	dir := filepath.Join(parent, leaf)
	cg := &targetCgroup{cgroupDirs: cgroupDirs{version: 2, memDir: dir, cpuDir: dir}}
	if err := cg.mkdir(dir); err != nil {
		return nil, err
	}
	if err := writeCgroupFile(filepath.Join(dir, "memory.max"), strconv.FormatInt(limit, 10)); err != nil {
		cg.remove()
		return nil, err
	}
	// Absent when the kernel does no swap accounting; then there is no
	// swap limit to set either.
	if err := writeCgroupFile(filepath.Join(dir, "memory.swap.max"), "0"); err != nil && !errors.Is(err, os.ErrNotExist) {
		cg.remove()
		return nil, err
	}
	return cg, nil
}

func newCgroupV1(self linux.SelfCgroups, mounts []linux.CgroupMount, leaf string, limit int64) (*targetCgroup, error) {
	own, ok := self.V1["memory"]
	if !ok {
		return nil, errors.New("no memory hierarchy")
	}
	home, err := locateCgroup(mounts, "memory", own)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(home, leaf)
	cg := &targetCgroup{cgroupDirs: cgroupDirs{version: 1, memDir: dir}, homes: []string{home}}
	if err := cg.mkdir(dir); err != nil {
		return nil, err
	}
	if err := writeCgroupFile(filepath.Join(dir, "memory.limit_in_bytes"), strconv.FormatInt(limit, 10)); err != nil {
		cg.remove()
		return nil, err
	}
	// memsw is memory plus swap: the same limit means no swap. It exists
	// only with swap accounting, and must be set after limit_in_bytes,
	// which it may not undercut.
	if err := writeCgroupFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), strconv.FormatInt(limit, 10)); err != nil && !errors.Is(err, os.ErrNotExist) {
		cg.remove()
		return nil, err
	}
	// CPU accounting is optional: without it Usage reads /proc instead.
	if acct, ok := self.V1["cpuacct"]; ok {
		if h, err := locateCgroup(mounts, "cpuacct", acct); err == nil {
			if h == home {
				cg.cpuDir = dir // co-mounted with memory
			} else if d := filepath.Join(h, leaf); cg.mkdir(d) == nil {
				cg.cpuDir = d
				cg.homes = append(cg.homes, h)
			}
		}
	}
	return cg, nil
}

// remove kills whatever is still in the groups and removes them. Stop
// calls it once the target's process group is gone, so what is left is a
// process that left the group (setsid) but not the cgroup: a cgroup with
// a process in it cannot be removed. It returns the first failure.
func (cg *targetCgroup) remove() error {
	var first error
	for i := len(cg.dirs) - 1; i >= 0; i-- {
		dir := cg.dirs[i]
		home := ""
		if i < len(cg.homes) {
			home = cg.homes[i]
		}
		var err error
		// Retried: SIGKILL takes effect asynchronously, and a thread of
		// benchgate's own that forkPinned could not bring home leaves
		// only once its goroutine exits, just after the target did.
		for try := 0; try < 300; try++ {
			if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				err = nil
				break
			}
			if !errors.Is(err, unix.EBUSY) {
				break
			}
			killCgroup(dir, home)
			time.Sleep(10 * time.Millisecond)
		}
		if err == nil {
			if untrack := cg.untrack[dir]; untrack != nil {
				untrack()
			}
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// killCgroup SIGKILLs every process in dir but benchgate itself: at once
// through cgroup.kill (v2, Linux 5.14+), else one by one. On v1 a thread
// of benchgate's that forkPinned borrowed for a fork and could not bring
// back puts benchgate's own pid in cgroup.procs: that pid is never
// signalled (nor cgroup.kill used, which would kill it too); the thread is
// sent home instead (v1 home, its group in that hierarchy), and remove
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
	if !mine && writeCgroupFile(filepath.Join(dir, "cgroup.kill"), "1") == nil {
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
			writeCgroupFile(filepath.Join(home, "tasks"), f)
		}
	}
}

// joinAfterStart moves a started process into the groups: the fallback
// when it could not be started inside them. Whatever it forked before the
// move stays outside.
func (cg *targetCgroup) joinAfterStart(pid int) error {
	for _, d := range cg.dirs {
		if err := writeCgroupFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// enterV1 moves the calling thread into the v1 groups, for a fork that
// should start there. It opens the "tasks" files of the groups the thread
// goes back to first, and does not move when it could not come back. The
// caller writes the thread's id to every returned file after the fork,
// joined or not: a move that stopped half-way is undone too.
func (cg *targetCgroup) enterV1() (homes []*os.File, joined bool) {
	for _, h := range cg.homes {
		f, err := os.OpenFile(filepath.Join(h, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			for _, f := range homes {
				f.Close()
			}
			return nil, false
		}
		homes = append(homes, f)
	}
	tid := strconv.Itoa(unix.Gettid())
	for _, d := range cg.dirs {
		if err := writeCgroupFile(filepath.Join(d, "tasks"), tid); err != nil {
			return homes, false
		}
	}
	return homes, true
}

// contains says whether pid is in the memory group, from /proc/<pid>/cgroup.
func (cg *targetCgroup) contains(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return false
	}
	leaf := "/" + filepath.Base(cg.memDir)
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		isMem := parts[0] == "0" && parts[1] == ""
		if cg.version == 1 {
			isMem = hasWord([]byte(strings.ReplaceAll(parts[1], ",", " ")), "memory")
		}
		if isMem {
			return strings.HasSuffix(parts[2], leaf)
		}
	}
	return false
}

// writeCgroupFile writes a control file in one write(2), as the kernel
// wants; O_TRUNC is refused by some cgroup files, so none is asked for.
func writeCgroupFile(path, value string) error {
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

func hasWord(b []byte, w string) bool {
	for _, f := range bytes.Fields(b) {
		if string(f) == w {
			return true
		}
	}
	return false
}

// readSelfCgroups reads benchgate's own /proc/self/cgroup.
func readSelfCgroups() (linux.SelfCgroups, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return linux.SelfCgroups{V1: map[string]string{}}, err
	}
	return linux.ParseSelfCgroups(string(b)), nil
}

// readCgroupMounts is the cgroup mounts of /proc/self/mountinfo.
func readCgroupMounts() ([]linux.CgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return linux.ReadCgroupMounts(f)
}

// locateCgroup is the directory of group path in the v2 hierarchy
// (controller "") or the v1 hierarchy of controller.
func locateCgroup(mounts []linux.CgroupMount, controller, path string) (string, error) {
	return linux.CgroupDir(mounts, controller, path, isDir)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
