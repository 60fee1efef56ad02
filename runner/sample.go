package runner

import (
	"context"
	"time"
)

// sampleEvery is how often a target's memory is read during a rung: often
// enough that a rung of a second has a mean of a few dozen readings, rarely
// enough that the readings cost the machine nothing worth measuring.
const sampleEvery = 50 * time.Millisecond

// windowUsage is what a target and the generator used in a measured window.
type windowUsage struct {
	ok               bool // the target could be measured
	source           string
	cpu              float64 // target CPU seconds in the window
	memMean, memPeak int64
	// kernelPeak says memPeak had the kernel's watermark to go by, not
	// only the readings.
	kernelPeak bool
	genCPU     float64 // benchgate's own CPU seconds in the window
}

// sampleUsage measures t between from and to: CPU as the difference of two
// readings at the window's edges, memory as the mean and peak of readings
// every `every` in between (both edges included). The result arrives on the
// channel once the window has closed, or at once when ctx ends first (then
// with ok false). Readings are taken from this one goroutine, as service
// asks.
//
// The peak also takes the kernel's watermark where the service has one
// (ResetMemPeak), reset at the window's start and read at its end: a spike
// between two readings is then not lost. See windowPeak for how the two
// are made to mean the same thing.
func sampleUsage(ctx context.Context, t service, from, to time.Time, every time.Duration) <-chan windowUsage {
	out := make(chan windowUsage, 1)
	go func() {
		var w windowUsage
		defer func() { out <- w }()
		if !sleepUntil(ctx, from) {
			return
		}
		gen0 := processCPUSeconds()
		// Reset before the first reading, so the watermark covers every
		// moment a reading does.
		peakSince := t.ResetMemPeak()
		first, ok := t.Usage()
		if !ok {
			w.genCPU = waitAndDiff(ctx, to, gen0)
			return
		}
		var sum float64
		n := 0
		var maxCache int64
		add := func(u Usage) {
			sum += float64(u.Mem)
			n++
			w.memPeak = max(w.memPeak, u.Mem)
			maxCache = max(maxCache, u.MemCache)
		}
		add(first)
		last := first
		// inside is the first late reading taken inside the window (see
		// staleWindowCPU); readings without At never need it.
		var inside *Usage
		take := func(u Usage) {
			add(u)
			last = u
			if inside == nil && !u.At.IsZero() && !u.At.Before(from) {
				inside = &u
			}
		}
		for next := from.Add(every); next.Before(to); next = next.Add(every) {
			if !sleepUntil(ctx, next) {
				return
			}
			if u, ok := t.Usage(); ok {
				take(u)
			}
		}
		if !sleepUntil(ctx, to) {
			return
		}
		if u, ok := t.Usage(); ok {
			take(u)
		}
		if peakSince != nil {
			if kp, ok := peakSince(); ok {
				w.memPeak, w.kernelPeak = windowPeak(w.memPeak, kp, maxCache), true
			}
		}
		w.genCPU = processCPUSeconds() - gen0
		if first.At.IsZero() {
			w.cpu = max(0, last.CPUSeconds-first.CPUSeconds)
		} else {
			start := first
			if inside != nil {
				start = *inside
			}
			var fresh bool
			if w.cpu, fresh = staleWindowCPU(start, last, from, to); !fresh {
				// No figure rather than a wrong one: the rung's
				// resources are unmeasured, its latencies stand.
				return
			}
		}
		w.ok, w.source = true, first.Source
		w.memMean = int64(sum / float64(n))
	}()
	return out
}

// staleWindowCPU is a window's CPU from two readings taken at their own
// times (Usage.At) rather than at the window's edges, as the engine's stats
// stream delivers them: a difference of the two readings current at from
// and at to would cover whichever second-long spans the engine's ticks
// happened to fall in, 0 when no tick fell in the window, up to twice the
// truth when the span is twice the window. Instead the CPU rate between
// the readings, CPU seconds per second of their own time stamps, is scaled
// to the window's length.
//
// sampleUsage passes the first reading taken inside the window when there
// is one and a later one, else the one current at from (taken up to a
// tick before the window, during the warmup's load), and the last
// reading. The resolution is the engine's tick (about a second): the rate
// is that of a span which may start up to a tick before the window and
// ends up to a tick before its end, so a window should span several ticks
// to be measured closely; load that changes within the window is
// averaged over that span. When no reading was taken inside the window
// there is no rate of it at all: ok is false, and the rung's resources are
// left unmeasured rather than reported wrong.
func staleWindowCPU(start, end Usage, from, to time.Time) (cpu float64, ok bool) {
	if end.At.Before(from) || !end.At.After(start.At) {
		return 0, false
	}
	rate := (end.CPUSeconds - start.CPUSeconds) / end.At.Sub(start.At).Seconds()
	return max(0, rate) * to.Sub(from).Seconds(), true
}

// windowPeak combines the peak of the readings (Mem: usage without page
// cache) with the kernel's watermark of the cgroup's usage counter, which
// includes the cache (Mem+MemCache). How much cache there was at the
// moment of the kernel's peak is unknown; the readings saw at most
// maxCache of it, and that is what is subtracted: the kernel's figure then
// comes out no larger than a reading at that moment would have, unless the
// cache itself spiked above every reading of it. The error goes the safe
// way for a regression gate: a service whose cache grows during the window
// (one writing a log) gets a peak too low by the growth, not a spike it
// never had. The max with the readings' peak keeps the result at or above
// every reading, so mean <= peak holds as it does without the kernel.
func windowPeak(sampled, kernelPeak, maxCache int64) int64 {
	return max(sampled, kernelPeak-maxCache)
}

func waitAndDiff(ctx context.Context, to time.Time, gen0 float64) float64 {
	if !sleepUntil(ctx, to) {
		return 0
	}
	return processCPUSeconds() - gen0
}

// sleepUntil waits for the wall-clock-independent moment t (time.Until uses
// the monotonic reading); false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
