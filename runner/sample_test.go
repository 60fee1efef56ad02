package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/benchgate/benchgate/scenario"
)

// spikeMiB is the size of the memory spike the window-peak tests cause:
// far above what the test server holds otherwise, well under its pin.
const spikeMiB = 64

// spikeAfterFirst is a service whose first Usage reading is followed,
// before it returns, by a request that allocates, holds and frees memory.
// The spike then lies between two readings of the window by construction,
// however fast or slow the machine: no reading can see it, only the
// kernel's watermark.
type spikeAfterFirst struct {
	service
	spike  func() error
	calls  int
	err    error
	maxMem int64 // the largest Mem of the readings
}

func (s *spikeAfterFirst) Usage() (Usage, bool) {
	u, ok := s.service.Usage()
	if ok {
		s.maxMem = max(s.maxMem, u.Mem)
	}
	s.calls++
	if s.calls == 1 {
		s.err = s.spike()
	}
	return u, ok
}

// httpGet returns the status of a GET of u. Unlike get it does not need
// the test: it runs in the sampler's goroutine.
func httpGet(u string) (int, error) {
	resp, err := http.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// testWindowPeak checks, on a started service measured through a cgroup
// whose watermark can be reset, that a window's peak has a spike no
// reading saw, and that the next window's peak no longer has it.
func testWindowPeak(t *testing.T, svc service) {
	t.Helper()
	const spike = spikeMiB << 20
	sp := &spikeAfterFirst{service: svc, spike: func() error {
		resp, err := httpGet(svc.URL() + fmt.Sprintf("/alloc?mb=%d", spikeMiB))
		if err == nil && resp != 200 {
			err = fmt.Errorf("GET /alloc: status %d", resp)
		}
		return err
	}}
	from := time.Now()
	w := <-sampleUsage(context.Background(), sp, from, from.Add(500*time.Millisecond), sampleEvery)
	if sp.err != nil {
		t.Fatal(sp.err)
	}
	t.Logf("window: %d readings, largest Mem %d; mean %d, peak %d, from the kernel %v", sp.calls, sp.maxMem, w.memMean, w.memPeak, w.kernelPeak)
	if !w.ok || !w.kernelPeak {
		t.Fatalf("window %+v: want it measured, with the kernel's peak", w)
	}
	if sp.maxMem >= spike {
		// The test's premise, not the code's: the spike is freed before
		// the next reading.
		t.Fatalf("a reading saw %d bytes: the spike was not between readings", sp.maxMem)
	}
	if w.memPeak < spike {
		t.Errorf("peak %d, want at least the spike's %d", w.memPeak, spike)
	}
	if w.memMean >= w.memPeak {
		t.Errorf("mean %d not below peak %d", w.memMean, w.memPeak)
	}

	// A window after the spike must not have it: the watermark is the
	// window's, not the cgroup's lifetime.
	read := svc.ResetMemPeak()
	if read == nil {
		t.Fatal("ResetMemPeak nil on the second window")
	}
	u, ok := svc.Usage()
	if !ok {
		t.Fatal("Usage not ok")
	}
	p, ok := read()
	if !ok {
		t.Fatal("reading the peak failed")
	}
	t.Logf("quiet window: kernel peak %d, %+v", p, u)
	if p-u.MemCache >= spike {
		t.Errorf("quiet window: kernel peak %d less cache %d still holds the spike", p, u.MemCache)
	}
}

// TestTargetWindowPeak measures a memory spike of a command target in its
// memory cgroup.
func TestTargetWindowPeak(t *testing.T) {
	pins := &scenario.Pins{Memory: 256 << 20, MemoryText: "256MiB"}
	tg := NewPinnedTarget(serverSpec("baseline"), t.TempDir(), pins)
	if err := tg.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer tg.Stop()
	if tg.cg == nil {
		_, notApplied := tg.Pins()
		t.Skipf("memory pin not applied here: %q", notApplied)
	}
	if tg.cg.cpuDir == "" {
		t.Skip("cgroup v1 without cpuacct: Usage reads /proc, which has no peak to compare")
	}
	if tg.ResetMemPeak() == nil {
		t.Skipf("the kernel's peak of %s cannot be reset here (cgroup v%d; v2 needs Linux 6.12)", cgroupPeakPath(tg.cg.version, tg.cg.memDir), tg.cg.version)
	}
	t.Logf("cgroup v%d", tg.cg.version)
	testWindowPeak(t, tg)
	if err := tg.Stop(); err != nil {
		t.Fatal(err)
	}
	if tg.ResetMemPeak() != nil {
		t.Error("ResetMemPeak after Stop: not nil")
	}
}

func TestWindowPeak(t *testing.T) {
	for _, c := range []struct{ sampled, kernel, cache, want int64 }{
		{100, 0, 0, 100},    // an odd watermark never lowers the readings' peak
		{100, 300, 50, 250}, // a spike between readings
		{100, 130, 50, 100}, // the cache's largest reading explains it
	} {
		if got := windowPeak(c.sampled, c.kernel, c.cache); got != c.want {
			t.Errorf("windowPeak(%d, %d, %d) = %d, want %d", c.sampled, c.kernel, c.cache, got, c.want)
		}
	}
}
