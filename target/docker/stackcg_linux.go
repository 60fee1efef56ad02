package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/target"
)

// A stack's memory as a whole. The engine limits one container at a
// time; a pin set's memory on a stack is the stack's total, which only a
// cgroup holding every container of the stack can limit. benchgate makes
// one (named as the stack's network, so a sweep finds it), sets the limit
// on it, and has every container of the stack created under it
// (HostConfig.CgroupParent): the kernel then counts the services' memory
// together against the total, as the reference report's stacks share
// their 8 GiB. That takes an engine with the cgroupfs driver (the systemd
// driver wants a slice of its own making) whose cgroups benchgate can
// write: benchgate on the engine's host, as root. Anywhere else the pin
// is not applied, and says why.

// stackCgroup is a stack's own cgroup.
type stackCgroup struct {
	parent  string // the CgroupParent the containers are created under: "/<name>"
	version int
	memDir  string // where the limit is, as this process sees it
	// dirs are where the stack's total is read, once every container of
	// the stack is in the group (see meter); nil until then.
	dirs  *target.CgroupDirs
	usage target.CgroupMeter
}

// meter makes the group the stack's measure: the kernel's own counts of
// every container in it together (CPU, memory, and the memory
// watermark), exact at each reading, where the sum of the services'
// readings would be taken at slightly different moments and has no
// watermark. On v1 the CPU is the engine-made group of the same name in
// the cpuacct hierarchy. False when that group is not there.
func (cg *stackCgroup) meter() bool {
	dirs := target.CgroupDirs{Version: cg.version, MemDir: cg.memDir, CPUDir: cg.memDir}
	if cg.version == 1 {
		mounts, err := target.ReadCgroupMounts()
		if err != nil {
			return false
		}
		dir, err := target.LocateCgroup(mounts, "cpuacct", cg.parent)
		if err != nil {
			return false
		}
		dirs.CPUDir = dir
	}
	if _, ok := cg.usage.Usage(dirs); !ok {
		return false
	}
	cg.dirs = &dirs
	return true
}

// makeCgroup makes the stack's cgroup with its memory limit, or says why
// it cannot.
func (s *Stack) makeCgroup(ctx context.Context) (*stackCgroup, error) {
	e := s.env
	if e.self != "" {
		return nil, errors.New("benchgate runs in a container, where the engine's cgroups are not its to make")
	}
	info, err := e.cli.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker: reading the engine's cgroup driver: %w", err)
	}
	if info.CgroupDriver != "cgroupfs" {
		return nil, fmt.Errorf("the engine's cgroup driver is %s; a stack's own group needs cgroupfs", info.CgroupDriver)
	}
	mounts, err := target.ReadCgroupMounts()
	if err != nil {
		return nil, err
	}
	cg := &stackCgroup{parent: "/" + s.network, version: 1}
	controller, limitFile, swapFile, swapValue := "memory", "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", ""
	if info.CgroupVersion == "2" {
		cg.version, controller, limitFile, swapFile, swapValue = 2, "", "memory.max", "memory.swap.max", "0"
	}
	root, err := target.LocateCgroup(mounts, controller, "/")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, s.network)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making the stack's cgroup: %w", err)
	}
	cg.memDir = dir
	limit := strconv.FormatInt(s.pins.Memory, 10)
	if swapValue == "" {
		swapValue = limit // v1's memsw is memory plus swap: equal means none
	}
	if cg.version == 2 {
		// The containers' groups below get the controllers the root
		// lends: memory at least.
		if b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers")); err == nil {
			var on []string
			for _, c := range strings.Fields(string(b)) {
				on = append(on, "+"+c)
			}
			target.WriteCgroupFile(filepath.Join(dir, "cgroup.subtree_control"), strings.Join(on, " "))
		}
	}
	if err := target.WriteCgroupFile(filepath.Join(dir, limitFile), limit); err != nil {
		cg.remove()
		return nil, fmt.Errorf("setting the stack's memory limit: %w", err)
	}
	// Swap accounting may be off: then there is no such file, and the
	// limit holds memory alone.
	if _, err := os.Stat(filepath.Join(dir, swapFile)); err == nil {
		if err := target.WriteCgroupFile(filepath.Join(dir, swapFile), swapValue); err != nil {
			cg.remove()
			return nil, fmt.Errorf("setting the stack's swap limit: %w", err)
		}
	}
	return cg, nil
}

// check says whether a container of the stack is in the stack's group:
// its memory cgroup is a child of it.
func (cg *stackCgroup) check(t *Target) error {
	if t.cg == nil {
		return errors.New("the container's cgroup is not visible here")
	}
	if filepath.Dir(t.cg.MemDir) != cg.memDir {
		return fmt.Errorf("the container's memory cgroup %s is not in the stack's %s", t.cg.MemDir, cg.memDir)
	}
	return nil
}

// remove removes the stack's group wherever the engine made it: under
// every v1 hierarchy (the engine makes the parent in each controller it
// places a container in), or the one v2 group. Each must be empty, as
// it is once the stack's containers are removed.
func (cg *stackCgroup) remove() error {
	if cg == nil {
		return nil
	}
	cg.usage.Close()
	return removeStackCgroups(strings.TrimPrefix(cg.parent, "/"))
}

// removeStackCgroups removes the groups named name at the root of every
// cgroup hierarchy mounted here; one that is not there is no error.
func removeStackCgroups(name string) error {
	mounts, err := target.ReadCgroupMounts()
	if err != nil {
		return err
	}
	var errs []error
	seen := map[string]bool{}
	for _, m := range mounts {
		if m.Root != "/" || seen[m.Point] {
			continue
		}
		seen[m.Point] = true
		dir := filepath.Join(m.Point, name)
		if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// stackCgroupNames are the names of the stack groups of benchgate runs at
// the root of the hierarchies mounted here, for the sweep.
func stackCgroupNames() []string {
	mounts, err := target.ReadCgroupMounts()
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var names []string
	for _, m := range mounts {
		if m.Root != "/" {
			continue
		}
		des, err := os.ReadDir(m.Point)
		if err != nil {
			continue
		}
		for _, d := range des {
			n := d.Name()
			if d.IsDir() && strings.HasPrefix(n, namePrefix) && strings.Contains(n, "-stack-") && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	return names
}
