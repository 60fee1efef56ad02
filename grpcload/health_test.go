package grpcload

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

func statusErr(c codes.Code, msg string) error { return status.Error(c, msg) }

func TestWaitHealthy(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{health: true})
	if err := WaitHealthy(testCtx(t), ts.addr, ""); err != nil {
		t.Fatal(err)
	}

	// NOT_SERVING until it flips.
	ts.health.SetServingStatus("bench.v1.Bench", healthpb.HealthCheckResponse_NOT_SERVING)
	time.AfterFunc(100*time.Millisecond, func() {
		ts.health.SetServingStatus("bench.v1.Bench", healthpb.HealthCheckResponse_SERVING)
	})
	begin := time.Now()
	if err := WaitHealthy(testCtx(t), ts.addr, "bench.v1.Bench"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d < 100*time.Millisecond {
		t.Errorf("healthy after %v, before the service said SERVING", d)
	}

	// Bounded by ctx, saying what it saw: the last answer, not the
	// deadline that cut the call after it.
	ts.health.SetServingStatus("bench.v1.Admin", healthpb.HealthCheckResponse_NOT_SERVING)
	for _, tc := range []struct{ service, want string }{
		{"bench.v1.Admin", "NOT_SERVING"},
		{"nope.Service", `does not know service "nope.Service"`},
	} {
		t.Run(tc.service, func(t *testing.T) {
			t.Parallel()
			err := untilAnswered(200*time.Millisecond, func(ctx context.Context) error { return WaitHealthy(ctx, ts.addr, tc.service) })
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ts.addr) {
				t.Errorf("got %v, want an error naming %s and saying %s", err, ts.addr, tc.want)
			}
		})
	}
}

// untilAnswered runs wait with a deadline of d, doubled up to a minute
// while the wait ended before the target answered at all: how long one
// answer takes on a loaded machine is not what these tests test, what the
// error says once it answered is.
func untilAnswered(d time.Duration, wait func(ctx context.Context) error) error {
	for ; ; d *= 2 {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		err := wait(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "no answer yet") || d >= time.Minute {
			return err
		}
	}
}

func TestWaitHealthyWithoutHealthService(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{})
	if err := WaitHealthy(testCtx(t), ts.addr, ""); err != nil {
		t.Fatal(err)
	}
}

// A server that starts late is found (dial's backoff of 50 ms, not
// grpc-go's default second, makes it soon after: not timed here, the
// machine's speed is not the test's).
func TestWaitHealthyLateServer(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	srv := grpc.NewServer()
	defer srv.Stop()
	time.AfterFunc(200*time.Millisecond, func() {
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		go srv.Serve(lis)
	})
	if err := WaitHealthy(testCtx(t), addr, ""); err != nil {
		t.Fatal(err)
	}

	lis, _ = net.Listen("tcp", "127.0.0.1:0")
	down := lis.Addr().String()
	lis.Close()
	err = untilAnswered(200*time.Millisecond, func(ctx context.Context) error { return WaitHealthy(ctx, down, "") })
	if err == nil || !strings.Contains(err.Error(), "not healthy") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("down: %v", err)
	}
}
