package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Session is closed-loop load on one target that can be switched on for
// a window and off again: its protocol and workers live from NewSession
// to Close, so the connections stay open between windows and each worker
// goes on with its own request sequence where the last window left it. A
// request a worker took from its source but did not send before a window
// closed is the first it sends in the next, so the target sees the
// source's sequence whole however the windows cut it.
type Session struct {
	p    Protocol
	rate float64 // Loop.Rate: > 0 for an open loop
	// origin is an open loop's schedule's: its first window's from.
	// Later windows go on with the same schedule, so that windows cut
	// short (slices) keep the rate over their sum.
	origin  time.Time
	workers []*worker
	// latency is the last window's merged histogram, which Window hands
	// out and the next Window resets: a histogram spans the timeout in
	// microseconds, too large to make one a window.
	latency *hdrhistogram.Histogram
}

// NewSession checks l's Concurrency and Source, opens the protocol with
// ctx and builds the workers, asking l.Source and the protocol for every
// worker's sequence and Caller. On an error nothing is left open.
func NewSession(ctx context.Context, l Loop, open func(context.Context) (Protocol, error)) (*Session, error) {
	if l.Concurrency < 1 {
		return nil, fmt.Errorf("load: concurrency %d, need at least 1", l.Concurrency)
	}
	if l.Source == nil {
		return nil, errors.New("load: no request source")
	}
	p, err := open(ctx)
	if err != nil {
		return nil, err
	}
	timeout := l.CallTimeout()
	maxUS := timeout.Microseconds()
	if !(l.Rate >= 0 && l.Rate <= MaxRate) {
		p.Close()
		return nil, fmt.Errorf("load: rate %v, need 0 (closed loop) to %v a second", l.Rate, MaxRate)
	}
	s := &Session{p: p, rate: l.Rate, workers: make([]*worker, l.Concurrency), latency: newHistogram(maxUS)}
	for i := range s.workers {
		s.workers[i] = &worker{
			src:     l.Source(i),
			caller:  p.Caller(i),
			timeout: timeout,
			drain:   l.Drain,
			maxUS:   maxUS,
			hist:    newHistogram(maxUS),
		}
	}
	return s, nil
}

// newHistogram records latencies in microseconds from 1 to maxUS, at
// three significant digits.
func newHistogram(maxUS int64) *hdrhistogram.Histogram { return hdrhistogram.New(1, maxUS, 3) }

// Window runs every worker from now until end and, once all have
// stopped, returns what the window measured: the calls that ended in
// [from, end), and those in flight at end. A worker starts no call from
// end on. What happens to a call in flight at end is ctx's: under a
// deadline of end it is cancelled (Generate); under a context that lives
// on it runs to its end, its timeout or the Drain, uncounted, and Window
// waits for it, so the target is idle when Window returns and no
// connection was closed by a cancellation (slice interleaving).
//
// The Result's Start is when Window was called, its Duration end minus
// from; its Latency is the session's and is reset by the next Window.
//
// In an open loop (Loop.Rate), calls are scheduled from when Window is
// called, at times fixed from the first window's from (so a window holds
// the same number of them however late it began, and windows cut short
// keep the rate over their sum); a call counts in the window when its
// time is in [from, end) and it ended before end, timed from its time
// (open.go).
func (s *Session) Window(ctx context.Context, from, end time.Time) Result {
	began := time.Now()
	var sch *schedule
	if s.rate > 0 {
		if s.origin.IsZero() {
			s.origin = from
		}
		sch = newSchedule(s.origin, began, s.rate)
	}
	var wg sync.WaitGroup
	for _, w := range s.workers {
		wg.Go(func() { w.run(ctx, sch, from, end) })
	}
	wg.Wait()

	r := Result{Start: began, Duration: end.Sub(from), Latency: s.latency}
	if sch != nil {
		r.Rate = s.rate
		r.Asked = sch.within(from, end)
	}
	s.latency.Reset()
	for _, w := range s.workers {
		r.Add(w.n.result(s.p.Status))
		if sch != nil {
			r.Unsent += -w.n.sent // Asked minus what was sent, below
		}
		w.n = tally{}
		s.latency.Merge(w.hist)
		w.hist.Reset()
	}
	if sch != nil {
		r.Unsent += r.Asked
	}
	return r
}

// SetDrain changes Loop.Drain for the windows to come: how long a call in
// flight at a window's end may run on. Call it between windows.
func (s *Session) SetDrain(d time.Duration) {
	for _, w := range s.workers {
		w.drain = d
	}
}

// Close closes the protocol.
func (s *Session) Close() { s.p.Close() }

// worker is one closed-loop client. Everything its loop touches is its
// own, so workers share nothing but what their Callers share.
type worker struct {
	src     Source
	caller  Caller
	timeout time.Duration
	drain   time.Duration // 0: a call in flight at a window's end runs to its timeout
	maxUS   int64
	hist    *hdrhistogram.Histogram // the current window's latencies
	n       tally                   // the current window's counts
	wait    *time.Timer             // an open loop's wait for a call's time

	// pending is the request taken from src and not sent when the last
	// window closed; ended says src returned nil.
	pending *Request
	ended   bool
}

