//go:build !linux

package runner

import (
	"context"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/internal/linux"
	"github.com/benchgate/benchgate/scenario"
)

// Off Linux, benchgate runs no targets. Its engines start process groups,
// pin CPUs, make cgroups and sweep what killed runs left, all of it
// Linux's, so the files that hold them are built for Linux only. Measure
// still reads and checks the scenario first, so an invalid one is told as
// anywhere, and then returns the refusal below as it is.

// Run refuses off Linux: see above.
func Run(context.Context, *scenario.Scenario, Options) (*benchdata.Results, error) {
	return nil, linux.Required()
}

// RunGoBench refuses off Linux: see above.
func RunGoBench(context.Context, *scenario.Scenario, Options) (*benchdata.Results, error) {
	return nil, linux.Required()
}
