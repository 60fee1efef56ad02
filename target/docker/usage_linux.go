package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/docker/docker/api/types/container"

	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
)

// checkPins records which pins the engine actually holds: the engine may
// accept a setting and drop it (swap limits without swap accounting, with
// only a warning), so the container's HostConfig is what counts, and for
// memory the cgroup's own limit as the stats report it.
func (t *Target) checkPins(ctx context.Context, insp container.InspectResponse, warnings []string) {
	p := t.pins
	if p == nil {
		p = &scenario.Pins{}
	}
	if insp.HostConfig == nil {
		return
	}
	hc := insp.HostConfig
	warned := strings.Join(warnings, "; ")
	if p.CPUs != "" {
		if hc.CpusetCpus == p.CPUs {
			t.applied = append(t.applied, "cpuset "+p.CPUs+" (docker)")
		} else {
			t.notApplied = append(t.notApplied, fmt.Sprintf("cpuset %s: the engine holds %q %s", p.CPUs, hc.CpusetCpus, warned))
		}
	}
	if want := t.memory(); want > 0 {
		mt := t.memoryText()
		limit := int64(-1)
		if t.cg != nil {
			if l, err := target.CgroupMemLimit(*t.cg); err == nil {
				limit = l
			}
		} else if s, err := t.stats(ctx); err == nil {
			// About a second on this engine (see Usage), once per start.
			limit = int64(s.MemoryStats.Limit)
		}
		switch {
		case hc.Memory != want || !memLimitHolds(limit, want):
			t.notApplied = append(t.notApplied, fmt.Sprintf("memory %s: the engine holds %d, the cgroup limit is %d %s", mt, hc.Memory, limit, warned))
		case hc.MemorySwap != want:
			t.applied = append(t.applied, "memory "+mt+" (docker)")
			t.notApplied = append(t.notApplied, fmt.Sprintf("no swap: the engine holds a swap limit of %d %s", hc.MemorySwap, warned))
		default:
			t.applied = append(t.applied, "memory "+mt+", no swap (docker)")
		}
	}
}

// memLimitHolds says whether the cgroup's limit is the pin's: the kernel
// rounds a limit down to a whole page, so a pin like 1G (10^9 bytes, not a
// multiple of 4096) reads back up to a page smaller and still holds.
func memLimitHolds(limit, want int64) bool {
	return limit <= want && want-limit < int64(os.Getpagesize())
}

// Usage reads the container's CPU time and memory. The Engine's stats are
// the portable source, but this engine (20.10) answers a one-shot stats
// request only at its collector's next one-second tick, far too slow for a
// reading every few tens of milliseconds and too coarse for a window's
// edges. So when the container's cgroup is visible here (benchgate on the
// engine's host) its files are read directly, by the same reader and with
// the same memory definition as a command target's cgroup (Source
// "cgroup"). Otherwise the latest reading of a stats stream is returned
// with the time the engine took it (At): the engine reads once a second,
// so the figures are up to a second old, and the schedule's sampler turns
// them into a window's CPU by rate.
func (t *Target) Usage() (target.Usage, bool) {
	if t.id == "" || t.exited == nil {
		return target.Usage{}, false
	}
	select {
	case <-t.stopping:
		return target.Usage{}, false
	case <-t.exited:
		return target.Usage{}, false // a stopped container reports zeros
	default:
	}
	if t.cg != nil {
		return t.usage.Usage(*t.cg)
	}
	t.streamMu.Lock()
	defer t.streamMu.Unlock()
	return t.streamed, t.streamed.Source != ""
}

// ResetMemPeak resets the watermark of the container's cgroup when it is
// visible here (see target.CgroupMeter). The stream has no window peak to
// offer: the engine's stats carry v1's watermark, but the engine cannot
// reset it.
// Resetting the container's own cgroup touches nothing else; the engine
// does not use the watermark.
func (t *Target) ResetMemPeak() func() (int64, bool) {
	if t.cg == nil || t.exited == nil {
		return nil
	}
	select {
	case <-t.stopping:
		return nil
	case <-t.exited:
		return nil
	default:
	}
	return t.usage.ResetPeak(*t.cg)
}

// stream keeps t.streamed at the engine's latest stats reading until ctx
// ends. The engine sends one a second.
func (t *Target) stream(ctx context.Context) {
	r, err := t.env.cli.ContainerStats(ctx, t.id, true)
	if err != nil {
		return
	}
	defer r.Body.Close()
	dec := json.NewDecoder(r.Body)
	for {
		var s container.StatsResponse
		if err := dec.Decode(&s); err != nil {
			return
		}
		if s.CPUStats.CPUUsage.TotalUsage == 0 || s.Read.IsZero() {
			continue // not running (yet, or any more)
		}
		mem, cache := memNoCache(s.MemoryStats)
		u := target.Usage{Source: "docker", CPUSeconds: float64(s.CPUStats.CPUUsage.TotalUsage) / 1e9, Mem: mem, MemCache: cache, At: s.Read}
		t.streamMu.Lock()
		t.streamed = u
		t.streamMu.Unlock()
	}
}

// memNoCache applies the cgroup reader's memory definition (see
// target.CgroupMeter) to the engine's stats, which carry the cgroup's
// memory.stat: usage without inactive file pages, v1's hierarchical
// total_inactive_file or v2's inactive_file. It returns the memory and
// what it left out.
func memNoCache(m container.MemoryStats) (mem, cache int64) {
	u := int64(m.Usage)
	inactive, ok := m.Stats["total_inactive_file"]
	if !ok {
		inactive = m.Stats["inactive_file"]
	}
	mem = max(u-int64(inactive), 0)
	return mem, u - mem
}

func (t *Target) stats(ctx context.Context) (container.StatsResponse, error) {
	var s container.StatsResponse
	r, err := t.env.cli.ContainerStatsOneShot(ctx, t.id)
	if err != nil {
		return s, err
	}
	defer r.Body.Close()
	err = json.NewDecoder(r.Body).Decode(&s)
	return s, err
}

// findContainerCgroup locates the cgroup of the container whose first
// process is pid, or returns nil when benchgate cannot see it (in another
// pid namespace, or with only its own cgroup mounted, as in a container).
// The path must name the container: a pid from another namespace that
// happens to exist here would otherwise be measured instead.
func findContainerCgroup(pid int, id string) *target.CgroupDirs {
	if pid <= 0 {
		return nil
	}
	in, err := target.ProcCgroups(pid)
	if err != nil {
		return nil
	}
	mounts, err := target.ReadCgroupMounts()
	if err != nil {
		return nil
	}
	dirOf := func(controller, path string, ok bool) string {
		if !ok || !strings.Contains(path, id) {
			return ""
		}
		dir, err := target.LocateCgroup(mounts, controller, path)
		if err != nil {
			return ""
		}
		return dir
	}
	cpuPath, cpuOK := in.V1["cpuacct"]
	memPath, memOK := in.V1["memory"]
	cpuDir, memDir := dirOf("cpuacct", cpuPath, cpuOK), dirOf("memory", memPath, memOK)
	v2Dir := dirOf("", in.V2, in.HasV2)
	switch {
	case cpuDir != "" && memDir != "":
		return &target.CgroupDirs{Version: 1, MemDir: memDir, CPUDir: cpuDir}
	case v2Dir != "":
		return &target.CgroupDirs{Version: 2, MemDir: v2Dir, CPUDir: v2Dir}
	}
	return nil
}
