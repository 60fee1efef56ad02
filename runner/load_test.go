package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/scenario"
)

// fixed yields its requests in turn, then nil; with loop it starts over.
type fixed struct {
	reqs []scenario.Request
	i    int
	loop bool
}

func (f *fixed) Next() *scenario.Request {
	if f.i == len(f.reqs) {
		if !f.loop {
			return nil
		}
		f.i = 0
	}
	f.i++
	return &f.reqs[f.i-1]
}

func get1(class, target string) scenario.Request {
	return scenario.Request{Class: class, Method: "GET", Target: target}
}

// finite gives every worker n copies of the same request sequence.
func finite(n int, reqs ...scenario.Request) func(int) Source {
	return func(int) Source {
		var all []scenario.Request
		for len(all) < n {
			all = append(all, reqs...)
		}
		return &fixed{reqs: all[:n]}
	}
}

// A window far longer than the test: workers end when their finite
// sources do, so every count is exact.
const long = time.Hour

func decodeCount(t *testing.T, r baselines.Rung) int64 {
	t.Helper()
	h, err := hdrhistogram.Decode([]byte(r.Histogram))
	if err != nil {
		t.Fatalf("histogram: %v", err)
	}
	return h.TotalCount()
}

func TestGenerateCounts(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "hello")
	}))
	defer srv.Close()

	r, err := Generate(t.Context(), Load{URL: srv.URL, Concurrency: 3, Duration: long, Source: finite(40, get1("a", "/a"))})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3 * 40
	if served.Load() != n || r.Requests != n || r.Bytes != 5*n || r.ErrorCount() != 0 {
		t.Errorf("served %d, rung %+v", served.Load(), r)
	}
	if got := r.Statuses["200"]; got != n || len(r.Statuses) != 1 {
		t.Errorf("statuses %v", r.Statuses)
	}
	if got := decodeCount(t, r); got != n {
		t.Errorf("histogram holds %d values, want %d", got, n)
	}
	if r.RPS != n/long.Seconds() || r.Duration != long.Seconds() {
		t.Errorf("rps %v over %v s", r.RPS, r.Duration)
	}
	if !(r.P50 > 0 && r.P50 <= r.P90 && r.P90 <= r.P95 && r.P95 <= r.P99 && r.P99 <= r.Max && r.Mean > 0) {
		t.Errorf("latencies not ordered: %+v", r)
	}
}

func TestGenerateExpectedStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "hi")
	}))
	defer srv.Close()
	src := finite(10, get1("ok", "/ok"), get1("gone", "/missing"))

	r, err := Generate(t.Context(), Load{URL: srv.URL, Concurrency: 2, Duration: long, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 20 || r.Errors[ErrStatus] != 10 || r.Statuses["404"] != 10 || r.Statuses["200"] != 10 || len(r.Errors) != 1 {
		t.Errorf("default 2xx rule: %+v", r)
	}
	// Answered requests count as throughput and latency whatever their status.
	if got := decodeCount(t, r); got != 20 || r.RPS != 20/long.Seconds() {
		t.Errorf("histogram %d values, rps %v", got, r.RPS)
	}

	sc := &scenario.Scenario{AllClasses: map[string]*scenario.Class{
		"ok":   {Name: "ok"},
		"gone": {Name: "gone", ExpectStatus: []int{404}},
	}}
	r, err = Generate(t.Context(), Load{URL: srv.URL, Concurrency: 2, Duration: long, Source: src, StatusOK: sc.StatusOK})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 20 || r.ErrorCount() != 0 || r.Errors != nil {
		t.Errorf("404 expected by its class: %+v", r)
	}
}

func TestGenerateTransportErrors(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/reset":
			c, _, _ := w.(http.Hijacker).Hijack()
			c.(*net.TCPConn).SetLinger(0) // close with RST
			c.Close()
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-hang:
			}
		}
	}))
	defer srv.Close()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()

	for _, tc := range []struct {
		url, path, kind string
		timeout         time.Duration
	}{
		{closed, "/", ErrConnect, 0},
		{srv.URL, "/reset", ErrReset, 0},
		{srv.URL, "/slow", ErrTimeout, 50 * time.Millisecond},
	} {
		r, err := Generate(t.Context(), Load{URL: tc.url, Concurrency: 2, Duration: long, Timeout: tc.timeout, Source: finite(3, get1("a", tc.path))})
		if err != nil {
			t.Fatal(err)
		}
		if r.Requests != 6 || r.Errors[tc.kind] != 6 || len(r.Errors) != 1 || r.RPS != 0 || r.Statuses != nil {
			t.Errorf("%s: want 6 %q errors, got requests %d errors %v statuses %v", tc.path, tc.kind, r.Requests, r.Errors, r.Statuses)
		}
		if got := decodeCount(t, r); got != 0 {
			t.Errorf("%s: transport failures in the histogram: %d", tc.path, got)
		}
	}
}

