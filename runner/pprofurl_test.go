package runner

import (
	"strings"
	"testing"

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
	if _, err := (grpcProtocol{}).pprofURL(at{url: "127.0.0.1:9"}, "/debug/pprof/profile"); err == nil || !strings.Contains(err.Error(), "a gRPC target's address is not an HTTP server's") {
		t.Errorf("grpc: %v", err)
	}
}
