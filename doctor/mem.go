package doctor

import (
	"fmt"
	"regexp"
	"strings"
)

// lowAvailable: less than this share of the memory available warns even
// without memory pins: the page cache of the builds and the targets' own
// memory compete.
const lowAvailable = 0.10

func (m *machine) checkMemory() Result {
	total, okT := m.meminfo["MemTotal"]
	avail, okA := m.meminfo["MemAvailable"]
	if !okT || total <= 0 {
		return Result{Status: Skip, Found: "cannot read MemTotal from /proc/meminfo"}
	}
	found := bytesText(total) + " total"
	if okA {
		found += ", " + bytesText(avail) + " available"
	}
	var f findings
	var notes []string
	if n := m.startedTargets(); n > 0 {
		for _, p := range m.sc.PinSets {
			if p.Memory <= 0 {
				continue
			}
			need := int64(n) * p.Memory
			what := fmt.Sprintf("pin set %q: %s × memory %s = %s", p.Name, plural(n, "target", "targets"), p.MemoryText, bytesText(need))
			if n == 2 {
				what = fmt.Sprintf("pin set %q: both targets stay up at once, 2 × memory %s = %s", p.Name, p.MemoryText, bytesText(need))
			}
			switch {
			case need > total:
				f.add(Fail, what+" exceeds the machine's "+bytesText(total), "lower pins.memory to fit this machine, or use a bigger one")
			case okA && need > avail:
				f.add(Warn, what+" exceeds the "+bytesText(avail)+" available now: the targets would push out the page cache or swap",
					"free memory on the runner (what else runs?), or lower pins.memory")
			default:
				notes = append(notes, what+": fits")
			}
		}
	}
	if okA && float64(avail) < lowAvailable*float64(total) {
		f.add(Warn, fmt.Sprintf("only %s of %s available (under %.0f%%): memory pressure makes the kernel reclaim while the targets run", bytesText(avail), bytesText(total), 100*lowAvailable),
			"find what holds the memory: ps -eo pid,rss,comm --sort=-rss | head")
	}
	r := f.result(found, notes)
	if r.Status != OK {
		r.Notes = append([]string{found}, r.Notes...)
	}
	return r
}

func (m *machine) checkSwap() Result {
	if !m.swapsKnown && m.meminfo["SwapTotal"] == 0 && len(m.meminfo) == 0 {
		return Result{Status: Skip, Found: "cannot read /proc/swaps or /proc/meminfo"}
	}
	swappiness, _ := m.read("/proc/sys/vm/swappiness")
	if !m.swapOn {
		r := Result{Status: OK, Found: "no swap"}
		return r
	}
	found := "swap on: " + bytesText(m.meminfo["SwapTotal"])
	if len(m.swapDevs) > 0 {
		found += " (" + strings.Join(m.swapDevs, ", ") + ")"
	}
	if used := m.meminfo["SwapTotal"] - m.meminfo["SwapFree"]; used > 0 {
		found += ", " + bytesText(used) + " in use"
	}
	notes := []string{"a target at its memory limit pages out instead of failing, and runs at the speed of the disk; benchgate asks for no swap in its cgroups, which only holds where the kernel accounts swap"}
	if swappiness != "" {
		notes = append(notes, "vm.swappiness = "+swappiness)
	}
	return Result{Status: Warn, Found: found, Notes: notes, Fix: []string{
		"sudo swapoff -a, and remove the swap lines from /etc/fstab (systemctl mask the swap units, zram-generator if present)",
	}}
}

var bracketed = regexp.MustCompile(`\[([^\]]+)\]`)

func (m *machine) checkTHP() Result {
	s, err := m.read("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return Result{Status: Skip, Found: "no transparent hugepages here (/sys/kernel/mm/transparent_hugepage/enabled)"}
	}
	mode := s
	if b := bracketed.FindStringSubmatch(s); b != nil {
		mode = b[1]
	}
	found := "transparent hugepages: " + mode
	var notes []string
	if d, err := m.read("/sys/kernel/mm/transparent_hugepage/defrag"); err == nil {
		if b := bracketed.FindStringSubmatch(d); b != nil {
			d = b[1]
		}
		found += " (defrag " + d + ")"
	}
	if mode != "always" {
		return Result{Status: OK, Found: found, Notes: notes}
	}
	return Result{Status: Warn, Found: found,
		Notes: []string{"always: khugepaged compacts memory in the background and a target's memory use depends on what was free when it started"},
		Fix: []string{
			"echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled",
			"keep it across boots: transparent_hugepage=madvise on the kernel command line",
		}}
}
