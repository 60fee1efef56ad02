package scenario

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/internal/linux"
)

// pinNameRE is what a pin set's name may hold: the alphabet of the
// default names ("cpus=0,2 memory=2GiB"), without leading or trailing
// spaces.
var pinNameRE = regexp.MustCompile(`^[A-Za-z0-9_.=,-]+( +[A-Za-z0-9_.=,-]+)*$`)

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

// cpuset reads a cpuset and keeps its CPUs and place for CheckCPUs.
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
	l.s.cpuPins = append(l.s.cpuPins, cpuPin{line: n.line, col: n.col, field: field, cpus: cpus})
	return s, true
}

// cpuPin is one cpuset of the pins section with its place in the file.
type cpuPin struct {
	line, col int
	field     string // e.g. "pins[1].generator_cpus"
	cpus      []int  // sorted
}

// CheckCPUs refuses pins on CPUs that online lacks: one Error per such
// cpuset, in an *ErrorList of the form Load returns, so that a run reports
// it as an invalid scenario. Load leaves this check out so that whether a
// file is valid does not depend on the machine that reads it; a run calls
// CheckCPUs before it starts anything. Every cpuset of the pins section is
// checked, those the profile leaves out too: a file is checked whole,
// whichever profile runs. online is linux.OnlineCPUs's list (its guess
// will do when the kernel's cannot be read), in any order; empty means the
// CPUs cannot be told, and nothing is refused: pinning then finds out.
func (s *Scenario) CheckCPUs(online []int) error {
	if len(online) == 0 {
		return nil
	}
	online = slices.Compact(slices.Sorted(slices.Values(online)))
	have := "CPUs "
	if len(online) == 1 {
		have = "CPU "
	}
	have += linux.FormatCPUList(online)
	errs := &ErrorList{}
	for _, p := range s.cpuPins {
		missing := missingCPUs(p.cpus, online)
		if len(missing) == 0 {
			continue
		}
		what := "CPUs " + linux.FormatCPUList(missing) + " do not"
		if len(missing) == 1 {
			what = "CPU " + linux.FormatCPUList(missing) + " does not"
		}
		errs.add(&Error{File: s.File, Line: p.line, Col: p.col, Field: p.field,
			Msg: fmt.Sprintf("%s exist here (this machine has %s)", what, have)})
	}
	return errs.err()
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

// ParseMemory reads a memory size: bytes, or a number with a unit. Units
// ending in "iB" (or "Ki", "Mi", …) are powers of 1024; "KB", "MB", "GB",
// "TB" and the bare letters "K", "M", "G", "T" are powers of 1000.
func ParseMemory(s string) (int64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	num, unit := s[:i], strings.TrimSpace(s[i:])
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a memory size (want e.g. 2GiB, 512MiB, 1G or a number of bytes)", s)
	}
	mult := map[string]int64{
		"": 1, "B": 1,
		"K": 1e3, "KB": 1e3, "kB": 1e3, "k": 1e3,
		"M": 1e6, "MB": 1e6,
		"G": 1e9, "GB": 1e9,
		"T": 1e12, "TB": 1e12,
		"Ki": 1 << 10, "KiB": 1 << 10,
		"Mi": 1 << 20, "MiB": 1 << 20,
		"Gi": 1 << 30, "GiB": 1 << 30,
		"Ti": 1 << 40, "TiB": 1 << 40,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (want B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s, unit)
	}
	if n <= 0 {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}
