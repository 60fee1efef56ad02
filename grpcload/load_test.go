package grpcload

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/load/loadtest"
)

// forever is a source repeating req without end.
func forever(req load.Request) func(int) load.Source {
	return func(int) load.Source { return &loadtest.Seq{Reqs: []load.Request{req}, Loop: true} }
}

// generate is a short rung against addr: every worker sends req.
func generate(t testing.TB, addr string, req load.Request, c int, mod func(*Load)) (load.Result, error) {
	t.Helper()
	d := FromReflection(context.Background(), testConn(t, addr))
	var mu sync.Mutex
	calls := map[string]*Call{}
	l := Load{
		Target: addr,
		Loop: load.Loop{
			Concurrency: c,
			Warmup:      50 * time.Millisecond,
			Duration:    200 * time.Millisecond,
			Timeout:     time.Second,
			Source:      forever(req),
		},
		Resolve: func(m string) (*Call, error) {
			mu.Lock()
			defer mu.Unlock()
			if c := calls[m]; c != nil {
				return c, nil
			}
			c, err := Prepare(context.Background(), d, m)
			if err == nil {
				calls[m] = c
			}
			return c, err
		},
	}
	if mod != nil {
		mod(&l)
	}
	return Generate(testCtx(t), l)
}

func checkHistogram(t *testing.T, r load.Result, want int64) {
	t.Helper()
	if got := r.Latency.TotalCount(); got != want {
		t.Errorf("histogram counts %d calls, want %d", got, want)
	}
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{reflection: "v1"})
	var started []time.Time
	req := load.Request{Class: "echo", Target: "bench.v1.Bench/Echo", Body: []byte(`{"text":"hello","n":7}`),
		Header: http.Header{"X-Tenant": {"acme"}}}
	// A window of a second: a loaded machine answers some calls in it
	// (200 ms once saw none).
	r, err := generate(t, ts.addr, req, 4, func(l *Load) {
		l.Connections = 2
		l.Duration = time.Second
		l.Started = func(s, w, e time.Time) { started = []time.Time{s, w, e} }
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d calls, p50 %dµs p99 %dµs", r.Requests, r.Latency.ValueAtQuantile(50), r.Latency.ValueAtQuantile(99))
	if r.Requests == 0 || r.Duration != time.Second {
		t.Fatalf("result %+v", r)
	}
	if len(r.Statuses) != 1 || r.Statuses["OK"] != r.Requests || r.ErrorCount() != 0 {
		t.Errorf("statuses %v errors %v of %d calls", r.Statuses, r.Errors, r.Requests)
	}
	if r.Answered != r.Requests {
		t.Errorf("%d answered of %d calls", r.Answered, r.Requests)
	}
	// "hello", 7 and "acme" on the wire: 2+5 + 2 + 2+4 bytes.
	if r.Bytes != r.Requests*15 {
		t.Errorf("bytes %d for %d calls", r.Bytes, r.Requests)
	}
	if r.Latency.ValueAtQuantile(50) <= 0 {
		t.Errorf("median latency %dµs", r.Latency.ValueAtQuantile(50))
	}
	checkHistogram(t, r, r.Requests)
	if len(started) != 3 || started[1].Sub(started[0]) != 50*time.Millisecond || started[2].Sub(started[1]) != time.Second {
		t.Errorf("started %v", started)
	}
}

// bounded is a rung of n calls by each worker, with no warm-up and a
// window far longer than they take: every call is counted, however slowly
// a loaded machine makes them (a short window may see none).
func bounded(n int, req load.Request) func(*Load) {
	return func(l *Load) {
		l.Warmup, l.Duration = 0, time.Hour
		l.Source = loadtest.Finite(n, req)
	}
}

func TestGenerateStatuses(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{reflection: "v1"})
	req := load.Request{Target: "/bench.v1.Bench/Lookup", Body: []byte(`{"id":"x"}`)}
	// 100 lookups; the server answers every tenth NotFound.
	r, err := generate(t, ts.addr, req, 2, bounded(50, req))
	if err != nil {
		t.Fatal(err)
	}
	nf, ok := r.Statuses["NotFound"], r.Statuses["OK"]
	if r.Requests != 100 || nf != 10 || ok != 90 || len(r.Statuses) != 2 {
		t.Fatalf("statuses %v of %d calls, want 90 OK and 10 NotFound of 100", r.Statuses, r.Requests)
	}
	if r.Errors[load.Status] != nf || r.ErrorCount() != nf {
		t.Errorf("errors %v", r.Errors)
	}
	// Answered is answered: NotFound counts in throughput and latency.
	if r.Answered != r.Requests {
		t.Errorf("%d answered of %d calls", r.Answered, r.Requests)
	}
	checkHistogram(t, r, r.Requests)
}

