// Package linux reads the text formats of Linux's kernel interfaces that
// more than one part of benchgate needs: the CPU list form of
// /sys/devices/system/cpu/online, cpuset.cpus and a scenario's pins, and
// the cgroup lines of /proc/self/cgroup and /proc/self/mountinfo. Its
// parsers read text, not files, so the scenario, the runner and doctor
// (which reads a machine under a root) apply one rule each; OnlineCPUs
// reads this machine's online CPUs for those that run here.
package linux

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxCPU bounds the CPU numbers of a list: every number is below it. The
// kernel's NR_CPUS is at most 8192 today; the bound leaves room and keeps
// a parsed list at most MaxCPU entries long whatever the text.
const MaxCPU = 1 << 16

// ParseCPUList reads the list form the kernel writes, "0-3,5": decimal CPU
// numbers and inclusive ranges, separated by commas, ascending and not
// overlapping (adjacent ranges such as "0-1,2" are fine). "" is the empty
// list. Nothing else is taken: no spaces, signs or empty items; a caller
// reading a kernel file trims its newline first. The result is sorted,
// without duplicates, and every CPU is below MaxCPU.
func ParseCPUList(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	last := -1
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := cpuNumber(s, lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = cpuNumber(s, hi); err != nil {
				return nil, err
			}
		}
		if b < a {
			return nil, fmt.Errorf("%q: range %s runs backwards", s, part)
		}
		if a <= last {
			return nil, fmt.Errorf("%q: %s is not after the previous CPUs (want ascending, e.g. \"0-3,5\")", s, part)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
		last = b
	}
	return out, nil
}

// cpuNumber reads one CPU number of list s: digits only, below MaxCPU.
func cpuNumber(s, num string) (int, error) {
	if num == "" || strings.Trim(num, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a cpuset (want e.g. \"0-3,5\")", s)
	}
	n := 0
	for _, d := range []byte(num) {
		if n = n*10 + int(d-'0'); n >= MaxCPU {
			return 0, fmt.Errorf("%q: CPU %s is beyond %d, the most a cpuset may name", s, num, MaxCPU-1)
		}
	}
	return n, nil
}

// FormatCPUList writes CPUs in the kernel's list form, "0-3,5", runs of
// consecutive CPUs as ranges; "" for none. cpus must be sorted ascending;
// duplicates are written once.
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] <= cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if cpus[j] > cpus[i] {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
