package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/docker/go-connections/nat"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/grpcload"
	"github.com/benchgate/benchgate/scenario"
)

// Labels on everything benchgate creates in the engine. The run label finds
// a run's objects for Close; the owner label (the owner record of sweep.go,
// host/boot/pidns/pid/start, with "@<container ID>" when benchgate runs in
// a container of the engine) lets a later run tell the leftovers of a
// crashed run from those of a live concurrent one. Labels alone do not
// make an object benchgate's (an image can carry any label, and its
// containers inherit them), so the sweep also requires the name prefix.
const (
	labelRun    = "io.benchgate.run"
	labelOwner  = "io.benchgate.owner"
	labelTarget = "io.benchgate.target"
	// revisionLabel is the OCI annotation image builders put the source
	// commit in; Info falls back to it.
	revisionLabel = "org.opencontainers.image.revision"
)

const (
	// sweepAge: objects older than this are leftovers whoever owns them. No
	// CI run lasts a day, and an owner on another host (or in another
	// container) cannot be asked whether it is alive.
	sweepAge = 24 * time.Hour
	// engineCall bounds the engine calls made without a caller's context
	// (Stop, log tails): a hung engine must not hang the run.
	engineCall = 30 * time.Second
	// closeTimeout bounds Close, which runs uncancelled (after a
	// cancellation too) and so would otherwise wait on a hung engine for
	// ever, holding the process after the CI system asked it to end.
	closeTimeout = 60 * time.Second
	// namePrefix begins the name of every container and network benchgate
	// creates.
	namePrefix = "benchgate-"
)

// dockerEnv is one run's hold on the Docker Engine: the client, the run's
// network, and how targets are reached from where benchgate runs.
type dockerEnv struct {
	cli      *client.Client
	runID    string
	netName  string
	netID    string
	hostname string
	owner    string // owner record[@container ID], the owner label's value
	me       owner  // this process, as the sweep compares owners with it
	// self is the ID of the container benchgate runs in when the engine
	// knows it: benchgate then joins the run's network and reaches targets
	// by their address on it, on the container port. Empty otherwise: container ports are
	// published on 127.0.0.1 of the engine's host, which is ours.
	self string
	seq  atomic.Int64 // numbers container names, unique within the run

	// images are the image references the run resolved, to their ID and
	// what Build reads of them: the first pin set's Build resolves a tag,
	// and every later pin set runs that image even if the tag was moved
	// meanwhile (a parallel build re-tagging :latest).
	imagesMu sync.Mutex
	images   map[string]resolvedImage

	closeMu sync.Mutex
	closed  bool
}

// resolvedImage is what a target needs of its image.
type resolvedImage struct {
	id       string
	revision string // the revision label
	tcpPorts []int  // the exposed TCP ports
}

// newDockerEnv connects to the engine named by the environment (DOCKER_HOST
// and friends, else the default socket), removes what crashed earlier runs
// left behind, and creates the run's network. What the sweep could not
// remove is reported to progress (which may be nil) and does not stop the
// run: leftovers cost the engine resources, not this run its validity.
func newDockerEnv(ctx context.Context, runID string, progress io.Writer) (*dockerEnv, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	if _, err := cli.Ping(ctx); err != nil {
		cli.Close()
		return nil, fmt.Errorf("docker: no engine answers at %s (%s): %w", cli.DaemonHost(), engineSource(), err)
	}
	host, err := os.Hostname()
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("docker: %w", err)
	}
	e := &dockerEnv{
		cli:      cli,
		runID:    runID,
		netName:  namePrefix + dockerName(runID),
		hostname: host,
		self:     findSelf(ctx, cli, host),
	}
	if me, err := thisProcess(); err == nil {
		e.me, e.owner = me, me.String()
	} else {
		// No later run can check this owner: only age sweeps its objects.
		e.owner = host + ":" + strconv.Itoa(os.Getpid())
	}
	if e.self != "" {
		// A later run on another container cannot see this pid, but it
		// can ask the engine whether this container still runs.
		e.owner += "@" + e.self
	}
	if progress == nil {
		progress = io.Discard
	}
	if err := e.Sweep(ctx, progress); err != nil {
		fmt.Fprintf(progress, "warning: %v\n", err)
	}
	resp, err := cli.NetworkCreate(ctx, e.netName, network.CreateOptions{
		Driver: "bridge",
		Labels: e.labels(nil),
	})
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("docker: creating network %s: %w", e.netName, err)
	}
	e.netID = resp.ID
	if e.self != "" {
		if err := cli.NetworkConnect(ctx, e.netID, e.self, nil); err != nil {
			err = fmt.Errorf("docker: connecting this container (%.12s) to network %s: %w", e.self, e.netName, err)
			// Close removes the network uncancelled and bounded: ctx
			// may be what failed the connect.
			return nil, errors.Join(err, e.Close(ctx))
		}
	}
	return e, nil
}

