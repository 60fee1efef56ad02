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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/benchgate/benchgate/profdiff"
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

// Perf records pids (every thread of each, the threads they start while
// recorded too) for d with perf record's cpu-clock event every
// PerfPeriod of CPU with call stacks, and reads the record with perf
// script. dir holds perf's data file, removed after.
func Perf(ctx context.Context, pids []int, d time.Duration, dir string) (*profile.Profile, error) {
	if len(pids) == 0 {
		return nil, errors.New("perf: no process to record")
	}
	f, err := os.CreateTemp(dir, "perf-*.data")
	if err != nil {
		return nil, fmt.Errorf("perf: %w", err)
	}
	data := f.Name()
	f.Close()
	defer os.Remove(data)
	defer os.Remove(data + ".old")
	ps := make([]string, len(pids))
	for i, p := range pids {
		ps[i] = strconv.Itoa(p)
	}
	var stderr bytes.Buffer
	rec := exec.CommandContext(ctx, "perf", "record", "-q", "-e", "cpu-clock", "-c", strconv.Itoa(PerfPeriod), "-g",
		"-p", strings.Join(ps, ","), "-o", data)
	rec.Stderr = &stderr
	// perf writes its data when interrupted; a cancelled ctx kills it.
	rec.Cancel = func() error { return rec.Process.Kill() }
	if err := rec.Start(); err != nil {
		return nil, fmt.Errorf("perf record: %w", err)
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
		_ = rec.Process.Signal(syscall.SIGINT)
	case <-ctx.Done():
		t.Stop()
	}
	if err := rec.Wait(); err != nil && ctx.Err() == nil && !interrupted(err) {
		return nil, fmt.Errorf("perf record: %w: %s", err, textsafe.Quote(stderr.String(), textsafe.QuoteRunes))
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var out bytes.Buffer
	script := exec.CommandContext(ctx, "perf", "script", "-i", data, "-F", profdiff.PerfFields)
	script.Stdout = &limitWriter{w: &out, n: MaxPerfScriptBytes}
	stderr.Reset()
	script.Stderr = &stderr
	if err := script.Run(); err != nil {
		return nil, fmt.Errorf("perf script: %w: %s", err, textsafe.Quote(stderr.String(), textsafe.QuoteRunes))
	}
	p, err := profdiff.ParsePerf(&out)
	if err != nil {
		return nil, fmt.Errorf("perf of %s: %w", filepath.Base(data), err)
	}
	p.DurationNanos = d.Nanoseconds()
	return p, nil
}

// interrupted says whether perf record ended by the SIGINT that stops it.
func interrupted(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
		return true
	}
	return ee.ExitCode() == 130 || ee.ExitCode() == 0
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
