package runner

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
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
func (t *Target) Usage() (Usage, bool) {
	if t.Kind() != "command" || t.cmd == nil {
		return Usage{}, false
	}
	u := &t.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return Usage{}, false
	}
	var r Usage
	var err error
	if t.cg != nil && t.cg.cpuDir != "" {
		r, err = u.readCgroup(t.cg.cgroupDirs)
	} else {
		r, err = u.readProcs(t.pgid)
	}
	if err != nil {
		return Usage{}, false
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
// peakFile). Only a target whose Usage reads that cgroup has one worth
// reading: in /proc mode (no cgroup, or v1 without cpuacct) Mem is a sum
// of resident sets, a figure of another kind than the cgroup's usage.
func (t *Target) ResetMemPeak() func() (int64, bool) {
	if t.Kind() != "command" || t.cmd == nil || t.cg == nil || t.cg.cpuDir == "" {
		return nil
	}
	return t.usage.peak.reset(cgroupPeakPath(t.cg.version, t.cg.memDir))
}

// cgroupPeakPath is the file of a cgroup's memory watermark.
func cgroupPeakPath(version int, memDir string) string {
	if version == 1 {
		return filepath.Join(memDir, "memory.max_usage_in_bytes")
	}
	return filepath.Join(memDir, "memory.peak")
}

// peakFile is a cgroup's memory watermark, which the kernel raises on every
// charge, so unlike readings taken now and then it misses no spike. Both
// versions record the maximum of the usage counter (memory.current,
// memory.usage_in_bytes), page cache included.
//
// cgroup v2 (memory.peak): since Linux 6.12 a write to an open descriptor
// of the file makes reads from that descriptor report the peak since the
// write, leaving other readers alone; so write and reads go through one
// descriptor, kept open. Earlier kernels have no write (the file opens
// read-only) and keep only the peak of the cgroup's lifetime, which says
// nothing about a window.
//
// cgroup v1 (memory.max_usage_in_bytes): writing "0" sets the cgroup's one
// watermark to the current usage; it needs write access to the cgroup
// (root, or its owner). It is the target's own cgroup, which nobody else
// reads a peak of.
//
// A reset that fails once is not tried again: it fails for a reason that
// lasts (kernel version, permissions).
type peakFile struct {
	mu     sync.Mutex
	fd     int
	open   bool // fd is valid
	failed bool
	closed bool
	buf    [64]byte
}

// reset resets the watermark of path (the same path on every call) and
// returns a function reading it, or nil when it cannot be reset.
func (p *peakFile) reset(path string) func() (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.failed {
		return nil
	}
	if !p.open {
		fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			p.failed = true
			return nil
		}
		p.fd, p.open = fd, true
	}
	// "0" is what v1 requires; v2 takes any non-empty string.
	if _, err := unix.Pwrite(p.fd, []byte("0"), 0); err != nil {
		p.failed = true
		p.closeLocked()
		return nil
	}
	return p.read
}