// The requests reaching the server are exactly the sources' sequences,
// byte for byte, in order per worker, run after run.
func TestGenerateSendsTheSequence(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.Header.Get("X-Worker")] = append(got[r.Header.Get("X-Worker")], fmt.Sprintf("%s %s %s %s", r.Method, r.RequestURI, r.Header.Get("Accept"), body))
		mu.Unlock()
	}))
	defer srv.Close()

	source := func(w int) Source {
		var reqs []scenario.Request
		for i := range 15 {
			h := http.Header{"X-Worker": {strconv.Itoa(w)}, "Accept": {"application/json"}}
			r := scenario.Request{Class: "q", Method: "GET", Target: fmt.Sprintf("/s/a%%2Fb?i=%d&w=%d&q=x+y%%20z", i, w), Header: h}
			if i%3 == 0 {
				r.Method, r.Body = "POST", []byte("body-"+strconv.Itoa(i))
			}
			reqs = append(reqs, r)
		}
		return &fixed{reqs: reqs}
	}
	run := func() map[string][]string {
		got = map[string][]string{}
		if _, err := Generate(t.Context(), Load{URL: srv.URL, Concurrency: 3, Duration: long, Source: source}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := run()
	second := run()
	for w := range 3 {
		k := strconv.Itoa(w)
		if len(first[k]) != 15 || !slices.Equal(first[k], second[k]) {
			t.Errorf("worker %d: first %q\nsecond %q", w, first[k], second[k])
		}
	}
	if want := "POST /s/a%2Fb?i=0&w=1&q=x+y%20z application/json body-0"; first["1"][0] != want {
		t.Errorf("first request %q, want %q", first["1"][0], want)
	}
	if want := "GET /s/a%2Fb?i=1&w=1&q=x+y%20z application/json "; first["1"][1] != want {
		t.Errorf("second request %q, want %q", first["1"][1], want)
	}
}

func TestGenerateDiscardsWarmup(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	// Every request ends long before the warmup does.
	r, err := Generate(t.Context(), Load{URL: srv.URL, Concurrency: 2, Warmup: long, Duration: time.Second, Source: finite(5, get1("a", "/"))})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 0 || r.Statuses != nil || decodeCount(t, r) != 0 {
		t.Errorf("warmup requests counted: %+v", r)
	}
}

func TestGenerateDropsRequestsInFlightAtWindowEnd(t *testing.T) {
	var started atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Add(1)
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	r, err := Generate(t.Context(), Load{URL: srv.URL, Concurrency: 2, Duration: 100 * time.Millisecond, Source: finite(5, get1("a", "/"))})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 0 || r.Errors != nil {
		t.Errorf("requests cut by the window's end counted: %+v", r)
	}
	// Not counted as requests of the window, but not lost either: a
	// target that never answers must not read as an idle one.
	if r.InFlight != 2 {
		t.Errorf("InFlight = %d, want 2 (one per worker)", r.InFlight)
	}
}

// A window whose context lives on (slice interleaving) lets requests in
// flight at its end run on, but only for Drain: a target that never
// answers is cut there and counted in flight, where without Drain each
// window would wait for the request timeout (an hour here, so the test
// would hang rather than pass).
func TestWindowDrainIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	s, err := newSession(Load{URL: srv.URL, Concurrency: 3, Timeout: time.Hour, Drain: 50 * time.Millisecond,
		Source: func(int) Source { return &fixed{reqs: []scenario.Request{get1("a", "/")}, loop: true} }}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 2 {
			now := time.Now()
			s.window(t.Context(), now, now.Add(20*time.Millisecond))
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the window waited past its drain for requests that are never answered")
	}
	r, err := s.rung(time.Now(), 0.04)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 0 || r.InFlight != 6 {
		t.Errorf("requests %d, in flight %d; want 0 and 6 (3 workers, 2 windows)", r.Requests, r.InFlight)
	}
}

func TestGenerateCancelled(t *testing.T) {
	arrived := make(chan struct{}, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-arrived; cancel() }()
	_, err := Generate(ctx, Load{URL: srv.URL, Concurrency: 2, Duration: long, Source: finite(5, get1("a", "/"))})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want one wrapping context.Canceled", err)
	}
}