func engineSource() string {
	if os.Getenv("DOCKER_HOST") != "" {
		return "from DOCKER_HOST"
	}
	return "the default socket; set DOCKER_HOST for another engine"
}

// labels are the run's labels plus extra.
func (e *dockerEnv) labels(extra map[string]string) map[string]string {
	l := map[string]string{labelRun: e.runID, labelOwner: e.owner}
	maps.Copy(l, extra)
	return l
}

// Close removes every container and the network of this run, whether or
// not a target's Stop ran, and closes the client. It runs even when ctx
// was cancelled (the run's cleanup is what a cancellation needs most), but
// for at most closeTimeout. It is safe to call more than once: later calls
// do nothing.
func (e *dockerEnv) Close(ctx context.Context) error {
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	defer e.cli.Close()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	runFilter := filters.NewArgs(filters.Arg("label", labelRun+"="+e.runID))
	var errs []error
	cs, err := e.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: runFilter})
	errs = append(errs, err)
	for _, c := range cs {
		errs = append(errs, e.removeContainer(ctx, c.ID))
	}
	// removeNetwork also disconnects benchgate's own container, when it
	// joined: the network cannot go while anything is on it.
	ns, err := e.cli.NetworkList(ctx, network.ListOptions{Filters: runFilter})
	errs = append(errs, err)
	for _, n := range ns {
		errs = append(errs, e.removeNetwork(ctx, n.ID))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("docker: cleaning up run %s: %w", e.runID, err)
	}
	return nil
}

// Sweep removes the containers and networks that earlier runs left behind:
// those named and labelled as benchgate's whose owner is verifiably dead
// (see owner.knowsGone; or its container is gone or stopped), and those
// older than sweepAge. A live concurrent run's objects, this run's own, and
// those of an owner that cannot be checked from here (another host, boot
// or PID namespace, a label of an older format) are left alone. Each
// removal is said on progress.
//
// The returned error is a warning: the sweep goes on past every failure,
// and an object another run is removing at the same moment (409, "removal
// already in progress") or has removed (404) is no failure at all.
func (e *dockerEnv) Sweep(ctx context.Context, progress io.Writer) error {
	ours := filters.NewArgs(filters.Arg("label", labelRun))
	var errs []error
	said := func(what, name string, labels map[string]string, why string, err error) {
		if err == nil {
			fmt.Fprintf(progress, "swept a leftover of run %s: %s %s (%s)\n", sanitize(labels[labelRun]), what, sanitize(name), why)
		}
		errs = append(errs, ignoreGone(err))
	}
	cs, err := e.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: ours})
	errs = append(errs, err)
	for _, c := range cs {
		i := slices.IndexFunc(c.Names, func(n string) bool { return strings.HasPrefix(strings.TrimPrefix(n, "/"), namePrefix) })
		if i < 0 {
			continue
		}
		if why := e.stale(ctx, c.Labels, time.Unix(c.Created, 0)); why != "" {
			said("container", strings.TrimPrefix(c.Names[i], "/"), c.Labels, why, e.removeContainer(ctx, c.ID))
		}
	}
	// Containers first: a network with endpoints cannot be removed.
	ns, err := e.cli.NetworkList(ctx, network.ListOptions{Filters: ours})
	errs = append(errs, err)
	for _, n := range ns {
		if !strings.HasPrefix(n.Name, namePrefix) {
			continue
		}
		if why := e.stale(ctx, n.Labels, n.Created); why != "" {
			said("network", n.Name, n.Labels, why, e.removeNetwork(ctx, n.ID))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("docker: removing leftovers of earlier runs: %w", err)
	}
	return nil
}

