package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/scenario"
)

// Source is one worker's request sequence. *scenario.Stream is one; tests
// feed fixed requests. Next may reuse the Request it returned before; nil
// ends the worker's sequence.
type Source interface {
	Next() *scenario.Request
}

// Load is one rung of closed-loop load: Concurrency workers, each sending a
// request and waiting for its response before the next.
type Load struct {
	URL         string // base URL; a request's Target is appended to it
	Concurrency int
	Warmup      time.Duration // run, then discarded
	Duration    time.Duration // the measured window
	Timeout     time.Duration // per request; 0 means DefaultTimeout
	// Source returns worker i's sequence, 0 <= i < Concurrency. It is
	// called before the clock starts.
	Source func(worker int) Source
	// StatusOK says whether a status code counts as success for a request
	// of the class; nil means any 2xx.
	StatusOK func(class string, code int) bool
	// Started, when set, is called once with the times Generate measures
	// by, right after it fixed them and before any worker starts: the
	// transport and the workers' histograms are built by then, so a
	// sampler started from these times covers exactly the window the
	// latencies are counted in. It runs on Generate's goroutine and must
	// return at once. It is not called when Generate refuses the load.
	Started func(start, warmupEnd, windowEnd time.Time)
	// Drain, when set, bounds how long a request still in flight when a
	// window closes may run on (slice interleaving lets them finish, so
	// the target is idle for the other side): at the window's end plus
	// Drain it is cancelled, even before Timeout. Without it a target
	// that never answers would hold every slice for a whole Timeout.
	Drain time.Duration
}

// DefaultTimeout bounds a request when Load.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Error kinds of baselines.Rung.Errors, in the order of the counters.
const (
	ErrStatus  = baselines.ErrStatus
	ErrTimeout = baselines.ErrTimeout
	ErrConnect = baselines.ErrConnect
	ErrReset   = baselines.ErrReset
	ErrOther   = baselines.ErrOther
)

var errKinds = baselines.ErrorKinds

const (
	kStatus = iota
	kTimeout
	kConnect
	kReset
	kOther
)

// Generate puts l on its target and returns the measurement as a Rung with
// the measurement fields set; the caller fills in the cell, round, target
// and order. Requests that complete during the warmup are discarded; the
// measured window is fixed by the monotonic clock and requests still in
// flight when it closes are cancelled and counted in InFlight only.
// Requests counts the
// requests that ended in the window, answered or failed; RPS counts only
// the answered ones. When ctx ends first, the rung is discarded and the
// error wraps ctx's.
//
// Generate is a session of one window (see session); slice interleaving
// runs many windows in one session per target.
func Generate(ctx context.Context, l Load) (baselines.Rung, error) {
	if l.Duration <= 0 {
		return baselines.Rung{}, fmt.Errorf("load: duration %v, need more than 0", l.Duration)
	}
	s, err := newSession(l, false)
	if err != nil {
		return baselines.Rung{}, err
	}
	defer s.close()

	start := time.Now()
	warmupEnd := start.Add(l.Warmup)
	windowEnd := warmupEnd.Add(l.Duration)
	if l.Started != nil {
		l.Started(start, warmupEnd, windowEnd)
	}
	// The deadline cancels whatever is in flight when the window closes.
	rctx, cancel := context.WithDeadline(ctx, windowEnd)
	defer cancel()
	s.window(rctx, warmupEnd, windowEnd)
	if err := ctx.Err(); err != nil {
		return baselines.Rung{}, fmt.Errorf("load cancelled: %w", err)
	}
	return s.rung(start, l.Duration.Seconds())
}

// session is closed-loop load on one target that can be switched on for a
// window and off again: its transport and workers live from newSession to
// close, so the connections stay open between windows and each worker
// goes on with its own request sequence where the last window left it. A
// request a worker took from its source but did not send before a window
// closed is the first it sends in the next, so the target sees the
// source's sequence whole however the windows cut it.
//
// The counts, statuses and histograms of a session cover every window;
// with perWindow, each worker also keeps a histogram of the current window
// alone, which windowSlice merges and resets.
type session struct {
	tr      *http.Transport
	workers []*worker
	maxUS   int64
}

// newSession checks l (all but its Warmup, Duration and Started, which
// the caller applies) and builds its transport and workers, asking
// l.Source for every worker's sequence.
func newSession(l Load, perWindow bool) (*session, error) {
	if l.Concurrency < 1 {
		return nil, fmt.Errorf("load: concurrency %d, need at least 1", l.Concurrency)
	}
	if l.Source == nil {
		return nil, errors.New("load: no request source")
	}
	base, err := url.Parse(l.URL)
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("load: bad target URL %q", l.URL)
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	statusOK := l.StatusOK
	if statusOK == nil {
		statusOK = func(_ string, code int) bool { return code >= 200 && code < 300 }
	}

	s := &session{
		tr: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        l.Concurrency,
			MaxIdleConnsPerHost: l.Concurrency,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
		maxUS:   timeout.Microseconds(),
		workers: make([]*worker, l.Concurrency),
	}
	for i := range s.workers {
		w := &worker{
			src:      l.Source(i),
			tr:       s.tr,
			timeout:  timeout,
			drain:    l.Drain,
			maxUS:    s.maxUS,
			statusOK: statusOK,
			hist:     hdrhistogram.New(1, s.maxUS, 3),
			buf:      make([]byte, 32<<10),
			u:        origin(base),
			noHdr:    http.Header{},
		}
		if perWindow {
			w.win = hdrhistogram.New(1, s.maxUS, 3)
		}
		s.workers[i] = w
	}
	return s, nil
}

