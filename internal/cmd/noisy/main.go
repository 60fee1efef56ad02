//go:build linux

// Command noisy is a noisy neighbour for measuring benchgate under noise: it
// burns CPU in random bursts on random CPUs at a given duty cycle, as other
// jobs on a shared CI runner do.
//
//	go run ./internal/cmd/noisy -duty 0.3 -for 10m -cpus 0,1 -seed 7
//
// Each burst lasts a random time drawn uniformly from [-min, -max] and
// runs on a random non-empty subset of the allowed CPUs, every subset
// equally likely (on two CPUs: CPU 0 alone, CPU 1 alone, or both, a third
// of the time each), so a burst sometimes hits one side of a comparison
// and sometimes everything. It spins one OS thread per chosen CPU, each
// pinned to its CPU with sched_setaffinity. Between bursts it idles for a
// random, exponentially distributed time whose mean makes the long-run
// share of wall time spent in a burst -duty: the bursts arrive at random
// moments rather than on a period a benchmark's own schedule could beat
// with. The schedule is a function of -seed (math/rand/v2's PCG), so a
// run can be repeated.
//
// It stops by itself after -for, and at SIGINT or SIGTERM, and then prints
// what it did: bursts, burst time and the duty cycle achieved.
//
// -cpus is a comma-separated list of CPU numbers ("0,1"); ranges ("0-1")
// are not read yet. Default: every CPU this process may run on.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	var ue usageError
	switch {
	case err == nil:
	case errors.As(err, &ue):
		if ue.err != nil {
			fmt.Fprintln(os.Stderr, "noisy:", ue.err)
		}
		os.Exit(ue.code)
	default:
		fmt.Fprintln(os.Stderr, "noisy:", err)
		os.Exit(1)
	}
}

// usageError ends the command with code (2 for a bad flag, 0 for -h).
type usageError struct {
	code int
	err  error
}

func (e usageError) Error() string {
	if e.err == nil {
		return "usage"
	}
	return e.err.Error()
}

// Bounds on the flags, so a typo cannot start a day of spinning.
const (
	maxFor   = 24 * time.Hour
	maxBurst = time.Hour
)

// config is what a noisy run does.
type config struct {
	Duty     float64       // long-run share of wall time in a burst, (0, 1]
	Min, Max time.Duration // a burst's length is uniform in [Min, Max]
	CPUs     []int         // allowed CPUs, sorted, distinct
	Seed     uint64
}

func (c config) check() error {
	switch {
	case !(c.Duty > 0 && c.Duty <= 1):
		return fmt.Errorf("-duty %v: want a share of time in (0, 1], e.g. 0.3", c.Duty)
	case c.Min <= 0 || c.Max < c.Min || c.Max > maxBurst:
		return fmt.Errorf("-min %v -max %v: want 0 < min <= max <= %v", c.Min, c.Max, maxBurst)
	case len(c.CPUs) == 0:
		return errors.New("no CPUs to burn")
	}
	return nil
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("noisy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.Float64Var(&cfg.Duty, "duty", 0.3, "long-run `share` of wall time spent in a burst, (0, 1]")
	fs.DurationVar(&cfg.Min, "min", 100*time.Millisecond, "shortest burst")
	fs.DurationVar(&cfg.Max, "max", 1500*time.Millisecond, "longest burst")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the burst schedule")
	cpus := fs.String("cpus", "", "comma-separated `list` of the CPUs bursts may use, e.g. 0,1 (default: every CPU this process may run on)")
	forDur := fs.Duration("for", 10*time.Minute, "stop after this long (at most 24h)")
	verbose := fs.Bool("v", false, "print every burst")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: noisy [flags]\n\nBurns CPU in random bursts on random CPUs at a duty cycle, until -for has passed\nor SIGINT/SIGTERM.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return usageError{code: 0}
		}
		return usageError{code: 2}
	}
	if fs.NArg() > 0 {
		return usageError{2, fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if *forDur <= 0 || *forDur > maxFor {
		return usageError{2, fmt.Errorf("-for %v: want a duration in (0, %v]", *forDur, maxFor)}
	}
	allowed, err := affinity()
	if err != nil {
		return err
	}
	cfg.CPUs = allowed
	if *cpus != "" {
		if cfg.CPUs, err = parseCPUList(*cpus, allowed); err != nil {
			return usageError{2, err}
		}
	}
	if err := cfg.check(); err != nil {
		return usageError{2, err}
	}
	// Every chosen CPU gets a running thread even if the runtime's default
	// was narrower; the main goroutine only waits.
	runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), len(cfg.CPUs)+1))

	fmt.Fprintf(stderr, "noisy: duty %.2f, bursts of %v-%v on random non-empty subsets of CPUs %s, for %v, seed %d (pid %d)\n",
		cfg.Duty, cfg.Min, cfg.Max, joinInts(cfg.CPUs), *forDur, cfg.Seed, os.Getpid())
	ctx, cancel := context.WithTimeout(ctx, *forDur)
	defer cancel()
	start := time.Now()
	s := newSchedule(cfg)
	var bursts int
	var busy, cpuTime time.Duration
	for {
		b := s.next()
		if !idle(ctx, b.Wait) {
			break
		}
		if *verbose {
			fmt.Fprintf(stderr, "noisy: %8.3fs: burst of %v on CPUs %s\n", time.Since(start).Seconds(), b.Length, joinInts(b.CPUs))
		}
		took, err := spin(ctx, b.CPUs, b.Length)
		bursts++
		busy += took
		cpuTime += took * time.Duration(len(b.CPUs))
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			break
		}
	}
	wall := time.Since(start)
	why := "-for elapsed"
	if context.Cause(ctx) != context.DeadlineExceeded {
		why = "signalled"
	}
	fmt.Fprintf(stderr, "noisy: stopped (%s): %d bursts, %.1fs in bursts of %.1fs (duty %.3f), %.1f thread-seconds spinning\n",
		why, bursts, busy.Seconds(), wall.Seconds(), busy.Seconds()/wall.Seconds(), cpuTime.Seconds())
	return nil
}

