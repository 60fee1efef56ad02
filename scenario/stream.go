package scenario

// Stream is the seeded request sequence of one worker in one rung. It is a
// pure function of (seed, variant, class, concurrency, round, worker): the
// baseline and the candidate get the identical sequence.
type Stream struct {
	// implementation: scenario helper
}

// Stream returns the request sequence for one worker of one rung.
func (s *Scenario) Stream(variant, class string, concurrency, round, worker int) *Stream {
	panic("scenario.Stream: not implemented yet")
}

// Next returns the next request of the stream. The returned Request may be
// reused by the next call: callers that keep it must copy it.
func (st *Stream) Next() *Request {
	panic("scenario.Stream.Next: not implemented yet")
}