// window runs every worker from now until end and returns once all have
// stopped. Requests that end in [from, end) count; a worker sends no
// request from end on. What happens to a request in flight at end is
// ctx's: under a deadline of end it is cancelled (Generate); under a
// context that lives on it runs to its answer or its timeout, uncounted,
// and window waits for it, so the target is idle when window returns and
// no connection was closed by a cancellation (slice interleaving).
//
// Every window of a session takes the same ctx, or one that ended: a
// worker's reused request keeps the context it was made with.
func (s *session) window(ctx context.Context, from, end time.Time) {
	var wg sync.WaitGroup
	for _, w := range s.workers {
		wg.Go(func() { w.run(ctx, from, end) })
	}
	wg.Wait()
}

// close releases the workers' request contexts and timers and the idle
// connections.
func (s *session) close() {
	for _, w := range s.workers {
		w.release()
	}
	s.tr.CloseIdleConnections()
}

// tally is a session's running counts, taken before a window so that
// windowSlice can tell what the window added.
type tally struct{ requests, answered, errors int64 }

func (s *session) tally() tally {
	var t tally
	for _, w := range s.workers {
		t.requests += w.requests
		t.answered += w.completed
		for _, n := range w.errs {
			t.errors += n
		}
	}
	return t
}

// windowSlice is what the window since before added, as a slice of
// duration seconds, its latencies from the workers' window histograms,
// which it resets; merged is scratch space it resets first. The caller
// sets Pair and Start.
func (s *session) windowSlice(before tally, duration float64, merged *hdrhistogram.Histogram) baselines.Slice {
	merged.Reset()
	for _, w := range s.workers {
		merged.Merge(w.win)
		w.win.Reset()
	}
	now := s.tally()
	sl := baselines.Slice{
		Duration: duration,
		Requests: now.requests - before.requests,
		Answered: now.answered - before.answered,
		Errors:   now.errors - before.errors,
	}
	sl.RPS = float64(sl.Answered) / duration
	sl.SetLatency(merged)
	return sl
}

// rung is the measurement of every window of the session, as a Rung
// measured for duration seconds from start.
func (s *session) rung(start time.Time, duration float64) (baselines.Rung, error) {
	merged := hdrhistogram.New(1, s.maxUS, 3)
	var r baselines.Rung
	r.Start = start
	r.Duration = duration
	var completed int64
	var errs [len(errKinds)]int64
	statuses := map[string]int64{}
	for _, w := range s.workers {
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
				statuses[strconv.Itoa(code)] += n
			}
		}
	}
	r.SetErrors(errs)
	if len(statuses) > 0 {
		r.Statuses = statuses
	}
	r.RPS = float64(completed) / r.Duration
	if err := r.SetLatency(merged); err != nil {
		return baselines.Rung{}, fmt.Errorf("load: %w", err)
	}
	return r, nil
}

// worker is one closed-loop client. Everything the request loop touches is
// its own, so workers share nothing but the transport.
type worker struct {
	src      Source
	tr       *http.Transport
	timeout  time.Duration
	drain    time.Duration // 0: a request in flight at a window's end runs to its timeout
	maxUS    int64
	statusOK func(string, int) bool
	hist     *hdrhistogram.Histogram
	win      *hdrhistogram.Histogram // the current window's, or nil
	buf      []byte

	requests, completed, bytes int64
	inflight                   int64 // requests in flight when a window closed
	errs                       [len(errKinds)]int64
	statuses                   [1000]int64 // net/http only accepts 3-digit codes

	// pending is the request taken from src and not sent when the last
	// window closed; ended says src returned nil.
	pending *scenario.Request
	ended   bool

	// A body-less request is reused while its context lives: a context per
	// request would cost allocations and a timer each. The context is
	// replaced only after the timeout fired, a request failed, or the
	// request had a body (see prepare).
	req    *http.Request
	u      url.URL
	cancel context.CancelFunc
	timer  *time.Timer
	noHdr  http.Header
}