func (p *peakFile) read() (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.open {
		return 0, false
	}
	for {
		n, err := unix.Pread(p.fd, p.buf[:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseInt(string(bytes.TrimSpace(p.buf[:n])), 10, 64)
		return v, err == nil
	}
}

// close releases the descriptor; reset returns nil from then on.
func (p *peakFile) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.closeLocked()
}

func (p *peakFile) closeLocked() {
	if p.open {
		unix.Close(p.fd)
		p.open = false
	}
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
	buf     []byte
	lastCPU float64

	// The descriptors are plain ones rather than *os.File: no poller
	// registration or finalizer for files read with pread only, which
	// makes a scan of /proc markedly cheaper. -1 (or 0 entries) when
	// not open.
	cgFiles []int // cgroup mode: CPU, memory, memory.stat
	peak    peakFile

	procs     map[int]*procEntry // proc mode: the group's processes by pid
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

func openRead(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// close releases the open files; Usage returns ok false from then on.
func (u *usageState) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = true
	for _, fd := range u.cgFiles {
		unix.Close(fd)
	}
	u.cgFiles = nil
	u.peak.close()
	for pid, e := range u.procs {
		e.close()
		delete(u.procs, pid)
	}
}

// cgroupDirs is where a cgroup's accounting is read: a command target's
// own cgroup, or a container's when it is visible here. One reader
// (readCgroup) serves both, so Source "cgroup" means the same figures
// whichever kind of target it measured.
type cgroupDirs struct {
	version int    // 1 or 2
	memDir  string // memory.* files; on v2 everything is here
	cpuDir  string // cpuacct.usage (v1) or cpu.stat (v2); "" for none
}

// cgroup reads cg for a service's Usage; ok is false once close ran.
func (u *usageState) cgroup(cg cgroupDirs) (Usage, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return Usage{}, false
	}
	r, err := u.readCgroup(cg)
	return r, err == nil
}

// readCgroup reads the group's CPU time and memory. Memory is the usage
// counter (memory.usage_in_bytes, memory.current) without the inactive
// file pages of memory.stat (v1's hierarchical total_inactive_file, v2's
// inactive_file): page cache the kernel can drop at once. The engine's
// stats stream is given the same definition (memNoCache). The files stay
// open between calls (see read); the first cg given is the one read.
func (u *usageState) readCgroup(cg cgroupDirs) (Usage, error) {
	if u.cgFiles == nil {
		names := [3]string{
			filepath.Join(cg.cpuDir, "cpu.stat"),
			filepath.Join(cg.memDir, "memory.current"),
			filepath.Join(cg.memDir, "memory.stat"),
		}
		if cg.version == 1 {
			names[0] = filepath.Join(cg.cpuDir, "cpuacct.usage")
			names[1] = filepath.Join(cg.memDir, "memory.usage_in_bytes")
		}
		fds := make([]int, 0, len(names))
		for _, n := range names {
			fd, err := openRead(n)
			if err != nil {
				for _, fd := range fds {
					unix.Close(fd)
				}
				return Usage{}, &os.PathError{Op: "open", Path: n, Err: err}
			}
			fds = append(fds, fd)
		}
		u.cgFiles = fds
	}
	var nanos, mem, inactive int64
	b, err := u.read(u.cgFiles[0])
	if err != nil {
		return Usage{}, err
	}
	if cg.version == 2 {
		usec, ok := statField(b, "usage_usec")
		if !ok {
			return Usage{}, errors.New("cpu.stat without usage_usec")
		}
		nanos = usec * 1000
	} else if nanos, err = parseCgroupInt(b); err != nil {
		return Usage{}, err
	}
	if b, err = u.read(u.cgFiles[1]); err != nil {
		return Usage{}, err
	}
	if mem, err = parseCgroupInt(b); err != nil {
		return Usage{}, err
	}
	if b, err = u.read(u.cgFiles[2]); err != nil {
		return Usage{}, err
	}
	// v1's hierarchical total: a container's group may have children.
	key := "inactive_file"
	if cg.version == 1 {
		key = "total_inactive_file"
	}
	inactive, _ = statField(b, key)
	m := max(mem-inactive, 0)
	return Usage{Source: "cgroup", CPUSeconds: float64(nanos) / 1e9, Mem: m, MemCache: mem - m}, nil
}

// cgroupMemLimit is the group's memory limit in bytes; -1 for none ("max"
// on v2).
func cgroupMemLimit(cg cgroupDirs) (int64, error) {
	name := "memory.max"
	if cg.version == 1 {
		name = "memory.limit_in_bytes"
	}
	b, err := os.ReadFile(filepath.Join(cg.memDir, name))
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

// read reads a whole small kernel file again through its open descriptor:
// cheaper than opening it each time, and the kernel regenerates the text
// on a read at offset 0.
// The files are a few kB at most; the text is generated in one go, so one
// pread reads it all unless the buffer is too small.
func (u *usageState) read(fd int) ([]byte, error) {
	if u.buf == nil {
		u.buf = make([]byte, 8<<10)
	}
	for {
		n, err := unix.Pread(fd, u.buf, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, err
		case n == len(u.buf):
			u.buf = make([]byte, 2*len(u.buf))
			continue
		}
		return u.buf[:n], nil
	}
}

// statField finds "key value" among the lines of a cgroup stat file.
func statField(b []byte, key string) (int64, bool) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		k, v, ok := bytes.Cut(line, []byte{' '})
		if ok && string(k) == key {
			n, err := strconv.ParseInt(string(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func (u *usageState) readProcs(pgid int) (Usage, error) {
	if u.procs == nil || u.calls >= u.nextScan {
		if err := u.scan(pgid); err != nil {
			return Usage{}, err
		}
		u.nextScan = u.calls + procRescanEvery
	}
	u.calls++
	var ticks uint64
	var pages int64
	var gone []*procEntry
	for pid, e := range u.procs {
		b, err := u.read(e.stat)
		var st procStat
		if err == nil {
			st, err = parseStat(b)
		}
		if err != nil || st.pgrp != pgid {
			// Reaped (zombies can still be read), or left the group.
			delete(u.procs, pid)
			gone = append(gone, e)
			continue
		}
		e.ppid, e.ticks = st.ppid, st.ticks
		ticks += st.ticks
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
	return Usage{
		Source:     "proc",
		CPUSeconds: float64(ticks+u.goneTicks) / clockTicks,
		Mem:        pages * int64(os.Getpagesize()),
	}, nil
}

// resident is the resident set of the process in pages, 0 when unknown.
func (u *usageState) resident(pid int, e *procEntry) int64 {
	if e.statm < 0 {
		fd, err := openRead("/proc/" + strconv.Itoa(pid) + "/statm")
		if err != nil {
			return 0
		}
		e.statm = fd
	}
	b, err := u.read(e.statm)
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
	names, err := readDirNames("/proc")
	if err != nil {
		return err
	}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || u.procs[pid] != nil {
			continue
		}
		fd, err := openRead("/proc/" + name + "/stat")
		if err != nil {
			continue // gone already
		}
		b, err := u.read(fd)
		var st procStat
		if err == nil {
			st, err = parseStat(b)
		}
		if err != nil || st.pgrp != pgid {
			unix.Close(fd)
			continue
		}
		u.procs[pid] = &procEntry{stat: fd, statm: -1}
	}
	return nil
}

// procStat is what Usage takes from /proc/<pid>/stat.
type procStat struct {
	ppid, pgrp int
	ticks      uint64 // utime+stime+cutime+cstime, in clock ticks
}

// parseStat parses /proc/<pid>/stat. The command name, in parentheses,
// may hold spaces and parentheses itself, so the fields are counted from
// the last ')'. After it come state (field 3), ppid (4), pgrp (5), ...,
// utime (14), stime (15), cutime (16), cstime (17).
func parseStat(b []byte) (procStat, error) {
	var st procStat
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return st, errors.New("malformed /proc stat")
	}
	rest := b[i+1:]
	field := 2
	for field < 17 {
		rest = bytes.TrimLeft(rest, " ")
		if len(rest) == 0 {
			return st, errors.New("short /proc stat")
		}
		field++
		tok := rest
		if j := bytes.IndexByte(rest, ' '); j >= 0 {
			tok, rest = rest[:j], rest[j:]
		} else {
			rest = nil
		}
		switch field {
		case 4, 5:
			n, err := strconv.Atoi(string(tok))
			if err != nil {
				return st, err
			}
			if field == 4 {
				st.ppid = n
			} else {
				st.pgrp = n
			}
		case 14, 15, 16, 17:
			// cutime and cstime are signed longs in the kernel, but
			// never negative.
			n, err := strconv.ParseUint(string(tok), 10, 64)
			if err != nil {
				return st, err
			}
			st.ticks += n
		}
	}
	return st, nil
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
