package doctor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/system"

	"github.com/benchgate/benchgate/scenario"
)

// tree copies a fake machine from testdata, so a test may change it.
func tree(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

func write(t *testing.T, root, path, text string) {
	t.Helper()
	p := filepath.Join(root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ticks is what passes on a fake machine during the sample: CPU time in
// /proc/stat (busy, idle and stolen ticks added to the totals) and in each
// named process.
type ticks struct {
	busy, idle, steal uint64
	procs             map[int]uint64
}

// passing returns a sleep for Options that makes the ticks pass in root.
func passing(t *testing.T, root string, tk ticks) func(context.Context, time.Duration) error {
	return func(context.Context, time.Duration) error {
		statPath := filepath.Join(root, "proc/stat")
		b, err := os.ReadFile(statPath)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		f := strings.Fields(lines[0])
		for i, add := range map[int]uint64{1: tk.busy, 4: tk.idle, 8: tk.steal} {
			n, _ := strconv.ParseUint(f[i], 10, 64)
			f[i] = strconv.FormatUint(n+add, 10)
		}
		lines[0] = strings.Join(f, " ")
		if err := os.WriteFile(statPath, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		for pid, add := range tk.procs {
			p := filepath.Join(root, "proc", strconv.Itoa(pid), "stat")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			i := strings.LastIndexByte(s, ')')
			f := strings.Fields(s[i+1:])
			n, _ := strconv.ParseUint(f[11], 10, 64)
			f[11] = strconv.FormatUint(n+add, 10)
			if err := os.WriteFile(p, []byte(s[:i+1]+" "+strings.Join(f, " ")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	}
}

type fakeEngine struct {
	info system.Info
	ver  types.Version
	err  error
}

func (e *fakeEngine) Info(context.Context) (system.Info, error) { return e.info, e.err }
func (e *fakeEngine) ServerVersion(context.Context) (types.Version, error) {
	return e.ver, e.err
}
func (e *fakeEngine) ClientVersion() string { return "1.51" }
func (e *fakeEngine) DaemonHost() string    { return "unix:///var/run/docker.sock" }

func goodEngine(ncpu int) *fakeEngine {
	return &fakeEngine{
		info: system.Info{ServerVersion: "28.5.2", CgroupDriver: "systemd", CgroupVersion: "2", NCPU: ncpu, MemTotal: 64 << 30,
			CPUSet: true, MemoryLimit: true, SwapLimit: true},
		ver: types.Version{Version: "28.5.2", APIVersion: "1.51"},
	}
}

// services is a service scenario with two command targets and pin sets.
func services(pins ...scenario.Pins) *scenario.Scenario {
	return &scenario.Scenario{
		File: "bench.yml", Kind: scenario.KindHTTP,
		Baseline:  scenario.Target{Name: "baseline", Command: []string{"./old", "{port}"}},
		Candidate: scenario.Target{Name: "candidate", Command: []string{"./new", "{port}"}},
		PinSets:   pins,
	}
}

func statuses(r *Report) map[string]Status {
	m := map[string]Status{}
	for _, c := range r.Checks {
		m[c.ID] = c.Status
	}
	return m
}

func dump(t *testing.T, r *Report) {
	t.Helper()
	var b bytes.Buffer
	WriteTerminal(&b, r, false)
	t.Logf("report:\n%s", b.String())
}

func wantStatuses(t *testing.T, r *Report, want map[string]Status) {
	t.Helper()
	got := statuses(r)
	bad := false
	for _, id := range CheckIDs {
		if got[id] != want[id] {
			t.Errorf("%s: %s, want %s", id, got[id], want[id])
			bad = true
		}
	}
	if bad {
		dump(t, r)
	}
}

func allStatus(s Status) map[string]Status {
	m := map[string]Status{}
	for _, id := range CheckIDs {
		m[id] = s
	}
	return m
}

func tunedOptions(t *testing.T, root string) Options {
	return Options{
		Root:   root,
		Docker: goodEngine(8),
		Sample: time.Millisecond,
		sleep:  passing(t, root, ticks{busy: 8, idle: 792}),
	}
}

// A tuned bare-metal box with a scenario that fits it: every check OK.
func TestTunedBareMetal(t *testing.T) {
	t.Parallel()
	root := tree(t, "tuned")
	o := tunedOptions(t, root)
	o.Scenario = services(scenario.Pins{Name: "main", CPUs: "2-5", GeneratorCPUs: "1", Memory: 4 << 30, MemoryText: "4GiB"})
	r := Check(context.Background(), o)
	wantStatuses(t, r, allStatus(OK))
	if r.Failed() || r.Summary != (Summary{OK: len(CheckIDs)}) {
		t.Errorf("summary %+v", r.Summary)
	}
	for _, c := range r.Checks {
		if len(c.Fix) > 0 {
			t.Errorf("%s: OK with a fix: %q", c.ID, c.Fix)
		}
	}
	for id, want := range map[string]string{
		IDCPUs:     "8 CPUs online (0-7), Intel(R) Xeon(R) Gold 6338N",
		IDPins:     "the pin set fits this machine",
		IDGovernor: "performance on CPUs 1-5 (driver intel_pstate)",
		IDTurbo:    "intel_pstate/no_turbo = 1",
		IDSMT:      "SMT off (smt/control = off)",
		IDMemory:   "62.7 GiB total",
		IDSwap:     "no swap",
		IDTHP:      "madvise",
		IDCgroup:   "cgroup v2 (unified) at /sys/fs/cgroup; memory pins of process targets apply through cgroup v2",
		IDDocker:   "Docker Engine 28.5.2 (API 1.51)",
		IDVirt:     "no hypervisor seen",
	} {
		if c := r.Result(id); !strings.Contains(c.Found, want) {
			t.Errorf("%s found %q, want it to hold %q", id, c.Found, want)
		}
	}
	if n := strings.Join(r.Result(IDPins).Notes, "\n"); !strings.Contains(n, `pin set "main": targets 2-5, generator 1, left for the OS 0,6-7, memory 4GiB`) {
		t.Errorf("pins notes: %s", n)
	}
	// isolcpus leaves CPUs 1-7 out of benchgate's own affinity, not out of
	// its cpuset: the pins on 1-5 are fine.
	if n := strings.Join(r.Result(IDCPUs).Notes, "\n"); !strings.Contains(n, "CPUs 1-7 isolated") ||
		!strings.Contains(n, "benchgate's own affinity is CPU 0 now (isolcpus' default, or taskset): pins widen it within the cpuset") {
		t.Errorf("cpus notes: %s", n)
	}

	// Without a scenario, the pins cannot be checked; the rest is the same.
	o = tunedOptions(t, root)
	r = Check(context.Background(), o)
	want := allStatus(OK)
	want[IDPins] = Skip
	wantStatuses(t, r, want)
	if got := r.Result(IDGovernor).Found; !strings.Contains(got, "performance on CPUs 0-7") {
		t.Errorf("governor without pins looks at every CPU: %q", got)
	}
}

func vmOptions(t *testing.T, root string) Options {
	return Options{
		Root:   root,
		Sample: time.Millisecond,
		// 2 CPUs × 100 ticks: 80 busy, 20 idle, 10 stolen; stress-ng
		// takes 90 ticks, 90% of one CPU.
		sleep: passing(t, root, ticks{busy: 170, idle: 20, steal: 10, procs: map[int]uint64{4242: 90}}),
	}
}

// A noisy VM: the warnings of a VM, a high load, a busy process and swap;
// what a VM cannot show (cpufreq, turbo) is skipped with the reason.
func TestNoisyVM(t *testing.T) {
	t.Parallel()
	root := tree(t, "vm")
	o := vmOptions(t, root)
	o.Docker = &fakeEngine{err: errors.New("dial unix /var/run/docker.sock: connect: no such file or directory")}
	r := Check(context.Background(), o)
	wantStatuses(t, r, map[string]Status{
		IDCPUs:      Warn, // 2 CPUs
		IDPins:      Skip, // no scenario
		IDGovernor:  Skip,
		IDTurbo:     Skip,
		IDSMT:       OK,
		IDLoad:      Warn,
		IDProcesses: Warn,
		IDMemory:    OK,
		IDSwap:      Warn,
		IDTHP:       OK,
		IDCgroup:    Warn, // in the runner's service group, memory not enabled for children
		IDDocker:    Skip, // no engine, and no image target needs one
		IDVirt:      Warn,
	})
	if r.Failed() {
		t.Error("a noisy VM fails no check")
	}
	for id, want := range map[string]string{
		IDCPUs:      "2 CPUs usable (0-1): fewer than 3",
		IDGovernor:  "a VM's clock is its host's to set",
		IDTurbo:     "in a VM the host decides",
		IDSMT:       "SMT not supported here",
		IDLoad:      "3.52 over the last minute on 2 CPUs",
		IDProcesses: "1 other process used 10% of a CPU or more",
		IDSwap:      "swap on: 2 GiB (/swapfile (file)), 512 MiB in use",
		IDCgroup:    "memory pins cannot apply to process targets",
		IDDocker:    "no engine answers at unix:///var/run/docker.sock",
		IDVirt:      "a virtual machine (KVM)",
	} {
		if c := r.Result(id); !strings.Contains(c.Found, want) {
			t.Errorf("%s found %q, want it to hold %q", id, c.Found, want)
		}
	}
	notes := func(id string) string { return strings.Join(r.Result(id).Notes, "\n") }
	if !strings.Contains(notes(IDProcesses), "pid 4242 stress-ng (cpu): 90% of a CPU") {
		t.Errorf("processes notes: %s", notes(IDProcesses))
	}
	if !strings.Contains(notes(IDVirt), "the hypervisor took 5% of the CPU time during the sample (steal)") ||
		!strings.Contains(notes(IDVirt), "the CPU flags have hypervisor") {
		t.Errorf("virt notes: %s", notes(IDVirt))
	}
	if !strings.Contains(notes(IDCgroup), "the kernel lets no group that holds a process (benchgate's own) enable it") {
		t.Errorf("cgroup notes: %s", notes(IDCgroup))
	}
	for _, id := range []string{IDCPUs, IDLoad, IDProcesses, IDSwap, IDCgroup, IDVirt} {
		if len(r.Result(id).Fix) == 0 {
			t.Errorf("%s warns without a fix", id)
		}
	}
	if fix := strings.Join(r.Result(IDSwap).Fix, "\n"); !strings.Contains(fix, "swapoff -a") {
		t.Errorf("swap fix: %s", fix)
	}
}

// A pin set naming CPUs the machine does not have fails, naming the pin
// set; so does an image target without an engine.
func TestPinsOnAbsentCPUs(t *testing.T) {
	t.Parallel()
	root := tree(t, "vm")
	o := vmOptions(t, root)
	o.Scenario = services(
		scenario.Pins{Name: "small", CPUs: "1", GeneratorCPUs: "0"},
		scenario.Pins{Name: "wide", CPUs: "6-7", GeneratorCPUs: "0"},
	)
	r := Check(context.Background(), o)
	pins := r.Result(IDPins)
	if pins.Status != Fail || !r.Failed() {
		dump(t, r)
		t.Fatalf("pins %s, failed %v", pins.Status, r.Failed())
	}
	if want := `pin set "wide": cpus 6-7: CPUs 6-7 are not online (this machine has CPUs 0-1)`; pins.Found != want {
		t.Errorf("found %q\nwant  %q", pins.Found, want)
	}
	if len(pins.Fix) == 0 || !strings.Contains(pins.Fix[0], "(0-1)") {
		t.Errorf("fix: %q", pins.Fix)
	}
	// The pin set that fits is described; with 2 CPUs it leaves none to
	// the OS, which warns too.
	if n := strings.Join(pins.Notes, "\n"); !strings.Contains(n, `pin set "small": targets 1, generator 0, none left for the OS`) {
		t.Errorf("notes: %s", n)
	}

	// CPU 7 as the generator's, and an image target with no engine.
	o = vmOptions(t, root)
	o.Scenario = services(scenario.Pins{Name: "gen", CPUs: "1", GeneratorCPUs: "7"})
	o.Scenario.Candidate = scenario.Target{Name: "candidate", Image: "demo:pr", Port: 8080}
	o.Docker = &fakeEngine{err: errors.New("connection refused")}
	r = Check(context.Background(), o)
	if c := r.Result(IDPins); c.Status != Fail || !strings.Contains(c.Found, `pin set "gen": generator_cpus 7: CPU 7 is not online`) {
		t.Errorf("pins: %s %q", c.Status, c.Found)
	}
	if c := r.Result(IDDocker); c.Status != Fail || len(c.Fix) == 0 {
		t.Errorf("docker: %s %q", c.Status, c.Found)
	}
}

// The pin layouts that run but measure noise.
func TestPinWarnings(t *testing.T) {
	t.Parallel()
	root := tree(t, "tuned")
	for _, tc := range []struct {
		name string
		pins scenario.Pins
		want string
	}{
		{"overlap", scenario.Pins{Name: "o", CPUs: "1-3", GeneratorCPUs: "3"}, `pin set "o": cpus 1-3 and generator_cpus 3 share CPU 3`},
		{"no generator", scenario.Pins{Name: "g", CPUs: "2-5"}, `pin set "g": the targets are pinned to 2-5 but the load generator is not`},
		{"every CPU", scenario.Pins{Name: "all", CPUs: "1-7", GeneratorCPUs: "0"}, `pin set "all": uses every CPU benchgate may run on (0-7)`},
		{"outside affinity", scenario.Pins{Name: "aff", CPUs: "6-7", GeneratorCPUs: "1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tunedOptions(t, root)
			o.Scenario = services(tc.pins)
			if tc.name == "outside affinity" {
				// benchgate's cpuset allows 0-5 only: pinning 6-7 is refused.
				write(t, root, "sys/fs/cgroup/cpuset.cpus.effective", "0-5")
				defer write(t, root, "sys/fs/cgroup/cpuset.cpus.effective", "0-7")
				r := Check(context.Background(), o)
				c := r.Result(IDPins)
				if c.Status != Fail || !strings.Contains(c.Found, "benchgate may not run on CPUs 6-7 (its cpuset allows 0-5)") {
					dump(t, r)
					t.Errorf("pins %s %q", c.Status, c.Found)
				}
				if n := strings.Join(r.Result(IDCPUs).Notes, "\n"); !strings.Contains(n, "benchgate's cpuset allows CPUs 0-5 only (/sys/fs/cgroup/cpuset.cpus.effective)") {
					t.Errorf("cpus notes: %s", n)
				}
				return
			}
			r := Check(context.Background(), o)
			c := r.Result(IDPins)
			if c.Status != Warn || !strings.Contains(c.Found, tc.want) || len(c.Fix) == 0 {
				dump(t, r)
				t.Errorf("pins %s %q, want WARN with %q and a fix", c.Status, c.Found, tc.want)
			}
		})
	}

	// No pins at all: a suggestion from the CPUs there are.
	o := tunedOptions(t, root)
	o.Scenario = services()
	r := Check(context.Background(), o)
	if c := r.Result(IDPins); c.Status != Warn || len(c.Fix) != 1 || c.Fix[0] != `add to the scenario: pins: {cpus: "2-7", generator_cpus: "1"}` {
		t.Errorf("no pins: %s %q %q", c.Status, c.Found, c.Fix)
	}
}

// With SMT on, target and generator on two threads of one core warn; on
// separate cores they do not.
func TestSMTSiblings(t *testing.T) {
	t.Parallel()
	root := tree(t, "tuned")
	write(t, root, "sys/devices/system/cpu/smt/active", "1")
	write(t, root, "sys/devices/system/cpu/smt/control", "on")
	for c := 0; c < 8; c++ {
		write(t, root, "sys/devices/system/cpu/cpu"+strconv.Itoa(c)+"/topology/thread_siblings_list", strconv.Itoa(c%4)+","+strconv.Itoa(c%4+4))
	}
	o := tunedOptions(t, root)
	o.Scenario = services(scenario.Pins{Name: "split", CPUs: "1-2", GeneratorCPUs: "5"})
	r := Check(context.Background(), o)
	c := r.Result(IDSMT)
	if c.Status != Warn || !strings.Contains(c.Found, `pin set "split": target CPU 1 with generator CPU 5 share a core`) {
		dump(t, r)
		t.Errorf("smt %s %q", c.Status, c.Found)
	}

	o = tunedOptions(t, root)
	o.Scenario = services(scenario.Pins{Name: "cores", CPUs: "1-2,5-6", GeneratorCPUs: "3,7"})
	r = Check(context.Background(), o)
	if c := r.Result(IDSMT); c.Status != OK || !strings.Contains(c.Found, "SMT on: 2 threads per core") {
		dump(t, r)
		t.Errorf("smt %s %q", c.Status, c.Found)
	}

	o = tunedOptions(t, root)
	r = Check(context.Background(), o)
	if c := r.Result(IDSMT); c.Status != Warn || len(c.Fix) != 2 {
		t.Errorf("smt without pins: %s %q %q", c.Status, c.Found, c.Fix)
	}
}

func TestFrequency(t *testing.T) {
	t.Parallel()
	root := tree(t, "tuned")
	write(t, root, "sys/devices/system/cpu/cpu3/cpufreq/scaling_governor", "powersave")
	write(t, root, "sys/devices/system/cpu/intel_pstate/no_turbo", "0")
	r := Check(context.Background(), tunedOptions(t, root))
	if c := r.Result(IDGovernor); c.Status != Warn || c.Found != "performance on CPUs 0-2,4-7, powersave on CPU 3 (driver intel_pstate)" ||
		!slices.Contains(c.Fix, "sudo cpupower frequency-set -g performance") {
		t.Errorf("governor: %s %q %q", c.Status, c.Found, c.Fix)
	}
	if c := r.Result(IDTurbo); c.Status != Warn || c.Found != "turbo on (intel_pstate/no_turbo = 0)" ||
		!slices.Contains(c.Fix, "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo") {
		t.Errorf("turbo: %s %q %q", c.Status, c.Found, c.Fix)
	}
	// A pin set on performance CPUs only is fine, whatever CPU 3 does.
	o := tunedOptions(t, root)
	o.Scenario = services(scenario.Pins{Name: "p", CPUs: "4-6", GeneratorCPUs: "1"})
	if c := Check(context.Background(), o).Result(IDGovernor); c.Status != OK {
		t.Errorf("governor of the pinned CPUs: %s %q", c.Status, c.Found)
	}

	// AMD: cpufreq/boost.
	os.Remove(filepath.Join(root, "sys/devices/system/cpu/intel_pstate/no_turbo"))
	write(t, root, "sys/devices/system/cpu/cpufreq/boost", "1")
	if c := Check(context.Background(), tunedOptions(t, root)).Result(IDTurbo); c.Status != Warn || c.Fix[0] != "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost" {
		t.Errorf("boost: %s %q %q", c.Status, c.Found, c.Fix)
	}
	write(t, root, "sys/devices/system/cpu/cpufreq/boost", "0")
	if c := Check(context.Background(), tunedOptions(t, root)).Result(IDTurbo); c.Status != OK {
		t.Errorf("boost off: %s %q", c.Status, c.Found)
	}
}

func TestMemoryPins(t *testing.T) {
	t.Parallel()
	root := tree(t, "tuned") // 62.7 GiB total, 60.1 GiB available
	for _, tc := range []struct {
		gib  int64
		want Status
		text string
	}{
		{4, OK, ""},
		{31, Warn, `pin set "m": both targets stay up at once, 2 × memory 31GiB = 62 GiB exceeds the 60.1 GiB available now`},
		{40, Fail, `pin set "m": both targets stay up at once, 2 × memory 40GiB = 80 GiB exceeds the machine's 62.7 GiB`},
	} {
		o := tunedOptions(t, root)
		o.Scenario = services(scenario.Pins{Name: "m", Memory: tc.gib << 30, MemoryText: strconv.FormatInt(tc.gib, 10) + "GiB"})
		c := Check(context.Background(), o).Result(IDMemory)
		if c.Status != tc.want || !strings.HasPrefix(c.Found, tc.text) {
			t.Errorf("%d GiB: %s %q, want %s %q", tc.gib, c.Status, c.Found, tc.want, tc.text)
		}
	}
	// A gobench run has one test binary at a time.
	o := tunedOptions(t, root)
	o.Scenario = &scenario.Scenario{Kind: scenario.KindGoBench, PinSets: []scenario.Pins{{Name: "m", Memory: 40 << 30, MemoryText: "40GiB"}}}
	if c := Check(context.Background(), o).Result(IDMemory); c.Status != OK {
		t.Errorf("gobench 40GiB: %s %q", c.Status, c.Found)
	}
}

func TestCgroupVariants(t *testing.T) {
	t.Parallel()
	// The VM: v2, benchgate in its service's group. A scenario without
	// memory pins of process targets needs no cgroup.
	root := tree(t, "vm")
	o := vmOptions(t, root)
	o.Scenario = services(scenario.Pins{Name: "c", CPUs: "1", GeneratorCPUs: "0"})
	if c := Check(context.Background(), o).Result(IDCgroup); c.Status != OK || !strings.Contains(strings.Join(c.Notes, "\n"), "this scenario needs none") {
		t.Errorf("no memory pin: %s %q %q", c.Status, c.Found, c.Notes)
	}
	o = vmOptions(t, root)
	o.Scenario = services(scenario.Pins{Name: "c", Memory: 1 << 30, MemoryText: "1GiB"})
	if c := Check(context.Background(), o).Result(IDCgroup); c.Status != Warn {
		t.Errorf("memory pin: %s %q", c.Status, c.Found)
	}
	// The memory controller already enabled for the group's children.
	write(t, root, "sys/fs/cgroup/system.slice/actions.runner.service/cgroup.subtree_control", "memory")
	if c := Check(context.Background(), vmOptions(t, root)).Result(IDCgroup); c.Status != OK || !strings.Contains(c.Found, "through cgroup v2") {
		t.Errorf("subtree enabled: %s %q", c.Status, c.Found)
	}
	// Not available in the group at all.
	write(t, root, "sys/fs/cgroup/system.slice/actions.runner.service/cgroup.controllers", "cpu pids")
	if c := Check(context.Background(), vmOptions(t, root)).Result(IDCgroup); c.Status != Warn || !strings.Contains(strings.Join(c.Notes, "\n"), "the memory controller is not available in /system.slice/actions.runner.service") {
		t.Errorf("not delegated: %s %q %q", c.Status, c.Found, c.Notes)
	}

	// A legacy v1 host: the memory hierarchy takes the pin.
	root = tree(t, "vm")
	write(t, root, "proc/self/cgroup", "4:memory:/runner\n3:cpu,cpuacct:/runner\n1:name=systemd:/runner")
	write(t, root, "proc/self/mountinfo", "32 31 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n33 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd")
	write(t, root, "sys/fs/cgroup/memory/runner/memory.limit_in_bytes", "9223372036854771712")
	c := Check(context.Background(), vmOptions(t, root)).Result(IDCgroup)
	if c.Status != OK || c.Found != "cgroup v1 (cpu, cpuacct, memory); memory pins of process targets apply through cgroup v1 memory (/sys/fs/cgroup/memory/runner)" {
		t.Errorf("v1: %s %q", c.Status, c.Found)
	}
	// Its v1 cpuset allows CPU 0 only: a target pinned to CPU 1 is refused.
	write(t, root, "proc/self/cgroup", "5:cpuset:/runner\n4:memory:/runner\n3:cpu,cpuacct:/runner\n1:name=systemd:/runner")
	write(t, root, "proc/self/mountinfo", "31 30 0:28 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n32 31 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory")
	write(t, root, "sys/fs/cgroup/cpuset/runner/cpuset.effective_cpus", "0")
	o = vmOptions(t, root)
	o.Scenario = services(scenario.Pins{Name: "one", CPUs: "1", GeneratorCPUs: "0"})
	if c := Check(context.Background(), o).Result(IDPins); c.Status != Fail || !strings.Contains(c.Found, "benchgate may not run on CPU 1 (its cpuset allows 0)") {
		t.Errorf("v1 cpuset: %s %q", c.Status, c.Found)
	}
}

func TestDockerEngine(t *testing.T) {
	t.Parallel()
	root := tree(t, "vm") // 2 CPUs, swap on
	e := goodEngine(2)
	e.info.SwapLimit = false
	e.info.Warnings = []string{"WARNING: No swap limit support"}
	o := vmOptions(t, root)
	o.Docker = e
	c := Check(context.Background(), o).Result(IDDocker)
	if c.Status != Warn || !strings.Contains(c.Found, "the engine cannot limit swap while swap is on") ||
		!slices.Contains(c.Notes, "engine: WARNING: No swap limit support") {
		t.Errorf("no swap limit: %s %q %q", c.Status, c.Found, c.Notes)
	}
	// An engine elsewhere (16 CPUs) with image targets pinned to CPUs.
	o = vmOptions(t, root)
	o.Docker = goodEngine(16)
	o.Scenario = services(scenario.Pins{Name: "d", CPUs: "1", GeneratorCPUs: "0"})
	o.Scenario.Baseline = scenario.Target{Name: "baseline", Image: "demo:main", Port: 8080}
	c = Check(context.Background(), o).Result(IDDocker)
	if c.Status != Warn || !strings.Contains(c.Found, "the engine sees 16 CPUs and this machine has 2") {
		t.Errorf("engine elsewhere: %s %q", c.Status, c.Found)
	}
	// No engine client at all.
	if c := Check(context.Background(), vmOptions(t, root)).Result(IDDocker); c.Status != Skip {
		t.Errorf("nil engine: %s %q", c.Status, c.Found)
	}
	// A good engine.
	o = vmOptions(t, root)
	o.Docker = goodEngine(2)
	c = Check(context.Background(), o).Result(IDDocker)
	if want := "Docker Engine 28.5.2 (API 1.51) at unix:///var/run/docker.sock; cgroup v2 with the systemd driver, 2 CPUs, 64 GiB"; c.Status != OK || c.Found != want {
		t.Errorf("good engine: %s %q\nwant %q", c.Status, c.Found, want)
	}
}

func TestVirtDetect(t *testing.T) {
	t.Parallel()
	root := tree(t, "tuned")
	o := tunedOptions(t, root)
	var asked []string
	o.detectVirt = func(_ context.Context, flag string) (string, error) {
		asked = append(asked, flag)
		if flag == "--container" {
			return "docker", nil
		}
		return "none", nil
	}
	c := Check(context.Background(), o).Result(IDVirt)
	if c.Status != OK || c.Found != "bare metal: no hypervisor seen" || !strings.Contains(strings.Join(c.Notes, "\n"), "benchgate runs in a container (docker)") {
		t.Errorf("container on bare metal: %s %q %q", c.Status, c.Found, c.Notes)
	}
	if !slices.Equal(asked, []string{"--vm", "--container"}) {
		t.Errorf("asked %q", asked)
	}
	// Hyper-V by DMI alone.
	write(t, root, "sys/class/dmi/id/product_name", "Virtual Machine")
	write(t, root, "sys/class/dmi/id/sys_vendor", "Microsoft Corporation")
	if c := Check(context.Background(), tunedOptions(t, root)).Result(IDVirt); c.Status != Warn || c.Found != "a virtual machine (Hyper-V)" {
		t.Errorf("hyper-v: %s %q", c.Status, c.Found)
	}
}

// The busy-process sample: left out when asked, cut short by a
// cancellation.
func TestSample(t *testing.T) {
	t.Parallel()
	root := tree(t, "tuned")
	o := tunedOptions(t, root)
	o.Sample = -1
	if c := Check(context.Background(), o).Result(IDProcesses); c.Status != Skip {
		t.Errorf("not sampled: %s %q", c.Status, c.Found)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o = tunedOptions(t, root)
	o.sleep = nil
	o.Sample = time.Hour
	start := time.Now()
	if c := Check(ctx, o).Result(IDProcesses); c.Status != Skip || !strings.Contains(c.Found, "cut short") {
		t.Errorf("cancelled: %s %q", c.Status, c.Found)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a cancelled sample took %v", d)
	}
	// Nothing passed in /proc/stat (a fake tree without a sleep that
	// changes it).
	o = tunedOptions(t, root)
	o.sleep = func(context.Context, time.Duration) error { return nil }
	if c := Check(context.Background(), o).Result(IDProcesses); c.Status != Skip {
		t.Errorf("static tree: %s %q", c.Status, c.Found)
	}
}

func TestCPUSet(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":            "",
		"0":           "0",
		"0-3,5":       "0-3,5",
		" 0-1,3\n":    "0-1,3",
		"0,1,2,4,6,7": "0-2,4,6-7",
	} {
		s, err := parseCPUs(in)
		if err != nil || s.String() != want {
			t.Errorf("parseCPUs(%q) = %q, %v; want %q", in, s, err, want)
		}
	}
	for _, bad := range []string{"x", "3-1", "-1", "0-99999", "1,,2", "5,0-3,2", "0-1 , 3"} {
		if _, err := parseCPUs(bad); err == nil {
			t.Errorf("parseCPUs(%q) took it", bad)
		}
	}
	a, _ := parseCPUs("0-5")
	b, _ := parseCPUs("4-7")
	if a.minus(b).String() != "0-3" || a.and(b).String() != "4-5" || a.or(b).String() != "0-7" {
		t.Errorf("set operations: %s %s %s", a.minus(b), a.and(b), a.or(b))
	}
}

// On this machine, whatever it is: every check reports, with a valid
// status and a finding.
func TestThisMachine(t *testing.T) {
	t.Parallel()
	r := Check(context.Background(), Options{Sample: 100 * time.Millisecond})
	if r.Root != "/" || len(r.Checks) != len(CheckIDs) {
		t.Fatalf("root %q, %d checks", r.Root, len(r.Checks))
	}
	for i, c := range r.Checks {
		if c.ID != CheckIDs[i] || c.Title == "" || c.Found == "" || !slices.Contains([]Status{OK, Warn, Fail, Skip}, c.Status) {
			t.Errorf("check %d: %+v", i, c)
		}
	}
	if c := r.Result(IDDocker); c.Status != Skip {
		t.Errorf("docker without a client: %s", c.Status)
	}
	dump(t, r)
}
