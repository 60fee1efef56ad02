package runner

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/scenario"
)

func cpus(list ...int) unix.CPUSet {
	var s unix.CPUSet
	for _, c := range list {
		s.Set(c)
	}
	return s
}

func TestParseCPUSet(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want unix.CPUSet
		text string // formatCPUSet of the result
	}{
		{"0", cpus(0), "0"},
		{"3", cpus(3), "3"},
		{"0-1", cpus(0, 1), "0-1"},
		{"0-1,3", cpus(0, 1, 3), "0-1,3"},
		{"0,1,2,5-7", cpus(0, 1, 2, 5, 6, 7), "0-2,5-7"},
		{" 2-2,4 ", cpus(2, 4), "2,4"},
		{"0-3\n", cpus(0, 1, 2, 3), "0-3"}, // as the kernel writes its files
		{"1023", cpus(1023), "1023"},
		{"60-70", cpus(60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70), "60-70"},
	} {
		got, err := parseCPUSet(tc.in)
		if err != nil {
			t.Errorf("parseCPUSet(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("parseCPUSet(%q) = %s, want %s", tc.in, formatCPUSet(got), formatCPUSet(tc.want))
		}
		if s := formatCPUSet(got); s != tc.text {
			t.Errorf("formatCPUSet(parseCPUSet(%q)) = %q, want %q", tc.in, s, tc.text)
		}
	}
	for _, bad := range []string{"", " ", "a", "-1", "1-", "-", "3-1", "0,,1", "0,", "1024", "0-1024", "+1", "1.5", "0-1-2", "99999999999999999999", "1,0,1", "2 , 4"} {
		if s, err := parseCPUSet(bad); err == nil {
			t.Errorf("parseCPUSet(%q) = %s, want an error", bad, formatCPUSet(s))
		}
	}
}

func TestOnlineCPUs(t *testing.T) {
	online, err := onlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	var mine unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mine); err != nil {
		t.Fatal(err)
	}
	// We can only run on online CPUs.
	if off := cpuSetMinus(mine, online); off.Count() != 0 || mine.Count() == 0 {
		t.Errorf("online %s, our affinity %s: CPUs %s of it not online", formatCPUSet(online), formatCPUSet(mine), formatCPUSet(off))
	}
	if err := checkOnline(cpus(maxCPUs - 1)); err == nil || !strings.Contains(err.Error(), "not online") {
		t.Errorf("checkOnline(CPU %d) = %v, want not online", maxCPUs-1, err)
	}
}

// threadMasks is the affinity of each thread of the test process.
func threadMasks(t *testing.T) map[int]unix.CPUSet {
	t.Helper()
	tids, err := threadIDs()
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]unix.CPUSet{}
	for _, tid := range tids {
		var s unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &s); err == nil {
			m[tid] = s
		}
	}
	return m
}

// checkMasksRestored says whether the threads have the masks they had in
// before, threads that are new the process's mask.
func checkMasksRestored(t *testing.T, before map[int]unix.CPUSet, proc unix.CPUSet) {
	t.Helper()
	for tid, m := range threadMasks(t) {
		want, ok := before[tid]
		if !ok {
			want = proc
		}
		if m != want {
			t.Errorf("thread %d has affinity %s, want %s", tid, formatCPUSet(m), formatCPUSet(want))
		}
	}
}

