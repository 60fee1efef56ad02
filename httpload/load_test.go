package httpload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/load/loadtest"
	"github.com/benchgate/benchgate/scenario"
)

// A window far longer than the test: workers end when their finite
// sources do, so every count is exact.
const long = time.Hour

// loop is worker w's source: reqs over and over.
func loop(reqs ...load.Request) func(int) load.Source {
	return func(int) load.Source { return &loadtest.Seq{Reqs: reqs, Loop: true} }
}

func generate(t testing.TB, l Load) load.Result {
	t.Helper()
	r, err := Generate(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// kinds is a Result's Errors with the given counts.
func kinds(counts map[load.Kind]int64) [load.NumKinds]int64 {
	var e [load.NumKinds]int64
	for k, n := range counts {
		e[k] = n
	}
	return e
}

func TestGenerateCounts(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "hello")
	}))
	defer srv.Close()

	r := generate(t, Load{URL: srv.URL, Loop: load.Loop{Concurrency: 3, Duration: long, Source: loadtest.Finite(40, loadtest.Get("a", "/a"))}})
	const n = 3 * 40
	if served.Load() != n || r.Requests != n || r.Answered != n || r.Bytes != 5*n || r.ErrorCount() != 0 || r.InFlight != 0 {
		t.Errorf("served %d, result %+v", served.Load(), r)
	}
	if got := r.Statuses["200"]; got != n || len(r.Statuses) != 1 {
		t.Errorf("statuses %v", r.Statuses)
	}
	if got := r.Latency.TotalCount(); got != n || r.Latency.ValueAtQuantile(50) <= 0 {
		t.Errorf("histogram holds %d values, median %d; want %d", got, r.Latency.ValueAtQuantile(50), n)
	}
	if r.Duration != long {
		t.Errorf("duration %v", r.Duration)
	}
}

func TestGenerateExpectedStatus(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "hi")
	}))
	defer srv.Close()
	src := loadtest.Finite(10, loadtest.Get("ok", "/ok"), loadtest.Get("gone", "/missing"))

	r := generate(t, Load{URL: srv.URL, Loop: load.Loop{Concurrency: 2, Duration: long, Source: src}})
	if r.Requests != 20 || r.Errors != kinds(map[load.Kind]int64{load.Status: 10}) || r.Statuses["404"] != 10 || r.Statuses["200"] != 10 {
		t.Errorf("default 2xx rule: %+v", r)
	}
	// Answered requests count as throughput and latency whatever their status.
	if got := r.Latency.TotalCount(); got != 20 || r.Answered != 20 {
		t.Errorf("histogram %d values, %d answered", got, r.Answered)
	}

	sc := &scenario.Scenario{AllClasses: map[string]*scenario.Class{
		"ok":   {Name: "ok"},
		"gone": {Name: "gone", ExpectStatus: []int{404}},
	}}
	r = generate(t, Load{URL: srv.URL, StatusOK: sc.StatusOK, Loop: load.Loop{Concurrency: 2, Duration: long, Source: src}})
	if r.Requests != 20 || r.ErrorCount() != 0 {
		t.Errorf("404 expected by its class: %+v", r)
	}
}

func TestGenerateTransportErrors(t *testing.T) {
	t.Parallel()
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
		url, path string
		kind      load.Kind
		timeout   time.Duration
	}{
		{closed, "/", load.Connect, 0},
		{srv.URL, "/reset", load.Reset, 0},
		{srv.URL, "/slow", load.Timeout, 50 * time.Millisecond},
	} {
		r := generate(t, Load{URL: tc.url, Loop: load.Loop{Concurrency: 2, Duration: long, Timeout: tc.timeout, Source: loadtest.Finite(3, loadtest.Get("a", tc.path))}})
		if r.Requests != 6 || r.Errors != kinds(map[load.Kind]int64{tc.kind: 6}) || r.Answered != 0 || r.Statuses != nil {
			t.Errorf("%s: want 6 %s errors, got requests %d errors %v statuses %v", tc.path, tc.kind, r.Requests, r.Errors, r.Statuses)
		}
		if got := r.Latency.TotalCount(); got != 0 {
			t.Errorf("%s: transport failures in the histogram: %d", tc.path, got)
		}
	}
}

