package doctor

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/benchgate/benchgate/scenario"
)

// minCPUs is the fewest CPUs a machine should have: one each for the
// target, the load generator and the operating system.
const minCPUs = 3

// findings gathers a check's problems; the worst status wins.
type findings struct {
	status Status
	lines  []finding
	fixes  []string
}

type finding struct {
	status Status
	line   string
	fixes  []string
}

func (f *findings) add(s Status, line string, fix ...string) {
	if rank(s) > rank(f.status) {
		f.status = s
	}
	f.lines = append(f.lines, finding{s, line, fix})
}

func rank(s Status) int {
	switch s {
	case Warn:
		return 1
	case Fail:
		return 2
	}
	return 0
}

// result turns the findings into a result: found is the summary ok when
// nothing was wrong, else the worst problem, the others listed first in
// the notes; fixes in the same order, the worst problem's first.
func (f *findings) result(ok string, notes []string) Result {
	if f.status == "" || len(f.lines) == 0 {
		return Result{Status: OK, Found: ok, Notes: notes}
	}
	lines := slices.Clone(f.lines)
	slices.SortStableFunc(lines, func(a, b finding) int { return rank(b.status) - rank(a.status) })
	r := Result{Status: f.status, Found: lines[0].line}
	for i, l := range lines {
		if i > 0 {
			r.Notes = append(r.Notes, l.line)
		}
		for _, x := range l.fixes {
			if !slices.Contains(r.Fix, x) {
				r.Fix = append(r.Fix, x)
			}
		}
	}
	r.Notes = append(r.Notes, notes...)
	return r
}

func (m *machine) checkCPUs() Result {
	if m.onlineErr != nil {
		return Result{Status: Skip, Found: "cannot tell which CPUs are online: " + m.onlineErr.Error()}
	}
	found := plural(len(m.online), "CPU", "CPUs") + " online (" + m.online.String() + ")"
	if m.cpuModel != "" {
		found += ", " + m.cpuModel
	}
	var notes []string
	usable := m.usable()
	if m.allowed != nil && len(usable) < len(m.online) {
		notes = append(notes, fmt.Sprintf("benchgate's cpuset allows %s only (%s): pins must stay within them", cpusText(usable), m.allowedFrom))
	}
	if m.affinity != nil && len(m.affinity.and(usable)) < len(usable) {
		notes = append(notes, fmt.Sprintf("benchgate's own affinity is %s now (isolcpus' default, or taskset): pins widen it within the cpuset", cpusText(m.affinity)))
	}
	if s, err := m.read("/sys/devices/system/cpu/isolated"); err == nil {
		if iso, err := parseCPUs(s); err == nil && len(iso) > 0 {
			notes = append(notes, fmt.Sprintf("%s isolated from the scheduler (isolcpus): pin the targets and the generator there", cpusText(iso)))
		}
	}
	if s, err := m.read("/sys/devices/system/cpu/nohz_full"); err == nil {
		if nz, err := parseCPUs(s); err == nil && len(nz) > 0 {
			notes = append(notes, fmt.Sprintf("%s run tickless (nohz_full)", cpusText(nz)))
		}
	}
	r := Result{Status: OK, Found: found, Notes: notes}
	if len(usable) < minCPUs {
		r.Status = Warn
		r.Found = fmt.Sprintf("%s usable (%s): fewer than %d, so a target, the load generator and the OS cannot each have a CPU of their own", plural(len(usable), "CPU", "CPUs"), usable, minCPUs)
		if m.cpuModel != "" {
			r.Notes = append([]string{m.cpuModel}, r.Notes...)
		}
		r.Fix = []string{"use a machine with at least 4 CPUs: one for the OS and the runner, one for the load generator, the rest for the targets"}
	}
	return r
}

