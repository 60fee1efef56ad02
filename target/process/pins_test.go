package process

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/targettest"
)

func cpus(list ...int) unix.CPUSet {
	var s unix.CPUSet
	for _, c := range list {
		s.Set(c)
	}
	return s
}

func TestParseCPUSet(t *testing.T) {
	t.Parallel()
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
		got, err := ParseCPUSet(tc.in)
		if err != nil {
			t.Errorf("ParseCPUSet(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseCPUSet(%q) = %s, want %s", tc.in, FormatCPUSet(got), FormatCPUSet(tc.want))
		}
		if s := FormatCPUSet(got); s != tc.text {
			t.Errorf("FormatCPUSet(ParseCPUSet(%q)) = %q, want %q", tc.in, s, tc.text)
		}
	}
	for _, bad := range []string{"", " ", "a", "-1", "1-", "-", "3-1", "0,,1", "0,", "1024", "0-1024", "+1", "1.5", "0-1-2", "99999999999999999999", "1,0,1", "2 , 4"} {
		if s, err := ParseCPUSet(bad); err == nil {
			t.Errorf("ParseCPUSet(%q) = %s, want an error", bad, FormatCPUSet(s))
		}
	}
}

func TestOnlineCPUs(t *testing.T) {
	t.Parallel()
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
		t.Errorf("online %s, our affinity %s: CPUs %s of it not online", FormatCPUSet(online), FormatCPUSet(mine), FormatCPUSet(off))
	}
	if err := CheckOnline(cpus(maxCPUs - 1)); err == nil || !strings.Contains(err.Error(), "not online") {
		t.Errorf("CheckOnline(CPU %d) = %v, want not online", maxCPUs-1, err)
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
	// Not parallel: it compares the masks of every thread of the process
	// before and after, which another test's pinned fork changes meanwhile.
	var proc unix.CPUSet
	if err := unix.SchedGetaffinity(os.Getpid(), &proc); err != nil {
		t.Fatal(err)
	}
	if online, err := onlineCPUs(); err != nil || !online.IsSet(0) {
		t.Skipf("CPU 0 not online (%s, %v)", FormatCPUSet(online), err)
	}
	before := targettest.ThreadMasks(t)
	pins := &scenario.Pins{Name: "cpus=0 memory=256MiB", CPUs: "0", Memory: 256 << 20, MemoryText: "256MiB"}
	tg := New(targettest.ServerSpec("baseline", "-spawn"), target.Options{OutDir: t.TempDir(), Pins: pins})
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
			t.Errorf("process %d has affinity %s, want 0", p, FormatCPUSet(got))
		}
	}
	// The thread that forked the target has its old mask back.
	targettest.CheckMasksRestored(t, before, proc)

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
		if tg.cg.Version == 1 {
			limit = "memory.limit_in_bytes"
		}
		if !strings.HasSuffix(applied[1], "v"+strconv.Itoa(tg.cg.Version)+")") {
			t.Errorf("applied %q, but the cgroup is v%d", applied[1], tg.cg.Version)
		}
		b, err := os.ReadFile(filepath.Join(tg.cg.MemDir, limit))
		if err != nil || strings.TrimSpace(string(b)) != "268435456" {
			t.Errorf("%s: %q %v, want 268435456", limit, b, err)
		}
		for _, p := range []int{pid, child} {
			if !tg.cg.Contains(p) {
				t.Errorf("process %d is not in %s", p, tg.cg.MemDir)
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
	targettest.GroupGone(t, pid)
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup %s still there after Stop (%v)", d, err)
		}
	}
}

