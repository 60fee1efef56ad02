package load_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/load/loadtest"
)

// fake is a Protocol whose calls end as their request's Target says:
//
//	ok       answered 200, 5 bytes
//	gone     answered 404, a Status error
//	rare     answered 5000, a code beyond the common ones
//	denied   answered 7 as an error, as grpc-go returns a status
//	spent    answered 200, and its context is spent
//	reset    failed: the connection broke
//	bad      cannot be prepared
//	hang     waits for its context to end, then fails with its error
//	late     waits for its context to end, then answers 200 all the same
//
// It records every call per worker: its target and its context's Done
// channel, which tells one context from another.
type fake struct {
	mu      sync.Mutex
	called  map[int][]string
	dones   map[int][]<-chan struct{}
	prepped map[int][]string
	started bool // Started was called
	early   int  // calls made before Started
	closed  int
}

func newFake() *fake {
	return &fake{called: map[int][]string{}, dones: map[int][]<-chan struct{}{}, prepped: map[int][]string{}}
}

func (f *fake) open(context.Context) (load.Protocol, error) { return f, nil }

func (f *fake) Caller(worker int) load.Caller { return &fakeCaller{f: f, worker: worker} }
func (f *fake) Status(code int) string        { return "s" + strconv.Itoa(code) }
func (f *fake) Close() {
	f.mu.Lock()
	f.closed++
	f.mu.Unlock()
}

type fakeCaller struct {
	f      *fake
	worker int
	target string
}

func (c *fakeCaller) Prepare(r *load.Request) error {
	c.f.mu.Lock()
	c.f.prepped[c.worker] = append(c.f.prepped[c.worker], r.Target)
	c.f.mu.Unlock()
	if r.Target == "bad" {
		return errors.New("cannot send that")
	}
	c.target = r.Target
	return nil
}

func (c *fakeCaller) Call(ctx context.Context) load.Outcome {
	c.f.mu.Lock()
	c.f.called[c.worker] = append(c.f.called[c.worker], c.target)
	c.f.dones[c.worker] = append(c.f.dones[c.worker], ctx.Done())
	if !c.f.started {
		c.f.early++
	}
	c.f.mu.Unlock()
	switch c.target {
	case "ok":
		return load.Outcome{Code: 200, Bytes: 5}
	case "gone":
		return load.Outcome{Kind: load.Status, Code: 404}
	case "rare":
		return load.Outcome{Code: 5000, Bytes: 1}
	case "denied":
		return load.Outcome{Kind: load.Status, Code: 7, Err: errors.New("permission denied")}
	case "spent":
		return load.Outcome{Code: 200, Bytes: 5, Spent: true}
	case "reset":
		return load.Outcome{Kind: load.Reset, Err: errors.New("connection reset")}
	case "hang":
		<-ctx.Done()
		return load.Outcome{Kind: load.Reset, Err: ctx.Err()}
	case "late":
		<-ctx.Done()
		return load.Outcome{Code: 200}
	}
	panic("fake: no outcome for " + c.target)
}

func req(target string) load.Request { return load.Request{Target: target} }

// A window far longer than the test: workers end when their finite
// sources do, so every count is exact.
const long = time.Hour

// bySeq gives worker w the requests of seqs[w].
func bySeq(seqs ...[]string) func(int) load.Source {
	return func(w int) load.Source {
		var reqs []load.Request
		for _, t := range seqs[w] {
			reqs = append(reqs, req(t))
		}
		return &loadtest.Seq{Reqs: reqs}
	}
}