func (m *machine) checkPins() Result {
	if m.sc == nil {
		return Result{Status: Skip, Found: "no scenario: run benchgate doctor -scenario FILE to check its pin sets"}
	}
	usable := m.usable()
	gobench := m.sc.Kind == scenario.KindGoBench
	if len(m.sc.PinSets) == 0 {
		r := Result{Status: Warn, Found: "the scenario pins nothing: the targets and the load generator share every CPU with each other and the OS"}
		if gobench {
			r.Found = "the scenario pins nothing: the benchmarks share every CPU with the OS"
		}
		if s := suggestPins(usable, gobench); s != "" {
			r.Fix = []string{"add to the scenario: pins: " + s}
		}
		return r
	}
	if m.onlineErr != nil {
		return Result{Status: Skip, Found: "cannot tell which CPUs are online: " + m.onlineErr.Error()}
	}
	var f findings
	var layout []string
	urlOnly := !gobench && m.startedTargets() == 0
	for _, p := range m.sc.PinSets {
		name := fmt.Sprintf("pin set %q", p.Name)
		t, _ := parseCPUs(p.CPUs)
		g, _ := parseCPUs(p.GeneratorCPUs)
		if gobench {
			g = nil // a gobench run has no load generator
		}
		bad := false
		for _, s := range []struct {
			field string
			set   cpuSet
			pins  bool // benchgate pins it itself (not an engine)
		}{
			{"cpus", t, m.processTargets()},
			{"generator_cpus", g, true},
		} {
			if missing := s.set.minus(m.online); len(missing) > 0 {
				bad = true
				f.add(Fail, fmt.Sprintf("%s: %s %s: %s not online (this machine has %s)", name, s.field, s.set, isAre(missing), cpusText(m.online)),
					"pin only CPUs this machine has online ("+m.online.String()+")")
				continue
			}
			if s.pins && m.allowed != nil {
				if out := s.set.minus(m.allowed); len(out) > 0 {
					bad = true
					f.add(Fail, fmt.Sprintf("%s: %s %s: benchgate may not run on %s (its cpuset allows %s): the pin would be refused", name, s.field, s.set, cpusText(out), m.allowed),
						"pin within the CPUs benchgate may use ("+m.allowed.String()+"), or widen the runner's cpuset (systemd: AllowedCPUs= of the runner's service or slice)")
				}
			}
		}
		if bad {
			continue
		}
		if urlOnly && len(t) > 0 {
			f.add(Warn, fmt.Sprintf("%s: cpus %s pins nothing: both targets are URLs, which benchgate does not start", name, t),
				"leave cpus out for url targets, and pin the service where it is started")
		}
		if !gobench && len(t) > 0 && len(g) == 0 && !urlOnly {
			fix := "give the load generator CPUs of its own: generator_cpus"
			if s := suggestGenerator(usable, t); s != nil {
				fix += fmt.Sprintf(": %q", s.String())
			}
			f.add(Warn, fmt.Sprintf("%s: the targets are pinned to %s but the load generator is not: it runs anywhere, on the targets' CPUs too", name, t), fix)
		}
		if both := t.and(g); len(both) > 0 {
			f.add(Warn, fmt.Sprintf("%s: cpus %s and generator_cpus %s share %s: the load generator competes with the target it measures", name, t, g, cpusText(both)),
				"make cpus and generator_cpus disjoint"+suggestText(usable, gobench))
		}
		used := t.or(g)
		left := usable.minus(used)
		if len(used) > 0 && len(left) == 0 {
			f.add(Warn, fmt.Sprintf("%s: uses every CPU benchgate may run on (%s): none is left for the OS, the runner and the engine", name, used),
				"leave at least one CPU (customarily CPU 0) out of every pin set")
		}
		desc := name + ":"
		if len(t) > 0 {
			desc += " targets " + t.String()
		} else {
			desc += " targets unpinned"
		}
		if !gobench {
			if len(g) > 0 {
				desc += ", generator " + g.String()
			} else {
				desc += ", generator unpinned"
			}
		}
		if len(used) > 0 {
			if len(left) > 0 {
				desc += ", left for the OS " + left.String()
			} else {
				desc += ", none left for the OS"
			}
		}
		if p.Memory > 0 {
			desc += ", memory " + p.MemoryText
		}
		layout = append(layout, desc)
	}
	ok := fmt.Sprintf("%s fit this machine", plural(len(m.sc.PinSets), "pin set", "pin sets"))
	if len(m.sc.PinSets) == 1 {
		ok = "the pin set fits this machine"
	}
	if !gobench {
		ok += ": targets and load generator on CPUs of their own"
	}
	return f.result(ok, layout)
}

func isAre(s cpuSet) string {
	if len(s) == 1 {
		return "CPU " + s.String() + " is"
	}
	return "CPUs " + s.String() + " are"
}

// suggestPins proposes a pin set for the usable CPUs: the first left to
// the OS, the next to the load generator (not for gobench), the rest to
// the targets. "" when there are too few.
func suggestPins(usable cpuSet, gobench bool) string {
	switch {
	case gobench && len(usable) >= 2:
		return fmt.Sprintf("{cpus: %q}", usable[1:].String())
	case !gobench && len(usable) >= minCPUs:
		return fmt.Sprintf("{cpus: %q, generator_cpus: %q}", usable[2:].String(), usable[1:2].String())
	case !gobench && len(usable) == 2:
		return fmt.Sprintf("{cpus: %q, generator_cpus: %q}", usable[1:].String(), usable[:1].String())
	}
	return ""
}

