package docker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/docker/go-connections/nat"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
)

// Target is an image target: a container of a locally built image,
// started on the run's network with the pin set's limits.
type Target struct {
	env    *Env
	spec   scenario.Target
	pins   *scenario.Pins
	outDir string
	// redact hides the scenario's secrets in the container's log, as
	// saved and as quoted in errors, and in Info; nil hides nothing.
	redact target.Redactor
	probe  target.Probe // Options.Probe: the health check, nil for a GET

	imageID  string   // pinned at Build, so a re-tag cannot swap the image
	revision string   // the image's revision label
	port     nat.Port // container port, "8080/tcp"

	name string // container name
	id   string // container ID; "" until created
	url  string

	applied, notApplied []string

	// svc is set for a service of a compose stack: the container takes
	// its settings from the compose file, and the stack does the rest.
	svc *stackService

	cg       *target.CgroupDirs // nil when its cgroup is not visible here
	usage    target.CgroupMeter // reads cg
	streamMu sync.Mutex
	streamed target.Usage // the latest stats of the stream, when cg is nil

	exited      chan struct{} // closed when the container stopped running
	exitErr     error         // how it stopped; valid after exited is closed
	exitTail    []string      // its last log lines at that moment
	stopping    chan struct{}
	cancelWatch context.CancelFunc
	stopOnce    sync.Once
	stopErr     error
}

var _ target.Service = (*Target)(nil)

// New prepares spec in env, under opts.Pins when set; its log goes to
// opts.OutDir/<name>.log. Nothing touches the engine until Build.
func New(env *Env, spec scenario.Target, opts target.Options) *Target {
	return &Target{env: env, spec: spec, pins: opts.Pins, outDir: opts.OutDir, redact: opts.Redact, probe: opts.Probe, stopping: make(chan struct{})}
}

func (t *Target) Name() string { return t.spec.Name }
func (t *Target) Kind() string { return "image" }
func (t *Target) URL() string  { return t.url }

// Done is nil (never fires) until Start created the container.
func (t *Target) Done() <-chan struct{} { return t.exited }

// Build only checks that the image is present: the engine here has no
// registry to pull from, and pulling implicitly would measure whatever the
// tag means remotely today rather than what the workflow built. The image
// is resolved to its ID once per run (see resolveImage), so every pin set
// runs the same image.
func (t *Target) Build(ctx context.Context) error {
	img, err := t.env.resolveImage(ctx, t.spec.Image)
	if cerrdefs.IsNotFound(err) {
		return &target.TargetError{Target: t.spec.Name, Phase: target.PhaseBuild,
			Err: fmt.Errorf("image %s not found locally: build it first (docker build -t %s .); benchgate never pulls", t.spec.Image, t.spec.Image)}
	}
	if err != nil {
		return &target.TargetError{Target: t.spec.Name, Phase: target.PhaseBuild, Err: fmt.Errorf("docker: inspecting image %s: %w", t.spec.Image, err)}
	}
	t.imageID = img.id
	t.revision = img.revision
	port := t.spec.Port
	if port <= 0 && len(img.tcpPorts) == 1 {
		// Without a port in the scenario, an image that exposes exactly
		// one TCP port leaves no doubt.
		port = img.tcpPorts[0]
	}
	if port <= 0 {
		return &target.TargetError{Target: t.spec.Name, Phase: target.PhaseBuild, Err: fmt.Errorf("image %s: no port given and the image does not expose exactly one TCP port", t.spec.Image)}
	}
	t.port = nat.Port(strconv.Itoa(port) + "/tcp")
	return nil
}