// ignoreGone drops the errors of removing what is gone or going anyway.
func ignoreGone(err error) error {
	if cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err) {
		return nil
	}
	return err
}

// stale says why an object with these labels may be swept, or "" when it
// may not. The owner is an owner record (sweep.go), with "@<container ID>"
// when that benchgate ran in a container of this engine.
func (e *dockerEnv) stale(ctx context.Context, labels map[string]string, created time.Time) string {
	if labels[labelRun] == e.runID {
		return ""
	}
	if time.Since(created) > sweepAge {
		return "older than " + sweepAge.String()
	}
	label := labels[labelOwner]
	rec, cid := label, ""
	// A container ID is 64 hex digits; anything else after an '@' is
	// part of a host name.
	if i := strings.LastIndexByte(label, '@'); i >= 0 && len(label)-i-1 == 64 && isHex(label[i+1:]) {
		rec, cid = label[:i], label[i+1:]
	}
	if cid != "" && cid != e.self {
		// Another container's run: its pids are not ours to see, but
		// the engine knows whether its container still runs. An error
		// other than "no such container" says nothing: keep it.
		insp, err := e.cli.ContainerInspect(ctx, cid)
		switch {
		case cerrdefs.IsNotFound(err):
			return "its owner's container is gone"
		case err == nil && (insp.State == nil || !insp.State.Running):
			return "its owner's container is not running"
		}
		return ""
	}
	// A pid alone proves nothing: the same host name, another PID
	// namespace (a container sharing the engine), and ESRCH here for a
	// live run. Only an owner of this boot and namespace whose pid is
	// gone or started anew is dead; any other waits for sweepAge.
	o, ok := parseOwner(rec)
	if !ok || !e.me.knowsGone(o) {
		return ""
	}
	if _, err := readProcStat(o.pid); err == nil {
		return fmt.Sprintf("its owner, benchgate process %d, ended: the pid names a later process now", o.pid)
	}
	return fmt.Sprintf("its owner, benchgate process %d, is gone", o.pid)
}

func (e *dockerEnv) removeContainer(ctx context.Context, id string) error {
	err := e.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	return err
}

// removeNetwork disconnects whatever is still attached (benchgate's own
// container, or a crashed run's) before it removes the network.
func (e *dockerEnv) removeNetwork(ctx context.Context, id string) error {
	n, err := e.cli.NetworkInspect(ctx, id, network.InspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for cid := range n.Containers {
		if err := e.cli.NetworkDisconnect(ctx, id, cid, true); err != nil && !cerrdefs.IsNotFound(err) {
			return err
		}
	}
	err = e.cli.NetworkRemove(ctx, id)
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	return err
}

// findSelf returns the ID of the container benchgate runs in, when the
// engine knows one. Docker sets a container's hostname to its short ID
// unless told otherwise, and mounts /etc/hostname from the container's
// directory, so either names it. /.dockerenv alone is not enough: it is
// also present in containers of other engines (or sandboxes), which this
// engine cannot connect to a network.
func findSelf(ctx context.Context, cli *client.Client, hostname string) string {
	var cands []string
	if len(hostname) >= 12 && isHex(hostname) {
		cands = append(cands, hostname)
	}
	if _, err := os.Stat("/.dockerenv"); err == nil {
		if id := mountinfoContainerID(); id != "" {
			cands = append(cands, id)
		}
	}
	for _, c := range cands {
		insp, err := cli.ContainerInspect(ctx, c)
		// Inspect also matches names: only an ID prefix identifies us.
		if err == nil && strings.HasPrefix(insp.ID, c) {
			return insp.ID
		}
	}
	return ""
}

// mountinfoContainerID finds the 64-hex ID in the source of the
// /etc/hostname bind mount (.../containers/<id>/hostname).
func mountinfoContainerID() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || fields[4] != "/etc/hostname" {
			continue
		}
		parts := strings.Split(fields[3], "/")
		for i, p := range parts {
			if p == "containers" && i+1 < len(parts) && len(parts[i+1]) == 64 && isHex(parts[i+1]) {
				return parts[i+1]
			}
		}
	}
	return ""
}

func isHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// dockerName makes s usable in a container or network name
// ([a-zA-Z0-9][a-zA-Z0-9_.-]*); the labels keep s as it is.
func dockerName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			b[i] = '-'
		}
	}
	if len(b) == 0 {
		return "run"
	}
	return string(b)
}

// dockerTarget is an image target: a container of a locally built image,
// started on the run's network with the pin set's limits.
type dockerTarget struct {
	env    *dockerEnv
	spec   scenario.Target
	pins   *scenario.Pins
	outDir string
	// redact hides the scenario's secrets in the container's log, as
	// saved and as quoted in errors, and in Info; nil hides nothing.
	redact redactor

	imageID  string   // pinned at Build, so a re-tag cannot swap the image
	revision string   // the image's revision label
	port     nat.Port // container port, "8080/tcp"

	name string // container name
	id   string // container ID; "" until created
	url  string

	applied, notApplied []string

	cg       *cgroupDirs // nil when its cgroup is not visible here
	usage    usageState  // reads cg
	streamMu sync.Mutex
	streamed Usage // the latest stats of the stream, when cg is nil

	exited      chan struct{} // closed when the container stopped running
	exitErr     error         // how it stopped; valid after exited is closed
	exitTail    []string      // its last log lines at that moment
	stopping    chan struct{}
	cancelWatch context.CancelFunc
	stopOnce    sync.Once
	stopErr     error
}

var _ service = (*dockerTarget)(nil)

// newDockerTarget prepares spec in env; pins may be nil. Nothing touches
// the engine until Build.
func newDockerTarget(env *dockerEnv, spec scenario.Target, pins *scenario.Pins, outDir string) *dockerTarget {
	return &dockerTarget{env: env, spec: spec, pins: pins, outDir: outDir, stopping: make(chan struct{})}
}

func (t *dockerTarget) Name() string { return t.spec.Name }
func (t *dockerTarget) Kind() string { return "image" }
func (t *dockerTarget) URL() string  { return t.url }

// Done is nil (never fires) until Start created the container.
func (t *dockerTarget) Done() <-chan struct{} { return t.exited }

// resolveImage inspects ref the first time the run asks for it and
// returns the same answer ever after (see images). Failures are not kept:
// a missing image is a build error, and the run ends.
func (e *dockerEnv) resolveImage(ctx context.Context, ref string) (resolvedImage, error) {
	e.imagesMu.Lock()
	defer e.imagesMu.Unlock()
	if img, ok := e.images[ref]; ok {
		return img, nil
	}
	insp, err := e.cli.ImageInspect(ctx, ref)
	if err != nil {
		return resolvedImage{}, err
	}
	img := resolvedImage{id: insp.ID}
	if insp.Config != nil {
		img.revision = insp.Config.Labels[revisionLabel]
		for p := range insp.Config.ExposedPorts {
			if pp, err := nat.ParsePort(strings.TrimSuffix(p, "/tcp")); err == nil && strings.HasSuffix(p, "/tcp") {
				img.tcpPorts = append(img.tcpPorts, pp)
			}
		}
	}
	if e.images == nil {
		e.images = map[string]resolvedImage{}
	}
	e.images[ref] = img
	return img, nil
}

// Build only checks that the image is present: the engine here has no
// registry to pull from, and pulling implicitly would measure whatever the
// tag means remotely today rather than what the workflow built. The image
// is resolved to its ID once per run (see resolveImage), so every pin set
// runs the same image.
func (t *dockerTarget) Build(ctx context.Context) error {
	img, err := t.env.resolveImage(ctx, t.spec.Image)
	if cerrdefs.IsNotFound(err) {
		return &TargetError{Target: t.spec.Name, Phase: PhaseBuild,
			Err: fmt.Errorf("image %s not found locally: build it first (docker build -t %s .); benchgate never pulls", t.spec.Image, t.spec.Image)}
	}
	if err != nil {
		return &TargetError{Target: t.spec.Name, Phase: PhaseBuild, Err: fmt.Errorf("docker: inspecting image %s: %w", t.spec.Image, err)}
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
		return &TargetError{Target: t.spec.Name, Phase: PhaseBuild, Err: fmt.Errorf("image %s: no port given and the image does not expose exactly one TCP port", t.spec.Image)}
	}
	t.port = nat.Port(strconv.Itoa(port) + "/tcp")
	return nil
}