func suggestText(usable cpuSet, gobench bool) string {
	if s := suggestPins(usable, gobench); s != "" {
		return ", e.g. " + s
	}
	return ""
}

// suggestGenerator picks a CPU for the load generator outside the
// targets' CPUs, leaving the first free one to the OS when it can.
func suggestGenerator(usable, targets cpuSet) cpuSet {
	free := usable.minus(targets)
	switch {
	case len(free) >= 2:
		return free[1:2]
	case len(free) == 1:
		return free
	}
	return nil
}

func (m *machine) cpuDir(c int) string {
	return fmt.Sprintf("/sys/devices/system/cpu/cpu%d", c)
}

func (m *machine) checkGovernor() Result {
	cpus := m.scope()
	if len(cpus) == 0 {
		return Result{Status: Skip, Found: "cannot tell which CPUs are online"}
	}
	byGov := map[string]cpuSet{}
	var missing cpuSet
	for _, c := range cpus {
		g, err := m.read(m.cpuDir(c) + "/cpufreq/scaling_governor")
		if err != nil || g == "" {
			missing = append(missing, c)
			continue
		}
		byGov[g] = append(byGov[g], c)
	}
	what := "the CPUs"
	if m.pinned() != nil {
		what = "the pinned CPUs"
	}
	if len(missing) == len(cpus) {
		why := "no cpufreq driver is loaded: the firmware decides the clock; check its power profile (performance, C-states off)"
		if m.hasFlag("hypervisor") {
			why = "a VM's clock is its host's to set"
		}
		return Result{Status: Skip, Found: fmt.Sprintf("no frequency scaling for %s (no %s/cpufreq): %s", what, m.cpuDir(cpus[0]), why)}
	}
	driver, _ := m.read(m.cpuDir(cpus[0]) + "/cpufreq/scaling_driver")
	if driver == "" {
		for _, c := range cpus {
			if driver, _ = m.read(m.cpuDir(c) + "/cpufreq/scaling_driver"); driver != "" {
				break
			}
		}
	}
	govs := make([]string, 0, len(byGov))
	for g := range byGov {
		govs = append(govs, g)
	}
	sort.Slice(govs, func(i, j int) bool { return byGov[govs[i]][0] < byGov[govs[j]][0] })
	var parts []string
	for _, g := range govs {
		parts = append(parts, g+" on "+cpusText(byGov[g]))
	}
	found := strings.Join(parts, ", ")
	if driver != "" {
		found += " (driver " + driver + ")"
	}
	var notes []string
	if len(missing) > 0 {
		notes = append(notes, "no cpufreq for "+cpusText(missing))
	}
	if len(govs) == 1 && govs[0] == "performance" {
		return Result{Status: OK, Found: found, Notes: notes}
	}
	return Result{Status: Warn, Found: found, Notes: append(notes, "want performance: any other governor moves the clock with the load, so the load of one rung becomes the speed of the next"),
		Fix: []string{
			"sudo cpupower frequency-set -g performance",
			"or: echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
			"keep it across boots with a systemd unit, or tuned: sudo tuned-adm profile latency-performance",
		}}
}

func (m *machine) checkTurbo() Result {
	var f findings
	var seen []string
	if v, err := m.read("/sys/devices/system/cpu/intel_pstate/no_turbo"); err == nil {
		seen = append(seen, "intel_pstate/no_turbo = "+v)
		if v != "1" {
			f.add(Warn, "turbo on (intel_pstate/no_turbo = "+v+")", "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo")
		}
	}
	if v, err := m.read("/sys/devices/system/cpu/cpufreq/boost"); err == nil {
		seen = append(seen, "cpufreq/boost = "+v)
		if v != "0" {
			f.add(Warn, "boost on (cpufreq/boost = "+v+")", "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost")
		}
	}
	policies, _ := filepath.Glob(m.path("/sys/devices/system/cpu/cpufreq/policy*/boost"))
	var on []string
	for _, p := range policies {
		rel, _ := filepath.Rel(m.path("/sys/devices/system/cpu/cpufreq"), p)
		v, err := m.read("/sys/devices/system/cpu/cpufreq/" + rel)
		if err != nil {
			continue
		}
		if v != "0" {
			on = append(on, filepath.Dir(rel))
		}
	}
	if len(policies) > 0 {
		seen = append(seen, fmt.Sprintf("per-policy boost on %d of %d", len(on), len(policies)))
		if len(on) > 0 {
			f.add(Warn, "boost on for "+joinAnd(on)+" (cpufreq/policy*/boost)", "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/policy*/boost")
		}
	}
	if len(seen) == 0 {
		why := "on bare metal, turn turbo/boost off in the firmware setup"
		if m.hasFlag("hypervisor") {
			why = "in a VM the host decides"
		}
		return Result{Status: Skip, Found: "no turbo/boost switch (intel_pstate/no_turbo, cpufreq/boost): " + why}
	}
	r := f.result("turbo/boost off ("+strings.Join(seen, ", ")+")", nil)
	if r.Status != OK {
		r.Notes = append(r.Notes, "a clock that rises when one core is busy and falls when more are makes concurrency levels incomparable")
	}
	return r
}

