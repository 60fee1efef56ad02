package grpcload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/scenario"
)

// Source is one worker's request sequence, as runner.Source: Target is the
// method ("package.Service/Method"), Body the request message as JSON,
// Header the metadata. Next may reuse the Request it returned before; nil
// ends the worker's sequence.
type Source interface {
	Next() *scenario.Request
}

// Load is one rung of closed-loop unary gRPC load: Concurrency workers,
// each making a call and waiting for its answer before the next.
type Load struct {
	Target      string // host:port, or a gRPC target URI such as unix:///path
	Concurrency int
	// Connections is the number of HTTP/2 connections (1 when 0). Each
	// worker takes them in turn, call by call, starting at its own index,
	// so calls spread round-robin over all of them.
	Connections int
	Warmup      time.Duration // run, then discarded
	Duration    time.Duration // the measured window
	Timeout     time.Duration // per call; 0 means DefaultTimeout
	// Source returns worker i's sequence, 0 <= i < Concurrency. It is
	// called before the clock starts.
	Source func(worker int) Source
	// Resolve returns the Call for a request's Target. Each worker asks
	// once per method and keeps the answer; an error counts every such
	// request as an "other" error.
	Resolve func(method string) (*Call, error)
	// Started, when set, is called once with the times Generate measures
	// by, as runner.Load.Started: after the connections are up and the
	// workers built, before any worker starts, on Generate's goroutine.
	Started func(start, warmupEnd, windowEnd time.Time)
}

// DefaultTimeout bounds a call when Load.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Error kinds of baselines.Rung.Errors, the same as runner's.
const (
	// ErrStatus is a call the server answered with a non-OK status.
	ErrStatus = baselines.ErrStatus
	// ErrTimeout is a call that outlived Load.Timeout.
	ErrTimeout = baselines.ErrTimeout
	// ErrConnect is a call that never reached the server: no connection.
	ErrConnect = baselines.ErrConnect
	// ErrReset is a call whose connection or stream broke under it.
	ErrReset = baselines.ErrReset
	// ErrOther is anything else: a request that does not fit its message
	// type, an unknown method, a response that does not decode.
	ErrOther = baselines.ErrOther
)

var errKinds = baselines.ErrorKinds

const (
	kStatus = iota
	kTimeout
	kConnect
	kReset
	kOther
)