// Start creates and starts the container and waits until it is healthy.
// On error nothing of it is left in the engine.
func (t *Target) Start(ctx context.Context) error {
	if t.imageID == "" {
		if err := t.Build(ctx); err != nil {
			return err
		}
	}
	fail := func(err error) error {
		t.Stop()
		return &target.TargetError{Target: t.spec.Name, Phase: target.PhaseStart, Err: err}
	}
	e := t.env
	netName := e.netName
	var cfg *container.Config
	var hc *container.HostConfig
	var nc *network.NetworkingConfig
	if t.svc != nil {
		netName = t.svc.network
		t.name = fmt.Sprintf("%s-%s-%d", netName, dockerName(t.svc.service), e.seq.Add(1))
		cfg, hc, nc = t.svc.config(t.imageID, e.labels(map[string]string{labelTarget: t.spec.Name, labelService: t.svc.service}))
		if t.port != "" {
			cfg.ExposedPorts = nat.PortSet{t.port: {}}
		}
	} else {
		t.name = fmt.Sprintf("%s-%s-%d", netName, dockerName(t.spec.Name), e.seq.Add(1))
		// As for command targets "{port}" means the port the service
		// listens on, which in a container is the container port.
		ps := t.port.Port()
		var env []string
		for _, k := range slices.Sorted(maps.Keys(t.spec.Env)) {
			env = append(env, k+"="+strings.ReplaceAll(t.spec.Env[k], "{port}", ps))
		}
		var cmd []string
		for _, a := range t.spec.Command {
			cmd = append(cmd, strings.ReplaceAll(a, "{port}", ps))
		}
		cfg = &container.Config{
			Image:        t.imageID,
			Env:          env,
			Cmd:          cmd, // nil keeps the image's CMD
			ExposedPorts: nat.PortSet{t.port: {}},
			Labels:       e.labels(map[string]string{labelTarget: t.spec.Name}),
		}
		hc = &container.HostConfig{NetworkMode: container.NetworkMode(netName)}
	}
	if e.self == "" && t.port != "" {
		// HostPort "" lets the engine choose a free port, read back below,
		// and 127.0.0.1 keeps the PR's code off the runner's network.
		hc.PortBindings = nat.PortMap{t.port: {{HostIP: "127.0.0.1", HostPort: ""}}}
	}
	if p := t.pins; p != nil {
		hc.Resources.CpusetCpus = p.CPUs
	}
	if t.svc != nil && t.svc.stack.cgroup != nil {
		hc.CgroupParent = t.svc.stack.cgroup.parent
	}
	if mem := t.memory(); mem > 0 {
		// MemorySwap is memory plus swap: equal means no swap, so a
		// memory-starved service fails visibly instead of slowly.
		hc.Resources.Memory = mem
		hc.Resources.MemorySwap = mem
	}
	created, err := e.cli.ContainerCreate(ctx, cfg, hc, nc, nil, t.name)
	if err != nil {
		return fail(fmt.Errorf("docker: creating container from %s: %w", t.spec.Image, err))
	}
	t.id = created.ID

	// The wait is registered before the start (the client returns once
	// the engine acknowledged it), so even an immediate exit is seen.
	watchCtx, cancel := context.WithCancel(context.Background())
	t.cancelWatch = cancel
	resC, errC := e.cli.ContainerWait(watchCtx, t.id, container.WaitConditionNextExit)
	t.exited = make(chan struct{})
	go t.watch(watchCtx, resC, errC)

	if err := e.cli.ContainerStart(ctx, t.id, container.StartOptions{}); err != nil {
		return fail(fmt.Errorf("docker: starting container %s: %w", t.name, err))
	}
	insp, err := e.cli.ContainerInspect(ctx, t.id)
	if err != nil {
		return fail(fmt.Errorf("docker: inspecting container %s: %w", t.name, err))
	}
	// A container that has exited already shows no address and no port:
	// its exit is the better explanation. The watch may still be reading
	// how it ended when the inspection says it is not running.
	exited := func() bool {
		if insp.State != nil && !insp.State.Running {
			<-t.exited
			return true
		}
		select {
		case <-t.exited:
			return true
		default:
			return false
		}
	}
	switch {
	case t.port == "":
		// A service of a stack that receives no load: nothing to reach.
	case e.self != "":
		// By address, not by name: the engine's DNS answers only
		// containers started on a user-defined network, and benchgate's
		// own may have started on the default bridge and joined later.
		var ip string
		if insp.NetworkSettings != nil {
			if n := insp.NetworkSettings.Networks[netName]; n != nil {
				ip = n.IPAddress
			}
		}
		if ip == "" {
			if exited() {
				return t.exitedEarly()
			}
			return fail(fmt.Errorf("docker: container %s has no address on network %s", t.name, netName))
		}
		t.url = "http://" + ip + ":" + t.port.Port()
	default:
		var hostPort string
		if insp.NetworkSettings != nil {
			if b := insp.NetworkSettings.Ports[t.port]; len(b) > 0 {
				hostPort = b[0].HostPort
			}
		}
		if hostPort == "" {
			if exited() {
				return t.exitedEarly()
			}
			return fail(fmt.Errorf("docker: container %s: the engine published no host port for %s", t.name, t.port))
		}
		t.url = "http://127.0.0.1:" + hostPort
	}
	if insp.State != nil {
		t.cg = findContainerCgroup(insp.State.Pid, t.id)
	}
	if t.cg == nil {
		go t.stream(watchCtx)
	}
	t.checkPins(ctx, insp, created.Warnings)
	if t.svc != nil && t.port == "" {
		// The stack waits for what its dependants ask of this service.
		select {
		case <-t.exited:
			if t.svc.oneShot {
				return nil
			}
			return t.exitedEarly()
		default:
			return nil
		}
	}
	if err := t.waitHealthy(ctx); err != nil {
		t.Stop()
		return err
	}
	return nil
}

