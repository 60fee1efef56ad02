//go:build !linux

package doctor

import (
	"cmp"
	"context"

	"github.com/benchgate/benchgate/internal/linux"
)

// Check has one finding off Linux: benchgate measures on Linux only, so
// no machine here is fit to measure, and the checks of one are not made.
// It FAILs, and the command with it.
func Check(_ context.Context, o Options) *Report {
	rep := &Report{Root: cmp.Or(o.Root, "/"), Summary: Summary{Fail: 1}}
	if sc := o.Scenario; sc != nil {
		rep.Scenario, rep.Profile = sc.File, sc.Profile
	}
	rep.Checks = []Result{{
		ID: "system", Title: "system", Status: Fail,
		Found: linux.Required().Error(),
		Fix:   []string{"run benchgate doctor on the Linux machine that is to measure"},
	}}
	return rep
}

// writable is never asked off Linux (Check above makes no check).
func (m *machine) writable(string) bool { return false }
