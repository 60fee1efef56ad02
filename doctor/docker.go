package doctor

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/client"
)

// DockerFromEnv is the engine benchgate's docker targets use: the one
// DOCKER_HOST and friends name, else the default socket, with API version
// negotiation. It does not connect until asked; a client that cannot be
// made (a malformed DOCKER_HOST) answers every call with that error. Close
// releases it.
func DockerFromEnv() (Engine, func()) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return brokenEngine{err}, func() {}
	}
	return cli, func() { cli.Close() }
}

type brokenEngine struct{ err error }

func (b brokenEngine) Info(context.Context) (system.Info, error) { return system.Info{}, b.err }
func (b brokenEngine) ServerVersion(context.Context) (types.Version, error) {
	return types.Version{}, b.err
}
func (b brokenEngine) ClientVersion() string { return "" }
func (b brokenEngine) DaemonHost() string {
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		return h
	}
	return client.DefaultDockerHost
}

func (m *machine) checkDocker(ctx context.Context, e Engine) Result {
	if e == nil {
		return Result{Status: Skip, Found: "not asked (no engine client)"}
	}
	ctx, cancel := context.WithTimeout(ctx, engineTimeout)
	defer cancel()
	info, err := e.Info(ctx)
	if err != nil {
		found := fmt.Sprintf("no engine answers at %s: %v", e.DaemonHost(), oneLine(err.Error()))
		if m.imageTargets() {
			return Result{Status: Fail, Found: found, Notes: []string{"the scenario has image targets: they need an engine"},
				Fix: []string{
					"install and start Docker Engine (sudo systemctl enable --now docker), and add the runner's user to the docker group",
					"or point DOCKER_HOST at the engine",
				}}
		}
		return Result{Status: Skip, Found: found + " (only image targets need one)"}
	}
	ver, verErr := e.ServerVersion(ctx)
	version := info.ServerVersion
	if version == "" {
		version = ver.Version
	}
	found := "Docker Engine " + orUnknown(version)
	if verErr == nil && ver.APIVersion != "" {
		found += fmt.Sprintf(" (API %s", ver.APIVersion)
		if cv := e.ClientVersion(); cv != "" && cv != ver.APIVersion {
			found += ", benchgate speaks " + cv
		}
		found += ")"
	}
	found += " at " + e.DaemonHost()
	cg := "cgroup v" + orUnknown(info.CgroupVersion)
	if info.CgroupDriver != "" {
		cg += " with the " + info.CgroupDriver + " driver"
	}
	found += "; " + cg
	if info.NCPU > 0 {
		found += fmt.Sprintf(", %s, %s", plural(info.NCPU, "CPU", "CPUs"), bytesText(info.MemTotal))
	}
	var f findings
	var notes []string
	pinsCPUs, pinsMem := false, false
	if m.sc != nil {
		for _, p := range m.sc.PinSets {
			pinsCPUs = pinsCPUs || p.CPUs != ""
			pinsMem = pinsMem || p.Memory > 0
		}
	}
	needs := func(pinned bool) bool { return m.sc == nil || m.imageTargets() && pinned }
	if !info.CPUSet && needs(pinsCPUs) {
		f.add(Warn, "the engine cannot pin containers to CPUs (no cpuset support): cpus pins of image targets will not apply",
			"enable the cpuset controller for the engine (cgroup v2: delegate cpuset to docker.service)")
	}
	if !info.MemoryLimit && needs(pinsMem) {
		f.add(Warn, "the engine cannot limit memory (no memory cgroup): memory pins of image targets will not apply",
			"enable the memory cgroup (cgroup_enable=memory on the kernel command line)")
	}
	if !info.SwapLimit && m.swapOn && needs(pinsMem) {
		f.add(Warn, "the engine cannot limit swap while swap is on: a container at its memory limit swaps instead of failing",
			"turn swap off (sudo swapoff -a), or enable swap accounting (swapaccount=1 on the kernel command line, cgroup v1)")
	}
	if n := len(m.online); info.NCPU > 0 && n > 0 && info.NCPU != n {
		line := fmt.Sprintf("the engine sees %s and this machine has %d: it runs elsewhere (a VM, a remote DOCKER_HOST), and image targets' pins name its CPUs", plural(info.NCPU, "CPU", "CPUs"), n)
		if m.imageTargets() && pinsCPUs {
			f.add(Warn, line, "run the engine on the runner machine itself")
		} else {
			notes = append(notes, line)
		}
	}
	for _, w := range info.Warnings {
		notes = append(notes, "engine: "+oneLine(w))
	}
	r := f.result(found, notes)
	if r.Status != OK {
		r.Notes = append([]string{found}, r.Notes...)
	}
	return r
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// oneLine joins a multi-line message.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