// Start creates and starts the container and waits until it is healthy.
// On error nothing of it is left in the engine.
func (t *dockerTarget) Start(ctx context.Context) error {
	if t.imageID == "" {
		if err := t.Build(ctx); err != nil {
			return err
		}
	}
	fail := func(err error) error {
		t.Stop()
		return &TargetError{Target: t.spec.Name, Phase: PhaseStart, Err: err}
	}
	e := t.env
	t.name = fmt.Sprintf("%s-%s-%d", e.netName, dockerName(t.spec.Name), e.seq.Add(1))
	// As for command targets "{port}" means the port the service listens
	// on, which in a container is the container port.
	ps := t.port.Port()
	var env []string
	for _, k := range slices.Sorted(maps.Keys(t.spec.Env)) {
		env = append(env, k+"="+strings.ReplaceAll(t.spec.Env[k], "{port}", ps))
	}
	var cmd []string
	for _, a := range t.spec.Command {
		cmd = append(cmd, strings.ReplaceAll(a, "{port}", ps))
	}
	cfg := &container.Config{
		Image:        t.imageID,
		Env:          env,
		Cmd:          cmd, // nil keeps the image's CMD
		ExposedPorts: nat.PortSet{t.port: {}},
		Labels:       e.labels(map[string]string{labelTarget: t.spec.Name}),
	}
	hc := &container.HostConfig{NetworkMode: container.NetworkMode(e.netName)}
	if e.self == "" {
		// HostPort "" lets the engine choose a free port, read back below,
		// and 127.0.0.1 keeps the PR's code off the runner's network.
		hc.PortBindings = nat.PortMap{t.port: {{HostIP: "127.0.0.1", HostPort: ""}}}
	}
	if p := t.pins; p != nil {
		hc.Resources.CpusetCpus = p.CPUs
		if p.Memory > 0 {
			// MemorySwap is memory plus swap: equal means no swap, so a
			// memory-starved service fails visibly instead of slowly.
			hc.Resources.Memory = p.Memory
			hc.Resources.MemorySwap = p.Memory
		}
	}
	created, err := e.cli.ContainerCreate(ctx, cfg, hc, nil, nil, t.name)
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
	if e.self != "" {
		// By address, not by name: the engine's DNS answers only
		// containers started on a user-defined network, and benchgate's
		// own may have started on the default bridge and joined later.
		var ip string
		if insp.NetworkSettings != nil {
			if n := insp.NetworkSettings.Networks[e.netName]; n != nil {
				ip = n.IPAddress
			}
		}
		if ip == "" {
			select {
			case <-t.exited:
				return t.exitedEarly()
			default:
			}
			return fail(fmt.Errorf("docker: container %s has no address on network %s", t.name, e.netName))
		}
		t.url = "http://" + ip + ":" + ps
	} else {
		var hostPort string
		if insp.NetworkSettings != nil {
			if b := insp.NetworkSettings.Ports[t.port]; len(b) > 0 {
				hostPort = b[0].HostPort
			}
		}
		if hostPort == "" {
			// Also what an immediately exited container shows: its
			// exit is the better explanation.
			select {
			case <-t.exited:
				return t.exitedEarly()
			default:
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
	if err := t.waitHealthy(ctx); err != nil {
		t.Stop()
		return err
	}
	return nil
}

// watch waits for the container to stop running and records how, with
// its last log lines, before it closes exited: Died and the health wait
// then read a complete account.
func (t *dockerTarget) watch(ctx context.Context, resC <-chan container.WaitResponse, errC <-chan error) {
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

func (t *dockerTarget) exitReason(ctx context.Context, code int64, werr *container.WaitExitError) error {
	msg := fmt.Sprintf("container exited with code %d", code)
	if werr != nil && werr.Message != "" {
		msg += ": " + werr.Message
	}
	// An OOM kill shows as 137, the same as any SIGKILL; the engine
	// knows which it was, and the memory pin is the likely cause.
	if insp, err := t.env.cli.ContainerInspect(ctx, t.id); err == nil && insp.State != nil && insp.State.OOMKilled {
		msg += " (killed for exceeding its memory limit"
		if t.pins != nil && t.pins.Memory > 0 {
			msg += " of " + t.pins.MemoryText
		}
		msg += ")"
	}
	return errors.New(msg)
}

// logTail is the container's last serviceTailLines log lines, sanitized.
func (t *dockerTarget) logTail(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(ctx, engineCall)
	defer cancel()
	rc, err := t.env.cli.ContainerLogs(ctx, t.id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: strconv.Itoa(serviceTailLines)})
	if err != nil {
		return []string{fmt.Sprintf("(docker: reading the container's logs: %v)", err)}
	}
	defer rc.Close()
	tail := newLineTail(serviceTailLines)
	// Without a TTY the engine multiplexes stdout and stderr; stdcopy
	// strips the frame headers, which would otherwise land in the text.
	// Each stream has a writer of its own, so lines of one are whole.
	stdout, stderr := newRedactWriter(t.redact, tail), newRedactWriter(t.redact, tail)
	stdcopy.StdCopy(stdout, stderr, rc)
	stdout.Flush()
	stderr.Flush()
	return tail.Lines()
}

// exitedEarly reports a container that stopped before it was healthy and
// removes it.
func (t *dockerTarget) exitedEarly() error {
	err := &TargetError{Target: t.spec.Name, Phase: PhaseStart, Err: fmt.Errorf("exited before it was healthy: %v", t.exitErr), Output: t.exitTail}
	t.Stop()
	return err
}

// waitHealthy polls the health path every healthInterval until it answers
// 2xx, the container exits, the startup timeout passes or ctx ends.
func (t *dockerTarget) waitHealthy(ctx context.Context) error {
	limit := t.spec.StartupTimeout
	if limit <= 0 {
		limit = defaultStartup
	}
	deadline := time.Now().Add(limit)
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: healthAttempt}
	health := t.spec.Health
	tick := time.NewTicker(healthInterval)
	defer tick.Stop()
	for {
		last := probeTarget(ctx, hc, t.url, health)
		if last == nil {
			return nil
		}
		select {
		case <-t.exited:
			return t.exitedEarly()
		default:
		}
		fail := func(err error) error {
			return &TargetError{Target: t.spec.Name, Phase: PhaseHealth, Err: err, Output: t.logTail(context.Background())}
		}
		if !time.Now().Before(deadline) {
			return fail(fmt.Errorf("not healthy after %v: %v", limit, last))
		}
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-t.exited:
		case <-tick.C:
		}
	}
}

// probeHealth makes one health check of any target: a GET of u, drained so
// the connection is reused, that must answer 2xx.
func probeHealth(ctx context.Context, hc *http.Client, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("GET %s: %s", req.URL.Path, resp.Status)
	}
	return nil
}

