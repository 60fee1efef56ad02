package runner

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/process"
	"github.com/benchgate/benchgate/target/targettest"
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
	target.Service
	spike  func() error
	calls  int
	err    error
	maxMem int64 // the largest Mem of the readings
}

func (s *spikeAfterFirst) Usage() (target.Usage, bool) {
	u, ok := s.Service.Usage()
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
func testWindowPeak(t *testing.T, svc target.Service) {
	t.Helper()
	const spike = spikeMiB << 20
	sp := &spikeAfterFirst{Service: svc, spike: func() error {
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
	t.Parallel()
	pins := &scenario.Pins{Memory: 256 << 20, MemoryText: "256MiB"}
	tg := process.New(targettest.ServerSpec("baseline"), target.Options{OutDir: t.TempDir(), Pins: pins})
	if err := tg.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer tg.Stop()
	applied, notApplied := tg.Pins()
	if u, _ := tg.Usage(); u.Source != "cgroup" {
		// No memory pin here, or v1 without cpuacct: Usage reads /proc,
		// which has no peak to compare.
		t.Skipf("Usage reads %q (pins applied %q, not applied %q)", u.Source, applied, notApplied)
	}
	if tg.ResetMemPeak() == nil {
		t.Skipf("the kernel's peak of the target's cgroup cannot be reset here (%q; v2 needs Linux 6.12)", applied)
	}
	t.Logf("pins %q", applied)
	testWindowPeak(t, tg)
	if err := tg.Stop(); err != nil {
		t.Fatal(err)
	}
	if tg.ResetMemPeak() != nil {
		t.Error("ResetMemPeak after Stop: not nil")
	}
}

func TestWindowPeak(t *testing.T) {
	t.Parallel()
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

// lateReadings is a service measured as the engine's stats stream measures
// it: each reading is the one of the last tick, taken lag before the call,
// with CPU growing at rate CPU seconds per second since t0. frozen, when
// set, is returned instead: a stream that stopped delivering.
type lateReadings struct {
	target.Service
	t0     time.Time
	rate   float64
	lag    time.Duration
	tick   time.Duration
	frozen *target.Usage
}

func (l *lateReadings) Usage() (target.Usage, bool) {
	if l.frozen != nil {
		return *l.frozen, true
	}
	at := l.t0.Add(time.Since(l.t0) - l.lag).Truncate(0)
	at = l.t0.Add(at.Sub(l.t0) / l.tick * l.tick)
	return target.Usage{Source: "docker", CPUSeconds: l.rate * at.Sub(l.t0).Seconds(), Mem: 1 << 20, At: at}, true
}

func (l *lateReadings) ResetMemPeak() func() (int64, bool) { return nil }

// TestSampleLateReadings checks that readings taken before the call (At)
// give the window's CPU by rate, whatever tick the edges fell in, and that
// a window no reading was taken in is left unmeasured.
func TestSampleLateReadings(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	svc := &lateReadings{t0: t0, rate: 0.5, lag: 300 * time.Millisecond, tick: 100 * time.Millisecond}
	from := t0.Add(50 * time.Millisecond)
	to := from.Add(600 * time.Millisecond)
	w := <-sampleUsage(context.Background(), svc, from, to, sampleEvery)
	// A plain difference of the readings current at the edges would give
	// 0.5 × (span between their ticks), which is not 0.3 here.
	if !w.ok || w.source != "docker" || math.Abs(w.cpu-0.3) > 1e-9 {
		t.Errorf("window %+v: want measured, CPU 0.3 s (0.5 CPU for 600ms)", w)
	}

	frozen := &target.Usage{Source: "docker", CPUSeconds: 7, Mem: 1 << 20, At: time.Now()}
	svc = &lateReadings{frozen: frozen}
	from = time.Now().Add(10 * time.Millisecond)
	w = <-sampleUsage(context.Background(), svc, from, from.Add(100*time.Millisecond), sampleEvery)
	if w.ok || w.source != "" || w.cpu != 0 {
		t.Errorf("window without a fresh reading: %+v, want unmeasured", w)
	}
}

func TestStaleWindowCPU(t *testing.T) {
	t.Parallel()
	base := time.Unix(1000, 0)
	at := func(ms int, cpu float64) target.Usage {
		return target.Usage{CPUSeconds: cpu, At: base.Add(time.Duration(ms) * time.Millisecond)}
	}
	from, to := base.Add(time.Second), base.Add(3*time.Second)
	for _, c := range []struct {
		name       string
		start, end target.Usage
		cpu        float64
		ok         bool
	}{
		{"bracketing readings", at(800, 1), at(2800, 2), 1, true},         // 0.5/s over 2s
		{"span longer than the window", at(900, 0), at(2900, 4), 4, true}, // 2/s
		{"readings inside", at(1200, 1), at(2200, 1.25), 0.5, true},       // 0.25/s
		{"no reading in the window", at(200, 1), at(900, 2), 0, false},    // ends before from
		{"one reading only", at(1500, 1), at(1500, 1), 0, false},          // no span
		{"counter went back", at(1100, 5), at(2100, 4), 0, true},          // restarted: not negative
	} {
		cpu, ok := staleWindowCPU(c.start, c.end, from, to)
		if ok != c.ok || math.Abs(cpu-c.cpu) > 1e-9 {
			t.Errorf("%s: staleWindowCPU = %v, %v; want %v, %v", c.name, cpu, ok, c.cpu, c.ok)
		}
	}
}