func (m *machine) checkSMT() Result {
	active, errA := m.read("/sys/devices/system/cpu/smt/active")
	control, _ := m.read("/sys/devices/system/cpu/smt/control")
	// Each online CPU's core: the threads that share it.
	siblings := map[int]cpuSet{}
	threads := 1
	var shared cpuSet
	for _, c := range m.online {
		s, err := m.read(m.cpuDir(c) + "/topology/thread_siblings_list")
		if err != nil {
			s, err = m.read(m.cpuDir(c) + "/topology/core_cpus_list")
		}
		if err != nil {
			continue
		}
		set, err := parseCPUs(s)
		if err != nil {
			continue
		}
		set = set.and(m.online)
		siblings[c] = set
		if len(set) > 1 {
			shared = append(shared, c)
			threads = max(threads, len(set))
		}
	}
	on := active == "1" || errA != nil && len(shared) > 0
	if !on {
		found := "SMT off: one thread per core"
		switch control {
		case "off", "forceoff":
			found = "SMT off (smt/control = " + control + ")"
		case "notsupported", "notimplemented":
			found = "SMT not supported here (smt/control = " + control + "): one thread per core"
		}
		if len(shared) > 0 {
			// Off, yet cores with two online threads: trust the topology.
			found = fmt.Sprintf("SMT reads off, but %s share cores with other online CPUs", cpusText(shared))
			return Result{Status: Warn, Found: found, Fix: []string{"echo off | sudo tee /sys/devices/system/cpu/smt/control"}}
		}
		return Result{Status: OK, Found: found}
	}
	core := func(c int) string {
		if s := siblings[c]; len(s) > 1 {
			return s.String()
		}
		return itoa(c)
	}
	example := ""
	if len(shared) > 0 {
		example = ", e.g. CPUs " + core(shared[0]) + " are one core"
	}
	found := fmt.Sprintf("SMT on: %d threads per core%s", threads, example)
	offFix := "or turn SMT off: echo off | sudo tee /sys/devices/system/cpu/smt/control (nosmt on the kernel command line keeps it off)"
	wholeFix := "pin whole cores: both threads of a core in the same pin set, target and generator on different cores (siblings: /sys/devices/system/cpu/cpuN/topology/thread_siblings_list)"
	if m.pinned() == nil {
		return Result{Status: Warn, Found: found, Notes: []string{"two threads of one core share its execution units: a target's sibling thread busy with anything else slows it"},
			Fix: []string{wholeFix, offFix}}
	}
	var f findings
	var notes []string
	for _, p := range m.sc.PinSets {
		t, _ := parseCPUs(p.CPUs)
		g, _ := parseCPUs(p.GeneratorCPUs)
		if m.sc.Kind == scenario.KindGoBench {
			g = nil
		}
		t, g = t.and(m.online), g.and(m.online)
		var clash []string
		for _, c := range t {
			if sib := siblings[c].and(g).minus(cpuSet{c}); len(sib) > 0 {
				clash = append(clash, fmt.Sprintf("target CPU %d with generator %s", c, cpusText(sib)))
			}
		}
		if len(clash) > 0 {
			f.add(Warn, fmt.Sprintf("pin set %q: %s share a core: the generator's load slows the target it measures", p.Name, joinAnd(clash)), wholeFix, offFix)
		}
		var loose cpuSet
		for _, c := range t {
			loose = loose.or(siblings[c].minus(t).minus(g))
		}
		if len(loose) > 0 {
			notes = append(notes, fmt.Sprintf("pin set %q: the other threads of the targets' cores (%s) are in no pin set: whatever the OS runs there slows the targets; take them offline or into the pins", p.Name, cpusText(loose)))
		}
	}
	r := f.result(found+"; the pins keep targets and generator on separate cores", notes)
	if r.Status != OK {
		r.Found = found + "; " + r.Found
	}
	return r
}
