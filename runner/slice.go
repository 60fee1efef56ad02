//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/target"
)

// SliceOrder is the order of slice pair `pair` (0-based) of a cell's round
// under slice interleaving, "AB" (the baseline's slice first) or "BA": the
// round's Order for even pairs, the other order for odd ones, so a round
// runs ABBA ABBA… (or BAAB BAAB…). Like Order it is a pure function of the
// seed, the round and the cell's index in the plan.
//
// The alternation balances within every two pairs what a fixed order
// would turn into a bias: each side goes first in half of the pairs, so a
// drift of the machine across a pair (a warming cache, a slowing clock)
// favours neither; and each side's slice follows its own previous slice
// in half of the pairs and the other side's in the other half, so a cost
// of switching that the settle time does not absorb is paid by both
// alike. Over an even number of pairs each side goes first in exactly
// half of them, and follows itself as often as the other side to within
// one; an odd number leaves one pair over, whose order changes from round
// to round with the round's order.
func SliceOrder(seed uint64, round, cell, pair int) string {
	o := Order(seed, round, cell)
	if pair%2 == 0 {
		return o
	}
	if o == "AB" {
		return "BA"
	}
	return "AB"
}

// sliceSide is one target's part of a slice-interleaved session.
type sliceSide struct {
	t       target.Service
	sess    *load.Session
	total   load.Result // of every window of the session
	sources []Source
	windows chan sliceWindow
	closed  bool // windows
	usage   <-chan sliceUsage
	slices  []benchdata.Slice
	// measured and busy are each slice's measured part, and the time
	// from the slice's start until its last request was answered.
	measured []sliceWindow
	busy     []sliceWindow
	// The parts of a target made of several, each sampled over the same
	// windows as the whole.
	parts       []target.Part
	partWindows []chan sliceWindow
	partUsage   []<-chan sliceUsage
}

