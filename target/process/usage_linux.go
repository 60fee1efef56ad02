package process

import (
	"bytes"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/internal/linux"
	"github.com/benchgate/benchgate/target"
)

// Usage reads what a command target has used: from its cgroup when it has
// one with CPU accounting (Source "cgroup"), else from /proc, summed over
// the processes of its process group (Source "proc"). A url target, or one
// not started, cannot be measured: ok is false.
//
// The cgroup reading is exact and includes every process the target ever
// started. Memory is the group's usage without the page cache the kernel
// could drop at once (inactive file pages), which is closer to what the
// service needs than the raw figure.
//
// The /proc reading is an approximation. CPU is each process's user and
// system time plus that of the children it has reaped (cutime, cstime), so
// a worker that exits and is waited for by a process of the group is not
// lost. What is lost: CPU a process used after the last reading when it
// exits and nobody in the group reaps it (an orphan, reaped by init), and
// time after a process leaves the group (setsid). Memory is the sum of the
// resident set sizes, which counts pages shared between processes (a
// pre-forked server's) once per process.
//
// The schedule calls Usage every ~50ms during a rung, so it keeps the
// files it reads open and reads them with pread, and in /proc mode scans
// /proc for the group's processes only every procRescanEvery calls, a few
// calls after a process went away (it may have been replaced, as a worker
// is restarted) at the earliest. A process the group started since the
// last scan shows up at the next one, with all of its CPU so far.
func (t *Target) Usage() (target.Usage, bool) {
	if t.Kind() != "command" || t.cmd == nil {
		return target.Usage{}, false
	}
	u := &t.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return target.Usage{}, false
	}
	var r target.Usage
	var err error
	ok := true
	if t.cg != nil && t.cg.CPUDir != "" {
		r, ok = u.cg.Usage(t.cg.CgroupDirs)
	} else {
		r, err = u.readProcs(t.pgid)
	}
	if !ok || err != nil {
		return target.Usage{}, false
	}
	// A reaped child's CPU moves to its parent's cutime: a reading taken
	// between the two loses it for a moment. A total since the start
	// never goes down, and a window's CPU is a difference of two.
	if r.CPUSeconds < u.lastCPU {
		r.CPUSeconds = u.lastCPU
	}
	u.lastCPU = r.CPUSeconds
	return r, true
}

// ResetMemPeak resets the memory watermark of the target's cgroup (see
// target.CgroupMeter). Only a target whose Usage reads that cgroup has
// one worth reading: in /proc mode (no cgroup, or v1 without cpuacct) Mem
// is a sum of resident sets, a figure of another kind than the cgroup's
// usage.
func (t *Target) ResetMemPeak() func() (int64, bool) {
	if t.Kind() != "command" || t.cmd == nil || t.cg == nil || t.cg.CPUDir == "" {
		return nil
	}
	return t.usage.cg.ResetPeak(t.cg.CgroupDirs)
}

// How often (in Usage calls) /proc is scanned for the group's processes:
// a scan reads the stat file of every process on the machine, the calls
// in between only those of the group. At one call per 50ms that is once a
// second, and at most every 250ms while processes come and go: a server
// that forks a process per request must not make every call a scan.
const (
	procRescanEvery     = 20
	procRescanAfterGone = 5
)

// usageState is what Usage keeps between calls.
type usageState struct {
	mu      sync.Mutex
	closed  bool
	lastCPU float64

	cg target.CgroupMeter // cgroup mode

	// proc mode: the group's processes by pid, read through files.
	files     target.KernelFiles
	procs     map[int]*procEntry
	calls     int
	nextScan  int    // the call that scans /proc
	goneTicks uint64 // CPU of processes gone with no reaper in the group
}

// procEntry is a process of the group. Its files stay open: an open
// /proc/<pid> file keeps referring to that process, so a reused pid can
// never be mistaken for it (reads fail with ESRCH once it is reaped).
type procEntry struct {
	stat, statm int // statm -1 until first read
	ppid        int
	ticks       uint64 // utime+stime+cutime+cstime at the last reading
}

func (e *procEntry) close() {
	unix.Close(e.stat)
	if e.statm >= 0 {
		unix.Close(e.statm)
	}
}

// close releases the open files; Usage returns ok false from then on.
func (u *usageState) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = true
	u.cg.Close()
	for pid, e := range u.procs {
		e.close()
		delete(u.procs, pid)
	}
}

