// Package profiler takes a CPU profile of a target while it serves a
// cell's load, from one of two sources, both giving a
// github.com/google/pprof/profile Profile that profdiff diffs:
//
//   - a Go service's net/http/pprof endpoint (PProf): works for any
//     target the load reaches (process, container, stack, url), since the
//     profile comes over the same network;
//   - perf record of a process target's process group on Linux (Perf),
//     a software clock event (cpu-clock, every 10 ms of CPU), so no
//     hardware counter is needed; perf script's text is read by
//     profdiff.ParsePerf.
//
// A source that cannot work here says why (PerfUsable); the caller shows
// it and goes on: a profile is never a reason for a run to fail.
package profiler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/google/pprof/profile"
)

// MaxProfileBytes bounds a profile read from a target (compressed), and
// MaxPerfScriptBytes the text perf script writes.
const (
	MaxProfileBytes    = 64 << 20
	MaxPerfScriptBytes = 512 << 20
)

// PerfPeriod is the CPU time between two perf samples, in nanoseconds:
// 10 ms, as Go's own profiler's 100 Hz.
const PerfPeriod = 10_000_000

// PProf asks a net/http/pprof endpoint (base, a URL such as
// http://127.0.0.1:8080/debug/pprof/profile) for a CPU profile of d,
// rounded up to whole seconds as the endpoint counts them. ctx bounds
// the call; the endpoint answers once its seconds are over.
func PProf(ctx context.Context, client *http.Client, base string, d time.Duration) (*profile.Profile, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("pprof endpoint %s: %w", textsafe.Quote(base, textsafe.QuoteRunes), err)
	}
	q := u.Query()
	q.Set("seconds", strconv.Itoa(Seconds(d)))
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("pprof endpoint %s: %w", textsafe.Quote(base, textsafe.QuoteRunes), err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("pprof endpoint %s: %w", textsafe.Quote(base, textsafe.QuoteRunes), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxProfileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("pprof endpoint %s: reading the profile: %w", textsafe.Quote(base, textsafe.QuoteRunes), err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("pprof endpoint %s answered %s: %s", textsafe.Quote(base, textsafe.QuoteRunes), resp.Status, textsafe.Quote(string(body), textsafe.QuoteRunes))
	}
	if len(body) > MaxProfileBytes {
		return nil, fmt.Errorf("pprof endpoint %s: a profile over %d MiB", textsafe.Quote(base, textsafe.QuoteRunes), MaxProfileBytes>>20)
	}
	p, err := profile.ParseData(body)
	if err != nil {
		return nil, fmt.Errorf("pprof endpoint %s: not a profile: %w", textsafe.Quote(base, textsafe.QuoteRunes), err)
	}
	return p, nil
}

// Seconds is d in the whole seconds a pprof endpoint takes, at least 1.
func Seconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

// PerfUsable says why perf cannot profile a process here, nil when it
// can: no perf on PATH, or the kernel's perf_event_paranoid above what an
// unprivileged user needs for their own processes (2 allows it; 3 or
// more, as some distributions set, allows nothing).
func PerfUsable() error {
	if _, err := exec.LookPath("perf"); err != nil {
		return errors.New("perf is not installed (Debian and Ubuntu: apt-get install linux-perf or linux-tools-$(uname -r))")
	}
	if b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 2 && os.Geteuid() != 0 {
			return fmt.Errorf("kernel.perf_event_paranoid is %d: perf may not profile even your own processes (sudo sysctl kernel.perf_event_paranoid=2)", n)
		}
	}
	return nil
}

// Perf records pids for d: StartPerf, Enable, d, Disable, Stop.
func Perf(ctx context.Context, pids []int, d time.Duration, dir string) (*profile.Profile, error) {
	r, err := StartPerf(ctx, pids, dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := r.Enable(ctx); err != nil {
		return nil, err
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		return nil, ctx.Err()
	}
	if err := r.Disable(ctx); err != nil {
		return nil, err
	}
	p, err := r.Stop(ctx)
	if err != nil {
		return nil, err
	}
	p.DurationNanos = d.Nanoseconds()
	return p, nil
}

// limitWriter keeps the first n bytes and fails past them.
type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, fmt.Errorf("perf script wrote more than %d MiB", MaxPerfScriptBytes>>20)
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}