// watch waits for the container to stop running and records how, with
// its last log lines, before it closes exited: Died and the health wait
// then read a complete account.
func (t *Target) watch(ctx context.Context, resC <-chan container.WaitResponse, errC <-chan error) {
	defer close(t.exited)
	for {
		select {
		case r := <-resC:
			t.exitErr = t.exitReason(ctx, r.StatusCode, r.Error)
			t.exitTail = t.logTail(ctx)
			return
		case <-errC:
			if ctx.Err() != nil {
				return // Stop ended the watch
			}
			// The wait request broke (engine restart, dropped
			// connection): ask the container itself, then wait again.
			insp, ierr := t.env.cli.ContainerInspect(ctx, t.id)
			if cerrdefs.IsNotFound(ierr) {
				t.exitErr = fmt.Errorf("container %s was removed", t.name)
				return
			}
			if ierr == nil && insp.State != nil && !insp.State.Running {
				t.exitErr = t.exitReason(ctx, int64(insp.State.ExitCode), nil)
				t.exitTail = t.logTail(ctx)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			resC, errC = t.env.cli.ContainerWait(ctx, t.id, container.WaitConditionNotRunning)
		}
	}
}

func (t *Target) exitReason(ctx context.Context, code int64, werr *container.WaitExitError) error {
	msg := fmt.Sprintf("container exited with code %d", code)
	if werr != nil && werr.Message != "" {
		msg += ": " + werr.Message
	}
	// An OOM kill shows as 137, the same as any SIGKILL; the engine
	// knows which it was, and the memory pin is the likely cause.
	if insp, err := t.env.cli.ContainerInspect(ctx, t.id); err == nil && insp.State != nil && insp.State.OOMKilled {
		msg += " (killed for exceeding its memory limit"
		if t.memory() > 0 {
			msg += " of " + t.memoryText()
		}
		msg += ")"
	}
	return errors.New(msg)
}

// logTail is the container's last target.ServiceTailLines log lines,
// sanitized.
func (t *Target) logTail(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(ctx, engineCall)
	defer cancel()
	rc, err := t.env.cli.ContainerLogs(ctx, t.id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: strconv.Itoa(target.ServiceTailLines)})
	if err != nil {
		return []string{fmt.Sprintf("(docker: reading the container's logs: %v)", err)}
	}
	defer rc.Close()
	tail := target.NewTail(target.ServiceTailLines)
	// Without a TTY the engine multiplexes stdout and stderr; stdcopy
	// strips the frame headers, which would otherwise land in the text.
	// Each stream has a writer of its own, so lines of one are whole.
	stdout, stderr := target.NewRedactWriter(t.redact, tail), target.NewRedactWriter(t.redact, tail)
	stdcopy.StdCopy(stdout, stderr, rc)
	stdout.Flush()
	stderr.Flush()
	return tail.Lines()
}

// exitedEarly reports a container that stopped before it was healthy and
// removes it.
func (t *Target) exitedEarly() error {
	err := &target.TargetError{Target: t.spec.Name, Phase: target.PhaseStart, Err: fmt.Errorf("exited before it was healthy: %v", t.exitErr), Output: t.exitTail}
	t.Stop()
	return err
}

