package scenario

import "time"

// When cells are profiled (Profiling.When).
const (
	ProfileRegressed = "regressed" // the default: only gated cells that regressed
	ProfileAlways    = "always"    // every gated cell
	ProfileNever     = "never"
)

// Profiling defaults: each side of a profiled cell is profiled for
// DefaultProfileDuration, at most DefaultProfileCells cells a run.
const (
	DefaultProfileDuration = 4 * time.Second
	DefaultProfileCells    = 3
)

// Profiling is the profiling section: after the measured rounds, which
// are never profiled, the cells it names run their identical load once
// more on both sides, interleaved, while a CPU profile of each side is
// taken, so that the report can say where a regressed cell got slower.
type Profiling struct {
	When     string        // ProfileRegressed, ProfileAlways or ProfileNever
	Duration time.Duration // each side's profiling window, per cell
	Cells    int           // the most cells profiled in a run
}

// DefaultProfiling is what a scenario without a profiling section gets.
var DefaultProfiling = Profiling{When: ProfileRegressed, Duration: DefaultProfileDuration, Cells: DefaultProfileCells}

// TargetProfile is how a target is profiled (targets.X.profile): a Go
// service's net/http/pprof endpoint, on the port the load goes to, or
// (a command target on Linux, by default) perf record of its processes.
type TargetProfile struct {
	// PProf is the endpoint's path, e.g. /debug/pprof/profile; "" for none.
	PProf string
	// NoPerf turns perf off for a command target (profile: {perf: false}).
	NoPerf bool
}

func (l *loader) profiling(n *node) {
	l.s.Profiling = DefaultProfiling
	if n == nil {
		return
	}
	m, ok := l.fields(n, "profiling", "when", "duration", "cells")
	if !ok {
		return
	}
	if v := m["when"]; v != nil {
		if s, ok := l.str(v, "profiling.when"); ok {
			switch s {
			case ProfileRegressed, ProfileAlways, ProfileNever:
				l.s.Profiling.When = s
			default:
				l.errNode(v, "profiling.when", "%q: want regressed (the default: gated cells that regressed), always (every gated cell) or never", v.errText())
			}
		}
	}
	if v := m["duration"]; v != nil {
		if d, ok := l.duration(v, "profiling.duration"); ok {
			if d < time.Second || d > 10*time.Minute {
				l.errNode(v, "profiling.duration", "%s: want from 1s to 10m (each side's profile of a cell; a pprof endpoint counts whole seconds)", v.errText())
			} else {
				l.s.Profiling.Duration = d
			}
		}
	}
	if v := m["cells"]; v != nil {
		if c, ok := l.integer(v, "profiling.cells"); ok {
			if c < 1 || c > 100 {
				l.errNode(v, "profiling.cells", "%s: want from 1 to 100 (the most cells profiled in a run)", v.errText())
			} else {
				l.s.Profiling.Cells = int(c)
			}
		}
	}
}

// targetProfile reads targets.X.profile.
func (l *loader) targetProfile(n *node, f string) *TargetProfile {
	m, ok := l.fields(n, f, "pprof", "perf")
	if !ok {
		return nil
	}
	tp := &TargetProfile{}
	if v := m["pprof"]; v != nil {
		if s, ok := l.str(v, f+".pprof"); ok {
			if len(s) < 2 || s[0] != '/' {
				l.errNode(v, f+".pprof", "%q must be the path of the target's net/http/pprof CPU profile, e.g. /debug/pprof/profile", v.errText())
			} else {
				tp.PProf = s
			}
		}
	}
	if v := m["perf"]; v != nil {
		if on, ok := l.boolean(v, f+".perf"); ok {
			tp.NoPerf = !on
		}
	}
	return tp
}