func TestGenerateRefusesBadLoad(t *testing.T) {
	src := finite(1, get1("a", "/"))
	for _, l := range []Load{
		{URL: "http://127.0.0.1:1", Concurrency: 0, Duration: time.Second, Source: src},
		{URL: "http://127.0.0.1:1", Concurrency: 1, Duration: 0, Source: src},
		{URL: "http://127.0.0.1:1", Concurrency: 1, Duration: time.Second},
		{URL: "no-host", Concurrency: 1, Duration: time.Second, Source: src},
	} {
		if _, err := Generate(t.Context(), l); err == nil {
			t.Errorf("%+v accepted", l)
		}
	}
}

func BenchmarkGenerator(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello, benchmark")
	}))
	defer srv.Close()
	for _, c := range []int{1, 8} {
		b.Run("c="+strconv.Itoa(c), func(b *testing.B) {
			b.ReportAllocs()
			per := max(b.N/c, 1)
			b.ResetTimer()
			start := time.Now()
			r, err := Generate(context.Background(), Load{URL: srv.URL, Concurrency: c, Duration: long, Source: finite(per, get1("a", "/bench?x=1"))})
			elapsed := time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			if r.Requests != int64(per*c) || r.ErrorCount() != 0 {
				b.Fatalf("requests %d errors %v", r.Requests, r.Errors)
			}
			b.ReportMetric(float64(r.Requests)/elapsed.Seconds(), "req/s")
		})
	}
}

// reusing hands out the same Request and body buffer on every call and
// rewrites the buffer first, as scenario.Stream does with rendered bodies.
type reusing struct {
	n   int
	req scenario.Request
	buf []byte
}

func (s *reusing) Next() *scenario.Request {
	if s.n == 0 {
		return nil
	}
	s.n--
	for i := range 4096 {
		s.buf[i] = byte('a' + s.n%26)
	}
	s.req.Body = s.buf
	return &s.req
}

// A server may answer before it has read a request's body; net/http then
// goes on writing the body after RoundTrip returned. The generator must not
// let the next request (or the source's next render) touch what that write
// still reads. The race detector is the judge: run with -race.
func TestGenerateBodyOutlivesResponse(t *testing.T) {
	release := make(chan struct{})
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		// Answer at once and hold the connection without reading: the
		// client's writer stays blocked on a full socket.
		w.Header().Set("Content-Length", "2")
		io.WriteString(w, "ok")
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)

	// Big enough that the body is still being written when the answer
	// arrives (with the old reuse, -race reported this in every run).
	const size = 1 << 20
	source := func(int) Source {
		return &reusing{n: 3, req: scenario.Request{Class: "post", Method: "POST", Target: "/upload"}, buf: make([]byte, size)}
	}
	r, err := Generate(t.Context(), Load{URL: srv.URL, Concurrency: 1, Duration: long, Source: source})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 3 || r.Statuses["200"] != 3 || r.ErrorCount() != 0 || served.Load() != 3 {
		t.Errorf("served %d, rung %+v", served.Load(), r)
	}
}

