//go:build !linux

package runner

import (
	"context"
	"io"

	"github.com/benchgate/benchgate/internal/linux"
	"github.com/benchgate/benchgate/scenario"
)

// DryRun refuses off Linux, as Run does (run_other.go): its plan of a
// gobench run resolves the sides with the engine's own code.
func DryRun(context.Context, Request, Options, io.Writer) error {
	return linux.Required()
}

// plan is never reached off Linux, where DryRun refuses first.
func (loadEngine) plan(context.Context, *scenario.Scenario, Options, io.Writer) error {
	return linux.Required()
}

// plan: as loadEngine's.
func (goBenchEngine) plan(context.Context, *scenario.Scenario, Options, io.Writer) error {
	return linux.Required()
}
