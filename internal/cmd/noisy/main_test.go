package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func testConfig(duty float64, seed uint64, cpus ...int) config {
	return config{Duty: duty, Min: 100 * time.Millisecond, Max: 1500 * time.Millisecond, CPUs: cpus, Seed: seed}
}

// Over a long horizon the schedule spends the duty's share of wall time
// in bursts. The schedule is a function of the seed, so these are fixed
// numbers, not a chance of passing: about 10 hours of schedule each.
func TestScheduleDuty(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		duty float64
		seed uint64
		cpus []int
	}{
		{0.3, 7, []int{0, 1}},
		{0.3, 8, []int{0, 1}},
		{0.1, 1, []int{0}},
		{0.5, 2, []int{0, 1, 2, 3}},
		{0.9, 3, []int{1}},
		{1, 4, []int{0, 1}},
	} {
		s := newSchedule(testConfig(c.duty, c.seed, c.cpus...))
		var busy, total time.Duration
		for range 10000 {
			b := s.next()
			busy += b.Length
			total += b.Wait + b.Length
		}
		got := busy.Seconds() / total.Seconds()
		if d := got - c.duty; d < -0.01 || d > 0.01 {
			t.Errorf("duty %v seed %d: %.4f of %.0fs in bursts, want %v ± 0.01", c.duty, c.seed, got, total.Seconds(), c.duty)
		}
		if c.duty == 1 && busy != total {
			t.Errorf("duty 1 seed %d: idles %v", c.seed, total-busy)
		}
	}
}

// Every burst's length is within [min, max] and its CPUs a non-empty,
// sorted subset of the allowed ones without repeats; every subset occurs,
// about equally often.
func TestScheduleBursts(t *testing.T) {
	t.Parallel()
	cfg := testConfig(0.3, 7, 0, 2, 5)
	s := newSchedule(cfg)
	seen := map[string]int{}
	var short, long bool
	const n = 7000
	for range n {
		b := s.next()
		if b.Length < cfg.Min || b.Length > cfg.Max {
			t.Fatalf("burst of %v, want within [%v, %v]", b.Length, cfg.Min, cfg.Max)
		}
		short = short || b.Length < cfg.Min+100*time.Millisecond
		long = long || b.Length > cfg.Max-100*time.Millisecond
		if b.Wait < 0 {
			t.Fatalf("negative wait %v", b.Wait)
		}
		if len(b.CPUs) == 0 || !slices.IsSorted(b.CPUs) || len(slices.Compact(slices.Clone(b.CPUs))) != len(b.CPUs) {
			t.Fatalf("burst CPUs %v: want a non-empty sorted list without repeats", b.CPUs)
		}
		for _, c := range b.CPUs {
			if !slices.Contains(cfg.CPUs, c) {
				t.Fatalf("burst on CPU %d, not among %v", c, cfg.CPUs)
			}
		}
		seen[joinInts(b.CPUs)]++
	}
	if !short || !long {
		t.Errorf("lengths do not span [min, max]: short %v, long %v", short, long)
	}
	// 7 non-empty subsets of 3 CPUs, 1000 draws each expected.
	if len(seen) != 7 {
		t.Errorf("subsets drawn: %v, want all 7", seen)
	}
	for k, v := range seen {
		if v < 850 || v > 1150 {
			t.Errorf("subset %s drawn %d times of %d, want about %d", k, v, n, n/7)
		}
	}
}

// The same seed gives the same schedule; another seed another.
func TestScheduleSeeded(t *testing.T) {
	t.Parallel()
	draw := func(seed uint64) []burst {
		s := newSchedule(testConfig(0.3, seed, 0, 1))
		var out []burst
		for range 50 {
			out = append(out, s.next())
		}
		return out
	}
	eq := func(a, b []burst) bool {
		return slices.EqualFunc(a, b, func(x, y burst) bool {
			return x.Wait == y.Wait && x.Length == y.Length && slices.Equal(x.CPUs, y.CPUs)
		})
	}
	if !eq(draw(7), draw(7)) {
		t.Error("seed 7 gave two schedules")
	}
	if eq(draw(7), draw(8)) {
		t.Error("seeds 7 and 8 gave the same schedule")
	}
}

func TestParseCPUList(t *testing.T) {
	t.Parallel()
	allowed := []int{0, 1, 3}
	got, err := parseCPUList("3, 0,3", allowed)
	if err != nil || !slices.Equal(got, []int{0, 3}) {
		t.Errorf("parseCPUList(3, 0,3) = %v, %v; want [0 3]", got, err)
	}
	for in, want := range map[string]string{
		"0-1": `"0-1" is not a CPU number`,
		"":    `"" is not a CPU number`,
		"1,":  `"" is not a CPU number`,
		"-1":  `"-1" is not a CPU number`,
		"+1":  `"+1" is not a CPU number`,
		"2":   "this process may not run on CPU 2 (it may on 0,1,3)",
	} {
		if _, err := parseCPUList(in, allowed); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseCPUList(%q): %v, want an error with %s", in, err, want)
		}
	}
}

func TestFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-duty", "0"},
		{"-duty", "1.5"},
		{"-for", "0s"},
		{"-for", "48h"},
		{"-min", "2s", "-max", "1s"},
		{"-min", "0s"},
		{"-cpus", "x"},
		{"extra"},
	} {
		var stderr strings.Builder
		err := run(context.Background(), args, &stderr)
		var ue usageError
		if !errors.As(err, &ue) || ue.code != 2 {
			t.Errorf("noisy %v: %v, want a usage error with code 2", args, err)
		}
	}
}