// A request that cannot be prepared is a failed request of the window, so
// the error rate stays a share of Requests; during the warmup it is
// discarded like any other.
func TestGenerateUnpreparableRequest(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer srv.Close()
	src := finite(6, get1("a", "%zz"), get1("a", "/ok"))

	r, err := Generate(t.Context(), Load{URL: srv.URL, Concurrency: 2, Duration: long, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 12 || r.Errors[ErrOther] != 6 || len(r.Errors) != 1 || r.Statuses["200"] != 6 || served.Load() != 6 {
		t.Errorf("served %d, rung %+v", served.Load(), r)
	}
	if r.ErrorRate() > 1 {
		t.Errorf("error rate %v", r.ErrorRate())
	}

	r, err = Generate(t.Context(), Load{URL: srv.URL, Concurrency: 2, Warmup: long, Duration: time.Second, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 0 || r.Errors != nil {
		t.Errorf("warmup failures counted: %+v", r)
	}
}

// A base URL ending in "/" takes the request target as is, no slash doubled.
func TestGenerateBaseWithSlash(t *testing.T) {
	var mu sync.Mutex
	var uris []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uris = append(uris, r.RequestURI)
		mu.Unlock()
	}))
	defer srv.Close()
	post := scenario.Request{Class: "a", Method: "POST", Target: "/b", Body: []byte("x")}
	r, err := Generate(t.Context(), Load{URL: srv.URL + "/", Concurrency: 1, Duration: long, Source: finite(2, get1("a", "/a?x=1"), post)})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"/a?x=1", "/b"}; r.Requests != 2 || !slices.Equal(uris, want) {
		t.Errorf("server saw %q, want %q", uris, want)
	}
}

// TestGenerateStarted checks that Started reports the times the rung is
// measured by, once, after every worker has its source and before the
// first request reaches the target.
func TestGenerateStarted(t *testing.T) {
	var started atomic.Bool
	var early atomic.Int64 // requests that arrived before Started
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !started.Load() {
			early.Add(1)
		}
	}))
	defer srv.Close()
	sources := 0
	calls := 0
	var start, warmupEnd, windowEnd time.Time
	r, err := Generate(context.Background(), Load{
		URL:         srv.URL,
		Concurrency: 3,
		Warmup:      2 * time.Second,
		Duration:    long,
		Source: func(w int) Source {
			sources++
			return finite(5, get1("c", "/"))(w)
		},
		Started: func(s, we, e time.Time) {
			calls++
			if sources != 3 {
				t.Errorf("Started after %d sources, want all 3", sources)
			}
			start, warmupEnd, windowEnd = s, we, e
			started.Store(true)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("Started called %d times", calls)
	}
	if n := early.Load(); n != 0 {
		t.Errorf("%d requests before Started", n)
	}
	if !start.Equal(r.Start) || warmupEnd.Sub(start) != 2*time.Second || windowEnd.Sub(warmupEnd) != long {
		t.Errorf("Started(%v, %v, %v); rung start %v: want the rung's start, warmup and window", start, warmupEnd, windowEnd, r.Start)
	}
	// A refused load never starts.
	if _, err := Generate(context.Background(), Load{URL: "::bad", Concurrency: 1, Duration: time.Second,
		Source: finite(1), Started: func(_, _, _ time.Time) { t.Error("Started for a refused load") }}); err == nil {
		t.Error("a bad URL was accepted")
	}
}
