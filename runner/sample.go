//go:build linux

package runner

import (
	"context"
	"time"

	"github.com/benchgate/benchgate/target"
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
// with ok false). Readings are taken from this one goroutine, as
// target.Service asks.
//
// The peak also takes the kernel's watermark where the service has one
// (ResetMemPeak), reset at the window's start and read at its end: a spike
// between two readings is then not lost. See windowPeak for how the two
// are made to mean the same thing.
func sampleUsage(ctx context.Context, t target.Service, from, to time.Time, every time.Duration) <-chan windowUsage {
	out := make(chan windowUsage, 1)
	go func() {
		var w windowUsage
		defer func() { out <- w }()
		rd, ok := readWindow(ctx, t, from, to, every)
		if !ok {
			return
		}
		w.genCPU = rd.genCPU
		if !rd.ok {
			return
		}
		w.memPeak, w.kernelPeak = rd.peak()
		var fresh bool
		if w.cpu, fresh = rd.cpu(from, to); !fresh {
			// No figure rather than a wrong one: the rung's
			// resources are unmeasured, its latencies stand.
			return
		}
		w.ok, w.source = true, rd.first.Source
		w.memMean = int64(rd.sum / float64(rd.n))
	}()
	return out
}

// readings are what t's Usage said over one window.
type readings struct {
	ok          bool         // the first reading, at the window's start, was had
	first, last target.Usage // the first and the last reading
	atEnd       bool         // last was read at the window's end
	// inside is the first late reading taken inside the window (see
	// staleWindowCPU); readings without At never need it.
	inside   *target.Usage
	sum      float64 // of the readings' Mem, n of them
	n        int
	memPeak  int64 // the readings' largest Mem
	maxCache int64
	// kernelPeak is the kernel's watermark over the window, when
	// hasKernel.
	kernelPeak int64
	hasKernel  bool
	genCPU     float64 // benchgate's own CPU seconds in the window
}

// readWindow reads t at from, every `every` after it and at to; false when
// ctx ended first. A first reading that fails leaves rd.ok false: then
// only genCPU is measured.
func readWindow(ctx context.Context, t target.Service, from, to time.Time, every time.Duration) (rd readings, done bool) {
	if !sleepUntil(ctx, from) {
		return rd, false
	}
	gen0 := processCPUSeconds()
	// Reset before the first reading, so the watermark covers every
	// moment a reading does.
	peakSince := t.ResetMemPeak()
	first, ok := t.Usage()
	if !ok {
		if !sleepUntil(ctx, to) {
			return rd, false
		}
		rd.genCPU = processCPUSeconds() - gen0
		return rd, true
	}
	rd.ok, rd.first = true, first
	add := func(u target.Usage) {
		rd.sum += float64(u.Mem)
		rd.n++
		rd.memPeak = max(rd.memPeak, u.Mem)
		rd.maxCache = max(rd.maxCache, u.MemCache)
		rd.last = u
	}
	add(first)
	take := func(u target.Usage) {
		add(u)
		if rd.inside == nil && !u.At.IsZero() && !u.At.Before(from) {
			rd.inside = &u
		}
	}
	for next := from.Add(every); next.Before(to); next = next.Add(every) {
		if !sleepUntil(ctx, next) {
			return rd, false
		}
		if u, ok := t.Usage(); ok {
			take(u)
		}
	}
	if !sleepUntil(ctx, to) {
		return rd, false
	}
	if u, ok := t.Usage(); ok {
		take(u)
		rd.atEnd = true
	}
	if peakSince != nil {
		if kp, ok := peakSince(); ok {
			rd.kernelPeak, rd.hasKernel = kp, true
		}
	}
	rd.genCPU = processCPUSeconds() - gen0
	return rd, true
}

// onSpot says every reading was true when taken (no At), so the CPU of
// the window is the difference of the edge readings exactly.
func (rd *readings) onSpot() bool { return rd.first.At.IsZero() && rd.last.At.IsZero() && rd.atEnd }

// cpu is the window's CPU seconds, and whether the readings can say.
func (rd *readings) cpu(from, to time.Time) (float64, bool) {
	if rd.first.At.IsZero() {
		return max(0, rd.last.CPUSeconds-rd.first.CPUSeconds), true
	}
	start := rd.first
	if rd.inside != nil {
		start = *rd.inside
	}
	return staleWindowCPU(start, rd.last, from, to)
}

// peak is the window's memory peak: the readings', with the kernel's
// watermark where there is one.
func (rd *readings) peak() (peak int64, kernel bool) {
	if rd.hasKernel {
		return windowPeak(rd.memPeak, rd.kernelPeak, rd.maxCache), true
	}
	return rd.memPeak, false
}

// staleWindowCPU is a window's CPU from two readings taken at their own
// times (target.Usage.At) rather than at the window's edges, as the
// engine's stats stream delivers them: a difference of the two readings
// current at from and at to would cover whichever second-long spans the
// engine's ticks happened to fall in, 0 when no tick fell in the window,
// up to twice the truth when the span is twice the window. Instead the CPU
// rate between the readings, CPU seconds per second of their own time
// stamps, is scaled to the window's length.
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
func staleWindowCPU(start, end target.Usage, from, to time.Time) (cpu float64, ok bool) {
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

// sliceWindow is the measured part of one slice.
type sliceWindow struct{ from, to time.Time }

// sliceUsage is what a target used over the measured parts of its slices
// in one session (see sampleSlices).
type sliceUsage struct {
	// cpu and cpuOK are each slice's target CPU, in the order of the
	// windows, where it could be read at the slice's edges.
	cpu   []float64
	cpuOK []bool
	// source is how the readings were taken; "" when no window had one.
	source           string
	memMean, memPeak int64
	genCPU           float64 // benchgate's own CPU in the windows
	// The target's CPU over the span from the first window's start to
	// the last one's end, whatever happened in between, when spanOK: the
	// figure to go by when not every slice had its own (see sliceRungs).
	spanFrom, spanTo time.Time
	spanCPU          float64
	spanOK           bool
}

// sampleSlices reads t over each window sent on windows, in turn, as
// sampleUsage reads one: all from one goroutine, as target.Service asks,
// since the windows of a target's slices follow each other. Once windows is
// closed the result arrives on the channel. A window sent after ctx ended
// is not read, and neither is any later one; windows must be buffered for
// every window the caller sends, so that sending never waits for a
// reading.
//
// A slice's CPU is the difference of two readings at its edges when
// both were true when taken: a command target's cgroup or /proc, a
// container's visible cgroup. The engine's stats stream ticks about once
// a second, far too coarsely for a slice, so its slices have none; the
// span's CPU is then taken from the stream's rate (see staleWindowCPU).
// Memory is the mean and the peak of every reading in the windows.
func sampleSlices(ctx context.Context, t target.Service, windows <-chan sliceWindow, every time.Duration) <-chan sliceUsage {
	out := make(chan sliceUsage, 1)
	go func() {
		var su sliceUsage
		var sum float64
		n := 0
		var spanFirst, spanLast, spanInside *target.Usage
		stopped := false
		for w := range windows {
			if stopped {
				continue
			}
			rd, ok := readWindow(ctx, t, w.from, w.to, every)
			if !ok {
				stopped = true
				continue
			}
			su.genCPU += rd.genCPU
			var cpu float64
			cpuOK := rd.ok && rd.onSpot()
			if cpuOK {
				cpu = max(0, rd.last.CPUSeconds-rd.first.CPUSeconds)
			}
			su.cpu, su.cpuOK = append(su.cpu, cpu), append(su.cpuOK, cpuOK)
			if !rd.ok {
				continue
			}
			if su.source == "" {
				su.source = rd.first.Source
			}
			sum += rd.sum
			n += rd.n
			p, _ := rd.peak()
			su.memPeak = max(su.memPeak, p)
			if spanFirst == nil {
				first := rd.first
				spanFirst, su.spanFrom = &first, w.from
				spanInside = rd.inside
			} else if spanInside == nil {
				if !rd.first.At.IsZero() && !rd.first.At.Before(su.spanFrom) {
					first := rd.first
					spanInside = &first
				} else {
					spanInside = rd.inside
				}
			}
			last := rd.last
			spanLast, su.spanTo = &last, w.to
		}
		if n > 0 {
			su.memMean = int64(sum / float64(n))
		}
		if spanFirst != nil && !stopped {
			span := readings{ok: true, first: *spanFirst, last: *spanLast, inside: spanInside}
			su.spanCPU, su.spanOK = span.cpu(su.spanFrom, su.spanTo)
		}
		out <- su
	}()
	return out
}
