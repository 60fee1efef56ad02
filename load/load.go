// Package load is the closed-loop load core every protocol shares:
// Concurrency workers, each making a call and waiting for its end before
// the next. It owns what makes two protocols' measurements comparable:
// the monotonic clock, the warmup and the measured window, the per-call
// timeout and the drain at a window's end, the kinds of errors, the
// counts of requests, answers, statuses and calls in flight, and one HDR
// histogram of latencies per worker, merged when a window closes.
//
// A protocol supplies only the call: its Protocol makes one Caller per
// worker, and a Caller readies a request and makes it (packages httpload
// and grpcload). The core stamps the times around the call, so a Caller
// never measures itself, and a way to drive the Callers other than the
// closed loop (a fixed schedule, timed from each call's intended start)
// belongs here, not in the protocols. As in vegeta's attacker and
// metrics, generation and aggregation stay apart: a window's measurement
// is a plain Result, and Results add up.
package load

import (
	"context"
	"fmt"
	"time"
)

// Source is one worker's request sequence. A scenario's *Stream is one; tests
// feed fixed requests. Next may reuse the Request it returned before; nil
// ends the worker's sequence.
type Source interface {
	Next() *Request
}

// A Caller is one worker's side of a protocol. The core calls it from the
// worker's goroutine only, one method at a time, so what it keeps needs
// no lock: Prepare, then Call unless the window closed in between. A
// request prepared but not called when a window closed is prepared again
// first thing in the next one.
type Caller interface {
	// Prepare readies the call of r, which the Source may reuse once
	// Call has returned. An error means r cannot be sent: it is counted
	// as a failed request of kind Other, untimed.
	Prepare(r *Request) error
	// Call makes the call Prepare readied and waits for its end. ctx is
	// cancelled when the call times out or the window cuts it; it is the
	// same from call to call until a timer fires, an Outcome is Spent or
	// the window ends.
	Call(ctx context.Context) Outcome
}

// A Protocol is what the workers of a session share (a transport,
// connections) and makes their Callers.
type Protocol interface {
	// Caller returns worker i's Caller, 0 <= i < Concurrency. It is
	// called before the clock starts, from the goroutine that opens the
	// session.
	Caller(worker int) Caller
	// Status names a status code in Result.Statuses ("404", "NotFound").
	Status(code int) string
	// Close releases what the protocol holds once its session is done.
	Close()
}

// Kind is what became of a call: an answer (OK or Status), or a failure
// by how it failed. Status and the failures are the error kinds of the
// results file (benchdata.ErrorKinds), in its order and with its names.
type Kind uint8

const (
	OK      Kind = iota // answered with a status that counts as success
	Status              // answered with a status that does not
	Timeout             // outlived its timeout
	Connect             // never reached the target: no connection
	Reset               // its connection or stream broke under it
	Other               // anything else, a request that cannot be sent among them
	// NumKinds is the number of kinds, the length of arrays by Kind.
	NumKinds
)

var kindNames = [NumKinds]string{"ok", "status", "timeout", "connect", "reset", "other"}

func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Outcome is what a Caller tells of one call; the core times it.
type Outcome struct {
	// Kind is OK or Status for an answer, else how the call failed.
	Kind Kind
	// Code is an answer's status code, counted in Result.Statuses by the
	// name Protocol.Status gives it.
	Code int
	// Bytes is an answer's size, as the protocol counts it.
	Bytes int64
	// Err is the error the call returned. A failure has one, and so may
	// an answer (grpc-go returns a status other than OK as an error). A
	// call that returned an error once its timer fired is a Timeout, and
	// one that returned an error once the window's context ended is in
	// flight: the error is then likely the cancellation's, not the
	// target's.
	Err error
	// Spent says ctx must carry no further call: the transport may still
	// hold this one's request (after a failure, or a body the server
	// answered before reading).
	Spent bool
}

// DefaultTimeout bounds a call when Loop.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Loop is closed-loop load, whatever the protocol. A Session uses its
// Concurrency, Timeout, Drain and Source; Generate all of it.
type Loop struct {
	Concurrency int
	Warmup      time.Duration // run, then discarded
	Duration    time.Duration // the measured window
	Timeout     time.Duration // per call; 0 means DefaultTimeout
	// Source returns worker i's sequence, 0 <= i < Concurrency. It is
	// called before the clock starts, from the goroutine that opens the
	// session.
	Source func(worker int) Source
	// Started, when set, is called once with the times Generate measures
	// by, right after it fixed them and before any worker starts: the
	// protocol is open and the workers' histograms are built by then, so
	// a sampler started from these times covers exactly the window the
	// latencies are counted in. It runs on Generate's goroutine and must
	// return at once. It is not called when Generate refuses the load.
	Started func(start, warmupEnd, windowEnd time.Time)
	// Drain, when set, bounds how long a call still in flight when a
	// window closes may run on (slice interleaving lets them finish, so
	// the target is idle for the other side): at the window's end plus
	// Drain it is cancelled, even before Timeout. Without it a target
	// that never answers would hold every slice for a whole Timeout.
	Drain time.Duration
	// Rate, when above 0, makes the load an open loop: calls start on a
	// fixed schedule, Rate a second, whether or not earlier ones have
	// been answered, on whichever of the Concurrency workers is free
	// (see open.go). 0 is the closed loop.
	Rate float64
}

// CallTimeout is the timeout of each call, Timeout or its default.
func (l Loop) CallTimeout() time.Duration {
	if l.Timeout > 0 {
		return l.Timeout
	}
	return DefaultTimeout
}

// Generate puts l on a target and returns its measurement. open makes
// the protocol once l is found valid, before the clock starts (its errors
// are returned as they are). Calls that end during the warmup are
// discarded; the measured window is fixed by the monotonic clock, and
// calls still in flight when it closes are cancelled and counted in
// InFlight only. When ctx ends first, the measurement is discarded and
// the error wraps ctx's.
//
// Generate is a session of one window: slice interleaving runs many
// windows in one session per target.
func Generate(ctx context.Context, l Loop, open func(context.Context) (Protocol, error)) (Result, error) {
	if l.Duration <= 0 {
		return Result{}, fmt.Errorf("load: duration %v, need more than 0", l.Duration)
	}
	if !(l.Rate >= 0 && l.Rate <= MaxRate) {
		return Result{}, fmt.Errorf("load: rate %v, need 0 (closed loop) to %v a second", l.Rate, MaxRate)
	}
	s, err := NewSession(ctx, l, open)
	if err != nil {
		return Result{}, err
	}
	defer s.Close()

	start := time.Now()
	warmupEnd := start.Add(l.Warmup)
	windowEnd := warmupEnd.Add(l.Duration)
	if l.Started != nil {
		l.Started(start, warmupEnd, windowEnd)
	}
	// The deadline cancels whatever is in flight when the window closes.
	wctx, cancel := context.WithDeadline(ctx, windowEnd)
	defer cancel()
	r := s.Window(wctx, warmupEnd, windowEnd)
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("load cancelled: %w", err)
	}
	r.Start = start
	return r, nil
}
