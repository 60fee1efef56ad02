package grpcload

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// Dial opens a client connection to target the way the load generator
// does (plaintext, no retries, calls fail fast instead of waiting for a
// connection, no limit on the response size): for the agreement probe
// and preflight checks. The connection is made lazily.
func Dial(target string) (*grpc.ClientConn, error) {
	return dial(target)
}

func dial(target string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(dialTarget(target),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.WaitForReady(false), grpc.MaxCallRecvMsgSize(math.MaxInt32)),
		grpc.WithDisableRetry(),
		grpc.WithUserAgent("benchgate"),
		// A target that is still starting is retried soon, not after
		// grpc-go's default second and more.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 5 * time.Second,
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("grpc target %q: %w", target, err)
	}
	return conn, nil
}

// dialTarget is target as grpc.NewClient wants it: host:port goes to the
// address as it is (passthrough), a URI such as unix:///path or
// dns:///host:port is left to its resolver.
func dialTarget(target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "unix:") {
		return target
	}
	return "passthrough:///" + target
}

// WaitHealthy polls target's standard health service
// (grpc.health.v1.Health/Check for service, "" for the whole server)
// until it answers SERVING. A server without the health service (it
// answers Unimplemented) is healthy once a connection to it is ready,
// which such an answer proves. The wait is bounded by ctx; the error then
// says what the last attempt found.
func WaitHealthy(ctx context.Context, target string, service string) error {
	conn, err := dial(target)
	if err != nil {
		return err
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	req := &healthpb.HealthCheckRequest{Service: service}
	delay := 20 * time.Millisecond
	last := "no answer yet"
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := client.Check(cctx, req)
		cancel()
		switch {
		case err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING:
			return nil
		case err == nil:
			last = "health status " + resp.GetStatus().String()
		case status.Code(err) == codes.Unimplemented:
			return nil // no health service, but the server answered
		case status.Code(err) == codes.NotFound:
			last = fmt.Sprintf("the health service does not know service %q", service)
		case ctx.Err() != nil || past(ctx):
			// The call was cut by ctx, not refused by the target: what
			// the target last said is still the news. (grpc-go times a
			// call out by its own clock, a moment before ctx says so.)
		default:
			last = status.Convert(err).Message()
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("grpc target %s not healthy: %s: %w", target, last, ctx.Err())
		case <-t.C:
		}
		delay = min(delay*2, 250*time.Millisecond)
	}
}

// past says whether ctx's deadline has passed.
func past(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}