// tally is one worker's counts in one window.
type tally struct {
	requests, answered, bytes int64
	inflight                  int64
	// An open loop's calls of the window that were sent, and of those
	// the ones sent late (open.go).
	sent, late int64
	errors     [NumKinds]int64
	// Answers by status code: HTTP's have three digits, gRPC's standard
	// ones fewer; more holds any other.
	statuses [1000]int64
	more     map[int]int64
}

func (t *tally) status(code int) {
	if code >= 0 && code < len(t.statuses) {
		t.statuses[code]++
		return
	}
	if t.more == nil {
		t.more = map[int]int64{}
	}
	t.more[code]++
}

// result is t as a Result, its status codes named by name.
func (t *tally) result(name func(int) string) Result {
	r := Result{Requests: t.requests, Answered: t.answered, Bytes: t.bytes, InFlight: t.inflight, Errors: t.errors, Late: t.late}
	add := func(code int, n int64) {
		if r.Statuses == nil {
			r.Statuses = map[string]int64{}
		}
		r.Statuses[name(code)] += n
	}
	for code, n := range t.statuses {
		if n > 0 {
			add(code, n)
		}
	}
	for code, n := range t.more {
		add(code, n)
	}
	return r
}

// run makes calls until end: in a closed loop (sch nil) one after the
// other, counting those that end in [from, end); in an open loop each at
// its scheduled time, counting those scheduled in [from, end) that ended
// before end (open.go).
func (w *worker) run(ctx context.Context, sch *schedule, from, end time.Time) {
	for w.calls(ctx, sch, from, end) {
	}
}

// calls makes calls under one call context, reused while it lives: a
// context and a timer per call would cost allocations each. It returns
// true when the context must be replaced, after its timer fired or a
// call was Spent, and false when the worker is done with the window.
func (w *worker) calls(ctx context.Context, sch *schedule, from, end time.Time) (replace bool) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if ctx.Err() != nil {
			return false
		}
		r := w.pending
		w.pending = nil
		if r == nil && !w.ended {
			r = w.src.Next()
		}
		if r == nil {
			w.ended = true
			return false
		}
		// at is the call's time: its scheduled one in an open loop,
		// else when it goes out. A call counts in the window by its
		// scheduled time, or in a closed loop by when it ended.
		var at time.Time
		if sch != nil {
			at = sch.take()
			if !at.Before(end) || !w.waitUntil(ctx, at) {
				w.pending = r
				return false
			}
		}
		counts := func(t time.Time) bool {
			if sch != nil {
				return !at.Before(from)
			}
			return !t.Before(from)
		}
		if w.caller.Prepare(r) != nil {
			// Cannot happen for a validated scenario. Counted like any
			// failed request, so ErrorRate stays a share of Requests.
			now := time.Now()
			if !now.Before(end) {
				w.pending = r
				return false
			}
			if counts(now) {
				w.n.sent++
				w.n.requests++
				w.n.errors[Other]++
			}
			continue
		}
		limit := w.timeout
		if w.drain > 0 {
			limit = min(limit, time.Until(end.Add(w.drain)))
		}
		if timer == nil {
			timer = time.AfterFunc(limit, cancel)
		} else {
			timer.Reset(limit)
		}
		begin := time.Now()
		if !begin.Before(end) {
			w.pending = r
			return false
		}
		if sch == nil {
			at = begin
		} else if counts(begin) {
			w.n.sent++
			if begin.Sub(at) > LateAfter {
				w.n.late++
			}
		}
		out := w.caller.Call(cctx)
		timedOut := !timer.Stop()
		done := time.Now()

		if !done.Before(end) || (out.Err != nil && ctx.Err() != nil) {
			// In flight when the window closed: not a request of the
			// window, but counted apart, so a target that never answers
			// shows as such rather than as an idle one. An open loop's
			// call scheduled before the window (in a warm-up or a
			// settle) is none of the window's: the window's calls are
			// answered, failed, in flight or unsent, and add up to Asked.
			// A closed loop's counts whenever it began.
			if sch == nil || counts(begin) {
				w.n.inflight++
			}
			return false
		}
		if counts(done) {
			w.count(out, timedOut, done.Sub(at))
		}
		if timedOut || out.Spent {
			return true
		}
	}
}

// count counts a call that ended in the window after d.
func (w *worker) count(out Outcome, timedOut bool, d time.Duration) {
	w.n.requests++
	kind := out.Kind
	if out.Err != nil && timedOut {
		kind = Timeout
	}
	if kind > Status {
		w.n.errors[kind]++
		return
	}
	if kind == Status {
		w.n.errors[Status]++
	}
	w.n.answered++
	w.n.bytes += out.Bytes
	w.n.status(out.Code)
	w.hist.RecordValue(min(d.Microseconds(), w.maxUS))
}
