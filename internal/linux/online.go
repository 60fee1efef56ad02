package linux

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// onlineFile is where the kernel lists the CPUs it has online.
const onlineFile = "/sys/devices/system/cpu/online"

// OnlineCPUs returns the CPUs this machine's kernel has online, sorted,
// from /sys/devices/system/cpu/online (ParseCPUList's form).
//
// When the file cannot be read or parsed, err says why and cpus is still
// a guess, 0..runtime.NumCPU()-1, so that each caller keeps its own
// fallback: the runner, about to call sched_setaffinity, must not pin on
// a guess and returns err; the check of a scenario's pins before a run
// (scenario.Scenario.CheckCPUs) only wants a readable early refusal and
// takes the guess.
func OnlineCPUs() (cpus []int, err error) {
	return onlineCPUs(onlineFile, runtime.NumCPU())
}

// onlineCPUs is OnlineCPUs reading path, with n CPUs to guess.
func onlineCPUs(path string, n int) ([]int, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		var cpus []int
		if cpus, err = ParseCPUList(strings.TrimSpace(string(b))); err == nil {
			return cpus, nil
		}
		err = fmt.Errorf("%s: %w", path, err)
	}
	guess := make([]int, n)
	for i := range guess {
		guess[i] = i
	}
	return guess, err
}
