package runner

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/benchgate/benchgate/target"
)

// at is a service that only says where it answers.
type at struct {
	target.Service
	url string
}

func (s at) URL() string { return s.url }

// TestPProfURL: an HTTP target's pprof endpoint is its path on the
// target's address; a gRPC target's address is no HTTP server's, and the
// protocol says so rather than profile nothing.
func TestPProfURL(t *testing.T) {
	t.Parallel()
	u, err := httpProtocol{}.pprofURL(at{url: "http://127.0.0.1:9/"}, "/debug/pprof/profile")
	if err != nil || u != "http://127.0.0.1:9/debug/pprof/profile" {
		t.Errorf("http: %q, %v", u, err)
	}
	if _, err := (&grpcProtocol{}).pprofURL(at{url: "127.0.0.1:9"}, "/debug/pprof/profile"); err == nil || !strings.Contains(err.Error(), "a gRPC target's address is not an HTTP server's") {
		t.Errorf("grpc: %v", err)
	}
}

// TestProtocolHealth: an HTTP target's health is target's GET of its
// health path (no probe of the protocol's); a gRPC target's is the
// standard health service at its address, which a gRPC server answers and
// an HTTP/1 server does not.
func TestProtocolHealth(t *testing.T) {
	t.Parallel()
	if (httpProtocol{}).health() != nil {
		t.Error("the HTTP protocol has a probe of its own")
	}
	probe := (&grpcProtocol{}).health()
	if probe == nil {
		t.Fatal("the gRPC protocol has no probe")
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(lis)
	defer srv.Stop()
	if err := probe(t.Context(), "http://"+lis.Addr().String()); err != nil {
		t.Errorf("a gRPC server with the health service: %v", err)
	}
	h1 := httptest.NewServer(http.NotFoundHandler())
	defer h1.Close()
	if err := probe(t.Context(), h1.URL); err == nil {
		t.Error("an HTTP/1 server passed the gRPC health check")
	}
}