// Generate puts l on its target and returns the measurement as a Rung,
// shaped as runner.Generate's: the caller fills in the cell, round, target
// and order. The connections are made before the clock starts. Calls that
// end during the warmup are discarded; the window is fixed by the
// monotonic clock and calls still in flight when it closes are cancelled
// and counted in InFlight only. Requests counts the calls that ended in the window,
// answered or failed; RPS counts the answered ones (any status the server
// sent); Statuses is keyed by the code's name ("OK", "NotFound"); latency
// is that of answered calls; Bytes sums the OK responses' message sizes.
// When ctx ends first, the rung is discarded and the error wraps ctx's.
func Generate(ctx context.Context, l Load) (baselines.Rung, error) {
	if l.Concurrency < 1 {
		return baselines.Rung{}, fmt.Errorf("grpc load: concurrency %d, need at least 1", l.Concurrency)
	}
	if l.Duration <= 0 {
		return baselines.Rung{}, fmt.Errorf("grpc load: duration %v, need more than 0", l.Duration)
	}
	if l.Source == nil {
		return baselines.Rung{}, errors.New("grpc load: no request source")
	}
	if l.Resolve == nil {
		return baselines.Rung{}, errors.New("grpc load: no method resolver")
	}
	if l.Target == "" {
		return baselines.Rung{}, errors.New("grpc load: no target")
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	nconn := max(l.Connections, 1)

	conns := make([]*grpc.ClientConn, 0, nconn)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range nconn {
		c, err := dial(l.Target)
		if err != nil {
			return baselines.Rung{}, fmt.Errorf("grpc load: %w", err)
		}
		conns = append(conns, c)
	}
	if err := connect(ctx, conns, timeout); err != nil {
		return baselines.Rung{}, fmt.Errorf("grpc load cancelled: %w", err)
	}

	maxUS := timeout.Microseconds()
	opts := []grpc.CallOption{grpc.ForceCodecV2(codec{})}
	workers := make([]*worker, l.Concurrency)
	for i := range workers {
		workers[i] = &worker{
			src:     l.Source(i),
			resolve: l.Resolve,
			conns:   conns,
			next:    i % nconn,
			timeout: timeout,
			maxUS:   maxUS,
			hist:    hdrhistogram.New(1, maxUS, 3),
			opts:    opts,
			calls:   map[string]*wcall{},
		}
	}

	start := time.Now()
	warmupEnd := start.Add(l.Warmup)
	windowEnd := warmupEnd.Add(l.Duration)
	if l.Started != nil {
		l.Started(start, warmupEnd, windowEnd)
	}
	// The deadline cancels whatever is in flight when the window closes.
	rctx, cancel := context.WithDeadline(ctx, windowEnd)
	defer cancel()
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() { w.run(rctx, warmupEnd, windowEnd) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return baselines.Rung{}, fmt.Errorf("grpc load cancelled: %w", err)
	}

	merged := hdrhistogram.New(1, maxUS, 3)
	var r baselines.Rung
	r.Start = start
	r.Duration = l.Duration.Seconds()
	var completed int64
	var errs [len(errKinds)]int64
	statuses := map[string]int64{}
	for _, w := range workers {
		merged.Merge(w.hist)
		r.Requests += w.requests
		completed += w.completed
		r.Bytes += w.bytes
		r.InFlight += w.inflight
		for k, n := range w.errs {
			errs[k] += n
		}
		for code, n := range w.statuses {
			if n > 0 {
				statuses[codes.Code(code).String()] += n
			}
		}
		for code, n := range w.moreStatuses {
			statuses[code.String()] += n
		}
	}
	r.SetErrors(errs)
	if len(statuses) > 0 {
		r.Statuses = statuses
	}
	r.RPS = float64(completed) / r.Duration
	if err := r.SetLatency(merged); err != nil {
		return baselines.Rung{}, fmt.Errorf("grpc load: %w", err)
	}
	return r, nil
}

// connect starts every connection and waits, at most timeout, until each
// is ready or has failed: a target that is down is measured as such (its
// calls fail as "connect"), not refused here. Only ctx ending is an error.
func connect(ctx context.Context, conns []*grpc.ClientConn, timeout time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, c := range conns {
		c.Connect()
	}
	for _, c := range conns {
		for s := c.GetState(); s == connectivity.Idle || s == connectivity.Connecting; s = c.GetState() {
			if !c.WaitForStateChange(wctx, s) {
				break
			}
		}
	}
	return ctx.Err()
}

// worker is one closed-loop client. Everything the call loop touches is its
// own; workers share the connections and the Calls' message caches.
type worker struct {
	src     Source
	resolve func(string) (*Call, error)
	conns   []*grpc.ClientConn
	next    int // the connection of the next call
	timeout time.Duration
	maxUS   int64
	hist    *hdrhistogram.Histogram
	opts    []grpc.CallOption

	requests, completed, bytes int64
	inflight                   int64 // calls in flight when the window closed
	errs                       [len(errKinds)]int64
	statuses                   [codes.Unauthenticated + 1]int64
	moreStatuses               map[codes.Code]int64 // codes beyond the standard ones

	// calls by Target, the last one kept at hand.
	calls      map[string]*wcall
	lastTarget string
	last       *wcall
	// The last request body and its encoding: a class whose body does
	// not change needs no cache lookup.
	lastBody []byte
	lastCall *Call
	lastEnc  *encoded

	// The call context is reused while it lives: a context per call would
	// cost allocations and a timer each. It is replaced only after the
	// timeout fired. mdCtx carries lastHdr's metadata on top of it.
	cctx    context.Context
	cancel  context.CancelFunc
	timer   *time.Timer
	mdCtx   context.Context
	lastHdr http.Header

	req  rawReq
	resp rawResp
}

// wcall is a worker's Call for one Target with the worker's own response
// message, reused call after call.
type wcall struct {
	call *Call
	out  *dynamicpb.Message
	err  error
}

func (w *worker) run(ctx context.Context, warmupEnd, windowEnd time.Time) {
	defer func() {
		if w.timer != nil {
			w.timer.Stop()
			w.cancel()
		}
	}()
	for {
		if ctx.Err() != nil {
			return
		}
		r := w.src.Next()
		if r == nil {
			return
		}
		wc := w.call(r.Target)
		var enc *encoded
		if wc.err == nil {
			enc = w.encode(wc.call, r.Body)
		}
		if wc.err != nil || enc.err != nil {
			// Cannot happen for a validated scenario. Counted like any
			// failed call, so ErrorRate stays a share of Requests.
			now := time.Now()
			if !now.Before(windowEnd) {
				return
			}
			if !now.Before(warmupEnd) {
				w.requests++
				w.errs[kOther]++
			}
			continue
		}
		if w.cctx == nil {
			w.cctx, w.cancel = context.WithCancel(ctx)
			w.mdCtx, w.lastHdr = nil, nil
		}
		callCtx := w.withMD(r.Header)
		w.req.buf = enc.buf
		w.resp.msg, w.resp.size = wc.out, 0
		conn := w.conns[w.next]
		if w.next++; w.next == len(w.conns) {
			w.next = 0
		}

		if w.timer == nil {
			w.timer = time.AfterFunc(w.timeout, w.cancel)
		} else {
			w.timer.Reset(w.timeout)
		}
		begin := time.Now()
		if !begin.Before(windowEnd) {
			w.timer.Stop()
			return
		}
		err := conn.Invoke(callCtx, wc.call.Method, &w.req, &w.resp, w.opts...)
		timedOut := !w.timer.Stop()
		end := time.Now()

		if timedOut {
			// The context is or will be cancelled.
			w.cancel()
			w.cctx, w.timer = nil, nil
		}
		if !end.Before(windowEnd) || (err != nil && ctx.Err() != nil) {
			// In flight when the window closed: counted apart (see
			// runner's worker.run).
			w.inflight++
			return
		}
		if end.Before(warmupEnd) {
			continue
		}
		w.requests++
		if err != nil {
			k := classify(err, timedOut)
			if k != kStatus {
				w.errs[k]++
				continue
			}
			w.errs[kStatus]++
			w.countStatus(status.Code(err))
		} else {
			w.statuses[codes.OK]++
			w.bytes += int64(w.resp.size)
		}
		w.completed++
		us := end.Sub(begin).Microseconds()
		if us > w.maxUS {
			us = w.maxUS
		}
		w.hist.RecordValue(us)
	}
}

func (w *worker) countStatus(c codes.Code) {
	if int(c) < len(w.statuses) {
		w.statuses[c]++
		return
	}
	if w.moreStatuses == nil {
		w.moreStatuses = map[codes.Code]int64{}
	}
	w.moreStatuses[c]++
}

// call is the worker's Call for target.
func (w *worker) call(target string) *wcall {
	if w.last != nil && target == w.lastTarget {
		return w.last
	}
	wc := w.calls[target]
	if wc == nil {
		wc = &wcall{}
		wc.call, wc.err = w.resolve(target)
		if wc.err == nil && wc.call == nil {
			wc.err = fmt.Errorf("no call for method %s", target)
		}
		if wc.err == nil {
			wc.out = dynamicpb.NewMessage(wc.call.Out)
		}
		w.calls[target] = wc
	}
	w.last, w.lastTarget = wc, target
	return wc
}

// encode is body's encoding for c, the last one's when body repeats.
func (w *worker) encode(c *Call, body []byte) *encoded {
	if w.lastEnc != nil && w.lastCall == c && bytes.Equal(body, w.lastBody) {
		return w.lastEnc
	}
	e := c.encode(body)
	w.lastEnc, w.lastCall, w.lastBody = e, c, append(w.lastBody[:0], body...)
	return e
}

// withMD is the call context carrying h as metadata.
func (w *worker) withMD(h http.Header) context.Context {
	if len(h) == 0 {
		return w.cctx
	}
	if w.mdCtx != nil && headerEqual(h, w.lastHdr) {
		return w.mdCtx
	}
	w.lastHdr = h.Clone()
	w.mdCtx = metadata.NewOutgoingContext(w.cctx, toMD(h))
	return w.mdCtx
}

func headerEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !slices.Equal(va, vb) {
			return false
		}
	}
	return true
}