func TestGenerateTimeout(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{reflection: "v1"})
	// The server would answer in a minute; the timeout ends each call
	// long before.
	req := load.Request{Target: "bench.v1.Bench/Slow", Body: []byte(`{"ms":60000}`)}
	r, err := generate(t, ts.addr, req, 2, func(l *Load) {
		bounded(3, req)(l)
		l.Timeout = 40 * time.Millisecond
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 6 || r.Errors[load.Timeout] != 6 || r.ErrorCount() != 6 {
		t.Errorf("errors %v of %d calls, want 6 timeouts", r.Errors, r.Requests)
	}
	if r.Statuses != nil || r.Answered != 0 {
		t.Errorf("statuses %v, %d answered", r.Statuses, r.Answered)
	}
	checkHistogram(t, r, 0)
}

func TestGenerateConnect(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{reflection: "v1"})
	// A port nobody listens on.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := lis.Addr().String()
	lis.Close()
	req := load.Request{Target: "bench.v1.Bench/Echo", Body: []byte(`{}`)}
	r, err := generate(t, ts.addr, req, 1, func(l *Load) {
		bounded(3, req)(l)
		l.Target = down
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 3 || r.Errors[load.Connect] != 3 || r.ErrorCount() != 3 || r.Statuses != nil {
		t.Errorf("errors %v statuses %v of %d calls, want 3 connect errors", r.Errors, r.Statuses, r.Requests)
	}
}

func TestGenerateBadRequest(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{reflection: "v1"})
	for _, req := range []load.Request{
		{Target: "bench.v1.Bench/Echo", Body: []byte(`{"nope":1}`)},
		{Target: "bench.v1.Bench/Nope", Body: []byte(`{}`)},
	} {
		r, err := generate(t, ts.addr, req, 1, bounded(3, req))
		if err != nil {
			t.Fatal(err)
		}
		if r.Requests != 3 || r.Errors[load.Other] != 3 || r.ErrorCount() != 3 || r.Statuses != nil {
			t.Errorf("%s %s: errors %v statuses %v of %d calls, want 3 other errors", req.Target, req.Body, r.Errors, r.Statuses, r.Requests)
		}
	}
}

func TestGenerateRefuses(t *testing.T) {
	t.Parallel()
	src := loadtest.Finite(1, load.Request{})
	res := func(string) (*Call, error) { return nil, errors.New("x") }
	for _, tc := range []struct {
		l    Load
		want string
	}{
		{Load{Target: "x:1", Loop: load.Loop{Duration: time.Second, Source: src}, Resolve: res}, "concurrency 0"},
		{Load{Target: "x:1", Loop: load.Loop{Concurrency: 1, Source: src}, Resolve: res}, "duration 0s"},
		{Load{Target: "x:1", Loop: load.Loop{Concurrency: 1, Duration: time.Second}, Resolve: res}, "no request source"},
		{Load{Target: "x:1", Loop: load.Loop{Concurrency: 1, Duration: time.Second, Source: src}}, "no method resolver"},
		{Load{Loop: load.Loop{Concurrency: 1, Duration: time.Second, Source: src}, Resolve: res}, "no target"},
	} {
		_, err := Generate(context.Background(), tc.l)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
}

func TestGenerateCancelled(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{reflection: "v1"})
	req := load.Request{Target: "bench.v1.Bench/Echo", Body: []byte(`{}`)}
	d := FromReflection(testCtx(t), testConn(t, ts.addr))
	c, err := Prepare(testCtx(t), d, req.Target)
	if err != nil {
		t.Fatal(err)
	}
	// Cancelled once the clock runs, an hour before the window ends.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	begin := time.Now()
	_, err = Generate(ctx, Load{Target: ts.addr,
		Loop: load.Loop{Concurrency: 2, Duration: time.Hour, Source: forever(req),
			Started: func(time.Time, time.Time, time.Time) { time.AfterFunc(50*time.Millisecond, cancel) }},
		Resolve: func(string) (*Call, error) { return c, nil }})
	if !errors.Is(err, context.Canceled) || time.Since(begin) > time.Minute {
		t.Errorf("got %v after %v", err, time.Since(begin))
	}
}

// A source that ends ends its worker; Generate returns when all have.
func TestGenerateSourceEnds(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{reflection: "v1"})
	req := load.Request{Target: "bench.v1.Bench/Echo", Body: []byte(`{"n":1}`)}
	// The window is an hour: waiting it out, Generate would end with the
	// test's context, in error.
	r, err := generate(t, ts.addr, req, 3, bounded(5, req))
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 15 || r.Statuses["OK"] != 15 {
		t.Errorf("%d calls, statuses %v", r.Requests, r.Statuses)
	}
}