func TestPinGenerator(t *testing.T) {
	var proc unix.CPUSet
	if err := unix.SchedGetaffinity(os.Getpid(), &proc); err != nil {
		t.Fatal(err)
	}
	if !proc.IsSet(0) {
		t.Skipf("CPU 0 is not ours to run on (affinity %s)", formatCPUSet(proc))
	}
	before := threadMasks(t)
	procs := runtime.GOMAXPROCS(0)

	for _, bad := range []string{"x", strconv.Itoa(maxCPUs - 1)} {
		if restore, _, err := pinGenerator(bad); err == nil {
			restore()
			t.Errorf("pinGenerator(%q) took, want an error", bad)
		}
	}
	checkMasksRestored(t, before, proc)

	restore, applied, err := pinGenerator("0")
	if err != nil {
		t.Fatal(err)
	}
	if applied != "cpuset 0 (affinity, GOMAXPROCS 1)" {
		t.Errorf("applied %q", applied)
	}
	// A thread created now inherits the mask of its creator: start some.
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() {
			runtime.LockOSThread()
			<-done
		}()
	}
	runtime.Gosched()
	masks := threadMasks(t)
	for tid, m := range masks {
		if m != cpus(0) {
			t.Errorf("pinned: thread %d has affinity %s, want 0", tid, formatCPUSet(m))
		}
	}
	if len(masks) < 2 {
		t.Errorf("only %d threads looked at", len(masks))
	}
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("GOMAXPROCS %d while pinned to one CPU", n)
	}
	if n := processCPUSeconds(); n <= 0 {
		t.Errorf("processCPUSeconds %v", n)
	}
	restore()
	restore() // a second call changes nothing
	close(done)
	checkMasksRestored(t, before, proc)
	if n := runtime.GOMAXPROCS(0); n != procs {
		t.Errorf("GOMAXPROCS %d after restore, was %d", n, procs)
	}
}

func TestProcessCPUSeconds(t *testing.T) {
	first := processCPUSeconds()
	if first <= 0 {
		t.Fatalf("processCPUSeconds %v: the test has run code already", first)
	}
	// Spin until the clock moves: no duration is assumed.
	x := 1
	for processCPUSeconds() == first {
		for i := 0; i < 1e5; i++ {
			x = x*31 + i
		}
	}
	if last := processCPUSeconds(); last < first {
		t.Errorf("went back from %v to %v (%d)", first, last, x)
	}
}

var spawnedRE = regexp.MustCompile(`^spawned (\d+)$`)

// spawnedPid is the pid of the child a "-spawn" testserver started, from
// its output. The output reaches us through a pipe: wait for it.
func spawnedPid(t *testing.T, tg *Target) int {
	t.Helper()
	for i := 0; i < 1000; i++ {
		for _, l := range tg.output() {
			if m := spawnedRE.FindStringSubmatch(l); m != nil {
				pid, _ := strconv.Atoi(m[1])
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no \"spawned\" line in the output: %q", tg.output())
	return 0
}

func TestPinnedTarget(t *testing.T) {
	var proc unix.CPUSet
	if err := unix.SchedGetaffinity(os.Getpid(), &proc); err != nil {
		t.Fatal(err)
	}
	if online, err := onlineCPUs(); err != nil || !online.IsSet(0) {
		t.Skipf("CPU 0 not online (%s, %v)", formatCPUSet(online), err)
	}
	before := threadMasks(t)
	pins := &scenario.Pins{Name: "cpus=0 memory=256MiB", CPUs: "0", Memory: 256 << 20, MemoryText: "256MiB"}
	tg := NewPinnedTarget(serverSpec("baseline", "-spawn"), t.TempDir(), pins)
	if err := tg.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer tg.Stop()
	pid, child := tg.cmd.Process.Pid, spawnedPid(t, tg)
	for _, p := range []int{pid, child} {
		var got unix.CPUSet
		if err := unix.SchedGetaffinity(p, &got); err != nil {
			t.Fatal(err)
		}
		if got != cpus(0) {
			t.Errorf("process %d has affinity %s, want 0", p, formatCPUSet(got))
		}
	}
	// The thread that forked the target has its old mask back.
	checkMasksRestored(t, before, proc)

	applied, notApplied := tg.Pins()
	t.Logf("applied %q, not applied %q", applied, notApplied)
	if len(applied) == 0 || applied[0] != "cpuset 0 (affinity)" {
		t.Errorf("applied %q, want the cpuset first", applied)
	}
	var dirs []string
	switch {
	case len(applied) == 2 && regexp.MustCompile(`^memory 256MiB \(cgroup v[12]\)$`).MatchString(applied[1]):
		if len(notApplied) != 0 || tg.cg == nil {
			t.Fatalf("memory applied, but not applied %q, cgroup %+v", notApplied, tg.cg)
		}
		limit := "memory.max"
		if tg.cg.version == 1 {
			limit = "memory.limit_in_bytes"
		}
		if !strings.HasSuffix(applied[1], "v"+strconv.Itoa(tg.cg.version)+")") {
			t.Errorf("applied %q, but the cgroup is v%d", applied[1], tg.cg.version)
		}
		b, err := os.ReadFile(filepath.Join(tg.cg.memDir, limit))
		if err != nil || strings.TrimSpace(string(b)) != "268435456" {
			t.Errorf("%s: %q %v, want 268435456", limit, b, err)
		}
		for _, p := range []int{pid, child} {
			if !tg.cg.contains(p) {
				t.Errorf("process %d is not in %s", p, tg.cg.memDir)
			}
		}
		threadsOutside(t, tg.cg)
		dirs = tg.cg.dirs
	case len(applied) == 1 && len(notApplied) == 1:
		if !strings.HasPrefix(notApplied[0], "memory 256MiB: ") || tg.cg != nil {
			t.Errorf("not applied %q, cgroup %+v", notApplied, tg.cg)
		}
	default:
		t.Fatalf("memory neither applied nor not: applied %q, not applied %q", applied, notApplied)
	}
	if err := tg.Stop(); err != nil {
		t.Fatal(err)
	}
	groupGone(t, pid)
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup %s still there after Stop (%v)", d, err)
		}
	}
}