// run sends requests until end and counts those that end in [from, end).
func (w *worker) run(ctx context.Context, from, end time.Time) {
	for {
		if ctx.Err() != nil {
			return
		}
		r := w.pending
		w.pending = nil
		if r == nil && !w.ended {
			r = w.src.Next()
		}
		if r == nil {
			w.ended = true
			return
		}
		if w.req == nil {
			w.fresh(ctx)
		}
		if !w.prepare(r) {
			// Cannot happen for a validated scenario. Counted like any
			// failed request, so ErrorRate stays a share of Requests.
			now := time.Now()
			if !now.Before(end) {
				w.pending = r
				return
			}
			if !now.Before(from) {
				w.requests++
				w.errs[kOther]++
			}
			continue
		}
		hasBody := w.req.Body != nil

		limit := w.timeout
		if w.drain > 0 {
			limit = min(limit, time.Until(end.Add(w.drain)))
		}
		if w.timer == nil {
			w.timer = time.AfterFunc(limit, w.cancel)
		} else {
			w.timer.Reset(limit)
		}
		begin := time.Now()
		if !begin.Before(end) {
			w.timer.Stop()
			w.pending = r
			return
		}
		code, n, err := w.do()
		timedOut := !w.timer.Stop()
		done := time.Now()

		if timedOut || err != nil || hasBody {
			// The context is or will be cancelled, and the transport's
			// writer may still hold the request: after a failure, or
			// when the server answered before reading the whole body,
			// RoundTrip returns while the body is being written.
			w.cancel()
			w.req, w.timer = nil, nil
		}
		if !done.Before(end) || (err != nil && ctx.Err() != nil) {
			// In flight when the window closed: not a request of the
			// window, but counted apart, so a target that never answers
			// shows as such rather than as an idle one.
			w.inflight++
			return
		}
		if done.Before(from) {
			continue
		}
		w.requests++
		if err != nil {
			w.errs[classify(err, timedOut)]++
			continue
		}
		w.completed++
		w.bytes += n
		w.statuses[code]++
		if !w.statusOK(r.Class, code) {
			w.errs[kStatus]++
		}
		us := done.Sub(begin).Microseconds()
		if us > w.maxUS {
			us = w.maxUS
		}
		w.hist.RecordValue(us)
		if w.win != nil {
			w.win.RecordValue(us)
		}
	}
}

// release ends the worker's request context and timer.
func (w *worker) release() {
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.cancel != nil {
		w.cancel()
	}
	w.req, w.timer, w.cancel = nil, nil, nil
}

// fresh gives the worker a new request with its own cancellable context.
func (w *worker) fresh(ctx context.Context) {
	rctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	w.req, _ = http.NewRequestWithContext(rctx, http.MethodGet, "http://x/", nil)
	w.req.URL = &w.u
	w.req.Host = ""
}

// prepare points the worker's request at r.
func (w *worker) prepare(r *scenario.Request) bool {
	path, query, hasQuery := strings.Cut(r.Target, "?")
	if strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "//") {
		// Opaque is sent verbatim: the stream's encoding reaches the
		// target byte for byte, and nothing is parsed per request.
		w.u.Opaque, w.u.Path, w.u.RawPath = path, "", ""
		w.u.RawQuery, w.u.ForceQuery = query, hasQuery && query == ""
	} else {
		p, err := url.Parse(r.Target)
		if err != nil {
			return false
		}
		w.u.Opaque, w.u.Path, w.u.RawPath = "", p.Path, p.RawPath
		w.u.RawQuery, w.u.ForceQuery = p.RawQuery, p.ForceQuery
	}
	w.req.Method = r.Method
	if r.Method == "" {
		w.req.Method = http.MethodGet
	}
	w.req.Header = r.Header
	if w.req.Header == nil {
		w.req.Header = w.noHdr
	}
	if len(r.Body) == 0 {
		w.req.Body, w.req.GetBody, w.req.ContentLength = nil, nil, 0
		return true
	}
	// net/http may go on writing a body after RoundTrip returned (the
	// server answered early), so this request gets bytes, reader and URL
	// of its own, and run does not reuse it: the stream rewrites its
	// buffer on the next Next, and prepare rewrites w.u.
	body := bytes.Clone(r.Body)
	u := w.u
	w.req.URL = &u
	w.req.Body = io.NopCloser(bytes.NewReader(body))
	w.req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	w.req.ContentLength = int64(len(body))
	return true
}

// origin is the scheme, userinfo and host of base. Every request, load
// and health check alike, goes to origin plus its own target: any path of
// the base URL is not part of it, and no slash is doubled.
func origin(base *url.URL) url.URL {
	return url.URL{Scheme: base.Scheme, Host: base.Host, User: base.User}
}

// do sends the request and drains the body so the connection is reused.
func (w *worker) do() (code int, n int64, err error) {
	resp, err := w.tr.RoundTrip(w.req)
	if err != nil {
		return 0, 0, err
	}
	for {
		m, rerr := resp.Body.Read(w.buf)
		n += int64(m)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			err = rerr
			break
		}
	}
	resp.Body.Close()
	return resp.StatusCode, n, err
}

func classify(err error, timedOut bool) int {
	if timedOut {
		return kTimeout
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" || errors.Is(err, syscall.ECONNREFUSED) {
		return kConnect
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return kReset
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return kTimeout
	}
	return kOther
}
