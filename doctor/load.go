package doctor

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Thresholds of the load and busy-process checks.
const (
	// loadPerCPU and loadFloor: the 1-minute load average warns above
	// loadPerCPU × CPUs, or loadFloor on a small machine. An idle
	// dedicated machine sits near 0.
	loadPerCPU = 0.10
	loadFloor  = 0.5
	// busyShare: a process using this share of one CPU over the sample
	// is busy enough to warn about; listShare: listed at all.
	busyShare = 0.10
	listShare = 0.01
	// busyMachine: the machine as a whole busier than this share of all
	// its CPUs during the sample warns, whoever was busy (processes of
	// other containers are not in this /proc).
	busyMachine = 0.25
	// topN processes are listed at most.
	topN = 5
	// maxProcs bounds the processes read per sample.
	maxProcs = 20000
	// defaultSample is the busy-process sample when Options.Sample is 0.
	defaultSample = time.Second
)

func (m *machine) checkLoad() Result {
	s, err := m.read("/proc/loadavg")
	if err != nil {
		return Result{Status: Skip, Found: "cannot read /proc/loadavg: " + err.Error()}
	}
	f := strings.Fields(s)
	if len(f) < 3 {
		return Result{Status: Skip, Found: fmt.Sprintf("cannot read /proc/loadavg: %q", s)}
	}
	var avg [3]float64
	for i := range avg {
		if avg[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return Result{Status: Skip, Found: fmt.Sprintf("cannot read /proc/loadavg: %q", s)}
		}
	}
	n := len(m.online)
	if n == 0 {
		return Result{Status: Skip, Found: "cannot tell how many CPUs are online"}
	}
	limit := max(loadFloor, loadPerCPU*float64(n))
	found := fmt.Sprintf("%.2f over the last minute on %s (5 min %.2f, 15 min %.2f)", avg[0], plural(n, "CPU", "CPUs"), avg[1], avg[2])
	if avg[0] <= limit {
		return Result{Status: OK, Found: found}
	}
	r := Result{Status: Warn, Found: found,
		Notes: []string{fmt.Sprintf("above %.2f: something else runs here, and it takes turns with what is measured", limit)},
		Fix: []string{
			"find what runs: ps -eo pid,pcpu,etime,comm --sort=-pcpu | head",
			"keep the runner machine to benchmarks alone: one runner, one job at a time, no cron or backups in the window",
		}}
	if avg[0] >= float64(n) {
		r.Notes[0] = "at least one runnable task per CPU: the machine is saturated, and every measurement waits for it"
	}
	return r
}

// cpuTimes are the first line of /proc/stat, in clock ticks.
type cpuTimes struct {
	total, idle, steal uint64
	ncpu               int
}

func (m *machine) readStat() (cpuTimes, error) {
	var t cpuTimes
	found := false
	err := m.readLines("/proc/stat", func(line string) {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			return
		}
		if f[0] != "cpu" {
			t.ncpu++
			return
		}
		found = true
		// user nice system idle iowait irq softirq steal guest guest_nice;
		// guest time is already in user.
		for i, v := range f[1:] {
			if i >= 8 {
				break
			}
			x, _ := strconv.ParseUint(v, 10, 64)
			t.total += x
			switch i {
			case 3, 4:
				t.idle += x
			case 7:
				t.steal += x
			}
		}
	})
	if err == nil && !found {
		err = fmt.Errorf("no cpu line in /proc/stat")
	}
	return t, err
}

type procTime struct {
	comm  string
	ticks uint64
}