// TestPinnedTargetUnavailable: a CPU that is not online is reported, and
// the target starts anyway.
func TestPinnedTargetUnavailable(t *testing.T) {
	c := strconv.Itoa(maxCPUs - 1)
	tg := NewPinnedTarget(serverSpec("candidate"), t.TempDir(), &scenario.Pins{CPUs: c})
	if err := tg.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer tg.Stop()
	applied, notApplied := tg.Pins()
	if len(applied) != 0 || len(notApplied) != 1 || !strings.HasPrefix(notApplied[0], "cpuset "+c+": CPUs "+c+" not online") {
		t.Errorf("applied %q, not applied %q", applied, notApplied)
	}
}

func TestTargetPinsWithoutProcess(t *testing.T) {
	pins := &scenario.Pins{CPUs: "0-1", Memory: 1 << 30, MemoryText: "1GiB"}
	url := NewPinnedTarget(scenario.Target{Name: "baseline", URL: "http://127.0.0.1:1"}, t.TempDir(), pins)
	applied, notApplied := url.Pins()
	want := []string{"cpuset 0-1: url target: not started by benchgate", "memory 1GiB: url target: not started by benchgate"}
	if applied != nil || strings.Join(notApplied, "|") != strings.Join(want, "|") {
		t.Errorf("url target: applied %q, not applied %q", applied, notApplied)
	}
	if _, ok := url.Usage(); ok {
		t.Error("url target: Usage ok")
	}
	plain := NewTarget(serverSpec("baseline"), t.TempDir())
	if a, n := plain.Pins(); a != nil || n != nil {
		t.Errorf("no pins: applied %q, not applied %q", a, n)
	}
	if _, ok := plain.Usage(); ok {
		t.Error("Usage ok before Start")
	}
}

// threadsOutside checks that no thread of the test process is left in a
// group of cg (the v1 fork borrows a thread and must bring it back).
func threadsOutside(t *testing.T, cg *targetCgroup) {
	t.Helper()
	tids, err := threadIDs()
	if err != nil {
		t.Fatal(err)
	}
	leaf := filepath.Base(cg.memDir)
	for _, tid := range tids {
		b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/cgroup")
		if err == nil && strings.Contains(string(b), leaf) {
			t.Errorf("thread %d of the test is in the target's cgroup:\n%s", tid, b)
		}
	}
}