func (u *usageState) readProcs(pgid int) (target.Usage, error) {
	if u.procs == nil || u.calls >= u.nextScan {
		if err := u.scan(pgid); err != nil {
			return target.Usage{}, err
		}
		u.nextScan = u.calls + procRescanEvery
	}
	u.calls++
	var ticks uint64
	var pages int64
	var gone []*procEntry
	for pid, e := range u.procs {
		b, err := u.files.Read(e.stat)
		var st linux.ProcStat
		if err == nil {
			st, err = linux.ParseProcStat(b)
		}
		if err != nil || st.PGRP != pgid {
			// Reaped (zombies can still be read), or left the group.
			delete(u.procs, pid)
			gone = append(gone, e)
			continue
		}
		e.ppid, e.ticks = st.PPID, procTicks(st)
		ticks += e.ticks
		pages += u.resident(pid, e)
	}
	for _, e := range gone {
		// A parent in the group has, or will have once it reaps it, the
		// process's CPU in its cutime; counting it here too would count
		// it twice. Without one, its last reading is all that remains.
		if _, ok := u.procs[e.ppid]; !ok {
			u.goneTicks += e.ticks
		}
		e.close()
		u.nextScan = min(u.nextScan, u.calls+procRescanAfterGone)
	}
	return target.Usage{
		Source:     "proc",
		CPUSeconds: float64(ticks+u.goneTicks) / clockTicks,
		Mem:        pages * int64(os.Getpagesize()),
	}, nil
}

// resident is the resident set of the process in pages, 0 when unknown.
func (u *usageState) resident(pid int, e *procEntry) int64 {
	if e.statm < 0 {
		fd, err := target.OpenRead("/proc/" + strconv.Itoa(pid) + "/statm")
		if err != nil {
			return 0
		}
		e.statm = fd
	}
	b, err := u.files.Read(e.statm)
	if err != nil {
		return 0
	}
	// size resident shared text lib data dt
	_, rest, _ := bytes.Cut(b, []byte{' '})
	res, _, _ := bytes.Cut(rest, []byte{' '})
	n, _ := strconv.ParseInt(string(res), 10, 64)
	return n
}

// scan adds the processes of group pgid not known yet, by reading the stat
// file of every process: there is no cheaper index of a process group.
func (u *usageState) scan(pgid int) error {
	if u.procs == nil {
		u.procs = map[int]*procEntry{}
	}
	pids, err := target.ProcIDs("/proc")
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if u.procs[pid] != nil {
			continue
		}
		fd, err := target.OpenRead("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue // gone already
		}
		b, err := u.files.Read(fd)
		var st linux.ProcStat
		if err == nil {
			st, err = linux.ParseProcStat(b)
		}
		if err != nil || st.PGRP != pgid {
			unix.Close(fd)
			continue
		}
		u.procs[pid] = &procEntry{stat: fd, statm: -1}
	}
	return nil
}

// procTicks is the CPU a process has used and the children it reaped:
// utime+stime+cutime+cstime, in clock ticks.
func procTicks(st linux.ProcStat) uint64 {
	return st.UTime + st.STime + st.CUTime + st.CSTime
}

// clockTicks is USER_HZ, the unit of the times in /proc/<pid>/stat, which
// is what sysconf(_SC_CLK_TCK) returns: the kernel passes it to every
// process in the auxiliary vector.
var clockTicks = func() float64 {
	const atClkTck = 17 // AT_CLKTCK of <elf.h>; x/sys/unix has no name for it
	if av, err := unix.Auxv(); err == nil {
		for _, kv := range av {
			if kv[0] == atClkTck && kv[1] > 0 {
				return float64(kv[1])
			}
		}
	}
	return 100 // USER_HZ on every architecture Linux runs Go on
}()

// PIDs are the processes of a command target's process group now, the
// leader first: what perf records when the target is profiled
// (target.Profiled). None for a url target or one not running.
func (t *Target) PIDs() []int {
	if t.Kind() != "command" || t.cmd == nil || t.pgid == 0 {
		return nil
	}
	pids, err := target.ProcIDs("/proc")
	if err != nil {
		return nil
	}
	out := []int{t.pgid}
	for _, pid := range pids {
		if pid == t.pgid {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue // gone already
		}
		if st, err := linux.ParseProcStat(b); err == nil && st.PGRP == t.pgid {
			out = append(out, pid)
		}
	}
	return out
}
