package doctor

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/internal/linux"
)

// The cgroup check mirrors what the runner does for a memory pin of a
// process target (target/process/cgroup_linux.go): a child group of
// benchgate's own cgroup v2 group, where the memory controller is enabled
// for children (it tries to enable it, which the kernel allows only in the
// root group, since benchgate's own process is in its group), else a child
// of its group in the cgroup v1 memory hierarchy.

// v1Controllers are the cgroup v1 controllers; a v1 mount's other
// options (rw, xattr, name=systemd, ...) are not.
var v1Controllers = []string{"blkio", "cpu", "cpuacct", "cpuset", "devices", "freezer", "hugetlb", "memory", "misc", "net_cls", "net_prio", "perf_event", "pids", "rdma"}

// readMounts is the cgroup mounts of /proc/self/mountinfo under the root.
func (m *machine) readMounts() ([]linux.CgroupMount, error) {
	var ms []linux.CgroupMount
	err := m.readLines("/proc/self/mountinfo", func(line string) {
		if c, ok := linux.ParseCgroupMount(line); ok {
			ms = append(ms, c)
		}
	})
	return ms, err
}

// locate is the directory (as on the machine) of group path in the v2
// hierarchy (controller "") or the v1 hierarchy of controller.
func (m *machine) locate(mounts []linux.CgroupMount, controller, path string) (string, bool) {
	dir, err := linux.CgroupDir(mounts, controller, path, m.exists)
	return dir, err == nil
}

// readSelfCgroups reads /proc/self/cgroup under the root.
func (m *machine) readSelfCgroups() (linux.SelfCgroups, error) {
	text, err := m.read("/proc/self/cgroup")
	if err != nil {
		return linux.SelfCgroups{V1: map[string]string{}}, err
	}
	return linux.ParseSelfCgroups(text), nil
}

// cpusetCPUs are the CPUs benchgate's cpuset cgroup allows, and the file
// that says so: v2 cpuset.cpus.effective of its group or the nearest
// ancestor that has one, else v1 cpuset.effective_cpus (or cpuset.cpus).
// nil when there is no cpuset to read.
func (m *machine) cpusetCPUs() (cpuSet, string) {
	self, err := m.readSelfCgroups()
	if err != nil {
		return nil, ""
	}
	mounts, err := m.readMounts()
	if err != nil {
		return nil, ""
	}
	try := func(file string) (cpuSet, bool) {
		s, err := m.read(file)
		if err != nil || s == "" {
			return nil, false
		}
		set, err := parseCPUs(s)
		return set, err == nil && len(set) > 0
	}
	if self.HasV2 {
		if dir, ok := m.locate(mounts, "", self.V2); ok {
			point := ""
			for _, c := range mounts {
				if c.V2 && (dir == c.Point || strings.HasPrefix(dir, c.Point+"/")) && len(c.Point) > len(point) {
					point = c.Point
				}
			}
			for d := dir; ; d = filepath.Dir(d) {
				if set, ok := try(d + "/cpuset.cpus.effective"); ok {
					return set, d + "/cpuset.cpus.effective"
				}
				if d == point || d == "/" || point == "" {
					break
				}
			}
		}
	}
	if g, ok := self.V1["cpuset"]; ok {
		if dir, ok := m.locate(mounts, "cpuset", g); ok {
			for _, f := range []string{"/cpuset.effective_cpus", "/cpuset.cpus"} {
				if set, ok := try(dir + f); ok {
					return set, dir + f
				}
			}
		}
	}
	return nil, ""
}

