package profiler

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/profdiff"
	"github.com/google/pprof/profile"
)

// busy is the path of testdata/busy, built once.
var busy string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "profiler-test-")
	if err != nil {
		panic(err)
	}
	busy = filepath.Join(dir, "busy")
	if out, err := exec.Command("go", "build", "-o", busy, "./testdata/busy").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building testdata/busy: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startChild starts the child and returns its pid and address; it ends
// with the test.
func startChild(t *testing.T) (int, string) {
	t.Helper()
	cmd := exec.Command(busy)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid, strings.TrimSpace(addr)
}

// hasBusyWork says whether busyWork is the leaf of some sample.
func hasBusyWork(t *testing.T, p *profile.Profile) bool {
	t.Helper()
	d, err := profdiff.Compute(profdiff.Side{Profile: p, Units: 1}, profdiff.Side{Profile: p, Units: 1}, profdiff.Options{})
	if err != nil {
		return false
	}
	for _, f := range d.Funcs {
		if f.Name == "main.busyWork" && f.Flat.BaseSamples > 0 {
			return true
		}
	}
	return false
}

// Each source is given a longer window, up to half a minute, until the
// child's busyWork shows in its profile: a loaded machine may give the
// child little CPU, and how little is not what is tested.
func TestPProf(t *testing.T) {
	t.Parallel()
	_, addr := startChild(t)
	for d := time.Second; ; d *= 2 {
		p, err := PProf(t.Context(), http.DefaultClient, "http://"+addr+"/debug/pprof/profile", d)
		if err != nil {
			t.Fatal(err)
		}
		if hasBusyWork(t, p) {
			return
		}
		if d >= 30*time.Second {
			t.Fatalf("no busyWork in %d samples of %v", len(p.Sample), d)
		}
	}
}

func TestPProfErrors(t *testing.T) {
	t.Parallel()
	_, addr := startChild(t)
	ctx := t.Context()
	for _, c := range []struct{ url, want string }{
		{"http://" + addr + "/nope", "answered 404 Not Found"},
		{"http://" + addr + "/debug/pprof/cmdline", "not a profile"},
		{"http://127.0.0.1:1/debug/pprof/profile", "connection refused"},
		{"http://%zz", "invalid URL escape"},
	} {
		_, err := PProf(ctx, http.DefaultClient, c.url, time.Second)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "pprof endpoint") {
			t.Errorf("%s: got %v, want %q", c.url, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := PProf(ctx, http.DefaultClient, "http://"+addr+"/debug/pprof/profile", time.Second); err == nil {
		t.Error("a cancelled context: no error")
	}
}

func TestSeconds(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int
	}{{0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {1500 * time.Millisecond, 2}, {10 * time.Second, 10}} {
		if got := Seconds(c.d); got != c.want {
			t.Errorf("Seconds(%v) = %d, want %d", c.d, got, c.want)
		}
	}
}

func TestPerf(t *testing.T) {
	t.Parallel()
	if err := PerfUsable(); err != nil {
		t.Skipf("perf cannot profile here: %v", err)
	}
	pid, _ := startChild(t)
	for d := time.Second; ; d *= 2 {
		p, err := Perf(t.Context(), []int{pid}, d, t.TempDir())
		if err != nil && !strings.Contains(err.Error(), "no samples") {
			t.Fatal(err)
		}
		if err == nil {
			if p.Period != PerfPeriod || p.DurationNanos != d.Nanoseconds() {
				t.Errorf("period %d, duration %d", p.Period, p.DurationNanos)
			}
			if hasBusyWork(t, p) {
				return
			}
		}
		if d >= 30*time.Second {
			t.Fatalf("no busyWork in perf's profile of %v: %v", d, err)
		}
	}
}

func TestPerfErrors(t *testing.T) {
	t.Parallel()
	if err := PerfUsable(); err != nil {
		t.Skipf("perf cannot profile here: %v", err)
	}
	if _, err := Perf(t.Context(), nil, time.Second, t.TempDir()); err == nil || !strings.Contains(err.Error(), "no process") {
		t.Errorf("no pids: %v", err)
	}
	// A process that is gone.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := Perf(t.Context(), []int{cmd.Process.Pid}, time.Second, t.TempDir()); err == nil {
		t.Error("a process that is gone: no error")
	}
}