// probeTarget makes one health check of a target at base (scheme://host:
// port) by its spec's health: the standard gRPC health service for
// scenario.HealthGRPC (a server without it is healthy once it answers),
// else a GET of the health path.
func probeTarget(ctx context.Context, hc *http.Client, base, health string) error {
	if health == scenario.HealthGRPC {
		pu, err := url.Parse(base)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, healthAttempt)
		defer cancel()
		return grpcload.WaitHealthy(cctx, pu.Host, "")
	}
	if health == "" {
		health = "/"
	}
	return probeHealth(ctx, hc, base+health)
}

// checkPins records which pins the engine actually holds: the engine may
// accept a setting and drop it (swap limits without swap accounting, with
// only a warning), so the container's HostConfig is what counts, and for
// memory the cgroup's own limit as the stats report it.
func (t *dockerTarget) checkPins(ctx context.Context, insp container.InspectResponse, warnings []string) {
	p := t.pins
	if p == nil || insp.HostConfig == nil {
		return
	}
	hc := insp.HostConfig
	warned := strings.Join(warnings, "; ")
	if p.CPUs != "" {
		if hc.CpusetCpus == p.CPUs {
			t.applied = append(t.applied, "cpuset "+p.CPUs+" (docker)")
		} else {
			t.notApplied = append(t.notApplied, fmt.Sprintf("cpuset %s: the engine holds %q %s", p.CPUs, hc.CpusetCpus, warned))
		}
	}
	if p.Memory > 0 {
		mt := p.MemoryText
		limit := int64(-1)
		if t.cg != nil {
			if l, err := cgroupMemLimit(*t.cg); err == nil {
				limit = l
			}
		} else if s, err := t.stats(ctx); err == nil {
			// About a second on this engine (see Usage), once per start.
			limit = int64(s.MemoryStats.Limit)
		}
		switch {
		case hc.Memory != p.Memory || !memLimitHolds(limit, p.Memory):
			t.notApplied = append(t.notApplied, fmt.Sprintf("memory %s: the engine holds %d, the cgroup limit is %d %s", mt, hc.Memory, limit, warned))
		case hc.MemorySwap != p.Memory:
			t.applied = append(t.applied, "memory "+mt+" (docker)")
			t.notApplied = append(t.notApplied, fmt.Sprintf("no swap: the engine holds a swap limit of %d %s", hc.MemorySwap, warned))
		default:
			t.applied = append(t.applied, "memory "+mt+", no swap (docker)")
		}
	}
}

