package linux

import (
	"errors"
	"runtime"
	"testing"
)

func TestRequired(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ goos, goarch, want string }{
		{"darwin", "arm64", "running targets needs Linux (this is darwin/arm64); compare, merge and history work here"},
		{"windows", "amd64", "running targets needs Linux (this is windows/amd64); compare, merge and history work here"},
	} {
		err := required(tc.goos, tc.goarch)
		if got := err.Error(); got != tc.want {
			t.Errorf("required(%q, %q) = %q, want %q", tc.goos, tc.goarch, got, tc.want)
		}
		if !errors.Is(err, ErrRequired) {
			t.Errorf("required(%q, %q) is not ErrRequired", tc.goos, tc.goarch)
		}
	}
	if got, want := Required().Error(), required(runtime.GOOS, runtime.GOARCH).Error(); got != want {
		t.Errorf("Required() = %q, want this system's %q", got, want)
	}
}