// burst is one step of the schedule: idle for Wait, then spin on CPUs for
// Length.
type burst struct {
	Wait   time.Duration
	Length time.Duration
	CPUs   []int
}

// schedule draws the bursts of a config from its seed.
type schedule struct {
	cfg     config
	rng     *rand.Rand
	meanGap float64 // nanoseconds
}

func newSchedule(cfg config) *schedule {
	meanLen := (float64(cfg.Min) + float64(cfg.Max)) / 2
	return &schedule{
		cfg: cfg,
		// The second PCG word is fixed: the seed alone names a schedule.
		rng:     rand.New(rand.NewPCG(cfg.Seed, 0x6e6f697379)),
		meanGap: meanLen * (1 - cfg.Duty) / cfg.Duty,
	}
}

// next draws the next burst. Its idle time is exponential with mean
// E[length]·(1-duty)/duty, so over many bursts the share of time in a
// burst, E[length]/(E[length]+E[wait]), is the duty.
func (s *schedule) next() burst {
	b := burst{Length: s.cfg.Min + time.Duration(s.rng.Int64N(int64(s.cfg.Max-s.cfg.Min)+1))}
	b.Wait = time.Duration(s.rng.ExpFloat64() * s.meanGap)
	// Each CPU in or out with probability 1/2, drawn again when none is in:
	// every non-empty subset equally likely.
	for len(b.CPUs) == 0 {
		for _, c := range s.cfg.CPUs {
			if s.rng.IntN(2) == 1 {
				b.CPUs = append(b.CPUs, c)
			}
		}
	}
	return b
}

// idle waits for d; false when ctx ended first.
func idle(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// sink keeps the spinning from being optimised away.
var sink atomic.Uint64

// spin burns each of cpus with a thread pinned to it for d, or until ctx
// ends, and returns how long it spun.
func spin(ctx context.Context, cpus []int, d time.Duration) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(d)
	done := ctx.Done()
	var wg sync.WaitGroup
	errs := make([]error, len(cpus))
	for i, c := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The thread stays locked: a goroutine that exits locked takes
			// its thread, with the changed affinity, away with it.
			runtime.LockOSThread()
			var set unix.CPUSet
			set.Set(c)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				errs[i] = fmt.Errorf("pinning a thread to CPU %d: %w", c, err)
				return
			}
			x := uint64(c) + 1
			for {
				for range 1 << 12 {
					x = x*6364136223846793005 + 1442695040888963407
				}
				select {
				case <-done:
					sink.Add(x)
					return
				default:
				}
				if !time.Now().Before(deadline) {
					sink.Add(x)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start), errors.Join(errs...)
}

// affinity is the CPUs this process may run on, sorted.
func affinity() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("reading the CPU affinity: %w", err)
	}
	var out []int
	for c := range len(set) * 64 {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// parseCPUList reads a comma-separated list of CPU numbers, each one this
// process may run on (allowed), into a sorted list without repeats.
//
// The project's cpuset parsers (runner, scenario, doctor) are unexported;
// until one is shared, this reads the plain list form only, not ranges.
func parseCPUList(s string, allowed []int) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		c, err := strconv.Atoi(part)
		if err != nil || c < 0 || part[0] == '+' {
			return nil, fmt.Errorf("-cpus %q: %q is not a CPU number (want a comma-separated list such as 0,1; ranges are not read)", s, part)
		}
		if !slices.Contains(allowed, c) {
			return nil, fmt.Errorf("-cpus %q: this process may not run on CPU %d (it may on %s)", s, c, joinInts(allowed))
		}
		out = append(out, c)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
