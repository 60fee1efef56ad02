package load

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Result is the measurement of a window, or of several added up.
type Result struct {
	// Start is when the load began, its warmup included: Generate's
	// clock start, a Window's call.
	Start time.Time
	// Duration is the measured time, warmup excluded.
	Duration time.Duration
	// Requests counts the calls that ended in the measured time,
	// answered or failed, and the requests that could not be sent.
	Requests int64
	// Answered counts those answered, whatever their status.
	Answered int64
	// Errors counts the failed requests by Kind: the answers with a
	// status that is not success (Status) and the failures. Errors[OK]
	// is 0.
	Errors [NumKinds]int64
	// Statuses counts the answers by their status's name
	// (Protocol.Status); nil when there were none.
	Statuses map[string]int64
	// Bytes sums the answers' sizes, as the protocol counts them.
	Bytes int64
	// InFlight counts the calls still in flight when a window closed:
	// not requests of the window, but the sign of a target that stopped
	// answering, which Requests alone would show as idle.
	InFlight int64
	// An open loop's (Loop.Rate) schedule in the window. Rate is the
	// calls a second it asked for, Asked how many of them had their time
	// in the window; Late counts those sent more than LateAfter after
	// their time, for want of a free worker or of the generator's CPU,
	// and Unsent those never sent before the window closed. Asked −
	// Unsent calls went out; a target that keeps up answers Requests ≈
	// Asked of them. All zero in a closed loop; Rate is the last added's.
	Rate                float64
	Asked, Late, Unsent int64
	// Latency holds the answered calls' latencies in microseconds, from
	// 1 to the call timeout (longer ones at the timeout).
	Latency *hdrhistogram.Histogram
}

// ErrorCount is the number of failed requests, of every kind.
func (r Result) ErrorCount() int64 {
	var n int64
	for _, e := range r.Errors {
		n += e
	}
	return n
}

// Add adds o to r, as if both had been measured as one: the counts and
// durations summed, the latencies merged, and Start the earlier. When r
// has no histogram yet, Add makes it one of its own.
func (r *Result) Add(o Result) {
	if r.Start.IsZero() || (!o.Start.IsZero() && o.Start.Before(r.Start)) {
		r.Start = o.Start
	}
	r.Duration += o.Duration
	r.Requests += o.Requests
	r.Answered += o.Answered
	r.Bytes += o.Bytes
	r.InFlight += o.InFlight
	r.Asked += o.Asked
	r.Late += o.Late
	r.Unsent += o.Unsent
	if o.Rate > 0 {
		r.Rate = o.Rate
	}
	for k, n := range o.Errors {
		r.Errors[k] += n
	}
	for name, n := range o.Statuses {
		if r.Statuses == nil {
			r.Statuses = map[string]int64{}
		}
		r.Statuses[name] += n
	}
	if o.Latency != nil {
		if r.Latency == nil {
			r.Latency = hdrhistogram.New(o.Latency.LowestTrackableValue(), o.Latency.HighestTrackableValue(), int(o.Latency.SignificantFigures()))
		}
		r.Latency.Merge(o.Latency)
	}
}
