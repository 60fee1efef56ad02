package runner

import (
	"context"

	"github.com/benchgate/benchgate/baselines"
)

// service is one side of the comparison as the schedule drives it: a
// process benchgate starts (*Target with a command), a service already
// running (*Target with a url), or a container (a docker target). The
// schedule builds and starts both services of a pin set before any load,
// keeps them up for all its rounds, and stops them before the next pin set.
type service interface {
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
	Info(ctx context.Context, getenv func(string) string) baselines.TargetInfo
	// Usage reads the resources the service has used so far. It is called
	// at the start and end of each measured window and every few tens of
	// milliseconds in between, from one goroutine, so it must be cheap.
	// A service that cannot be measured (a url target) returns ok false.
	Usage() (u Usage, ok bool)
	// Pins says which of its pin set's pins took effect on this service and
	// which could not, with the reason ("memory: cgroup v2 not writable").
	Pins() (applied, notApplied []string)
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
}
