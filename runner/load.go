//go:build linux

package runner

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/target"
)

// generate is one rung of load on t for a cell in a round, by the run's
// protocol, as a Rung (see rungOf). It asks source for every
// worker's sequence before the clock starts, from this goroutine, and
// appends each to sources; started is load.Loop.Started.
func (s *schedule) generate(ctx context.Context, t target.Service, cell benchdata.Cell, round int, source func(benchdata.Cell, int, int) Source, started func(start, warmupEnd, windowEnd time.Time), sources *[]Source) (benchdata.Rung, error) {
	l := load.Loop{
		Concurrency: cell.Concurrency,
		Warmup:      s.sc.Load.Warmup,
		Duration:    cmp.Or(s.window, s.sc.Load.Duration),
		Timeout:     s.sc.Load.Timeout,
		Rate:        float64(cell.Rate),
		Source: func(worker int) Source {
			src := source(cell, round, worker)
			*sources = append(*sources, src)
			return src
		},
		Started: started,
	}
	res, err := s.proto.generate(ctx, t, l)
	if err != nil {
		return benchdata.Rung{}, err
	}
	return rungOf(res)
}

// rungOf is a measurement as a Rung, whatever the protocol: the
// measurement fields are set, and the caller fills in the cell, round,
// target and order. RPS counts the answered requests.
func rungOf(res load.Result) (benchdata.Rung, error) {
	r := benchdata.Rung{
		Start:    res.Start,
		Duration: res.Duration.Seconds(),
		Requests: res.Requests,
		InFlight: res.InFlight,
		Asked:    res.Asked,
		Late:     res.Late,
		Unsent:   res.Unsent,
		Statuses: res.Statuses,
		Bytes:    res.Bytes,
	}
	// The load core's failure kinds follow its answers, in the order and
	// with the names of benchdata.ErrorKinds.
	var errs [len(benchdata.ErrorKinds)]int64
	copy(errs[:], res.Errors[load.Status:])
	r.SetErrors(errs)
	r.SetValue(gate.RPS, float64(res.Answered)/r.Duration)
	if err := r.SetLatency(res.Latency); err != nil {
		return benchdata.Rung{}, fmt.Errorf("load: %w", err)
	}
	return r, nil
}

// sliceOf is one window of a slice-interleaved session as a Slice; the
// caller sets Pair and Start.
func sliceOf(res load.Result) benchdata.Slice {
	sl := benchdata.Slice{
		Duration: res.Duration.Seconds(),
		Requests: res.Requests,
		Answered: res.Answered,
		Errors:   res.ErrorCount(),
	}
	sl.SetValue(gate.RPS, float64(sl.Answered)/sl.Duration)
	sl.SetLatency(res.Latency)
	return sl
}
