package runner

import (
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
)

// environment is what a results file records of this machine, the tool
// and the pins; Run and RunGoBench fill it in at their start.
func environment(sc *scenario.Scenario, toolVersion, runID string) benchdata.Environment {
	env := benchdata.Environment{
		RunID:       runID,
		CPUModel:    cpuModel(),
		CPUs:        runtime.NumCPU(),
		Kernel:      kernelRelease(),
		OS:          runtime.GOOS,
		Arch:        runtime.GOARCH,
		GoVersion:   runtime.Version(),
		ToolVersion: toolVersion,
		Start:       time.Now(),
	}
	env.Host, _ = os.Hostname()
	for _, p := range sc.PinSets {
		env.Pins = append(env.Pins, benchdata.PinInfo{
			Name: p.Name, CPUs: p.CPUs, Memory: p.MemoryText, GeneratorCPUs: p.GeneratorCPUs,
		})
	}
	return env
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func kernelRelease() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return ""
	}
	b := make([]byte, 0, len(u.Release))
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
