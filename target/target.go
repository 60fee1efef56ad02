// Package target holds what benchgate's two kinds of target share: the
// Service the schedule drives (a process benchgate starts or a service
// already running, in target/process; a container, in target/docker),
// how a service reports its resources (Usage, read from a cgroup by one
// reader whichever kind it measures), how it fails (TargetError, with the
// tail of its output, escaped and capped), the health probe both wait on,
// the redaction of a scenario's secrets in what they write, and the owner
// records and journals by which a later run sweeps what a killed one left
// (docs/leftovers.md). The packages of the two kinds import it; it
// imports neither, nor the schedule.
package target

import (
	"context"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
)

// Service is one side of the comparison as the schedule drives it: a
// process benchgate starts (*process.Target with a command), a service
// already running (*process.Target with a url), or a container
// (*docker.Target). The schedule builds and starts both services of
// a pin set before any load, keeps them up for all its rounds (or, under
// load.restart, replaces both with new ones every few rounds), and stops
// them before the next pin set.
type Service interface {
	Name() string // "baseline" or "candidate"
	Kind() string // "command", "url" or "image"
	Build(ctx context.Context) error
	Start(ctx context.Context) error
	// Stop ends the service and releases everything it holds; safe to call
	// more than once and on a service that never started.
	Stop() error
	URL() string // base URL the load generator appends request paths to
	// Done is closed when the service ended on its own; Died then says how,
	// as a *TargetError with the tail of its output.
	Done() <-chan struct{}
	Died() error
	Info(ctx context.Context, getenv func(string) string) benchdata.TargetInfo
	// Usage reads the resources the service has used so far. It is called
	// at the start and end of each measured window and every few tens of
	// milliseconds in between, from one goroutine, so it must be cheap.
	// A service that cannot be measured (a url target) returns ok false.
	Usage() (u Usage, ok bool)
	// ResetMemPeak starts a window for the kernel's own record of the
	// service's peak memory and returns a function that reads it: the
	// largest Mem+MemCache the kernel counted between the reset and the
	// read, with no gaps between samples. Usage readings alone miss a
	// spike that comes and goes between two of them. It returns nil when
	// the kernel keeps no such record that can be reset for the service
	// (no cgroup of its own, cgroup v2 before Linux 6.12, a file not
	// writable here) or when Usage does not read the same counter (then
	// the two would not be comparable); the caller then has the readings
	// only. It is called from the goroutine that calls Usage, once per
	// window, and windows of a service do not overlap: on cgroup v1 the
	// reset is of the cgroup's one watermark.
	ResetMemPeak() (peakSince func() (int64, bool))
	// Pins says which of its pin set's pins took effect on this service and
	// which could not, with the reason ("memory: cgroup v2 not writable").
	Pins() (applied, notApplied []string)
}

// Parted is a service made of several (a compose stack): each part is
// measured on its own as well as the whole. A part's Usage and
// ResetMemPeak are those of target.Service, read by a goroutine of its
// own.
type Parted interface {
	Parts() []Part
}

// Profiled is a service whose processes this machine can see, so perf
// can record them when a cell is profiled: a command target's process
// group, the leader first.
type Profiled interface {
	PIDs() []int
}

// Part is one part of a Parted service, by name (a compose service).
type Part struct {
	Name    string
	Service Service
}

// Usage is a reading of a service's resources.
type Usage struct {
	// Source says how it was read: "cgroup", "proc" or "docker".
	Source string
	// CPUSeconds is the CPU time used since the service started, user and
	// system, of every process in it.
	CPUSeconds float64
	// Mem is the memory in use now, in bytes (RSS of the process tree, or
	// the cgroup's usage without page cache where that is known).
	Mem int64
	// MemCache is what Mem leaves out of the cgroup's usage counter: page
	// cache the kernel can drop at once (inactive file pages, the same
	// definition for every source that reads a cgroup, see CgroupMeter).
	// Mem+MemCache is that counter, the one whose maximum the kernel's
	// peak records. 0 when Mem is not from a cgroup.
	MemCache int64
	// At is when the figures were true, for a source that reports them
	// late: the engine's stats stream (Source "docker") reads about once a
	// second, and At is its "read" time. Zero means the moment Usage was
	// called. The schedule's sampler takes a window's CPU from such
	// readings by rate.
	At time.Time
}

// Options are what a target is made with besides its scenario.Target.
type Options struct {
	// OutDir gets the target's log, <name>.log.
	OutDir string
	// Pins is the pin set the target runs under; nil pins nothing.
	Pins *scenario.Pins
	// Redact hides the scenario's secrets in what the target's log, its
	// errors and Info hold; nil hides nothing.
	Redact Redactor
	// Probe is the target's health check when its protocol has one of
	// its own (WaitHealthy); nil: a GET of its health path.
	Probe Probe
}

// How targets are watched. Generous enough for slow CI runners, short
// enough that a broken target fails the run quickly.
const (
	// BuildTailLines and ServiceTailLines are how many of its last lines
	// of output a build's and a service's TargetError keeps.
	BuildTailLines   = 30
	ServiceTailLines = 50
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL.
	StopGrace = 5 * time.Second
)