// sliceRound is one cell's round under slice interleaving: one session
// over both targets, each with its own transport and workers for the
// whole session. Both targets are warmed in the round's order, then the
// load alternates between them in SlicePairs() pairs of slices in the
// orders SliceOrder gives. Every slice runs Settle uncounted, then Slice
// measured; when it closes the workers send nothing more, and the
// requests still in flight are let finish (uncounted, and bounded by the
// request timeout) before the other target's slice starts: so only one
// target is under load at a time, and no connection is closed by a
// cancellation that the next slice would have to reopen. Each worker of
// a side goes on with its stream across the slices, so a side is sent the
// sequence it would be sent in a round-interleaved rung.
//
// It returns the two rungs in the round's order. Each is complete over
// the side's slices: counts and histogram over all of them, Duration their
// measured time, Start the session's start, and Slices the slices
// themselves (see sliceResources for what a side's resources cover). A
// target that dies, or a cancelled run, ends the session with the error
// and no rung.
func (s *schedule) sliceRound(run context.Context, cell benchdata.Cell, round int, order string) ([2]benchdata.Rung, error) {
	var none [2]benchdata.Rung
	ctx, cancel := context.WithCancel(run)
	defer cancel()
	pair := [2]target.Service{s.base, s.cand}
	if order == "BA" {
		pair = [2]target.Service{s.cand, s.base}
	}
	for _, t := range pair {
		if done := t.Done(); done != nil {
			go func() {
				select {
				case <-done:
					cancel()
				case <-ctx.Done():
				}
			}()
		}
	}
	ls := s.sc.Load
	cut, chosen := s.slicing[cell]
	source := s.source()
	// sides are in the round's order: sides[0] is pair[0].
	var sides [2]*sliceSide
	// Closing the windows ends the samplers: below, before their
	// results are read; here, when the session ends early.
	closeWindows := func() {
		for _, sd := range sides {
			if sd != nil && !sd.closed {
				close(sd.windows)
				for _, pw := range sd.partWindows {
					close(pw)
				}
				sd.closed = true
			}
		}
	}
	defer closeWindows()
	for i, t := range pair {
		sd := &sliceSide{t: t, windows: make(chan sliceWindow, ls.SlicePairs())}
		sess, err := s.proto.session(ctx, t, load.Loop{
			Concurrency: cell.Concurrency,
			Timeout:     ls.Timeout,
			Rate:        float64(cell.Rate),
			Drain:       sliceDrain(max(ls.Slice, cut.Slice)),
			// NewSession asks for the sources from this goroutine.
			Source: func(worker int) Source {
				src := source(cell, round, worker)
				sd.sources = append(sd.sources, src)
				return src
			},
		})
		if err != nil {
			return none, fmt.Errorf("%s %s: %w", cell, t.Name(), err)
		}
		defer sess.Close()
		sd.sess = sess
		sd.usage = sampleSlices(ctx, t, sd.windows, sampleEvery)
		sd.parts = partsOf(t)
		for _, p := range sd.parts {
			pw := make(chan sliceWindow, ls.SlicePairs())
			sd.partWindows = append(sd.partWindows, pw)
			sd.partUsage = append(sd.partUsage, sampleSlices(ctx, p.Service, pw, sampleEvery))
		}
		sides[i] = sd
	}
	ended := func() error {
		if err := s.stopped(run); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: load cancelled: %w", cell, err)
		}
		return nil
	}

	start := time.Now()
	var warmed [2]Warmed
	if ls.Warmup > 0 {
		for i, sd := range sides {
			from := time.Now()
			w := sd.sess.Window(ctx, from, from.Add(ls.Warmup))
			// The warm-up counts nothing but the requests it left in
			// flight, the sign of a target that stopped answering; how
			// long its answers took cuts the cell's slices. An open
			// loop's warm-up calls are none of its slices' Asked, which
			// their answers, failures, calls in flight and unsent add up
			// to: a target that does not answer shows in its slices.
			if cell.Rate == 0 {
				sd.total.Add(load.Result{InFlight: w.InFlight})
			}
			warmed[i] = Warmed{Answered: w.Answered}
			if w.Answered > 0 && w.Latency != nil {
				warmed[i].Mean = time.Duration(w.Latency.Mean() * float64(time.Microsecond))
			}
			if err := ended(); err != nil {
				return none, err
			}
		}
	}
	if !chosen {
		// Sides in the baseline, candidate order, which the choice does
		// not depend on.
		cut = ChooseSlicing(ls, cell.Rate, warmed)
		s.slicing[cell] = cut
		if cut.Why != "" {
			fmt.Fprintf(s.progress, "%s: %s\n", cell, cut.Why)
		}
		if cut.Round {
			return none, errRoundInterleave
		}
	}
	for _, sd := range sides {
		sd.sess.SetDrain(sliceDrain(cut.Slice))
	}
	idx := s.orderIndex[cell]
	for k := range cut.Pairs {
		first := 0
		if SliceOrder(s.sc.Seed, round, idx, k) != order {
			first = 1
		}
		for _, sd := range []*sliceSide{sides[first], sides[1-first]} {
			begin := time.Now()
			w := sliceWindow{from: begin.Add(cut.Settle)}
			w.to = w.from.Add(cut.Slice)
			sd.windows <- w
			for _, pw := range sd.partWindows {
				pw <- w
			}
			res := sd.sess.Window(ctx, w.from, w.to)
			sd.busy = append(sd.busy, sliceWindow{begin, time.Now()})
			if err := ended(); err != nil {
				return none, err
			}
			sd.total.Add(res)
			sl := sliceOf(res)
			sl.Pair, sl.Start = k, w.from.Sub(start).Seconds()
			sd.slices = append(sd.slices, sl)
			sd.measured = append(sd.measured, w)
		}
	}

	var rungs [2]benchdata.Rung
	closeWindows()
	for i, sd := range sides {
		// Both rungs start with the session.
		sd.total.Start = start
		r, err := rungOf(sd.total)
		if err != nil {
			return none, fmt.Errorf("%s %s: %w", cell, sd.t.Name(), err)
		}
		u := <-sd.usage
		r.Slices, r.Slicing = sd.slices, cut.info()
		for j := range r.Slices {
			if j < len(u.cpuOK) && u.cpuOK[j] {
				r.Slices[j].CPUSeconds = u.cpu[j]
			}
		}
		if cpu, ok := sliceResources(u, sd.measured, sd.busy); ok {
			r.ResourceSource, r.CPUSeconds, r.MemMean, r.MemPeak = u.source, cpu, u.memMean, u.memPeak
		}
		r.GenCPUSeconds = u.genCPU
		for j, ch := range sd.partUsage {
			pu := <-ch
			pr := benchdata.PartResources{Name: sd.parts[j].Name}
			if cpu, ok := sliceResources(pu, sd.measured, sd.busy); ok {
				pr.Source, pr.CPUSeconds, pr.MemMean, pr.MemPeak = pu.source, cpu, pu.memMean, pu.memPeak
			}
			r.Parts = append(r.Parts, pr)
		}
		for _, src := range sd.sources {
			if e, ok := src.(interface{ Err() error }); ok {
				if serr := e.Err(); serr != nil {
					return none, target.ShownErr(s.sc, fmt.Errorf("%s %s: class %q: a request template failed: %w", cell, sd.t.Name(), cell.Class, serr))
				}
			}
		}
		rungs[i] = r
	}
	return rungs, nil
}

