package runner

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/scenario"
)

// runID names a run's containers and network: unique per run, and sortable
// by time when an engine holds leftovers of several.
func runID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// ScenarioInfo is what a results file records of sc: its identity, its
// load settings and its gate section, so a file compared later is decided
// by the rule declared before the run.
func ScenarioInfo(sc *scenario.Scenario) baselines.ScenarioInfo { return scenarioInfo(sc) }

func scenarioInfo(sc *scenario.Scenario) baselines.ScenarioInfo {
	info := baselines.ScenarioInfo{
		Name: sc.Name, File: sc.File, Hash: sc.Hash, Profile: sc.Profile, Seed: sc.Seed, Source: sc.Source,
		Gate: sc.Gate,
		Load: baselines.LoadInfo{
			Concurrency: sc.Load.Concurrency,
			Rate:        sc.Load.Rate,
			Duration:    sc.Load.Duration.Seconds(),
			Warmup:      sc.Load.Warmup.Seconds(),
			Repetitions: sc.Load.Repetitions,
			Timeout:     sc.Load.Timeout.Seconds(),
			Interleave:  sc.Load.Interleave,
			// What is not in force is not recorded: a round-interleaved
			// run has no slices, a fixed design no maximum.
			MaxRepetitions: max(sc.Load.MaxRepetitions, sc.Load.Repetitions),
		},
	}
	if sc.Load.Interleave == scenario.InterleaveSlice {
		info.Load.Slice, info.Load.Settle = sc.Load.Slice.Seconds(), sc.Load.Settle.Seconds()
	}
	if sc.Kind == scenario.KindHTTP {
		info.Load.HTTPClient = sc.Load.HTTPClient
	}
	return info
}

func environment(sc *scenario.Scenario, toolVersion, runID string) baselines.Environment {
	env := baselines.Environment{
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
		env.Pins = append(env.Pins, baselines.PinInfo{
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
