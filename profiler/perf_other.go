//go:build !linux

package profiler

import (
	"context"
	"errors"

	"github.com/google/pprof/profile"
)

// Recording is perf's, which exists on Linux only.
type Recording struct{}

var errNoPerf = errors.New("perf: Linux only")

// StartPerf fails: perf exists on Linux only.
func StartPerf(context.Context, []int, string) (*Recording, error) { return nil, errNoPerf }

// Enable fails: perf exists on Linux only.
func (*Recording) Enable(context.Context) error { return errNoPerf }

// Disable fails: perf exists on Linux only.
func (*Recording) Disable(context.Context) error { return errNoPerf }

// Stop fails: perf exists on Linux only.
func (*Recording) Stop(context.Context) (*profile.Profile, error) { return nil, errNoPerf }

// Close does nothing.
func (*Recording) Close() {}
