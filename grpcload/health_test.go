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
	if d := time.Since(begin); d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("healthy after %v", d)
	}

	// Bounded by ctx, saying what it saw: the last answer, not the
	// deadline that cut the call after it. The deadline is long enough
	// for one answer on a loaded machine; the two waits, which each last
	// it, run side by side.
	ts.health.SetServingStatus("bench.v1.Admin", healthpb.HealthCheckResponse_NOT_SERVING)
	for _, tc := range []struct{ service, want string }{
		{"bench.v1.Admin", "NOT_SERVING"},
		{"nope.Service", `does not know service "nope.Service"`},
	} {
		t.Run(tc.service, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			err := WaitHealthy(ctx, ts.addr, tc.service)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ts.addr) {
				t.Errorf("got %v, want an error naming %s and saying %s", err, ts.addr, tc.want)
			}
		})
	}
}

func TestWaitHealthyWithoutHealthService(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{})
	if err := WaitHealthy(testCtx(t), ts.addr, ""); err != nil {
		t.Fatal(err)
	}
}

// A server that starts late is found soon after, not after grpc-go's
// default reconnect backoff.
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
	begin := time.Now()
	if err := WaitHealthy(testCtx(t), addr, ""); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("healthy after %v", d)
	}

	// Long enough for one refused attempt on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	lis, _ = net.Listen("tcp", "127.0.0.1:0")
	down := lis.Addr().String()
	lis.Close()
	err = WaitHealthy(ctx, down, "")
	if err == nil || !strings.Contains(err.Error(), "not healthy") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("down: %v", err)
	}
}
