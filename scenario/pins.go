package scenario

import (
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/internal/linux"
)

// pinNameRE is what a pin set's name may hold: the alphabet of the
// default names ("cpus=0,2 memory=2GiB"), without leading or trailing
// spaces.
var pinNameRE = regexp.MustCompile(`^[A-Za-z0-9_.=,-]+( +[A-Za-z0-9_.=,-]+)*$`)

// onlineCPUs lists the CPUs of the machine benchgate runs on, which is
// where it applies pins. A variable so that tests can pretend to run on
// another machine.
var onlineCPUs = func() ([]int, error) {
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if cpus, err := linux.ParseCPUList(strings.TrimSpace(string(b))); err == nil {
			return cpus, nil
		}
	}
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus, nil
}

// pins reads the pins section: one pin set (a mapping) or a list of them.
func (l *loader) pins(n *node) {
	l.hasPins = true
	n0 := len(l.errs.Errors) + l.errs.Dropped
	defer func() { l.pinsFailed = len(l.errs.Errors)+l.errs.Dropped > n0 }()
	switch n.kind {
	case kindMap:
		if p, ok := l.pinSet(n, "pins"); ok {
			l.addPinSet(p, n, "pins")
		}
	case kindSeq:
		if len(n.items) == 0 {
			l.errNode(n, "pins", "must not be empty (leave pins out to pin nothing)")
			return
		}
		for i, it := range n.items {
			f := index("pins", i)
			if p, ok := l.pinSet(it, f); ok {
				l.addPinSet(p, it, f)
			}
		}
	default:
		l.errNode(n, "pins", "want a mapping (one pin set) or a list of mappings, got %s", n.describe())
	}
}

// pinSet reads one pin set; ok is false when anything in it is wrong.
func (l *loader) pinSet(n *node, f string) (Pins, bool) {
	var p Pins
	m, ok := l.fields(n, f, "name", "cpus", "memory", "generator_cpus")
	if !ok {
		return p, false
	}
	if v := m["name"]; v != nil {
		s, good := l.nonEmptyStr(v, f+".name")
		switch {
		case !good:
			ok = false
		case !pinNameRE.MatchString(s):
			l.errNode(v, f+".name", "%q is not a valid pin set name (want letters, digits, _ . - = , and spaces between them)", v.errText())
			ok = false
		default:
			p.Name = s
		}
	}
	if v := m["cpus"]; v != nil {
		var good bool
		p.CPUs, good = l.cpuset(v, f+".cpus")
		ok = ok && good
	}
	if v := m["generator_cpus"]; v != nil {
		var good bool
		p.GeneratorCPUs, good = l.cpuset(v, f+".generator_cpus")
		ok = ok && good
	}
	if v := m["memory"]; v != nil {
		if s, good := l.nonEmptyStr(v, f+".memory"); !good {
			ok = false
		} else if b, err := ParseMemory(s); err != nil {
			if v.expanded {
				// ParseMemory's message quotes parts of the expanded value.
				l.errNode(v, f+".memory", "%q is not a memory size (want e.g. 2GiB, 512MiB, 1G or a number of bytes)", v.raw)
			} else {
				l.errNode(v, f+".memory", "%v", err)
			}
			ok = false
		} else {
			p.Memory, p.MemoryText = b, s
		}
	}
	if m["cpus"] == nil && m["memory"] == nil {
		line, col := n.reportPos()
		l.errAt(line, col, f, "want cpus or memory (generator_cpus pins only the load generator; a pin set pins the targets)")
		ok = false
	}
	if ok && p.Name == "" {
		p.Name = defaultPinName(p)
	}
	return p, ok
}

// addPinSet appends p, refusing a name already taken.
func (l *loader) addPinSet(p Pins, n *node, f string) {
	if prev, dup := l.pinPos[p.Name]; dup {
		if v := n.get("name"); v != nil {
			l.errNode(v, f+".name", "%q is already the name of the pin set at line %d", v.errText(), prev)
		} else {
			line, col := n.reportPos()
			l.errAt(line, col, f, "%q is already the name of the pin set at line %d (a pin set without name: is named after its cpus and memory; give one of them a name:)", p.Name, prev)
		}
		return
	}
	if l.pinPos == nil {
		l.pinPos = map[string]int{}
	}
	line, _ := n.reportPos()
	if v := n.get("name"); v != nil {
		line = v.line
	}
	l.pinPos[p.Name] = line
	l.s.PinSets = append(l.s.PinSets, p)
}

// defaultPinName describes a pin set that has no name: its cpus and
// memory, e.g. "cpus=1-3 memory=2GiB". generator_cpus is left out: it
// pins the load generator, not what is measured.
func defaultPinName(p Pins) string {
	var parts []string
	if p.CPUs != "" {
		parts = append(parts, "cpus="+p.CPUs)
	}
	if p.MemoryText != "" {
		parts = append(parts, "memory="+strings.ReplaceAll(p.MemoryText, " ", ""))
	}
	return strings.Join(parts, " ")
}

// cpuset reads a cpuset and checks that its CPUs exist on this machine.
func (l *loader) cpuset(n *node, field string) (string, bool) {
	s, ok := l.nonEmptyStr(n, field)
	if !ok {
		return "", false
	}
	cpus, err := linux.ParseCPUList(s)
	if err != nil {
		if n.expanded {
			// ParseCPUList's message quotes parts of the expanded value.
			l.errNode(n, field, "%q is not a cpuset (want e.g. \"0-3,5\")", n.raw)
		} else {
			l.errNode(n, field, "%v", err)
		}
		return "", false
	}
	online, known := l.online()
	if !known {
		return s, true
	}
	if missing := missingCPUs(cpus, online); len(missing) > 0 {
		what := "CPUs " + linux.FormatCPUList(missing) + " do not"
		if len(missing) == 1 {
			what = "CPU " + linux.FormatCPUList(missing) + " does not"
		}
		have := "CPUs "
		if len(online) == 1 {
			have = "CPU "
		}
		l.errNode(n, field, "%s exist here (this machine has %s%s)", what, have, linux.FormatCPUList(online))
		return "", false
	}
	return s, true
}

// online returns the CPUs of this machine, sorted, asking once per file;
// known is false when they cannot be told, and then no cpuset is refused
// for naming a CPU that does not exist.
func (l *loader) online() (cpus []int, known bool) {
	if !l.onlineRead {
		l.onlineRead = true
		if cpus, err := onlineCPUs(); err == nil && len(cpus) > 0 {
			cpus = slices.Clone(cpus)
			slices.Sort(cpus)
			l.onlineCPUs = slices.Compact(cpus)
		}
	}
	return l.onlineCPUs, l.onlineCPUs != nil
}

// missingCPUs is want without the CPUs in have (sorted).
func missingCPUs(want, have []int) []int {
	var out []int
	for _, c := range want {
		if _, ok := slices.BinarySearch(have, c); !ok {
			out = append(out, c)
		}
	}
	return out
}