func TestGenerateCounts(t *testing.T) {
	t.Parallel()
	f := newFake()
	// Every worker's own mix, so the sums show every worker was merged.
	r, err := load.Generate(t.Context(), load.Loop{Concurrency: 3, Duration: long, Source: bySeq(
		[]string{"ok", "ok", "gone", "reset"},
		[]string{"ok", "rare", "bad", "denied", "ok"},
		[]string{"spent", "spent", "gone", "gone", "gone", "ok"},
	)}, f.open)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 15 || r.Answered != 13 || r.Bytes != 5*7+1 || r.InFlight != 0 || r.Duration != long {
		t.Errorf("requests %d answered %d bytes %d in flight %d duration %v", r.Requests, r.Answered, r.Bytes, r.InFlight, r.Duration)
	}
	want := [load.NumKinds]int64{load.Status: 5, load.Reset: 1, load.Other: 1}
	if r.Errors != want || r.ErrorCount() != 7 {
		t.Errorf("errors %v (%d), want %v", r.Errors, r.ErrorCount(), want)
	}
	wantStatuses := map[string]int64{"s200": 7, "s404": 4, "s5000": 1, "s7": 1}
	if !maps.Equal(r.Statuses, wantStatuses) {
		t.Errorf("statuses %v, want %v", r.Statuses, wantStatuses)
	}
	// Every answer, whatever its status, is in the merged histogram; the
	// failures are not.
	if got := r.Latency.TotalCount(); got != 13 {
		t.Errorf("histogram holds %d latencies, want 13", got)
	}
	// The request that cannot be prepared is never called.
	if got := f.called[1]; !slices.Equal(got, []string{"ok", "rare", "denied", "ok"}) {
		t.Errorf("worker 1 called %q", got)
	}
	if f.closed != 1 {
		t.Errorf("protocol closed %d times", f.closed)
	}
}

func TestGenerateDiscardsWarmup(t *testing.T) {
	t.Parallel()
	f := newFake()
	// Every call ends long before the warmup does.
	r, err := load.Generate(t.Context(), load.Loop{Concurrency: 2, Warmup: long, Duration: time.Second,
		Source: loadtest.Finite(4, req("ok"), req("gone"), req("bad"))}, f.open)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 0 || r.Answered != 0 || r.ErrorCount() != 0 || r.Statuses != nil || r.Latency.TotalCount() != 0 {
		t.Errorf("warmup counted: %+v", r)
	}
	if n := len(f.called[0]) + len(f.called[1]); n != 6 {
		t.Errorf("%d calls made in the warmup, want 6", n)
	}
}

// A call whose timer fired and that returned an error is a timeout,
// whatever kind the protocol saw (the cancellation's); one that answered
// all the same is an answer.
func TestGenerateTimeout(t *testing.T) {
	t.Parallel()
	f := newFake()
	r, err := load.Generate(t.Context(), load.Loop{Concurrency: 2, Duration: long, Timeout: 20 * time.Millisecond,
		Source: loadtest.Finite(2, req("hang"), req("late"))}, f.open)
	if err != nil {
		t.Fatal(err)
	}
	want := [load.NumKinds]int64{load.Timeout: 2}
	if r.Requests != 4 || r.Errors != want || r.Answered != 2 || r.Statuses["s200"] != 2 || r.InFlight != 0 {
		t.Errorf("requests %d errors %v answered %d statuses %v in flight %d", r.Requests, r.Errors, r.Answered, r.Statuses, r.InFlight)
	}
	// A fired timer ends the call context: each call had its own.
	for w, dones := range f.dones {
		if len(dones) != 2 || dones[0] == dones[1] {
			t.Errorf("worker %d: call contexts %v", w, dones)
		}
	}
}

// The call context is reused until a call is Spent.
func TestGenerateReusesTheCallContext(t *testing.T) {
	t.Parallel()
	f := newFake()
	_, err := load.Generate(t.Context(), load.Loop{Concurrency: 1, Duration: long,
		Source: bySeq([]string{"ok", "gone", "reset", "spent", "ok", "ok"})}, f.open)
	if err != nil {
		t.Fatal(err)
	}
	d := f.dones[0]
	if len(d) != 6 || d[0] != d[1] || d[1] != d[2] || d[2] != d[3] || d[3] == d[4] || d[4] != d[5] {
		t.Errorf("call contexts %v: want one until the Spent call, a new one after", d)
	}
}

