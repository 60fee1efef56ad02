package process

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/internal/linux"
)

// affinityMu serialises everything that changes the CPU affinity of
// benchgate's own threads: the runner's pin of the load generator (and
// its restore) rewrites every thread, and a target start borrows one
// thread to fork with the target's mask (forkPinned). Run concurrently,
// the generator's pin could catch the borrowed thread with the target's
// mask and later "restore" that mask onto it.
var affinityMu sync.Mutex

// LockAffinity holds every other change to the CPU affinity of
// benchgate's threads off until unlock is called: a caller that rewrites
// them all takes it first.
func LockAffinity() (unlock func()) {
	affinityMu.Lock()
	return affinityMu.Unlock
}

// maxCPUs is the number of CPUs a unix.CPUSet can hold (CPU_SETSIZE).
const maxCPUs = len(unix.CPUSet{}) * 64

// ParseCPUSet parses a cpuset list (linux.ParseCPUList) into the form
// the affinity calls take. The scenario has checked the syntax already;
// surrounding space is trimmed all the same. The empty list and CPUs a
// unix.CPUSet cannot hold are refused.
func ParseCPUSet(s string) (unix.CPUSet, error) {
	s = strings.TrimSpace(s)
	cpus, err := linux.ParseCPUList(s)
	if err != nil {
		return unix.CPUSet{}, err
	}
	return cpuSetOf(cpus, s)
}

// cpuSetOf is the sorted list cpus, written as text, as a unix.CPUSet.
func cpuSetOf(cpus []int, text string) (unix.CPUSet, error) {
	var set unix.CPUSet
	if len(cpus) == 0 {
		return set, errors.New("empty cpuset")
	}
	if n := cpus[len(cpus)-1]; n >= maxCPUs {
		return set, fmt.Errorf("cpuset %q: CPU %d is beyond the %d the kernel interface takes", text, n, maxCPUs)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	return set, nil
}

// FormatCPUSet writes set in the kernel's list form, "0-1,3"; "" when empty.
func FormatCPUSet(set unix.CPUSet) string {
	var cpus []int
	for c := range maxCPUs {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return linux.FormatCPUList(cpus)
}

// cpuSetMinus is the CPUs of a that are not in b.
func cpuSetMinus(a, b unix.CPUSet) unix.CPUSet {
	var d unix.CPUSet
	for i := range a {
		d[i] = a[i] &^ b[i]
	}
	return d
}

// onlineCPUs is the set of CPUs the kernel has online. A pin naming an
// offline CPU would be refused by sched_setaffinity (or silently shrunk),
// so pins are checked against it first for a readable reason. When the
// kernel's list cannot be read there is no set: a pin must not be set on
// linux.OnlineCPUs' guess.
func onlineCPUs() (unix.CPUSet, error) {
	cpus, err := linux.OnlineCPUs()
	if err != nil {
		return unix.CPUSet{}, err
	}
	return cpuSetOf(cpus, linux.FormatCPUList(cpus))
}

// CheckOnline explains why set cannot be pinned, or returns nil.
func CheckOnline(set unix.CPUSet) error {
	online, err := onlineCPUs()
	if err != nil {
		return err
	}
	if off := cpuSetMinus(set, online); off.Count() > 0 {
		return fmt.Errorf("CPUs %s not online (online: %s)", FormatCPUSet(off), FormatCPUSet(online))
	}
	return nil
}
