//go:build linux

package runner

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target/process"
)

// goPins is a pin set as a gobench run applies it to the test binaries.
type goPins struct {
	set     *scenario.Pins
	info    *benchdata.PinInfo
	cpus    *unix.CPUSet       // nil: no CPU pin, or it cannot be had
	cg      [2]*process.Cgroup // per side; nil: no memory pin, or none could be made
	checked [2]bool            // the side's first start under the set was checked
	applied [2][]string
}

// preparePins resolves a pin set for the test binaries: the CPU set they
// are started with and a memory cgroup per side. What cannot be had is
// recorded as not applied, for both sides.
func (g *goBench) preparePins(set *scenario.Pins, info *benchdata.PinInfo) *goPins {
	ps := &goPins{set: set, info: info}
	if c := strings.TrimSpace(set.CPUs); c != "" {
		cpus, err := process.ParseCPUSet(c)
		if err == nil {
			err = process.CheckOnline(cpus)
		}
		if err != nil {
			for _, s := range g.sides {
				g.notApplied(ps, s.name, "cpuset "+c+": "+err.Error())
			}
		} else {
			ps.cpus = &cpus
		}
	}
	if set.Memory > 0 {
		for i, s := range g.sides {
			cg, err := process.NewCgroup(s.name, set.Memory)
			if err != nil {
				g.notApplied(ps, s.name, "memory "+set.MemoryText+": "+err.Error())
				continue
			}
			ps.cg[i] = cg
		}
	}
	if set.GeneratorCPUs != "" {
		fmt.Fprintf(g.progress, "pins %s: generator_cpus %s does not apply: a gobench run has no load generator\n", set.Name, set.GeneratorCPUs)
	}
	return ps
}

func (g *goBench) notApplied(ps *goPins, side, what string) {
	ps.info.NotApplied = append(ps.info.NotApplied, side+": "+what)
	fmt.Fprintf(g.progress, "pins %s: not applied: %s: %s\n", ps.set.Name, side, what)
}

// pinStarted checks what a side's first test binary under the pin set
// really got, as a command target checks its own, and moves every binary
// that could not start inside its cgroup into it.
func (g *goBench) pinStarted(side int, pid int, r process.ForkResult) {
	ps := g.pins
	if ps == nil {
		return
	}
	var cgErr error
	cg := ps.cg[side]
	if cg != nil && !r.Joined {
		cgErr = cg.JoinAfterStart(pid)
	}
	if ps.checked[side] {
		return
	}
	ps.checked[side] = true
	name := g.sides[side].name
	applied := func(what string) {
		ps.applied[side] = append(ps.applied[side], what)
		ps.info.Applied = append(ps.info.Applied, name+": "+what)
	}
	if ps.cpus != nil {
		c := strings.TrimSpace(ps.set.CPUs)
		var got unix.CPUSet
		switch err := unix.SchedGetaffinity(pid, &got); {
		case r.CPUErr != nil:
			g.notApplied(ps, name, "cpuset "+c+": setting the affinity: "+r.CPUErr.Error())
		case err != nil:
			g.notApplied(ps, name, "cpuset "+c+": reading the test binary's affinity: "+err.Error())
		case got != *ps.cpus:
			g.notApplied(ps, name, "cpuset "+c+": the test binary's affinity is "+process.FormatCPUSet(got))
		default:
			applied("cpuset " + c + " (affinity)")
		}
	}
	if cg != nil {
		if cgErr == nil && !cg.Contains(pid) {
			cgErr = errors.New("the test binary is not in it")
		}
		if cgErr != nil {
			g.notApplied(ps, name, fmt.Sprintf("memory %s: moving the test binary into cgroup v%d: %v", ps.set.MemoryText, cg.Version, cgErr))
		} else {
			applied(fmt.Sprintf("memory %s (cgroup v%d)", ps.set.MemoryText, cg.Version))
		}
	}
	if ps.checked[0] && ps.checked[1] {
		for _, d := range differentLimits(ps.set, g.sides[0].name, ps.applied[0], g.sides[1].name, ps.applied[1]) {
			g.notApplied(ps, "both", d)
		}
	}
}

// releasePins removes the pin set's cgroups; the binaries in them have
// all exited.
func (g *goBench) releasePins() {
	if g.pins == nil {
		return
	}
	for i, cg := range g.pins.cg {
		if cg != nil {
			if err := cg.Remove(); err != nil {
				fmt.Fprintf(g.progress, "warning: removing the cgroup of the %s test binaries: %v\n", g.sides[i].name, err)
			}
			g.pins.cg[i] = nil
		}
	}
}

func (g *goBench) pinCPUs() *unix.CPUSet {
	if g.pins == nil {
		return nil
	}
	return g.pins.cpus
}

func (g *goBench) pinCgroup(side int) *process.Cgroup {
	if g.pins == nil {
		return nil
	}
	return g.pins.cg[side]
}