// Calls still in flight when the window closes are cut, and counted apart,
// whatever they return.
func TestGenerateCountsInFlightAtWindowEnd(t *testing.T) {
	t.Parallel()
	f := newFake()
	r, err := load.Generate(t.Context(), load.Loop{Concurrency: 3, Duration: 50 * time.Millisecond,
		Source: bySeq([]string{"ok", "hang"}, []string{"late"}, []string{"hang"})}, f.open)
	if err != nil {
		t.Fatal(err)
	}
	want := [load.NumKinds]int64{}
	if r.Requests != 1 || r.Answered != 1 || r.Errors != want || r.InFlight != 3 {
		t.Errorf("requests %d answered %d errors %v in flight %d; want 1, 1, none, 3", r.Requests, r.Answered, r.Errors, r.InFlight)
	}
}

func TestGenerateStarted(t *testing.T) {
	t.Parallel()
	f := newFake()
	sources, calls := 0, 0
	var start, warmupEnd, windowEnd time.Time
	r, err := load.Generate(t.Context(), load.Loop{
		Concurrency: 3,
		Warmup:      2 * time.Second,
		Duration:    long,
		Source: func(w int) load.Source {
			sources++
			return loadtest.Finite(5, req("ok"))(w)
		},
		Started: func(s, we, e time.Time) {
			calls++
			if sources != 3 {
				t.Errorf("Started after %d sources, want all 3", sources)
			}
			start, warmupEnd, windowEnd = s, we, e
			f.mu.Lock()
			f.started = true
			f.mu.Unlock()
		},
	}, f.open)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || f.early != 0 {
		t.Fatalf("Started called %d times, %d calls before it", calls, f.early)
	}
	if !start.Equal(r.Start) || warmupEnd.Sub(start) != 2*time.Second || windowEnd.Sub(warmupEnd) != long {
		t.Errorf("Started(%v, %v, %v); result start %v: want the result's start, warmup and window", start, warmupEnd, windowEnd, r.Start)
	}
}

