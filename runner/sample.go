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
	genCPU           float64 // benchgate's own CPU seconds in the window
}

// sampleUsage measures t between from and to: CPU as the difference of two
// readings at the window's edges, memory as the mean and peak of readings
// every `every` in between (both edges included). The result arrives on the
// channel once the window has closed, or at once when ctx ends first (then
// with ok false). Readings are taken from this one goroutine, as service
// asks.
func sampleUsage(ctx context.Context, t service, from, to time.Time, every time.Duration) <-chan windowUsage {
	out := make(chan windowUsage, 1)
	go func() {
		var w windowUsage
		defer func() { out <- w }()
		if !sleepUntil(ctx, from) {
			return
		}
		gen0 := processCPUSeconds()
		first, ok := t.Usage()
		if !ok {
			w.genCPU = waitAndDiff(ctx, to, gen0)
			return
		}
		var sum float64
		n := 0
		add := func(u Usage) {
			sum += float64(u.Mem)
			n++
			w.memPeak = max(w.memPeak, u.Mem)
		}
		add(first)
		last := first
		for next := from.Add(every); next.Before(to); next = next.Add(every) {
			if !sleepUntil(ctx, next) {
				return
			}
			if u, ok := t.Usage(); ok {
				add(u)
				last = u
			}
		}
		if !sleepUntil(ctx, to) {
			return
		}
		if u, ok := t.Usage(); ok {
			add(u)
			last = u
		}
		w.genCPU = processCPUSeconds() - gen0
		w.ok, w.source = true, first.Source
		w.cpu = max(0, last.CPUSeconds-first.CPUSeconds)
		w.memMean = int64(sum / float64(n))
	}()
	return out
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
