package doctor

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/internal/linux"
	"github.com/benchgate/benchgate/scenario"
)

// machine is what the checks read, under root.
type machine struct {
	root string
	real bool // root is "/": this machine, and /proc/self is benchgate
	sc   *scenario.Scenario

	online    cpuSet // online CPUs; nil when unknown
	onlineErr error
	// allowed are the CPUs benchgate's cpuset cgroup lets it (and what
	// it starts) run on, from allowedFrom; nil when unknown. Affinity may
	// be set to any of them.
	allowed     cpuSet
	allowedFrom string
	// affinity is benchgate's own affinity now (Cpus_allowed_list),
	// which may be narrower: isolcpus leaves the isolated CPUs out of
	// every process's default, and taskset narrows it. Pins widen it.
	affinity   cpuSet
	meminfo    map[string]int64
	cpuFlags   []string // of the first processor in /proc/cpuinfo
	cpuModel   string
	swapOn     bool
	swapDevs   []string
	swapsKnown bool
}

// path is p (absolute, as on the machine) under the root.
func (m *machine) path(p string) string { return filepath.Join(m.root, p) }

// read returns the file's text with surrounding space trimmed.
func (m *machine) read(p string) (string, error) {
	b, err := os.ReadFile(m.path(p))
	return strings.TrimSpace(string(b)), err
}

func (m *machine) exists(p string) bool {
	_, err := os.Stat(m.path(p))
	return err == nil
}

// load reads what several checks share.
func (m *machine) load() {
	if s, err := m.read("/sys/devices/system/cpu/online"); err != nil {
		m.onlineErr = err
	} else if m.online, err = parseCPUs(s); err != nil {
		m.onlineErr = err
	} else if len(m.online) == 0 {
		m.online, m.onlineErr = nil, errors.New("no CPU online")
	}
	if s, err := m.read("/proc/self/status"); err == nil {
		for _, line := range strings.Split(s, "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				if set, err := parseCPUs(v); err == nil && len(set) > 0 {
					m.affinity = set
				}
			}
		}
	}
	m.allowed, m.allowedFrom = m.cpusetCPUs()
	m.meminfo = map[string]int64{}
	if s, err := m.read("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(s, "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			f := strings.Fields(v)
			if len(f) == 0 {
				continue
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				continue
			}
			if len(f) > 1 && f[1] == "kB" {
				n *= 1024
			}
			m.meminfo[k] = n
		}
	}
	if s, err := m.read("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(s, "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch {
			case k == "model name" && m.cpuModel == "":
				m.cpuModel = v
			case (k == "flags" || k == "Features") && m.cpuFlags == nil:
				m.cpuFlags = strings.Fields(v)
			}
		}
	}
	if s, err := m.read("/proc/swaps"); err == nil {
		m.swapsKnown = true
		for i, line := range strings.Split(s, "\n") {
			f := strings.Fields(line)
			if i == 0 || len(f) < 3 {
				continue // the header
			}
			m.swapDevs = append(m.swapDevs, f[0]+" ("+f[1]+")")
		}
		m.swapOn = len(m.swapDevs) > 0
	}
	if n := m.meminfo["SwapTotal"]; n > 0 {
		m.swapOn = true
	}
}

// usable is the CPUs benchgate can pin: the online ones it may run on.
func (m *machine) usable() cpuSet {
	if m.allowed == nil {
		return m.online
	}
	return m.online.and(m.allowed)
}

// pinned is every CPU a pin set of the scenario names (targets and
// generator), or nil when there is no scenario or it pins no CPU.
func (m *machine) pinned() cpuSet {
	if m.sc == nil {
		return nil
	}
	var all cpuSet
	for _, p := range m.sc.PinSets {
		t, _ := parseCPUs(p.CPUs)
		g, _ := parseCPUs(p.GeneratorCPUs)
		all = all.or(t).or(g)
	}
	return all
}

// scope is the CPUs whose settings matter: the pinned ones, else every
// online one.
func (m *machine) scope() cpuSet {
	if p := m.pinned().and(m.online); len(p) > 0 {
		return p
	}
	return m.online
}

// processTargets reports whether the scenario starts processes of its own
// (command targets, or a gobench run's test binaries), which benchgate
// pins itself rather than through an engine.
func (m *machine) processTargets() bool {
	if m.sc == nil {
		return false
	}
	if m.sc.Kind == scenario.KindGoBench {
		return true
	}
	return m.sc.Baseline.Kind() == "command" || m.sc.Candidate.Kind() == "command"
}

// imageTargets reports whether the scenario runs docker images.
func (m *machine) imageTargets() bool {
	return m.sc != nil && m.sc.Kind != scenario.KindGoBench &&
		(m.sc.Baseline.Kind() == "image" || m.sc.Candidate.Kind() == "image" ||
			m.sc.Baseline.Kind() == "compose" || m.sc.Candidate.Kind() == "compose")
}

// startedTargets is how many targets run at once under a pin set: both for
// a service scenario (both stay up; url targets are not started), one for
// gobench (one test binary at a time).
func (m *machine) startedTargets() int {
	if m.sc == nil {
		return 0
	}
	if m.sc.Kind == scenario.KindGoBench {
		return 1
	}
	n := 0
	for _, t := range []scenario.Target{m.sc.Baseline, m.sc.Candidate} {
		if k := t.Kind(); k == "command" || k == "image" {
			n++
		}
	}
	return n
}

// hasFlag reports whether the first processor lists a CPU flag.
func (m *machine) hasFlag(f string) bool { return slices.Contains(m.cpuFlags, f) }

// cpuSet is a set of CPU numbers, sorted, without duplicates.
type cpuSet []int

// parseCPUs reads the kernel's list form, "0-3,5" (linux.ParseCPUList),
// with surrounding space trimmed; "" is the empty set.
func parseCPUs(s string) (cpuSet, error) {
	cpus, err := linux.ParseCPUList(strings.TrimSpace(s))
	return cpuSet(cpus), err
}

// String writes the set in the kernel's list form, "0-3,5".
func (s cpuSet) String() string { return linux.FormatCPUList(s) }

func (s cpuSet) has(c int) bool {
	_, ok := slices.BinarySearch(s, c)
	return ok
}

// minus is the CPUs of s not in t.
func (s cpuSet) minus(t cpuSet) cpuSet {
	var out cpuSet
	for _, c := range s {
		if !t.has(c) {
			out = append(out, c)
		}
	}
	return out
}

// and is the CPUs in both.
func (s cpuSet) and(t cpuSet) cpuSet {
	var out cpuSet
	for _, c := range s {
		if t.has(c) {
			out = append(out, c)
		}
	}
	return out
}

// or is the CPUs in either.
func (s cpuSet) or(t cpuSet) cpuSet {
	out := append(slices.Clone(s), t...)
	slices.Sort(out)
	return slices.Compact(out)
}

// readLines calls fn for each line of a file under the root.
func (m *machine) readLines(p string, fn func(string)) error {
	f, err := os.Open(m.path(p))
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
	return sc.Err()
}

func itoa(n int) string { return strconv.Itoa(n) }

// bytesText is a size for a person: "23.5 GiB", "512 MiB".
func bytesText(n int64) string {
	const gib, mib = 1 << 30, 1 << 20
	switch {
	case n >= 1<<40:
		return trimZero(float64(n)/(1<<40)) + " TiB"
	case n >= gib:
		return trimZero(float64(n)/gib) + " GiB"
	case n >= mib:
		return trimZero(float64(n)/mib) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// trimZero writes x with one decimal, without a trailing ".0".
func trimZero(x float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(x, 'f', 1, 64), ".0")
}