// memLimitHolds says whether the cgroup's limit is the pin's: the kernel
// rounds a limit down to a whole page, so a pin like 1G (10^9 bytes, not a
// multiple of 4096) reads back up to a page smaller and still holds.
func memLimitHolds(limit, want int64) bool {
	return limit <= want && want-limit < int64(os.Getpagesize())
}

// Pins is what checkPins found at Start; nothing before.
func (t *dockerTarget) Pins() (applied, notApplied []string) {
	return slices.Clone(t.applied), slices.Clone(t.notApplied)
}

// Died returns a *TargetError when the container stopped running while it
// should have been serving, nil otherwise.
func (t *dockerTarget) Died() error {
	if t.exited == nil {
		return nil
	}
	select {
	case <-t.stopping:
		return nil
	default:
	}
	select {
	case <-t.exited:
		if t.exitErr == nil {
			return nil // the watch ended without an exit (Stop raced it)
		}
		return &TargetError{Target: t.spec.Name, Phase: PhaseDied, Err: fmt.Errorf("exited during the run: %v", t.exitErr), Output: t.exitTail}
	default:
		return nil
	}
}

// Stop stops the container (SIGTERM, SIGKILL after stopGrace), saves its
// logs to <outDir>/<name>.log and removes it. Safe to call more than once
// and before Start.
func (t *dockerTarget) Stop() error {
	t.stopOnce.Do(func() {
		close(t.stopping)
		t.usage.close()
		if t.id == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), stopGrace+engineCall)
		defer cancel()
		var errs []error
		secs := int(stopGrace / time.Second)
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
func (t *dockerTarget) saveLogs(ctx context.Context) error {
	if err := os.MkdirAll(t.outDir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(t.outDir, t.spec.Name+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "# container %s of image %s (%s)\n", t.name, redactText(t.redact, t.spec.Image), t.imageID)
	rc, err := t.env.cli.ContainerLogs(ctx, t.id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err == nil {
		// The log is an artifact of the run: what the service printed of
		// its settings and its requests is redacted, line by line.
		stdout, stderr := newRedactWriter(t.redact, f), newRedactWriter(t.redact, f)
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
func (t *dockerTarget) Info(ctx context.Context, getenv func(string) string) baselines.TargetInfo {
	ti := baselines.TargetInfo{Name: t.spec.Name, Kind: "image", Spec: t.spec.Shown, URL: redactText(t.redact, t.url)}
	if ti.Spec == "" {
		ti.Spec = redactText(t.redact, t.spec.Image)
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

// Usage reads the container's CPU time and memory. The Engine's stats are
// the portable source, but this engine (20.10) answers a one-shot stats
// request only at its collector's next one-second tick, far too slow for a
// reading every few tens of milliseconds and too coarse for a window's
// edges. So when the container's cgroup is visible here (benchgate on the
// engine's host) its files are read directly, by the same reader and with
// the same memory definition as a command target's cgroup (Source
// "cgroup"). Otherwise the latest reading of a stats stream is returned
// with the time the engine took it (At): the engine reads once a second,
// so the figures are up to a second old, and sampleUsage turns them into a
// window's CPU by rate (see staleWindowCPU).
func (t *dockerTarget) Usage() (Usage, bool) {
	if t.id == "" || t.exited == nil {
		return Usage{}, false
	}
	select {
	case <-t.stopping:
		return Usage{}, false
	case <-t.exited:
		return Usage{}, false // a stopped container reports zeros
	default:
	}
	if t.cg != nil {
		return t.usage.cgroup(*t.cg)
	}
	t.streamMu.Lock()
	defer t.streamMu.Unlock()
	return t.streamed, t.streamed.Source != ""
}

// ResetMemPeak resets the watermark of the container's cgroup when it is
// visible here (see peakFile). The stream has no window peak to offer: the
// engine's stats carry v1's watermark, but the engine cannot reset it.
// Resetting the container's own cgroup touches nothing else; the engine
// does not use the watermark.
func (t *dockerTarget) ResetMemPeak() func() (int64, bool) {
	if t.cg == nil || t.exited == nil {
		return nil
	}
	select {
	case <-t.stopping:
		return nil
	case <-t.exited:
		return nil
	default:
	}
	return t.usage.peak.reset(cgroupPeakPath(t.cg.version, t.cg.memDir))
}

// stream keeps t.streamed at the engine's latest stats reading until ctx
// ends. The engine sends one a second.
func (t *dockerTarget) stream(ctx context.Context) {
	r, err := t.env.cli.ContainerStats(ctx, t.id, true)
	if err != nil {
		return
	}
	defer r.Body.Close()
	dec := json.NewDecoder(r.Body)
	for {
		var s container.StatsResponse
		if err := dec.Decode(&s); err != nil {
			return
		}
		if s.CPUStats.CPUUsage.TotalUsage == 0 || s.Read.IsZero() {
			continue // not running (yet, or any more)
		}
		mem, cache := memNoCache(s.MemoryStats)
		u := Usage{Source: "docker", CPUSeconds: float64(s.CPUStats.CPUUsage.TotalUsage) / 1e9, Mem: mem, MemCache: cache, At: s.Read}
		t.streamMu.Lock()
		t.streamed = u
		t.streamMu.Unlock()
	}
}

// memNoCache applies the cgroup reader's memory definition (see
// readCgroup) to the engine's stats, which carry the cgroup's memory.stat:
// usage without inactive file pages, v1's hierarchical total_inactive_file
// or v2's inactive_file. It returns the memory and what it left out.
func memNoCache(m container.MemoryStats) (mem, cache int64) {
	u := int64(m.Usage)
	inactive, ok := m.Stats["total_inactive_file"]
	if !ok {
		inactive = m.Stats["inactive_file"]
	}
	mem = max(u-int64(inactive), 0)
	return mem, u - mem
}

func (t *dockerTarget) stats(ctx context.Context) (container.StatsResponse, error) {
	var s container.StatsResponse
	r, err := t.env.cli.ContainerStatsOneShot(ctx, t.id)
	if err != nil {
		return s, err
	}
	defer r.Body.Close()
	err = json.NewDecoder(r.Body).Decode(&s)
	return s, err
}

// findContainerCgroup locates the cgroup of the container whose first
// process is pid, or returns nil when benchgate cannot see it (in another
// pid namespace, or with only its own cgroup mounted, as in a container).
// The path must name the container: a pid from another namespace that
// happens to exist here would otherwise be measured instead.
func findContainerCgroup(pid int, id string) *cgroupDirs {
	if pid <= 0 {
		return nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return nil
	}
	mounts, err := readCgroupMounts()
	if err != nil {
		return nil
	}
	dirOf := func(controller, path string) string {
		if !strings.Contains(path, id) {
			return ""
		}
		dir, err := locateCgroup(mounts, controller, path)
		if err != nil {
			return ""
		}
		return dir
	}
	var cpuDir, memDir, v2Dir string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2Dir = dirOf("", parts[2])
			continue
		}
		ctrls := strings.Split(parts[1], ",")
		if slices.Contains(ctrls, "cpuacct") {
			cpuDir = dirOf("cpuacct", parts[2])
		}
		if slices.Contains(ctrls, "memory") {
			memDir = dirOf("memory", parts[2])
		}
	}
	switch {
	case cpuDir != "" && memDir != "":
		return &cgroupDirs{version: 1, memDir: memDir, cpuDir: cpuDir}
	case v2Dir != "":
		return &cgroupDirs{version: 2, memDir: v2Dir, cpuDir: v2Dir}
	}
	return nil
}
