package process

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// preparePins resolves the pin set before the fork: the CPU set to fork
// with and the cgroup to fork into. What cannot be had is recorded as not
// applied; a pin that fails never fails the start, the report says so.
func (t *Target) preparePins() (cpus *unix.CPUSet, cg *Cgroup) {
	t.applied, t.notApplied = nil, nil
	p := t.pins
	if p == nil {
		return nil, nil
	}
	if c := strings.TrimSpace(p.CPUs); c != "" {
		set, err := ParseCPUSet(c)
		if err == nil {
			err = CheckOnline(set)
		}
		if err != nil {
			t.notApplied = append(t.notApplied, "cpuset "+c+": "+err.Error())
		} else {
			cpus = &set
		}
	}
	if p.Memory > 0 {
		var err error
		if cg, err = NewCgroup(t.spec.Name, p.Memory); err != nil {
			t.notApplied = append(t.notApplied, "memory "+p.MemoryText+": "+err.Error())
		}
	}
	return cpus, cg
}

func (t *Target) pinsFailed(cpus, mem bool, why string) {
	if cpus {
		t.notApplied = append(t.notApplied, "cpuset "+strings.TrimSpace(t.pins.CPUs)+": "+why)
	}
	if mem {
		t.notApplied = append(t.notApplied, "memory "+t.pins.MemoryText+": "+why)
	}
}

// checkPins finds out what the started target really got: its affinity as
// the kernel reports it (the kernel narrows a mask to the CPUs benchgate's
// own cpuset allows, silently), and whether it is in the cgroup.
func (t *Target) checkPins(pid int, cpus *unix.CPUSet, cg *Cgroup, r ForkResult) {
	if cpus != nil {
		c := strings.TrimSpace(t.pins.CPUs)
		var got unix.CPUSet
		switch err := unix.SchedGetaffinity(pid, &got); {
		case r.CPUErr != nil:
			t.notApplied = append(t.notApplied, "cpuset "+c+": setting the affinity: "+r.CPUErr.Error())
		case err != nil:
			t.notApplied = append(t.notApplied, "cpuset "+c+": reading the target's affinity: "+err.Error())
		case got != *cpus:
			t.notApplied = append(t.notApplied, "cpuset "+c+": the target's affinity is "+FormatCPUSet(got))
		default:
			t.applied = append(t.applied, "cpuset "+c+" (affinity)")
		}
	}
	if cg != nil {
		m := t.pins.MemoryText
		var err error
		if !r.Joined {
			err = cg.JoinAfterStart(pid)
		}
		if err == nil && !cg.Contains(pid) {
			err = errors.New("the target is not in it")
		}
		if err != nil {
			// The group must still go, and only Stop knows when the
			// target is gone; Usage must not read it.
			t.cg = cg
			t.notApplied = append(t.notApplied, fmt.Sprintf("memory %s: moving the target into cgroup v%d: %v", m, cg.Version, err))
			cg.CPUDir = ""
			return
		}
		t.cg = cg
		t.applied = append(t.applied, fmt.Sprintf("memory %s (cgroup v%d)", m, cg.Version))
	}
}
