package target

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/benchgate/benchgate/scenario"
)

// TestHealthPathGRPC: an HTTP target whose health path happens to end in
// /grpc is checked over HTTP; health: grpc is a protocol's probe's, never
// a GET.
func TestHealthPathGRPC(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/status/grpc" {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	hc := srv.Client()
	if err := getHealth(t.Context(), hc, srv.URL, "/status/grpc"); err != nil {
		t.Errorf("HTTP health /status/grpc: %v", err)
	}
	if err := getHealth(t.Context(), hc, srv.URL, "/nope"); err == nil {
		t.Error("a 404 health path passed")
	}
	if err := getHealth(t.Context(), hc, srv.URL, scenario.HealthGRPC); err == nil {
		t.Error("health grpc passed without the protocol's probe")
	}
}