// The requests reaching the server are exactly the sources' sequences,
// byte for byte, in order per worker, run after run.
func TestGenerateSendsTheSequence(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string][]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.Header.Get("X-Worker")] = append(got[r.Header.Get("X-Worker")], fmt.Sprintf("%s %s %s %s", r.Method, r.RequestURI, r.Header.Get("Accept"), body))
		mu.Unlock()
	}))
	defer srv.Close()

	source := func(w int) load.Source {
		var reqs []load.Request
		for i := range 15 {
			h := http.Header{"X-Worker": {strconv.Itoa(w)}, "Accept": {"application/json"}}
			r := load.Request{Class: "q", Method: "GET", Target: fmt.Sprintf("/s/a%%2Fb?i=%d&w=%d&q=x+y%%20z", i, w), Header: h}
			if i%3 == 0 {
				r.Method, r.Body = "POST", []byte("body-"+strconv.Itoa(i))
			}
			reqs = append(reqs, r)
		}
		return &loadtest.Seq{Reqs: reqs}
	}
	run := func() map[string][]string {
		got = map[string][]string{}
		generate(t, Load{URL: srv.URL, Loop: load.Loop{Concurrency: 3, Duration: long, Source: source}})
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

func TestGenerateDropsRequestsInFlightAtWindowEnd(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	// The window is doubled while a worker had not sent its request before
	// it closed (a loaded machine may not run a worker in 100 ms): what is
	// tested is how a request cut by the window's end is counted.
	for d := 100 * time.Millisecond; ; d *= 2 {
		r := generate(t, Load{URL: srv.URL, Loop: load.Loop{Concurrency: 2, Duration: d, Source: loadtest.Finite(5, loadtest.Get("a", "/"))}})
		if r.Requests != 0 || r.ErrorCount() != 0 {
			t.Fatalf("requests cut by the window's end counted: %+v", r)
		}
		// Not counted as requests of the window, but not lost either: a
		// target that never answers must not read as an idle one.
		if r.InFlight == 2 {
			return
		}
		if r.InFlight > 2 || d >= time.Minute {
			t.Fatalf("InFlight = %d after a window of %v, want 2 (one per worker)", r.InFlight, d)
		}
	}
}

// A window whose context lives on (slice interleaving) lets requests in
// flight at its end run on, but only for Drain: a target that never
// answers is cut there and counted in flight, where without Drain each
// window would wait for the request timeout (an hour here, so the test
// would hang rather than pass).
func TestWindowDrainIsBounded(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	// Windows of 20 ms, doubled while a worker had not sent before one
	// closed (a loaded machine): how a window ends is tested, not how soon
	// this machine runs a worker.
	for d := 20 * time.Millisecond; ; d *= 2 {
		total := drainWindows(t, srv.URL, d)
		if total.Requests != 0 || total.InFlight > 6 {
			t.Fatalf("windows of %v: requests %d, in flight %d; want 0 and 6 (3 workers, 2 windows)", d, total.Requests, total.InFlight)
		}
		if total.InFlight == 6 {
			return
		}
		if d >= 30*time.Second {
			t.Fatalf("windows of %v: in flight %d, want 6 (3 workers, 2 windows)", d, total.InFlight)
		}
	}
}

// drainWindows runs two windows of d on a session of 3 workers against a
// target that never answers, each drained for 50 ms.
func drainWindows(t *testing.T, url string, d time.Duration) load.Result {
	t.Helper()
	s, err := NewSession(t.Context(), Load{URL: url, Loop: load.Loop{Concurrency: 3, Timeout: time.Hour, Drain: 50 * time.Millisecond,
		Source: loop(loadtest.Get("a", "/"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var total load.Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 2 {
			now := time.Now()
			total.Add(s.Window(t.Context(), now, now.Add(d)))
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute + 2*d):
		t.Fatal("the window waited past its drain for requests that are never answered")
	}
	return total
}

// TestSessionDrainsInFlight: a request in flight when a window closes is
// answered, not cancelled and not counted, before Window returns; the
// next window goes on over the same connection with the request after it.
func TestSessionDrainsInFlight(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var conns atomic.Int64
	var mu sync.Mutex
	var got []string
	var cancelled atomic.Bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.RawQuery)
		mu.Unlock()
		<-release
		if r.Context().Err() != nil {
			cancelled.Store(true)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	var want []string
	var reqs []load.Request
	for i := range 5 {
		want = append(want, "w=0&i="+strconv.Itoa(i))
		reqs = append(reqs, loadtest.Get("a", "/a?"+want[i]))
	}
	s, err := NewSession(t.Context(), Load{URL: srv.URL, Loop: load.Loop{Concurrency: 1,
		Source: func(int) load.Source { return &loadtest.Seq{Reqs: reqs} }}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The first request is held until the window has closed.
	start := time.Now()
	end := start.Add(300 * time.Millisecond)
	stop := time.AfterFunc(time.Until(end)+20*time.Millisecond, func() { close(release) })
	defer stop.Stop()
	r := s.Window(t.Context(), start, end)
	select {
	case <-release:
	default:
		t.Fatal("Window returned with a request in flight")
	}
	mu.Lock()
	n := len(got)
	mu.Unlock()
	if n != 1 || r.Requests != 0 || r.Answered != 0 || r.InFlight != 1 || cancelled.Load() {
		t.Errorf("%d requests sent, window %+v, in-flight request cancelled: %v", n, r, cancelled.Load())
	}
	// The next window sends the rest of the sequence, and counts it.
	now := time.Now()
	r = s.Window(t.Context(), now, now.Add(long))
	if r.Requests != 4 || r.Answered != 4 || r.Latency.TotalCount() != 4 {
		t.Errorf("second window: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) || conns.Load() != 1 || cancelled.Load() {
		t.Errorf("server saw %q over %d connections, want %q over one", got, conns.Load(), want)
	}
}

func TestGenerateCancelled(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-arrived; cancel() }()
	_, err := Generate(ctx, Load{URL: srv.URL, Loop: load.Loop{Concurrency: 2, Duration: long, Source: loadtest.Finite(5, loadtest.Get("a", "/"))}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want one wrapping context.Canceled", err)
	}
}

func TestGenerateRefusesBadLoad(t *testing.T) {
	t.Parallel()
	src := loadtest.Finite(1, loadtest.Get("a", "/"))
	for _, l := range []Load{
		{URL: "http://127.0.0.1:1", Loop: load.Loop{Concurrency: 0, Duration: time.Second, Source: src}},
		{URL: "http://127.0.0.1:1", Loop: load.Loop{Concurrency: 1, Duration: 0, Source: src}},
		{URL: "http://127.0.0.1:1", Loop: load.Loop{Concurrency: 1, Duration: time.Second}},
		{URL: "no-host", Loop: load.Loop{Concurrency: 1, Duration: time.Second, Source: src}},
		{URL: "::bad", Loop: load.Loop{Concurrency: 1, Duration: time.Second, Source: src}},
	} {
		if _, err := Generate(t.Context(), l); err == nil {
			t.Errorf("%+v accepted", l)
		}
	}
}

// BenchmarkGenerator drives an in-process server with each client. Against
// the canned server, which allocates nothing per request, the allocations
// per request are the generator's alone; against net/http's server they
// include the server's, so compare the clients with each other there.
func BenchmarkGenerator(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello, benchmark")
	}))
	defer srv.Close()
	servers := []struct{ name, url string }{
		{"canned", cannedServer(b, "HTTP/1.1 200 OK\r\nContent-Length: 16\r\nContent-Type: text/plain\r\n\r\nhello, benchmark")},
		{"net-http", srv.URL},
	}
	get := loadtest.Get("a", "/bench?x=1")
	get.Constant = true
	for _, server := range servers {
		for _, client := range []Client{Fast, NetHTTP} {
			for _, c := range []int{1, 8} {
				name := fmt.Sprintf("server=%s/client=%s/c=%d", server.name, strings.ReplaceAll(string(client), "/", "-"), c)
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					per := max(b.N/c, 1)
					b.ResetTimer()
					start := time.Now()
					r, err := Generate(context.Background(), Load{URL: server.url, Client: client, Loop: load.Loop{Concurrency: c, Duration: long, Source: loadtest.Finite(per, get)}})
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
	}
}

// cannedServer answers every request (a head without a body) with
// answer, allocating nothing per request: it counts the blank lines that
// end the heads it reads and writes as many answers.
func cannedServer(t testing.TB, answer string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				out := make([]byte, 0, 64*len(answer))
				end := []byte("\r\n\r\n")
				carry := 0 // bytes of a blank line's end seen at the end of the last read
				for {
					n, err := c.Read(buf[carry:])
					if n == 0 || err != nil {
						return
					}
					data := buf[:carry+n]
					heads := bytes.Count(data, end)
					carry = 0
					for k := 3; k > 0; k-- {
						if bytes.HasSuffix(data, end[:k]) {
							carry = copy(buf, end[:k])
							break
						}
					}
					for heads > 0 {
						out = out[:0]
						for ; heads > 0 && len(out)+len(answer) <= cap(out); heads-- {
							out = append(out, answer...)
						}
						if _, err := c.Write(out); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// reusing hands out the same Request and body buffer on every call and
// rewrites the buffer first, as scenario.Stream does with rendered bodies.
type reusing struct {
	n   int
	req load.Request
	buf []byte
}

func (s *reusing) Next() *load.Request {
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
	t.Parallel()
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
	source := func(int) load.Source {
		return &reusing{n: 3, req: load.Request{Class: "post", Method: "POST", Target: "/upload"}, buf: make([]byte, size)}
	}
	r := generate(t, Load{URL: srv.URL, Loop: load.Loop{Concurrency: 1, Duration: long, Source: source}})
	if r.Requests != 3 || r.Statuses["200"] != 3 || r.ErrorCount() != 0 || served.Load() != 3 {
		t.Errorf("served %d, result %+v", served.Load(), r)
	}
}

// A request that cannot be prepared is a failed request of the window, so
// the error rate stays a share of Requests; during the warmup it is
// discarded like any other.
func TestGenerateUnpreparableRequest(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer srv.Close()
	src := loadtest.Finite(6, loadtest.Get("a", "%zz"), loadtest.Get("a", "/ok"))

	r := generate(t, Load{URL: srv.URL, Loop: load.Loop{Concurrency: 2, Duration: long, Source: src}})
	if r.Requests != 12 || r.Errors != kinds(map[load.Kind]int64{load.Other: 6}) || r.Statuses["200"] != 6 || served.Load() != 6 {
		t.Errorf("served %d, result %+v", served.Load(), r)
	}

	r = generate(t, Load{URL: srv.URL, Loop: load.Loop{Concurrency: 2, Warmup: long, Duration: time.Second, Source: src}})
	if r.Requests != 0 || r.ErrorCount() != 0 {
		t.Errorf("warmup failures counted: %+v", r)
	}
}

// A base URL ending in "/" takes the request target as is, no slash doubled.
func TestGenerateBaseWithSlash(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var uris []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uris = append(uris, r.RequestURI)
		mu.Unlock()
	}))
	defer srv.Close()
	post := load.Request{Class: "a", Method: "POST", Target: "/b", Body: []byte("x")}
	r := generate(t, Load{URL: srv.URL + "/", Loop: load.Loop{Concurrency: 1, Duration: long, Source: loadtest.Finite(2, loadtest.Get("a", "/a?x=1"), post)}})
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"/a?x=1", "/b"}; r.Requests != 2 || !slices.Equal(uris, want) {
		t.Errorf("server saw %q, want %q", uris, want)
	}
}

// TestOpenLoopShowsAStall: a server that stalls for a second mid-run.
// The open loop goes on sending on its schedule, times each request from
// when it was due, and counts those it could not send on time: the stall
// is in its p99. A closed loop waits politely through it, and its few
// slow requests vanish below the p99.
func TestOpenLoopShowsAStall(t *testing.T) {
	t.Parallel()
	var stallFrom, stallTo atomic.Int64 // unix nanoseconds
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if now := time.Now().UnixNano(); now >= stallFrom.Load() && now < stallTo.Load() {
			time.Sleep(time.Duration(stallTo.Load() - now))
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	run := func(l load.Loop) load.Result {
		start := time.Now()
		stallFrom.Store(start.Add(time.Second).UnixNano())
		stallTo.Store(start.Add(2 * time.Second).UnixNano())
		return generate(t, Load{URL: srv.URL, Loop: l})
	}
	get := loadtest.Get("a", "/")
	open := run(load.Loop{Concurrency: 20, Duration: 3 * time.Second, Rate: 200, Timeout: 5 * time.Second, Source: loop(get)})
	closed := run(load.Loop{Concurrency: 2, Duration: 3 * time.Second, Timeout: 5 * time.Second, Source: loop(get)})

	p99 := func(r load.Result) time.Duration {
		return time.Duration(r.Latency.ValueAtQuantile(99)) * time.Microsecond
	}
	t.Logf("open: asked %d at %v/s, %d answered, %d late, %d unsent, p99 %v; closed: %d answered, p99 %v",
		open.Asked, open.Rate, open.Answered, open.Late, open.Unsent, p99(open), closed.Answered, p99(closed))
	// During the stall 200 requests were due, and 20 workers could hold
	// 20 of them: the rest went out late, and waited up to the second.
	if open.Asked != 600 || open.Late < 100 {
		t.Errorf("open loop: asked %d, late %d: want 600 asked and the stall's requests late", open.Asked, open.Late)
	}
	if p99(open) < 500*time.Millisecond {
		t.Errorf("open loop p99 %v: the one-second stall does not show", p99(open))
	}
	if p99(closed) >= p99(open)/2 {
		t.Errorf("closed loop p99 %v, open %v: the closed loop was to hide the stall", p99(closed), p99(open))
	}
}

// TestHTTP2Client: load.http_client: http2 speaks HTTP/2 with prior
// knowledge to an http target, what the fast client cannot.
func TestHTTP2Client(t *testing.T) {
	t.Parallel()
	var h2, other atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			h2.Add(1)
		} else {
			other.Add(1)
		}
		io.WriteString(w, "ok")
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	r := generate(t, Load{URL: srv.URL, Client: HTTP2, Loop: load.Loop{Concurrency: 3, Duration: long, Source: loadtest.Finite(10, loadtest.Get("a", "/"))}})
	if r.Answered != 30 || r.Bytes != 60 || r.ErrorCount() != 0 || h2.Load() != 30 || other.Load() != 0 {
		t.Errorf("%d over HTTP/2, %d otherwise; result %+v", h2.Load(), other.Load(), r)
	}
}