// classify says what kind of error err is. A status the server sent is
// kStatus; the rest are grpc-go's own, told apart by their messages since
// grpc-go reports a connection that failed, or broke, as Unavailable like a
// server that says it is.
func classify(err error, timedOut bool) int {
	if timedOut {
		return kTimeout
	}
	st, ok := status.FromError(err)
	if !ok {
		return kOther
	}
	msg := st.Message()
	switch st.Code() {
	case codes.OK:
		return kOther
	case codes.Unavailable:
		switch {
		case strings.HasPrefix(msg, "connection error"),
			strings.Contains(msg, "while dialing"),
			strings.Contains(msg, "name resolver"),
			strings.Contains(msg, "produced zero addresses"),
			strings.Contains(msg, "last connection error"),
			strings.Contains(msg, "no children to pick from"):
			return kConnect
		case strings.Contains(msg, "transport is closing"),
			strings.Contains(msg, "error reading from server"),
			strings.Contains(msg, "connection reset"),
			strings.Contains(msg, "broken pipe"),
			strings.Contains(msg, "connection is draining"),
			strings.Contains(msg, "server preface"),
			strings.Contains(msg, "EOF"):
			return kReset
		}
	case codes.Internal:
		switch {
		case strings.Contains(msg, "RST_STREAM"), strings.HasPrefix(msg, "transport:"):
			return kReset
		case strings.HasPrefix(msg, "grpc: failed to unmarshal"),
			strings.HasPrefix(msg, "grpc: error while marshaling"):
			return kOther
		}
	case codes.ResourceExhausted:
		if strings.HasPrefix(msg, "grpc: received message larger than max") ||
			strings.HasPrefix(msg, "grpc: trying to send message larger than max") {
			return kOther
		}
	}
	return kStatus
}