func TestInvoke(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{reflection: "both"})
	ctx := testCtx(t)
	conn := testConn(t, ts.addr)
	d := FromReflection(ctx, conn)
	c, err := Prepare(ctx, d, "bench.v1.Bench/Echo")
	if err != nil {
		t.Fatal(err)
	}
	code, js, err := c.Invoke(ctx, conn, &load.Request{Body: []byte(`{"text":"hi","n":3}`), Header: http.Header{"X-Tenant": {"acme"}}})
	if err != nil || code != "OK" || string(js) != `{"text":"hi","n":3,"tenant":"acme"}` {
		t.Errorf("echo: %s %s %v", code, js, err)
	}
	code, js, err = c.Invoke(ctx, conn, &load.Request{})
	if err != nil || code != "OK" || string(js) != `{}` {
		t.Errorf("empty: %s %s %v", code, js, err)
	}
	if _, _, err := c.Invoke(ctx, conn, &load.Request{Body: []byte(`{"txt":"hi"}`)}); err == nil || !strings.Contains(err.Error(), `unknown field "txt"`) {
		t.Errorf("bad request: %v", err)
	}

	lookup, err := Prepare(ctx, d, "bench.v1.Bench/Lookup")
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for range 10 {
		code, js, err := lookup.Invoke(ctx, conn, &load.Request{Body: []byte(`{"id":"i1"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if code == "OK" && string(js) != `{"id":"i1","count":"42","tags":["a","b"]}` {
			t.Errorf("lookup: %s", js)
		}
		if code != "OK" && js != nil {
			t.Errorf("%s with %s", code, js)
		}
		codes = append(codes, code)
	}
	if codes[9] != "NotFound" || codes[0] != "OK" {
		t.Errorf("codes %v", codes)
	}

	// No server: an error, not an answer.
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	down := lis.Addr().String()
	lis.Close()
	code, _, err = c.Invoke(ctx, testConn(t, down), &load.Request{})
	if err == nil || code != "Unavailable" {
		t.Errorf("down: %s %v", code, err)
	}
	// Our deadline: an error too.
	slow, _ := Prepare(ctx, d, "bench.v1.Bench/Slow")
	sctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	code, _, err = slow.Invoke(sctx, conn, &load.Request{Body: []byte(`{"ms":1000}`)})
	if err == nil || code != "DeadlineExceeded" {
		t.Errorf("slow: %s %v", code, err)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	// Only what the servers in the other tests do not show.
	for _, tc := range []struct {
		err  error
		want load.Kind
	}{
		{errors.New("plain"), load.Other},
		{statusErr(14, "connection error: desc = \"transport: Error while dialing: dial tcp: connection refused\""), load.Connect},
		{statusErr(14, "error reading from server: EOF"), load.Reset},
		{statusErr(14, "server is shedding load"), load.Status},
		{statusErr(13, "stream terminated by RST_STREAM with error code: PROTOCOL_ERROR"), load.Reset},
		{statusErr(13, "grpc: failed to unmarshal the received message: proto: cannot parse"), load.Other},
		{statusErr(13, "database on fire"), load.Status},
		{statusErr(4, "deadline from the server"), load.Status},
	} {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.err, got, tc.want)
		}
	}
}

// TestGenerateOpenLoop: the gRPC load takes the core's open loop as the
// HTTP load does: 200 ms at 100 calls a second is 20 calls due.
func TestGenerateOpenLoop(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{reflection: "v1"})
	req := load.Request{Class: "echo", Target: "bench.v1.Bench/Echo", Body: []byte(`{"text":"hello","n":7}`)}
	r, err := generate(t, ts.addr, req, 4, func(l *Load) { l.Rate = 100 })
	if err != nil {
		t.Fatal(err)
	}
	if r.Rate != 100 || r.Asked != 20 || r.Requests+r.InFlight+r.Unsent != r.Asked || r.ErrorCount() != 0 {
		t.Errorf("rate %v asked %d: %d calls, %d in flight, %d unsent, errors %v", r.Rate, r.Asked, r.Requests, r.InFlight, r.Unsent, r.Errors)
	}
}
