// Package doctor inspects a machine for stable benchmarking: the CPUs
// against a scenario's pins, the frequency governor, turbo/boost, SMT, the
// load, busy processes, memory, swap, transparent hugepages, cgroups, the
// Docker Engine and virtualisation. Each check says OK, WARN, FAIL or SKIP,
// what it found, and what to change.
//
// Everything is read below a root directory ("/" by default), so the
// checks run against fake /sys and /proc trees in tests. Nothing is
// changed on the machine. The checks are made on Linux only, the one system benchgate measures
// on; elsewhere Check says so.
//
// The statuses mean:
//   - OK: as it should be for benchmarking;
//   - WARN: a run works, but measures more noise than it need (or a pin
//     will not apply and the report will say so);
//   - FAIL: the scenario cannot run as written here (a pin names a CPU that
//     is not online, the memory pins exceed the machine's, an image target
//     without an engine);
//   - SKIP: the check does not apply, or cannot be made here (no cpufreq in
//     a VM, no engine, no scenario), with the reason.
package doctor

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/system"

	"github.com/benchgate/benchgate/scenario"
)

// Status is a check's outcome.
type Status string

// The statuses, from best to worst; Skip is outside the order.
const (
	OK   Status = "OK"
	Warn Status = "WARN"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
)

// The check IDs, in the order Check runs and reports them.
const (
	IDCPUs      = "cpus"
	IDPins      = "pins"
	IDGovernor  = "governor"
	IDTurbo     = "turbo"
	IDSMT       = "smt"
	IDLoad      = "load"
	IDProcesses = "processes"
	IDMemory    = "memory"
	IDSwap      = "swap"
	IDTHP       = "thp"
	IDCgroup    = "cgroup"
	IDDocker    = "docker"
	IDVirt      = "virt"
)

// CheckIDs lists every check's ID in report order.
var CheckIDs = []string{IDCPUs, IDPins, IDGovernor, IDTurbo, IDSMT, IDLoad, IDProcesses, IDMemory, IDSwap, IDTHP, IDCgroup, IDDocker, IDVirt}

// titles are the checks' names for a person.
var titles = map[string]string{
	IDCPUs:      "CPUs",
	IDPins:      "pins",
	IDGovernor:  "governor",
	IDTurbo:     "turbo/boost",
	IDSMT:       "SMT",
	IDLoad:      "load average",
	IDProcesses: "busy processes",
	IDMemory:    "memory",
	IDSwap:      "swap",
	IDTHP:       "hugepages",
	IDCgroup:    "cgroup",
	IDDocker:    "docker",
	IDVirt:      "virtualisation",
}

// Result is one check's outcome.
type Result struct {
	ID     string `json:"id"`    // stable, one of CheckIDs
	Title  string `json:"title"` // for a person
	Status Status `json:"status"`
	// Found is what the check saw, in one line.
	Found string `json:"found"`
	// Notes are further findings, one line each.
	Notes []string `json:"notes,omitempty"`
	// Fix says what to change: commands or settings, one per line. Empty
	// when there is nothing to do.
	Fix []string `json:"fix,omitempty"`
}

// Summary counts the results by status.
type Summary struct {
	OK   int `json:"ok"`
	Warn int `json:"warn"`
	Fail int `json:"fail"`
	Skip int `json:"skip"`
}

// Report is the outcome of every check.
type Report struct {
	Root     string   `json:"root"`
	Scenario string   `json:"scenario,omitempty"` // the scenario file checked against, if any
	Profile  string   `json:"profile,omitempty"`
	Checks   []Result `json:"checks"`
	Summary  Summary  `json:"summary"`
}

// Failed reports whether any check failed: the machine cannot run the
// scenario as written.
func (r *Report) Failed() bool { return r.Summary.Fail > 0 }

// Err is nil unless a check failed, and then names the failed checks by
// their titles: what a command exits with.
func (r *Report) Err() error {
	var titles []string
	for _, c := range r.Checks {
		if c.Status == Fail {
			titles = append(titles, c.Title)
		}
	}
	if len(titles) == 0 {
		return nil
	}
	return errors.New("doctor: " + plural(len(titles), "check", "checks") + " failed: " + strings.Join(titles, ", "))
}

// Result returns the check of the given ID, or nil.
func (r *Report) Result(id string) *Result {
	for i := range r.Checks {
		if r.Checks[i].ID == id {
			return &r.Checks[i]
		}
	}
	return nil
}

// Engine is what the docker check asks of a Docker Engine client;
// *client.Client of github.com/docker/docker/client is one.
type Engine interface {
	Info(ctx context.Context) (system.Info, error)
	ServerVersion(ctx context.Context) (types.Version, error)
	// ClientVersion is the API version the client speaks: after a first
	// call with version negotiation, the negotiated one.
	ClientVersion() string
	DaemonHost() string
}

// Options say what to inspect.
type Options struct {
	// Root is the directory /proc and /sys are read under: "" or "/" for
	// this machine, a fake tree in tests. Commands (systemd-detect-virt)
	// are only run, and benchgate's own process only left out of the busy
	// ones, when Root is "/".
	Root string
	// Scenario, when set, has its pin sets checked against the machine,
	// and decides what the other checks need (memory for its pins, an
	// engine for its image targets).
	Scenario *scenario.Scenario
	// Docker is the engine to ask; nil leaves the docker check SKIP.
	Docker Engine
	// Sample is how long CPU use is sampled to find busy processes: 0 for
	// one second; negative to skip that check.
	Sample time.Duration

	// sleep waits between the two readings of the sample; tests replace
	// it to change the fake tree meanwhile.
	sleep func(ctx context.Context, d time.Duration) error
	// detectVirt runs systemd-detect-virt with one flag (--vm or
	// --container); nil: run it when Root is "/".
	detectVirt func(ctx context.Context, flag string) (string, error)
}

// engineTimeout bounds the calls to the engine: a hung engine must not hang
// the doctor.
const engineTimeout = 10 * time.Second

// plural is "1 CPU", "2 CPUs".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return itoa(n) + " " + many
}

// cpusText is "CPU 3" or "CPUs 0-1,4".
func cpusText(s cpuSet) string {
	if len(s) == 1 {
		return "CPU " + s.String()
	}
	return "CPUs " + s.String()
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
