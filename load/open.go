package load

// The open loop: calls start on a fixed schedule, Rate a second, whether
// or not earlier ones have been answered, as wrk2, vegeta and k6's
// constant-arrival-rate do. A worker that is free takes the next time of
// the schedule, waits for it and makes the call; a call whose time comes
// while every worker is busy goes out as soon as one is free, late, and
// the ones behind it queue. Each call's latency is timed from its
// scheduled time, not from when it went out (coordinated omission, as
// HdrHistogram and wrk2 correct it): a target that stalls for a second
// shows that second in the latencies of every call scheduled meanwhile,
// where a closed loop would have waited politely and hidden it. What
// could not go out on time is counted (Result.Late, Result.Unsent), so a
// rate the target cannot sustain is reported as such.

import (
	"context"
	"math"
	"sync/atomic"
	"time"
)

// MaxRate bounds Loop.Rate: a call every microsecond.
const MaxRate = 1e6

// LateAfter is how long after its scheduled time a call may go out and
// still be on time: the timers a waiting worker sleeps on may wake that
// much late on a busy machine.
const LateAfter = time.Millisecond

// schedule is an open loop's times in one window: call k at
// origin + k / rate, the origin the start of the session's first measured
// time, so that a window holds the same calls however long it took to
// begin; the first warmup's calls have negative k.
type schedule struct {
	origin   time.Time
	interval float64 // nanoseconds between calls
	next     atomic.Int64
}

// newSchedule is the schedule from start on of calls rate a second, whose
// measured time begins at origin.
func newSchedule(origin, start time.Time, rate float64) *schedule {
	s := &schedule{origin: origin, interval: 1e9 / rate}
	s.next.Store(s.first(start))
	return s
}

// at is call k's scheduled time.
func (s *schedule) at(k int64) time.Time {
	return s.origin.Add(time.Duration(float64(k) * s.interval))
}

// take hands out the next scheduled time.
func (s *schedule) take() time.Time { return s.at(s.next.Add(1) - 1) }

// first is the first call scheduled at or after t.
func (s *schedule) first(t time.Time) int64 {
	k := int64(math.Ceil(float64(t.Sub(s.origin)) / s.interval))
	for !s.at(k - 1).Before(t) {
		k--
	}
	for s.at(k).Before(t) {
		k++
	}
	return k
}

// within is the number of calls scheduled in [from, end).
func (s *schedule) within(from, end time.Time) int64 {
	return max(0, s.first(end)-s.first(from))
}

// waitUntil waits for t, or returns false when ctx ends first.
func (w *worker) waitUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	if w.wait == nil {
		w.wait = time.NewTimer(d)
	} else {
		w.wait.Reset(d)
	}
	select {
	case <-w.wait.C:
		return true
	case <-ctx.Done():
		w.wait.Stop()
		return false
	}
}
