//go:build linux

package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/docker"
	"github.com/benchgate/benchgate/target/process"
)

// services makes the two services for a pin set (nil for none).
func (s *schedule) services(pins *scenario.Pins) (base, cand target.Service) {
	opts := target.Options{OutDir: s.opts.OutDir, Pins: pins, Redact: s.sc, Probe: s.proto.health()}
	mk := func(spec scenario.Target) target.Service {
		if len(spec.Compose) > 0 && s.docker != nil {
			return docker.NewStack(s.docker, spec, opts)
		}
		if spec.Image != "" && s.docker != nil {
			return docker.New(s.docker, spec, opts)
		}
		return process.New(spec, opts)
	}
	return mk(s.sc.Baseline), mk(s.sc.Candidate)
}

// pinSets runs every round of every cell under each pin set in turn,
// starting fresh targets for each, so a pin set's measurements never share
// a process (its caches, its JIT, its heap) with another's. On error the
// targets are left running for Run, which records the outcome first.
func (s *schedule) pinSets(ctx context.Context) error {
	sets := s.sc.PinSets
	if len(sets) == 0 {
		sets = []scenario.Pins{{}}
	}
	for pi := range sets {
		var pins *scenario.Pins
		if len(s.sc.PinSets) > 0 {
			pins = &sets[pi]
		}
		if err := s.fresh(ctx, pins, pi == 0, ""); err != nil {
			return err
		}
		if pi == 0 {
			s.res.Env.Baseline = s.base.Info(ctx, s.getenv)
			s.res.Env.Candidate = s.cand.Info(ctx, s.getenv)
			// Answers do not depend on pins: the correctness checks
			// run once.
			if err := s.correctness(ctx); err != nil {
				return err
			}
		}
		restore := func() {}
		if pins != nil {
			info := &s.res.Env.Pins[pi]
			var sides [2][]string
			for i, t := range []target.Service{s.base, s.cand} {
				applied, not := t.Pins()
				sides[i] = applied
				for _, a := range applied {
					info.Applied = append(info.Applied, t.Name()+": "+a)
				}
				for _, n := range not {
					info.NotApplied = append(info.NotApplied, t.Name()+": "+n)
				}
			}
			info.NotApplied = append(info.NotApplied, differentLimits(pins, s.base.Name(), sides[0], s.cand.Name(), sides[1])...)
			if pins.GeneratorCPUs != "" {
				r, applied, err := pinGenerator(pins.GeneratorCPUs)
				if err != nil {
					info.NotApplied = append(info.NotApplied, "generator: "+err.Error())
				} else {
					restore = r
					info.Applied = append(info.Applied, "generator: "+applied)
				}
			}
			for _, n := range info.NotApplied {
				fmt.Fprintf(s.progress, "pins %s: not applied: %s\n", pins.Name, n)
			}
		}
		err := s.rounds(ctx, pins)
		if err == nil {
			err = s.profileCells(ctx, pins)
		}
		restore()
		if err != nil {
			return err
		}
	}
	return nil
}

// fresh stops the targets running, if any, and starts new instances of
// both under pins, building them first when build is set; a gRPC
// scenario's methods are checked against the new instances. before names
// the round a restart precedes ("before round 3"), "" for a pin set's
// first start, in the budget's phases.
func (s *schedule) fresh(ctx context.Context, pins *scenario.Pins, build bool, before string) error {
	s.proto.close()
	s.stopTargets()
	s.base, s.cand = s.services(pins)
	if err := s.startTargets(ctx, build, before); err != nil {
		return err
	}
	return s.proto.prepare(ctx, before)
}

// restart gives round a fresh instance of each target (load.restart):
// both stopped, both started again under the same pins, health-checked
// again. What it takes is not measured; the budget bounds it as any
// phase. The time it took is kept as the estimate of the next restart.
func (s *schedule) restart(ctx context.Context, pins *scenario.Pins, round int) error {
	if err := cancelled(ctx, s.res); err != nil {
		return err
	}
	began := time.Now()
	before := fmt.Sprintf("before round %d", round+1)
	if err := s.fresh(ctx, pins, false, before); err != nil {
		return err
	}
	s.restartCost = time.Since(began)
	s.res.Env.Restarts++
	fmt.Fprintf(s.progress, "restart %s: fresh baseline and candidate started in %v\n", before, s.restartCost.Round(time.Millisecond))
	return nil
}

// differentLimits says which of the pin set's limits held on one side
// only (memory applied by docker to an image target, not applicable to a
// url target on the other side), given each side's applied pins, which
// begin with the pin's kind ("cpuset ...", "memory ..."). Listed with the
// pins that did not apply, it makes the report's threats say plainly that
// the two sides were not measured under the same conditions: each side's
// own lines only say what it got.
func differentLimits(p *scenario.Pins, baseName string, baseApplied []string, candName string, candApplied []string) []string {
	has := func(applied []string, kind string) bool {
		return slices.ContainsFunc(applied, func(a string) bool { return strings.HasPrefix(a, kind+" ") })
	}
	var kinds []string
	if strings.TrimSpace(p.CPUs) != "" {
		kinds = append(kinds, "cpuset")
	}
	if p.Memory > 0 {
		kinds = append(kinds, "memory")
	}
	var out []string
	for _, k := range kinds {
		b, c := has(baseApplied, k), has(candApplied, k)
		switch {
		case b && !c:
			out = append(out, fmt.Sprintf("%s and %s ran under different limits: %s applied to %s only", baseName, candName, k, baseName))
		case c && !b:
			out = append(out, fmt.Sprintf("%s and %s ran under different limits: %s applied to %s only", baseName, candName, k, candName))
		}
	}
	return out
}

// startTargets builds both (the first time only: a pin set changes how a
// build runs, not what it builds), then starts both, so a slow build of one
// side does not keep the other idling under measurement conditions.
func (s *schedule) startTargets(ctx context.Context, build bool, before string) error {
	for _, t := range []target.Service{s.base, s.cand} {
		if !build {
			break
		}
		if err := cancelled(ctx, s.res); err != nil {
			return err
		}
		s.budget.enter("the build of the " + t.Name())
		if err := t.Build(ctx); err != nil {
			return cancelledOr(ctx, s.res, err)
		}
	}
	for _, t := range []target.Service{s.base, s.cand} {
		if err := cancelled(ctx, s.res); err != nil {
			return err
		}
		s.budget.enter(strings.TrimSpace("the start of the " + t.Name() + " " + before))
		if err := t.Start(ctx); err != nil {
			return cancelledOr(ctx, s.res, err)
		}
	}
	return nil
}

// stopTargets stops both at once: each may take the whole grace period.
func (s *schedule) stopTargets() {
	if s.base == nil {
		return
	}
	done := make(chan struct{})
	go func() { s.base.Stop(); close(done) }()
	s.cand.Stop()
	<-done
}