func TestGenerateRefuses(t *testing.T) {
	t.Parallel()
	src := loadtest.Finite(1, req("ok"))
	refused := errors.New("no such target")
	for _, tc := range []struct {
		l    load.Loop
		open func(context.Context) (load.Protocol, error)
		want string
	}{
		{load.Loop{Duration: time.Second, Source: src}, nil, "load: concurrency 0, need at least 1"},
		{load.Loop{Concurrency: 1, Source: src}, nil, "load: duration 0s, need more than 0"},
		{load.Loop{Concurrency: 1, Duration: time.Second}, nil, "load: no request source"},
		{load.Loop{Concurrency: 1, Duration: time.Second, Source: src},
			func(context.Context) (load.Protocol, error) { return nil, refused }, refused.Error()},
	} {
		tc.l.Started = func(_, _, _ time.Time) { t.Errorf("Started for a refused load (%s)", tc.want) }
		open := tc.open
		if open == nil {
			open = func(context.Context) (load.Protocol, error) {
				t.Errorf("protocol opened for a refused load (%s)", tc.want)
				return newFake(), nil
			}
		}
		if _, err := load.Generate(t.Context(), tc.l, open); err == nil || err.Error() != tc.want {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

func TestGenerateCancelled(t *testing.T) {
	t.Parallel()
	f := newFake()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := load.Generate(ctx, load.Loop{Concurrency: 2, Duration: long, Source: loadtest.Finite(5, req("hang"))}, f.open)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "load cancelled: ") {
		t.Errorf("error %v, want one wrapping context.Canceled", err)
	}
}

// A request taken but not sent when a window closes (prepared or not) is
// the first of the next window, and the windows count apart.
func TestSessionCarriesThePendingRequest(t *testing.T) {
	t.Parallel()
	f := newFake()
	s, err := load.NewSession(t.Context(), load.Loop{Concurrency: 2,
		Source: bySeq([]string{"ok", "gone", "ok"}, []string{"bad", "ok"})}, f.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A window that has closed before it starts sends nothing.
	now := time.Now()
	if r := s.Window(t.Context(), now, now); r.Requests != 0 || r.InFlight != 0 || len(f.called) != 0 {
		t.Fatalf("closed window: %+v, calls %v", r, f.called)
	}
	now = time.Now()
	r := s.Window(t.Context(), now, now.Add(long))
	want := [load.NumKinds]int64{load.Status: 1, load.Other: 1}
	if r.Requests != 5 || r.Answered != 4 || r.Errors != want || r.Latency.TotalCount() != 4 || r.Duration != long {
		t.Errorf("second window: %+v", r)
	}
	if !slices.Equal(f.called[0], []string{"ok", "gone", "ok"}) || !slices.Equal(f.called[1], []string{"ok"}) {
		t.Errorf("calls %v", f.called)
	}
	// Each pending request was prepared again.
	if !slices.Equal(f.prepped[0], []string{"ok", "ok", "gone", "ok"}) || !slices.Equal(f.prepped[1], []string{"bad", "bad", "ok"}) {
		t.Errorf("prepared %v", f.prepped)
	}
	// A window after the sources ended measures nothing, and the
	// histogram handed out before is reset.
	now = time.Now()
	if r := s.Window(t.Context(), now, now.Add(long)); r.Requests != 0 || r.Latency.TotalCount() != 0 {
		t.Errorf("third window: %+v", r)
	}
}

// A window whose context lives on lets calls in flight at its end run
// on, but only for Drain: a target that never answers is cut there and
// counted in flight, where without Drain each window would wait for the
// call timeout (an hour here, so the test would hang rather than fail).
func TestWindowDrainIsBounded(t *testing.T) {
	t.Parallel()
	f := newFake()
	s, err := load.NewSession(t.Context(), load.Loop{Concurrency: 3, Timeout: time.Hour, Drain: 20 * time.Millisecond,
		Source: func(int) load.Source { return &loadtest.Seq{Reqs: []load.Request{req("hang")}, Loop: true} }}, f.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var total load.Result
	for range 2 {
		now := time.Now()
		total.Add(s.Window(t.Context(), now, now.Add(10*time.Millisecond)))
	}
	if total.Requests != 0 || total.InFlight != 6 || total.Duration != 20*time.Millisecond {
		t.Errorf("requests %d, in flight %d, duration %v; want 0, 6 (3 workers, 2 windows), 20ms", total.Requests, total.InFlight, total.Duration)
	}
}

func histogram(t *testing.T, values ...int64) *hdrhistogram.Histogram {
	t.Helper()
	h := hdrhistogram.New(1, 30e6, 3)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestResultAdd(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	a := load.Result{Start: t0.Add(time.Second), Duration: time.Second, Requests: 3, Answered: 2, Bytes: 10, InFlight: 1,
		Errors: [load.NumKinds]int64{load.Status: 1, load.Timeout: 1}, Statuses: map[string]int64{"200": 1, "404": 1},
		Latency: histogram(t, 100, 200)}
	b := load.Result{Start: t0, Duration: 2 * time.Second, Requests: 2, Answered: 2, Bytes: 7,
		Errors: [load.NumKinds]int64{load.Status: 1}, Statuses: map[string]int64{"404": 2}, Latency: histogram(t, 1500)}
	var sum load.Result
	sum.Add(a)
	sum.Add(b)
	sum.Add(load.Result{}) // adds nothing
	if !sum.Start.Equal(t0) || sum.Duration != 3*time.Second || sum.Requests != 5 || sum.Answered != 4 || sum.Bytes != 17 || sum.InFlight != 1 {
		t.Errorf("sum %+v", sum)
	}
	if want := [load.NumKinds]int64{load.Status: 2, load.Timeout: 1}; sum.Errors != want || sum.ErrorCount() != 3 {
		t.Errorf("errors %v", sum.Errors)
	}
	if !maps.Equal(sum.Statuses, map[string]int64{"200": 1, "404": 3}) {
		t.Errorf("statuses %v", sum.Statuses)
	}
	h := sum.Latency
	if h == a.Latency || h.TotalCount() != 3 || h.Min() != 100 || h.Max() != 1500 || h.ValueAtQuantile(50) != 200 {
		t.Errorf("merged histogram: %d values, min %d, max %d, median %d", h.TotalCount(), h.Min(), h.Max(), h.ValueAtQuantile(50))
	}
	if a.Latency.TotalCount() != 2 || a.Statuses["404"] != 1 {
		t.Error("Add changed what it added")
	}
}

func TestKindNames(t *testing.T) {
	t.Parallel()
	var got []string
	for k := range load.NumKinds {
		got = append(got, k.String())
	}
	if want := []string{"ok", "status", "timeout", "connect", "reset", "other"}; !slices.Equal(got, want) {
		t.Errorf("kinds %q, want %q", got, want)
	}
}

// TestOpenLoopAccounts: every call the schedule put in the window is
// answered, in flight at its end, or counted as never sent.
func TestOpenLoopAccounts(t *testing.T) {
	t.Parallel()
	f := newFake()
	l := load.Loop{Concurrency: 4, Duration: 300 * time.Millisecond, Rate: 200, Source: func(int) load.Source {
		return &loadtest.Seq{Reqs: []load.Request{loadtest.Get("a", "ok")}, Loop: true}
	}}
	r, err := load.Generate(t.Context(), l, f.open)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rate != 200 || r.Asked != 60 {
		t.Errorf("rate %v, asked %d: want 200 and 60", r.Rate, r.Asked)
	}
	if r.Requests+r.InFlight+r.Unsent != r.Asked || r.Requests == 0 {
		t.Errorf("asked %d, answered or failed %d, in flight %d, unsent %d: they must add up", r.Asked, r.Requests, r.InFlight, r.Unsent)
	}
	if r.Late > r.Requests+r.InFlight {
		t.Errorf("%d late of %d sent", r.Late, r.Requests+r.InFlight)
	}
}

func TestOpenLoopRefusesBadRate(t *testing.T) {
	t.Parallel()
	for _, rate := range []float64{-1, load.MaxRate * 2} {
		_, err := load.Generate(t.Context(), load.Loop{Concurrency: 1, Duration: time.Second, Rate: rate,
			Source: func(int) load.Source { return &loadtest.Seq{} }}, newFake().open)
		if err == nil || !strings.Contains(err.Error(), "rate") {
			t.Errorf("rate %v: %v", rate, err)
		}
	}
}

// TestOpenLoopWindowsAddUp: in every window of an open loop's session,
// the calls the schedule put in it are answered or failed, in flight at
// its end, or unsent, and no others. The windows begin after a settle,
// as slices do: the calls scheduled in it are sent (at once, the first
// two workers being free) and hang past the window's end, and are none
// of the window's, whatever the machine's speed: the schedule, not the
// clock, says which window a call is of.
func TestOpenLoopWindowsAddUp(t *testing.T) {
	t.Parallel()
	f := newFake()
	// 100 a second, a call every 10 ms: a settle of 300 ms holds two
	// calls at least, even when Window begins 280 ms late.
	s, err := load.NewSession(t.Context(), load.Loop{Concurrency: 2, Timeout: time.Hour, Drain: 20 * time.Millisecond, Rate: 100,
		Source: func(int) load.Source { return &loadtest.Seq{Reqs: []load.Request{req("hang")}, Loop: true} }}, f.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := func(name string, r load.Result, inFlight int64) {
		t.Helper()
		if r.Requests+r.InFlight+r.Unsent != r.Asked || r.Asked < 1 || (inFlight >= 0 && r.InFlight != inFlight) {
			t.Errorf("%s: asked %d, answered or failed %d, in flight %d, unsent %d: want them to add up, %d in flight",
				name, r.Asked, r.Requests, r.InFlight, r.Unsent, inFlight)
		}
	}
	for i := range 3 {
		begin := time.Now()
		from := begin.Add(300 * time.Millisecond)
		// Both workers are held by the settle's calls until the drain
		// ends: none of the window's calls goes out.
		check(fmt.Sprintf("window %d after a settle", i), s.Window(t.Context(), from, from.Add(30*time.Millisecond)), 0)
	}
	// Without a settle the calls the workers hold are the window's, in
	// flight at its end, unless a loaded machine started none before it
	// (-1: as many as went out).
	now := time.Now()
	check("window without a settle", s.Window(t.Context(), now, now.Add(30*time.Millisecond)), -1)
}