// readProcs reads each process's CPU time (user + system, in ticks) from
// /proc/<pid>/stat, leaving out benchgate's own process.
func (m *machine) readProcs() map[int]procTime {
	out := map[int]procTime{}
	d, err := os.Open(m.path("/proc"))
	if err != nil {
		return out
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	self := -1
	if m.real {
		self = os.Getpid()
	}
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == self {
			continue
		}
		if len(out) >= maxProcs {
			break
		}
		s, err := m.read("/proc/" + n + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		f := strings.Fields(s[closing+1:])
		if len(f) < 13 {
			continue
		}
		utime, err1 := strconv.ParseUint(f[11], 10, 64)
		stime, err2 := strconv.ParseUint(f[12], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out[pid] = procTime{comm: s[open+1 : closing], ticks: utime + stime}
	}
	return out
}

// sampleResult is the busy-process check and what the sample saw of the
// machine as a whole (for the virtualisation check's steal time).
type sampleResult struct {
	result    Result
	stealFrac float64 // share of CPU time stolen by the hypervisor; -1 unknown
}

// sample reads the CPU time of the machine and of each process twice, d
// apart, and lists the processes that used the most.
func (m *machine) sample(ctx context.Context, d time.Duration, sleep func(context.Context, time.Duration) error) sampleResult {
	out := sampleResult{stealFrac: -1}
	if d < 0 {
		out.result = Result{Status: Skip, Found: "not sampled"}
		return out
	}
	if d == 0 {
		d = defaultSample
	}
	t0, err := m.readStat()
	if err != nil {
		out.result = Result{Status: Skip, Found: "cannot read /proc/stat: " + err.Error()}
		return out
	}
	p0 := m.readProcs()
	if err := sleep(ctx, d); err != nil {
		out.result = Result{Status: Skip, Found: "sample cut short: " + err.Error()}
		return out
	}
	t1, err := m.readStat()
	if err != nil {
		out.result = Result{Status: Skip, Found: "cannot read /proc/stat: " + err.Error()}
		return out
	}
	p1 := m.readProcs()
	ncpu := max(t1.ncpu, 1)
	if t1.total <= t0.total {
		out.result = Result{Status: Skip, Found: "no CPU time passed between the readings of /proc/stat"}
		return out
	}
	dt := float64(t1.total - t0.total)
	oneCPU := dt / float64(ncpu) // ticks of one CPU in the window
	busy := 1 - float64(t1.idle-t0.idle)/dt
	out.stealFrac = float64(t1.steal-t0.steal) / dt

	type use struct {
		pid   int
		comm  string
		share float64 // of one CPU
	}
	var uses []use
	for pid, b := range p1 {
		// A process started meanwhile used all its time in the window.
		a, ok := p0[pid]
		if !ok {
			a = procTime{comm: b.comm}
		}
		if b.ticks < a.ticks {
			continue // a new process with a reused pid
		}
		if s := float64(b.ticks-a.ticks) / oneCPU; s >= listShare {
			uses = append(uses, use{pid, b.comm, s})
		}
	}
	sort.Slice(uses, func(i, j int) bool {
		if uses[i].share != uses[j].share {
			return uses[i].share > uses[j].share
		}
		return uses[i].pid < uses[j].pid
	})
	if len(uses) > topN {
		uses = uses[:topN]
	}
	found := fmt.Sprintf("over %s the machine was %.0f%% busy", d, 100*busy)
	var notes []string
	hot := 0
	for _, u := range uses {
		notes = append(notes, fmt.Sprintf("pid %d %s: %.0f%% of a CPU", u.pid, u.comm, 100*u.share))
		if u.share >= busyShare {
			hot++
		}
	}
	if len(uses) == 0 {
		found += "; no process seen here used 1% of a CPU"
	}
	var listed float64
	for _, u := range uses {
		listed += u.share
	}
	if busy >= busyMachine && listed < busy*float64(ncpu)/2 {
		notes = append(notes, "most of it by processes not seen in this /proc: other containers or VMs' work on this kernel, or short-lived processes")
	}
	if hot == 0 && busy < busyMachine {
		out.result = Result{Status: OK, Found: found, Notes: notes}
		return out
	}
	if hot > 0 {
		found += fmt.Sprintf("; %s used %.0f%% of a CPU or more", plural(hot, "other process", "other processes"), 100*busyShare)
	} else {
		found += fmt.Sprintf(" (more than %.0f%%)", 100*busyMachine)
	}
	out.result = Result{Status: Warn, Found: found, Notes: notes,
		Fix: []string{
			"stop what runs, or keep it off the pinned CPUs (taskset, systemd AllowedCPUs=)",
			"see what runs: ps -eo pid,pcpu,etime,comm --sort=-pcpu | head",
		}}
	return out
}
