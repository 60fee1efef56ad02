//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/profiler"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/google/pprof/profile"
)

// profileCells profiles the cells the run's decision names (Options.Profile)
// among this pin set's, after its measured rounds, while its targets are
// still up. A profile that cannot be taken is recorded and said, never an
// error of the run; only a cancelled run stops it.
func (s *schedule) profileCells(ctx context.Context, pins *scenario.Pins) error {
	p := s.sc.Profiling
	if p.When == scenario.ProfileNever || s.opts.Profile == nil {
		return nil
	}
	name := ""
	if pins != nil {
		name = pins.Name
	}
	cells, err := s.opts.Profile(s.res, p.When == scenario.ProfileAlways)
	if err != nil {
		fmt.Fprintf(s.progress, "profiling: none: deciding which cells to profile: %v\n", err)
		return nil
	}
	var mine []benchdata.Cell
	for _, c := range cells {
		if c.Pins == name {
			mine = append(mine, c)
		}
	}
	for i, cell := range mine {
		if err := cancelled(ctx, s.res); err != nil {
			return err
		}
		cp := benchdata.CellProfile{Cell: cell}
		need := 4 * (profileWindows(p) + s.sc.Load.Warmup)
		switch {
		case i >= p.Cells:
			cp.Skipped = fmt.Sprintf("beyond profiling.cells (%d)", p.Cells)
		case s.budget != nil && need > s.budget.left():
			cp.Skipped = fmt.Sprintf("the budget: profiling it would take %v with %v left", need, s.budget.left().Round(time.Second))
		default:
			s.budget.enter("profiling " + cell.String())
			if err := s.profileCell(ctx, cell, len(s.res.Profiles), &cp); err != nil {
				if cerr := cancelled(ctx, s.res); cerr != nil {
					return cerr
				}
				var te *target.TargetError
				if errors.As(err, &te) {
					return err
				}
				// A reason may quote a URL or a command holding a ${VAR}'s value.
				cp.Skipped = s.sc.Redact(err.Error())
			}
		}
		if cp.Skipped != "" {
			fmt.Fprintf(s.progress, "profiling %s: not profiled: %s\n", cell, cp.Skipped)
		} else {
			fmt.Fprintf(s.progress, "profiling %s: %s, %d and %d requests profiled (%s, %s)\n", cell, cp.Source,
				cp.Baseline.Requests, cp.Candidate.Requests, cp.Baseline.File, cp.Candidate.File)
		}
		s.res.Profiles = append(s.res.Profiles, cp)
		if err := benchdata.Write(s.opts.OutDir, s.res); err != nil {
			return err
		}
	}
	return nil
}

// taker takes one side's profile of one rung: start before the rung,
// window over its measured window (d from its start), finish after it;
// close whatever happened.
type taker interface {
	start(ctx context.Context) error
	window(ctx context.Context, d time.Duration) error
	finish(ctx context.Context) (*profile.Profile, error)
	close()
}

// pprofTaker asks a net/http/pprof endpoint for a profile of the window.
type pprofTaker struct {
	client *http.Client
	url    string
	p      *profile.Profile
}

func (t *pprofTaker) start(context.Context) error { return nil }
func (t *pprofTaker) window(ctx context.Context, d time.Duration) (err error) {
	t.p, err = profiler.PProf(ctx, t.client, t.url, d)
	return err
}
func (t *pprofTaker) finish(context.Context) (*profile.Profile, error) { return t.p, nil }
func (t *pprofTaker) close()                                           {}

// perfTaker records a process target's processes with perf, started
// before the rung (perf takes a while to start) and recording only over
// the window.
type perfTaker struct {
	name string
	pids func() []int
	dir  string
	r    *profiler.Recording
}

func (t *perfTaker) start(ctx context.Context) (err error) {
	pids := t.pids()
	if len(pids) == 0 {
		return fmt.Errorf("the %s has no process to record", t.name)
	}
	t.r, err = profiler.StartPerf(ctx, pids, t.dir)
	return err
}

func (t *perfTaker) window(ctx context.Context, d time.Duration) error {
	if err := t.r.Enable(ctx); err != nil {
		return err
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return ctx.Err()
	}
	return t.r.Disable(ctx)
}

func (t *perfTaker) finish(ctx context.Context) (*profile.Profile, error) { return t.r.Stop(ctx) }

func (t *perfTaker) close() {
	if t.r != nil {
		t.r.Close()
	}
}