// waitHealthy waits until the container is healthy (see
// target.WaitHealthy), exits, the startup timeout passes or ctx ends.
func (t *Target) waitHealthy(ctx context.Context) error {
	return target.WaitHealthy(ctx, t.spec, t.url, t.probe, t.exited, t.exitedEarly, func(why error) error {
		return &target.TargetError{Target: t.spec.Name, Phase: target.PhaseHealth, Err: why, Output: t.logTail(context.Background())}
	})
}

// Pins is what checkPins found at Start; nothing before.
func (t *Target) Pins() (applied, notApplied []string) {
	return slices.Clone(t.applied), slices.Clone(t.notApplied)
}

// Died returns a *target.TargetError when the container stopped running
// while it should have been serving, nil otherwise.
func (t *Target) Died() error {
	return target.DiedError(t.spec.Name, t.exited, t.stopping, func() (error, []string) { return t.exitErr, t.exitTail })
}

// Stop stops the container (SIGTERM, SIGKILL after target.StopGrace),
// saves its logs to <outDir>/<name>.log and removes it. Safe to call more
// than once and before Start.
func (t *Target) Stop() error {
	t.stopOnce.Do(func() {
		close(t.stopping)
		t.usage.Close()
		if t.id == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), target.StopGrace+engineCall)
		defer cancel()
		var errs []error
		secs := int(target.StopGrace / time.Second)
		if err := t.env.cli.ContainerStop(ctx, t.id, container.StopOptions{Timeout: &secs}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, err)
		}
		errs = append(errs, t.saveLogs(ctx))
		t.cancelWatch()
		<-t.exited
		errs = append(errs, t.env.removeContainer(ctx, t.id))
		if err := errors.Join(errs...); err != nil {
			t.stopErr = fmt.Errorf("docker: stopping container %s: %w", t.name, err)
		}
	})
	return t.stopErr
}

// saveLogs appends the container's whole log to <outDir>/<name>.log. It
// appends because a target runs once per pin set, each time in a new
// container, and every one of them may hold the clue to a failure.
func (t *Target) saveLogs(ctx context.Context) error {
	if err := os.MkdirAll(t.outDir, 0o755); err != nil {
		return err
	}
	name := t.spec.Name
	if t.svc != nil {
		// A stack's services have a log each: <target>-<service>.log.
		name += "-" + dockerName(t.svc.service)
	}
	f, err := os.OpenFile(filepath.Join(t.outDir, name+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "# container %s of image %s (%s)\n", t.name, target.RedactText(t.redact, t.spec.Image), t.imageID)
	rc, err := t.env.cli.ContainerLogs(ctx, t.id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err == nil {
		// The log is an artifact of the run: what the service printed of
		// its settings and its requests is redacted, line by line.
		stdout, stderr := target.NewRedactWriter(t.redact, f), target.NewRedactWriter(t.redact, f)
		_, err = stdcopy.StdCopy(stdout, stderr, rc)
		rc.Close()
		err = errors.Join(err, stdout.Flush(), stderr.Flush())
	}
	if err != nil {
		err = fmt.Errorf("saving its logs: %w", err)
	}
	return errors.Join(err, f.Close())
}

// Info identifies the target for the results file. The commit comes from
// BENCHGATE_BASELINE_COMMIT / BENCHGATE_CANDIDATE_COMMIT when set, else
// from the image's revision label.
func (t *Target) Info(ctx context.Context, getenv func(string) string) benchdata.TargetInfo {
	ti := benchdata.TargetInfo{Name: t.spec.Name, Kind: "image", Spec: t.spec.Shown, URL: target.RedactText(t.redact, t.url)}
	if ti.Spec == "" {
		ti.Spec = target.RedactText(t.redact, t.spec.Image)
	}
	ti.Commit = getenv("BENCHGATE_" + strings.ToUpper(t.spec.Name) + "_COMMIT")
	if ti.Commit == "" {
		if t.imageID == "" {
			// Info before Build: the image the run would have used.
			if img, err := t.env.resolveImage(ctx, t.spec.Image); err == nil {
				t.revision = img.revision
			}
		}
		ti.Commit = t.revision
	}
	return ti
}