// TestCgroupJoin starts a process in a cgroup each way this machine
// allows: forked into it (v1: through a borrowed thread; v2: clone3 with
// the group's descriptor) or moved in after the start. The v2 group has
// no controllers when v2 has none here (a hybrid host); joining works the
// same.
func TestCgroupJoin(t *testing.T) {
	self, err := readSelfCgroups()
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := readCgroupMounts()
	if err != nil {
		t.Fatal(err)
	}
	v1 := func(t *testing.T, leaf string) *targetCgroup {
		cg, err := newCgroupV1(self, mounts, leaf, 256<<20)
		if err != nil {
			t.Skipf("cgroup v1: %v", err)
		}
		return cg
	}
	v2 := func(t *testing.T, leaf string) *targetCgroup {
		if !self.HasV2 {
			t.Skip("in no cgroup v2 group")
		}
		parent, err := locateCgroup(mounts, "", self.V2)
		if err != nil {
			t.Skipf("cgroup v2: %v", err)
		}
		dir := filepath.Join(parent, leaf)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Skipf("cgroup v2: %v", err)
		}
		return &targetCgroup{cgroupDirs: cgroupDirs{version: 2, memDir: dir, cpuDir: dir}, dirs: []string{dir}}
	}
	for _, tc := range []struct {
		name  string
		make  func(*testing.T, string) *targetCgroup
		forkd bool // forked into the group, rather than moved after
	}{
		{"v1-fork", v1, true},
		{"v1-after", v1, false},
		{"v2-fork", v2, true},
		{"v2-after", v2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cg := tc.make(t, "benchgate-test-"+tc.name+"-"+strconv.Itoa(os.Getpid()))
			defer cg.remove()
			cmd := exec.Command(testServer, "-spawn")
			cmd.SysProcAttr = childAttr()
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			var r forkResult
			if tc.forkd {
				r = forkPinned(cmd, nil, cg, true, exited)
			} else {
				r = forkPinned(cmd, nil, nil, true, exited)
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			pid := cmd.Process.Pid
			defer func() {
				syscall.Kill(-pid, syscall.SIGKILL)
				cmd.Wait()
				close(exited)
				waitGroupGone(pid)
				if err := cg.remove(); err != nil {
					t.Error(err)
				}
				for _, d := range cg.dirs {
					if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s still there (%v)", d, err)
					}
				}
			}()
			line, err := bufio.NewReader(out).ReadString('\n')
			m := spawnedRE.FindStringSubmatch(strings.TrimSpace(line))
			if err != nil || m == nil {
				t.Fatalf("first line %q, %v", line, err)
			}
			child, _ := strconv.Atoi(m[1])
			if tc.forkd {
				if !r.joined {
					t.Fatal("not started in the group")
				}
			} else if err := cg.joinAfterStart(pid); err != nil {
				t.Fatal(err)
			}
			in := []int{pid}
			if tc.forkd {
				// Started inside, so everything it started is inside too;
				// moved after the start, the child may have been quicker.
				in = append(in, child)
			}
			for _, p := range in {
				if !cg.contains(p) {
					b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cgroup")
					t.Errorf("process %d not in %s:\n%s", p, cg.memDir, b)
				}
			}
			threadsOutside(t, cg)
		})
	}
}

// TestKillCgroupSparesBenchgate gives killCgroup a group listing
// benchgate's own pid besides a child's, as a v1 group does while a
// borrowed thread is still in it: the child dies, benchgate does not, and
// its thread is sent home. The directories are plain ones: there is no
// cgroup.kill, so the pids are signalled one by one, as on v1.
func TestKillCgroupSparesBenchgate(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	procs := fmt.Sprintf("%d\n%d\n", os.Getpid(), child.Process.Pid)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := strconv.Itoa(unix.Gettid())
	for name, text := range map[string]string{"cgroup.procs": procs, "tasks": tid + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "tasks"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	killCgroup(dir, home)
	err := child.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("child: %v, want killed by SIGKILL", err)
	}
	// Still here, so benchgate was not signalled.
	if b, _ := os.ReadFile(filepath.Join(home, "tasks")); string(b) != tid {
		t.Errorf("home tasks %q, want the thread %s sent home", b, tid)
	}
}