// errRoundInterleave ends a cell's first sliced round after its
// warm-up when no slice length fits its requests: the round is measured
// again by round interleaving (cellRound).
var errRoundInterleave = errors.New("no slice length fits the cell's requests")

// sliceDrain bounds the drain after each slice: ten slices, and never
// under a second. A request still unanswered by then is cancelled and
// counted in flight, so a target that stops answering costs a gate
// seconds per slice, not a request timeout per slice; a target whose
// requests take that long cannot be measured in slices anyway, since no
// request of its would end inside one.
func sliceDrain(slice time.Duration) time.Duration {
	return max(10*slice, time.Second)
}

// sliceResources is a side's CPU over the measured parts of its slices,
// and whether its resources were measured at all.
//
// When every slice had its own CPU, read at its edges, it is their sum.
// Otherwise (the engine's stats stream, which ticks about once a second,
// or a reading that failed) it is the best the readings allow: the
// target's CPU over the span from its first measured window to its last
// (exact from readings on the spot, by rate from the stream's), times the
// share its measured time has of the time it was under load within the
// span (settle, measured part and the drain of each of its slices). That
// assumes the target uses no CPU worth counting while the other side is
// loaded, and the same CPU per second in the settle and the drain as in
// the measured part: under closed-loop load, at the same rate of
// requests. When the span's CPU cannot be had either, nothing is
// measured, as for a round-interleaved rung: the latencies stand.
//
// Memory is the mean and peak of the readings in the measured parts.
func sliceResources(u sliceUsage, measured, busy []sliceWindow) (cpu float64, ok bool) {
	if u.source == "" || len(measured) == 0 {
		return 0, false
	}
	all := len(u.cpuOK) == len(measured)
	for i, ok := range u.cpuOK {
		all = all && ok
		cpu += u.cpu[i]
	}
	if all {
		return cpu, true
	}
	if !u.spanOK {
		return 0, false
	}
	var in, loaded time.Duration
	for i, w := range measured {
		if !w.from.Before(u.spanFrom) && !w.to.After(u.spanTo) {
			in += w.to.Sub(w.from)
		}
		lo, hi := busy[i].from, busy[i].to
		if lo.Before(u.spanFrom) {
			lo = u.spanFrom
		}
		if hi.After(u.spanTo) {
			hi = u.spanTo
		}
		if hi.After(lo) {
			loaded += hi.Sub(lo)
		}
	}
	if loaded <= 0 {
		return 0, false
	}
	return u.spanCPU * min(1, in.Seconds()/loaded.Seconds()), true
}