// TestPinnedTargetUnavailable: a CPU that is not online is reported, and
// the target starts anyway.
func TestPinnedTargetUnavailable(t *testing.T) {
	t.Parallel()
	c := strconv.Itoa(maxCPUs - 1)
	tg := New(targettest.ServerSpec("candidate"), target.Options{OutDir: t.TempDir(), Pins: &scenario.Pins{CPUs: c}})
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
	t.Parallel()
	pins := &scenario.Pins{CPUs: "0-1", Memory: 1 << 30, MemoryText: "1GiB"}
	url := New(scenario.Target{Name: "baseline", URL: "http://127.0.0.1:1"}, target.Options{OutDir: t.TempDir(), Pins: pins})
	applied, notApplied := url.Pins()
	want := []string{"cpuset 0-1: url target: not started by benchgate", "memory 1GiB: url target: not started by benchgate"}
	if applied != nil || strings.Join(notApplied, "|") != strings.Join(want, "|") {
		t.Errorf("url target: applied %q, not applied %q", applied, notApplied)
	}
	if _, ok := url.Usage(); ok {
		t.Error("url target: Usage ok")
	}
	plain := New(targettest.ServerSpec("baseline"), target.Options{OutDir: t.TempDir()})
	if a, n := plain.Pins(); a != nil || n != nil {
		t.Errorf("no pins: applied %q, not applied %q", a, n)
	}
	if _, ok := plain.Usage(); ok {
		t.Error("Usage ok before Start")
	}
}

// threadsOutside checks that no thread of the test process is left in a
// group of cg (the v1 fork borrows a thread and must bring it back).
func threadsOutside(t *testing.T, cg *Cgroup) {
	t.Helper()
	tids, err := target.ProcIDs("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	leaf := filepath.Base(cg.MemDir)
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
	t.Parallel()
	self, err := target.ProcCgroups(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := target.ReadCgroupMounts()
	if err != nil {
		t.Fatal(err)
	}
	v1 := func(t *testing.T, leaf string) *Cgroup {
		cg, err := newCgroupV1(self, mounts, leaf, 256<<20)
		if err != nil {
			t.Skipf("cgroup v1: %v", err)
		}
		return cg
	}
	v2 := func(t *testing.T, leaf string) *Cgroup {
		if !self.HasV2 {
			t.Skip("in no cgroup v2 group")
		}
		parent, err := target.LocateCgroup(mounts, "", self.V2)
		if err != nil {
			t.Skipf("cgroup v2: %v", err)
		}
		dir := filepath.Join(parent, leaf)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Skipf("cgroup v2: %v", err)
		}
		return &Cgroup{CgroupDirs: target.CgroupDirs{Version: 2, MemDir: dir, CPUDir: dir}, dirs: []string{dir}}
	}
	for _, tc := range []struct {
		name  string
		make  func(*testing.T, string) *Cgroup
		forkd bool // forked into the group, rather than moved after
	}{
		{"v1-fork", v1, true},
		{"v1-after", v1, false},
		{"v2-fork", v2, true},
		{"v2-after", v2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cg := tc.make(t, "benchgate-test-"+tc.name+"-"+strconv.Itoa(os.Getpid()))
			defer cg.Remove()
			cmd := exec.Command(targettest.Server(), "-spawn")
			cmd.SysProcAttr = childAttr()
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			var r ForkResult
			if tc.forkd {
				r = forkPinned(cmd, nil, cg, true, exited)
			} else {
				r = forkPinned(cmd, nil, nil, true, exited)
			}
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			pid := cmd.Process.Pid
			defer func() {
				syscall.Kill(-pid, syscall.SIGKILL)
				cmd.Wait()
				close(exited)
				waitGroupGone(pid)
				if err := cg.Remove(); err != nil {
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
				if !r.Joined {
					t.Fatal("not started in the group")
				}
			} else if err := cg.JoinAfterStart(pid); err != nil {
				t.Fatal(err)
			}
			in := []int{pid}
			if tc.forkd {
				// Started inside, so everything it started is inside too;
				// moved after the start, the child may have been quicker.
				in = append(in, child)
			}
			for _, p := range in {
				if !cg.Contains(p) {
					b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cgroup")
					t.Errorf("process %d not in %s:\n%s", p, cg.MemDir, b)
				}
			}
			threadsOutside(t, cg)
		})
	}
}
