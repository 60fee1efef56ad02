package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/benchgate/benchgate/internal/environ"
)

// stealNote: more than this share of CPU time stolen by the hypervisor
// during the sample is worth a note.
const stealNote = 0.01

// vmVendors are DMI product or vendor names of virtual machines, as
// systemd-detect-virt knows them, lower case.
var vmVendors = []struct{ match, name string }{
	{"kvm", "KVM"},
	{"qemu", "QEMU"},
	{"vmware", "VMware"},
	{"virtualbox", "VirtualBox"},
	{"innotek", "VirtualBox"},
	{"xen", "Xen"},
	{"hvm domu", "Xen"},
	{"microsoft corporation virtual machine", "Hyper-V"},
	{"virtual machine", "a virtual machine"},
	{"google compute engine", "Google Compute Engine"},
	{"amazon ec2", "Amazon EC2"},
	{"openstack", "OpenStack"},
	{"bochs", "Bochs"},
	{"parallels", "Parallels"},
	{"bhyve", "bhyve"},
	{"cloud hypervisor", "Cloud Hypervisor"},
	{"firecracker", "Firecracker"},
}

// runDetectVirt runs systemd-detect-virt with flag; "none" (with exit
// status 1) when there is nothing to detect.
func runDetectVirt(ctx context.Context, flag string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "systemd-detect-virt", flag)
	cmd.Env = environ.Without(os.Environ()) // it needs none of the runner's credentials
	out, err := cmd.Output()
	s := strings.TrimSpace(string(out))
	var ee *exec.ExitError
	if errors.As(err, &ee) && s != "" {
		err = nil // "none" exits 1
	}
	return s, err
}

func (m *machine) checkVirt(ctx context.Context, detect func(context.Context, string) (string, error), s sampleResult) Result {
	var vm, evidence []string
	addVM := func(name, why string) {
		if name != "" && !containsFold(vm, name) {
			vm = append(vm, name)
		}
		evidence = append(evidence, why)
	}
	container := ""
	if detect != nil {
		if v, err := detect(ctx, "--vm"); err == nil && v != "" && v != "none" {
			name := v
			for _, x := range vmVendors {
				if x.match == strings.ToLower(v) {
					name = x.name
					break
				}
			}
			addVM(name, "systemd-detect-virt --vm: "+v)
		}
		if v, err := detect(ctx, "--container"); err == nil && v != "" && v != "none" {
			container = v
		}
	}
	if m.hasFlag("hypervisor") {
		addVM("", "the CPU flags have hypervisor (/proc/cpuinfo)")
	}
	vendor, _ := m.read("/sys/class/dmi/id/sys_vendor")
	product, _ := m.read("/sys/class/dmi/id/product_name")
	if dmi := strings.TrimSpace(vendor + " " + product); dmi != "" {
		low := strings.ToLower(dmi)
		for _, x := range vmVendors {
			if strings.Contains(low, x.match) {
				addVM(x.name, "DMI: "+dmi)
				break
			}
		}
	}
	if v, err := m.read("/sys/hypervisor/type"); err == nil && v != "" {
		addVM(v, "/sys/hypervisor/type: "+v)
	}
	if container == "" {
		switch {
		case m.exists("/.dockerenv"):
			container = "docker"
		case m.exists("/run/.containerenv"):
			container = "podman"
		}
	}
	var notes []string
	if container != "" {
		notes = append(notes, "benchgate runs in a container ("+container+"): /proc and /sys show the host's CPUs; pins still apply within the container's cpuset")
	}
	if s.stealFrac >= stealNote {
		notes = append(notes, fmt.Sprintf("the hypervisor took %.0f%% of the CPU time during the sample (steal)", 100*s.stealFrac))
	}
	if len(evidence) == 0 {
		found := "bare metal: no hypervisor seen"
		if detect == nil {
			found = "no hypervisor seen (cpuinfo flags, DMI, /sys/hypervisor)"
		}
		return Result{Status: OK, Found: found, Notes: notes}
	}
	what := "a virtual machine"
	if len(vm) > 0 {
		what += " (" + strings.Join(vm, ", ") + ")"
	}
	notes = append(notes, "seen: "+strings.Join(evidence, "; "))
	notes = append(notes, "a VM shares its host's cores, caches and memory bandwidth with other guests, its vCPUs are not pinned to physical cores unless the host does so, and its clock is the host's: intervals will be wider, and small changes invisible")
	return Result{Status: Warn, Found: what, Notes: notes, Fix: []string{
		"for gates that must see small effects, use a dedicated bare-metal runner (see docs/self-hosted.md)",
		"in a VM: dedicated (not burstable) vCPUs pinned to host cores, and the host's governor at performance",
	}}
}

func containsFold(xs []string, s string) bool {
	for _, x := range xs {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