func (m *machine) checkCgroup() Result {
	self, err := m.readSelfCgroups()
	if err != nil {
		return Result{Status: Skip, Found: "cannot read /proc/self/cgroup: " + err.Error()}
	}
	mounts, err := m.readMounts()
	if err != nil {
		return Result{Status: Skip, Found: "cannot read /proc/self/mountinfo: " + err.Error()}
	}
	hasV2, v2Group, v1Groups := self.HasV2, self.V2, self.V1
	var v2Point string
	var v1Ctrls []string
	for _, c := range mounts {
		if c.V2 && v2Point == "" {
			v2Point = c.Point
		}
		for _, x := range c.Options {
			if slices.Contains(v1Controllers, x) && !slices.Contains(v1Ctrls, x) {
				v1Ctrls = append(v1Ctrls, x)
			}
		}
	}
	slices.Sort(v1Ctrls)
	var mode string
	switch {
	case v2Point != "" && len(v1Ctrls) == 0:
		mode = "cgroup v2 (unified) at " + v2Point
	case v2Point != "":
		mode = "hybrid: cgroup v1 (" + strings.Join(v1Ctrls, ", ") + ") with v2 at " + v2Point
	case len(v1Ctrls) > 0:
		mode = "cgroup v1 (" + strings.Join(v1Ctrls, ", ") + ")"
	default:
		return Result{Status: Skip, Found: "no cgroup file system is mounted: no memory pin can apply to a process target"}
	}

	var notes []string
	var why []string // why each version cannot take a memory pin
	memBy := ""
	if !hasV2 || v2Point == "" {
		why = append(why, "cgroup v2: benchgate is in no v2 group")
	} else if dir, ok := m.locate(mounts, "", v2Group); !ok {
		why = append(why, "cgroup v2: group "+v2Group+" is not visible in the mounts")
	} else {
		ctrl, _ := m.read(dir + "/cgroup.controllers")
		sub, _ := m.read(dir + "/cgroup.subtree_control")
		ctrls, subs := strings.Fields(ctrl), strings.Fields(sub)
		isRoot := !m.exists(dir + "/cgroup.type") // only non-root groups have one
		where := "benchgate's group " + v2Group
		if isRoot {
			where = "benchgate's group " + v2Group + " (the root)"
		}
		notes = append(notes, fmt.Sprintf("%s has controllers: %s; enabled for its children: %s", where, wordsOr(ctrls, "none"), wordsOr(subs, "none")))
		switch {
		case !slices.Contains(ctrls, "memory"):
			why = append(why, "cgroup v2: the memory controller is not available in "+v2Group+" (not delegated to it, or bound to cgroup v1)")
		case !slices.Contains(subs, "memory") && !isRoot:
			why = append(why, "cgroup v2: "+v2Group+" does not enable memory for its children (cgroup.subtree_control), and the kernel lets no group that holds a process (benchgate's own) enable it")
		case !m.writable(dir):
			why = append(why, "cgroup v2: "+dir+" is not writable by benchgate")
		default:
			memBy = "cgroup v2"
		}
		if !slices.Contains(ctrls, "cpuset") && len(v1Ctrls) == 0 {
			notes = append(notes, "no cpuset controller in "+v2Group+": fine for process targets (benchgate pins them by affinity); the engine needs its own for image targets")
		}
	}
	if memBy == "" {
		if g, ok := v1Groups["memory"]; !ok {
			why = append(why, "cgroup v1: no memory hierarchy")
		} else if dir, ok := m.locate(mounts, "memory", g); !ok {
			why = append(why, "cgroup v1: memory group "+g+" is not visible in the mounts")
		} else if !m.writable(dir) {
			why = append(why, "cgroup v1: "+dir+" is not writable by benchgate")
		} else {
			memBy = "cgroup v1 memory (" + dir + ")"
		}
	}
	if memBy != "" {
		return Result{Status: OK, Found: mode + "; memory pins of process targets apply through " + memBy, Notes: notes}
	}
	needed := m.sc == nil
	if m.sc != nil && m.processTargets() {
		for _, p := range m.sc.PinSets {
			needed = needed || p.Memory > 0
		}
	}
	notes = append(notes, why...)
	if !needed {
		notes = append(notes, "this scenario needs none: it pins no memory of a process target (cpus pins apply by affinity, image targets get their limits from the engine)")
		return Result{Status: OK, Found: mode + "; memory pins could not apply to process targets here", Notes: notes}
	}
	fix := []string{
		"use image targets for memory limits: the engine sets each container's, whatever the cgroups here",
	}
	if v2Point != "" {
		fix = append(fix, "or run benchgate in the root cgroup, where it may enable the memory controller for the targets' groups: as root, echo $$ > "+v2Point+"/cgroup.procs in the job's shell before benchgate (see docs/self-hosted.md)")
	} else {
		fix = append(fix, "or run benchgate as a user that may create groups in the v1 memory hierarchy (root)")
	}
	return Result{Status: Warn, Found: mode + "; memory pins cannot apply to process targets (the report lists them as not applied)", Notes: notes, Fix: fix}
}

func wordsOr(ws []string, none string) string {
	if len(ws) == 0 {
		return none
	}
	return strings.Join(ws, " ")
}