// profileSource is how both sides of a run are profiled, or why they
// cannot be: the same source on both, or none.
func (s *schedule) profileSource(ts [2]target.Service) (string, [2]func() taker, error) {
	var takers [2]func() taker
	prof := [2]*scenario.TargetProfile{s.sc.Baseline.Profile, s.sc.Candidate.Profile}
	if prof[0] != nil && prof[0].PProf != "" && prof[1] != nil && prof[1].PProf != "" {
		client := &http.Client{}
		for i, t := range ts {
			u, err := s.proto.pprofURL(t, prof[i].PProf)
			if err != nil {
				return "", takers, err
			}
			takers[i] = func() taker { return &pprofTaker{client: client, url: u} }
		}
		return "pprof", takers, nil
	}
	if (prof[0] != nil && prof[0].PProf != "") != (prof[1] != nil && prof[1].PProf != "") {
		return "", takers, errors.New("only one target declares a pprof endpoint (targets.X.profile.pprof): both sides are profiled alike or not at all")
	}
	for i, t := range ts {
		pt, ok := t.(target.Profiled)
		if !ok || t.Kind() != "command" {
			return "", takers, fmt.Errorf("the %s is a %s target, whose processes perf cannot see from here: declare its net/http/pprof endpoint (targets.%s.profile.pprof) to profile it", t.Name(), t.Kind(), t.Name())
		}
		if prof[i] != nil && prof[i].NoPerf {
			return "", takers, fmt.Errorf("targets.%s.profile.perf is false", t.Name())
		}
		name := t.Name()
		takers[i] = func() taker { return &perfTaker{name: name, pids: pt.PIDs, dir: s.opts.OutDir} }
	}
	if err := profiler.PerfUsable(); err != nil {
		return "", takers, err
	}
	return "perf", takers, nil
}

// profileCell runs cell's load on both sides in ABBA order, each window
// under a CPU profile of its side, and writes each side's profile (its
// two windows merged) under the out dir.
func (s *schedule) profileCell(ctx context.Context, cell benchdata.Cell, index int, cp *benchdata.CellProfile) error {
	ts := [2]target.Service{s.base, s.cand}
	source, takers, err := s.profileSource(ts)
	if err != nil {
		return err
	}
	cp.Source = source
	window := profileWindows(s.sc.Profiling)
	var profs [2][]*profile.Profile
	var requests [2]int64
	var seconds [2]float64
	// Fresh rounds of the seeded stream, past any measured round.
	round := max(s.res.Plan.Rounds, s.res.Plan.MaxRounds)
	// ABBA, and again while a side has fewer than MinProfileSamples (a
	// loaded machine gives the targets less CPU in the same time), up to
	// MaxProfileCycles in all.
	k := 0
	for cycle := 0; cycle < MaxProfileCycles; cycle++ {
		if cycle > 0 && (samples(profs[0]) >= MinProfileSamples && samples(profs[1]) >= MinProfileSamples ||
			s.budget != nil && 4*(window+s.sc.Load.Warmup) > s.budget.left()) {
			break
		}
		for _, side := range []int{0, 1, 1, 0} {
			t := ts[side]
			if err := s.stopped(ctx); err != nil {
				return err
			}
			p, r, err := s.profiledRung(ctx, t, cell, round+k, window, takers[side]())
			if err != nil {
				return err
			}
			k++
			profs[side] = append(profs[side], p)
			requests[side] += int64(r.Value(gate.RPS)*r.Duration + 0.5)
			seconds[side] += window.Seconds()
		}
	}
	return saveProfiles(s.opts.OutDir, index+1, profs, requests, seconds, cp)
}

// profiledRung is one rung of cell's load on t with a window of d, its
// measured window under take's profile.
func (s *schedule) profiledRung(ctx context.Context, t target.Service, cell benchdata.Cell, round int, d time.Duration, take taker) (*profile.Profile, benchdata.Rung, error) {
	defer take.close()
	if err := take.start(ctx); err != nil {
		return nil, benchdata.Rung{}, fmt.Errorf("the %s's profile: %w", t.Name(), err)
	}
	got := make(chan error, 1)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	started := func(_, warmupEnd, windowEnd time.Time) {
		go func() {
			select {
			case <-time.After(time.Until(warmupEnd)):
			case <-pctx.Done():
				got <- pctx.Err()
				return
			}
			got <- take.window(pctx, windowEnd.Sub(warmupEnd))
		}()
	}
	var sources []Source
	s.window = d
	r, err := s.generate(ctx, t, cell, round, s.source(), started, &sources)
	s.window = 0
	if derr := t.Died(); derr != nil {
		return nil, r, derr
	}
	if err != nil {
		return nil, r, fmt.Errorf("%s %s: %w", cell, t.Name(), err)
	}
	select {
	case err = <-got:
	case <-ctx.Done():
		return nil, r, ctx.Err()
	}
	var p *profile.Profile
	if err == nil {
		p, err = take.finish(ctx)
	}
	if err != nil {
		return nil, r, fmt.Errorf("the %s's profile: %w", t.Name(), err)
	}
	return p, r, nil
}
