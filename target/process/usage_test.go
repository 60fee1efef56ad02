package process

import (
	"fmt"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/internal/linux"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/targettest"
)

// TestProcTicks: a process's CPU in /proc mode is its own and its reaped
// children's, user and system; clockTicks converts it.
func TestProcTicks(t *testing.T) {
	t.Parallel()
	line := "4242 (a b) (c)) S 7 4240 4240 0 -1 4194560 100 0 0 0 12 3 40 5 20 0 1 0 99 1000 50 18446744073709551615\n"
	st, err := linux.ParseProcStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if got := procTicks(st); got != 12+3+40+5 {
		t.Errorf("procTicks = %d, want %d", got, 12+3+40+5)
	}
	if clockTicks <= 0 {
		t.Errorf("clockTicks %v", clockTicks)
	}
}

// TestTargetUsage drives CPU into a target and reads it back, once with
// no pins (Source "proc") and once in a memory cgroup where this machine
// allows one.
func TestTargetUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		pins *scenario.Pins
	}{
		{"proc", nil},
		{"cgroup", &scenario.Pins{Memory: 256 << 20, MemoryText: "256MiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := New(targettest.ServerSpec("baseline", "-spawn"), target.Options{OutDir: t.TempDir(), Pins: tc.pins})
			if err := tg.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			defer tg.Stop()
			want := "proc"
			if tc.pins != nil {
				if tg.cg == nil {
					_, notApplied := tg.Pins()
					t.Skipf("memory pin not applied here: %q", notApplied)
				}
				if tg.cg.CPUDir != "" {
					want = "cgroup"
				}
			}
			u0, ok := tg.Usage()
			if !ok {
				t.Fatal("Usage not ok")
			}
			for i := 0; i < 20; i++ {
				if code, body, err := get(t, tg.URL()+"/burn?ms=10"); code != 200 || err != nil {
					t.Fatalf("GET /burn: %d %q %v", code, body, err)
				}
			}
			u1, ok := tg.Usage()
			if !ok {
				t.Fatal("Usage not ok")
			}
			t.Logf("before %+v, after 20 burns %+v", u0, u1)
			if u0.Source != want || u1.Source != want {
				t.Errorf("sources %q, %q, want %q", u0.Source, u1.Source, want)
			}
			if u1.CPUSeconds <= 0 || u1.CPUSeconds < u0.CPUSeconds {
				t.Errorf("CPU went from %v to %v", u0.CPUSeconds, u1.CPUSeconds)
			}
			if u1.Mem <= 0 {
				t.Errorf("Mem %d", u1.Mem)
			}
			// A child that burns 200ms of CPU (by its own count) and exits
			// between two readings: its CPU must not be lost. The bound
			// allows for /proc's times being truncated to clock ticks.
			if code, body, err := get(t, tg.URL()+"/spawn-burn?ms=200"); code != 200 || err != nil {
				t.Fatalf("GET /spawn-burn: %d %q %v", code, body, err)
			}
			u2, _ := tg.Usage()
			if d := u2.CPUSeconds - u1.CPUSeconds; d < 0.2-2/clockTicks {
				t.Errorf("a child's 200ms of CPU added %.3fs", d)
			}
			if err := tg.Stop(); err != nil {
				t.Fatal(err)
			}
			if u, ok := tg.Usage(); ok {
				t.Errorf("Usage after Stop: %+v", u)
			}
		})
	}
}

func BenchmarkUsage(b *testing.B) {
	for _, bc := range []struct {
		name string
		pins *scenario.Pins
	}{
		{"proc", nil},
		{"cgroup", &scenario.Pins{Memory: 256 << 20}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tg := New(targettest.ServerSpec("baseline", "-spawn"), target.Options{OutDir: b.TempDir(), Pins: bc.pins})
			if err := tg.Start(b.Context()); err != nil {
				b.Fatal(err)
			}
			defer tg.Stop()
			u, ok := tg.Usage()
			if !ok || !strings.HasPrefix(bc.name, u.Source) {
				_, notApplied := tg.Pins()
				b.Skip(fmt.Sprintf("reads %q here (%q)", u.Source, notApplied))
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := tg.Usage(); !ok {
					b.Fatal("Usage not ok")
				}
			}
		})
	}
}
