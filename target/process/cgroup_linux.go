package process

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/internal/linux"
	"github.com/benchgate/benchgate/target"
)

// Memory limits go through a cgroup made for the one target and removed
// when it stops. cgroup v2 is tried first (one directory holds the limit
// and the accounting), then the v1 memory hierarchy, with a cpuacct
// group beside it for CPU accounting where that hierarchy is writable too.

// Cgroup is the cgroup (v2) or cgroups (v1, one per hierarchy) made
// for one target.
type Cgroup struct {
	// The accounting: CPUDir is MemDir on v2, the cpuacct group on v1,
	// "" when v1 cpuacct could not be used (or the target is not in it).
	target.CgroupDirs
	dirs []string // every directory made, memory's first
	// homes are benchgate's own groups in the hierarchies of dirs (v1),
	// where the forking thread goes back to (see forkPinned).
	homes []string
	// untrack drops a directory of dirs from the leftover journal once it
	// is removed (see target.TrackCgroup).
	untrack map[string]func()
}

// mkdir makes one of the group's directories, recorded in the leftover
// journal first: a benchgate killed right after the mkdir must not leave
// an unrecorded group.
func (cg *Cgroup) mkdir(dir string) error {
	untrack := target.TrackCgroup(dir)
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

// NewCgroup makes a cgroup limiting memory to limit bytes with swap
// off, or says why none could be made: the error holds the reason of each
// version tried.
func NewCgroup(name string, limit int64) (*Cgroup, error) {
	self, err := target.ProcCgroups(os.Getpid())
	if err != nil {
		return nil, err
	}
	mounts, err := target.ReadCgroupMounts()
	if err != nil {
		return nil, err
	}
	// Named with the owner's pid and start time, for people; the sweep
	// goes by the journal.
	me, _ := target.ThisProcess()
	leaf := fmt.Sprintf("benchgate-%s-%d-%d", name, os.Getpid(), me.Start)
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

func newCgroupV2(self linux.SelfCgroups, mounts []linux.CgroupMount, leaf string, limit int64) (*Cgroup, error) {
	if !self.HasV2 {
		return nil, errors.New("benchgate is in no v2 group")
	}
	parent, err := target.LocateCgroup(mounts, "", self.V2)
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
		if err := target.WriteCgroupFile(filepath.Join(parent, "cgroup.subtree_control"), "+memory"); err != nil {
			return nil, fmt.Errorf("subtree of %s not delegated: enabling the memory controller: %v", self.V2, err)
		}
	}
	dir := filepath.Join(parent, leaf)
	cg := &Cgroup{CgroupDirs: target.CgroupDirs{Version: 2, MemDir: dir, CPUDir: dir}}
	if err := cg.mkdir(dir); err != nil {
		return nil, err
	}
	if err := target.WriteCgroupFile(filepath.Join(dir, "memory.max"), strconv.FormatInt(limit, 10)); err != nil {
		cg.Remove()
		return nil, err
	}
	// Absent when the kernel does no swap accounting; then there is no
	// swap limit to set either.
	if err := target.WriteCgroupFile(filepath.Join(dir, "memory.swap.max"), "0"); err != nil && !errors.Is(err, os.ErrNotExist) {
		cg.Remove()
		return nil, err
	}
	return cg, nil
}

func newCgroupV1(self linux.SelfCgroups, mounts []linux.CgroupMount, leaf string, limit int64) (*Cgroup, error) {
	own, ok := self.V1["memory"]
	if !ok {
		return nil, errors.New("no memory hierarchy")
	}
	home, err := target.LocateCgroup(mounts, "memory", own)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(home, leaf)
	cg := &Cgroup{CgroupDirs: target.CgroupDirs{Version: 1, MemDir: dir}, homes: []string{home}}
	if err := cg.mkdir(dir); err != nil {
		return nil, err
	}
	if err := target.WriteCgroupFile(filepath.Join(dir, "memory.limit_in_bytes"), strconv.FormatInt(limit, 10)); err != nil {
		cg.Remove()
		return nil, err
	}
	// memsw is memory plus swap: the same limit means no swap. It exists
	// only with swap accounting, and must be set after limit_in_bytes,
	// which it may not undercut.
	if err := target.WriteCgroupFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), strconv.FormatInt(limit, 10)); err != nil && !errors.Is(err, os.ErrNotExist) {
		cg.Remove()
		return nil, err
	}
	// CPU accounting is optional: without it Usage reads /proc instead.
	if acct, ok := self.V1["cpuacct"]; ok {
		if h, err := target.LocateCgroup(mounts, "cpuacct", acct); err == nil {
			if h == home {
				cg.CPUDir = dir // co-mounted with memory
			} else if d := filepath.Join(h, leaf); cg.mkdir(d) == nil {
				cg.CPUDir = d
				cg.homes = append(cg.homes, h)
			}
		}
	}
	return cg, nil
}

// Remove kills whatever is still in the groups and removes them (see
// target.RemoveCgroupDir). A target's Stop calls it once the target's
// process group is gone. It returns the first failure.
func (cg *Cgroup) Remove() error {
	var first error
	for i := len(cg.dirs) - 1; i >= 0; i-- {
		home := ""
		if i < len(cg.homes) {
			home = cg.homes[i]
		}
		err := target.RemoveCgroupDir(cg.dirs[i], home)
		if err == nil {
			if untrack := cg.untrack[cg.dirs[i]]; untrack != nil {
				untrack()
			}
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// JoinAfterStart moves a started process into the groups: the fallback
// when it could not be started inside them. Whatever it forked before the
// move stays outside.
func (cg *Cgroup) JoinAfterStart(pid int) error {
	for _, d := range cg.dirs {
		if err := target.WriteCgroupFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
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
func (cg *Cgroup) enterV1() (homes []*os.File, joined bool) {
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
		if err := target.WriteCgroupFile(filepath.Join(d, "tasks"), tid); err != nil {
			return homes, false
		}
	}
	return homes, true
}

// Contains says whether pid is in the memory group, by its
// /proc/<pid>/cgroup.
func (cg *Cgroup) Contains(pid int) bool {
	in, err := target.ProcCgroups(pid)
	if err != nil {
		return false
	}
	path, ok := in.V2, in.HasV2
	if cg.Version == 1 {
		path, ok = in.V1["memory"]
	}
	return ok && strings.HasSuffix(path, "/"+filepath.Base(cg.MemDir))
}

func hasWord(b []byte, w string) bool {
	for _, f := range bytes.Fields(b) {
		if string(f) == w {
			return true
		}
	}
	return false
}
