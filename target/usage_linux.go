package target

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// CgroupMeter reads a cgroup's accounting for a service's Usage and
// ResetMemPeak; its methods may be called from any goroutine. Memory is
// the usage counter (memory.usage_in_bytes, memory.current) without the
// inactive file pages of memory.stat (v1's hierarchical
// total_inactive_file, v2's inactive_file): page cache the kernel can drop
// at once, which is closer to what the service needs than the raw figure.
// The engine's stats stream is given the same definition (see
// target/docker). The files stay open between readings (see KernelFiles);
// the first CgroupDirs given is the one read.
type CgroupMeter struct {
	mu     sync.Mutex
	closed bool
	files  KernelFiles
	fds    []int // CPU, memory, memory.stat; nil until the first reading
	peak   peakFile
}

// Usage reads cg; ok is false once Close ran, or when a file cannot be
// read.
func (m *CgroupMeter) Usage(cg CgroupDirs) (Usage, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Usage{}, false
	}
	r, err := m.read(cg)
	return r, err == nil
}

func (m *CgroupMeter) read(cg CgroupDirs) (Usage, error) {
	if m.fds == nil {
		names := [3]string{
			filepath.Join(cg.CPUDir, "cpu.stat"),
			filepath.Join(cg.MemDir, "memory.current"),
			filepath.Join(cg.MemDir, "memory.stat"),
		}
		if cg.Version == 1 {
			names[0] = filepath.Join(cg.CPUDir, "cpuacct.usage")
			names[1] = filepath.Join(cg.MemDir, "memory.usage_in_bytes")
		}
		fds := make([]int, 0, len(names))
		for _, n := range names {
			fd, err := OpenRead(n)
			if err != nil {
				for _, fd := range fds {
					unix.Close(fd)
				}
				return Usage{}, &os.PathError{Op: "open", Path: n, Err: err}
			}
			fds = append(fds, fd)
		}
		m.fds = fds
	}
	var nanos, mem, inactive int64
	b, err := m.files.Read(m.fds[0])
	if err != nil {
		return Usage{}, err
	}
	if cg.Version == 2 {
		usec, ok := statField(b, "usage_usec")
		if !ok {
			return Usage{}, errors.New("cpu.stat without usage_usec")
		}
		nanos = usec * 1000
	} else if nanos, err = parseCgroupInt(b); err != nil {
		return Usage{}, err
	}
	if b, err = m.files.Read(m.fds[1]); err != nil {
		return Usage{}, err
	}
	if mem, err = parseCgroupInt(b); err != nil {
		return Usage{}, err
	}
	if b, err = m.files.Read(m.fds[2]); err != nil {
		return Usage{}, err
	}
	// v1's hierarchical total: a container's group may have children.
	key := "inactive_file"
	if cg.Version == 1 {
		key = "total_inactive_file"
	}
	inactive, _ = statField(b, key)
	mm := max(mem-inactive, 0)
	return Usage{Source: "cgroup", CPUSeconds: float64(nanos) / 1e9, Mem: mm, MemCache: mem - mm}, nil
}

// ResetPeak resets the memory watermark of cg (see peakFile) and returns
// a function reading it, or nil when it cannot be reset, or after Close.
func (m *CgroupMeter) ResetPeak(cg CgroupDirs) func() (int64, bool) {
	return m.peak.reset(cgroupPeakPath(cg.Version, cg.MemDir))
}

// Close releases the open files; Usage and ResetPeak read nothing from
// then on.
func (m *CgroupMeter) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for _, fd := range m.fds {
		unix.Close(fd)
	}
	m.fds = nil
	m.peak.close()
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

// KernelFiles reads small kernel files again and again through their open
// descriptors: cheaper than opening them each time, and the kernel
// regenerates the text on a read at offset 0. The descriptors are plain
// ones rather than *os.File: no poller registration or finalizer for
// files read with pread only, which makes a scan of /proc markedly
// cheaper. Not safe for concurrent use.
type KernelFiles struct {
	buf []byte
}

// Read reads the whole file fd again. The files are a few kB at most; the
// text is generated in one go, so one pread reads it all unless the
// buffer is too small. The result is valid until the next Read.
func (k *KernelFiles) Read(fd int) ([]byte, error) {
	if k.buf == nil {
		k.buf = make([]byte, 8<<10)
	}
	for {
		n, err := unix.Pread(fd, k.buf, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, err
		case n == len(k.buf):
			k.buf = make([]byte, 2*len(k.buf))
			continue
		}
		return k.buf[:n], nil
	}
}

// OpenRead opens path for KernelFiles.Read, retrying EINTR.
func OpenRead(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
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
