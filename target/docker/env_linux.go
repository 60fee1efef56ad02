// Package docker runs image targets: a container per target and
// pin set, of an image built beforehand (benchgate never pulls), on a
// network of the run's own, with the pin set's CPU and memory limits set
// by the engine. Everything it creates in the engine carries the run's
// labels, so that Close removes it whatever ended the run, and a later
// run's Sweep removes what a crashed one left (docs/docker.md). Its
// package name keeps it apart from github.com/docker/docker's packages.
package docker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
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
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/go-connections/nat"

	"github.com/benchgate/benchgate/target"
)

// Labels on everything benchgate creates in the engine. The run label finds
// a run's objects for Close; the owner label (a target.Owner record,
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

// Env is one run's hold on the Docker Engine: the client, the run's
// network, and how targets are reached from where benchgate runs.
type Env struct {
	cli      *client.Client
	runID    string
	netName  string
	netID    string
	hostname string
	owner    string       // owner record[@container ID], the owner label's value
	me       target.Owner // this process, as the sweep compares owners with it
	// self is the ID of the container benchgate runs in when the engine
	// knows it: benchgate then joins the run's network and reaches targets
	// by their address on it, on the container port. Empty otherwise:
	// container ports are published on 127.0.0.1 of the engine's host,
	// which is ours.
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

// NewEnv connects to the engine named by the environment (DOCKER_HOST
// and friends, else the default socket), removes what crashed earlier runs
// left behind, and creates the run's network. What the sweep could not
// remove is reported to progress (which may be nil) and does not stop the
// run: leftovers cost the engine resources, not this run its validity.
func NewEnv(ctx context.Context, runID string, progress io.Writer) (*Env, error) {
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
	e := &Env{
		cli:      cli,
		runID:    runID,
		netName:  namePrefix + dockerName(runID),
		hostname: host,
		self:     findSelf(ctx, cli, host),
	}
	if me, err := target.ThisProcess(); err == nil {
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
func (e *Env) labels(extra map[string]string) map[string]string {
	l := map[string]string{labelRun: e.runID, labelOwner: e.owner}
	maps.Copy(l, extra)
	return l
}

// Close removes every container and the network of this run, whether or
// not a target's Stop ran, and closes the client. It runs even when ctx
// was cancelled (the run's cleanup is what a cancellation needs most), but
// for at most closeTimeout. It is safe to call more than once: later calls
// do nothing.
func (e *Env) Close(ctx context.Context) error {
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
	// A compose target's volumes, once their containers are gone.
	vs, err := e.cli.VolumeList(ctx, volume.ListOptions{Filters: runFilter})
	errs = append(errs, err)
	for _, v := range vs.Volumes {
		errs = append(errs, e.removeVolume(ctx, v.Name))
	}
	// A stack's own cgroup, should its Stop not have run.
	for _, n := range stackCgroupNames() {
		if strings.HasPrefix(n, e.netName+"-") {
			errs = append(errs, removeStackCgroups(n))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("docker: cleaning up run %s: %w", e.runID, err)
	}
	return nil
}

// Sweep removes the containers, networks and volumes that earlier runs left behind:
// those named and labelled as benchgate's whose owner is verifiably dead
// (see target.Owner.Gone; or its container is gone or stopped), and those
// older than sweepAge. A live concurrent run's objects, this run's own, and
// those of an owner that cannot be checked from here (another host, boot
// or PID namespace, a label of an older format) are left alone. Each
// removal is said on progress.
//
// The returned error is a warning: the sweep goes on past every failure,
// and an object another run is removing at the same moment (409, "removal
// already in progress") or has removed (404) is no failure at all.
func (e *Env) Sweep(ctx context.Context, progress io.Writer) error {
	ours := filters.NewArgs(filters.Arg("label", labelRun))
	var errs []error
	said := func(what, name string, labels map[string]string, why string, err error) {
		if err == nil {
			fmt.Fprintf(progress, "swept a leftover of run %s: %s %s (%s)\n", target.Sanitize(labels[labelRun]), what, target.Sanitize(name), why)
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
	// A stack's own cgroup is named as its network: once that network is
	// gone (a leftover removed above, or never made), the group is a
	// leftover too; a live run's stack has its network.
	for _, n := range stackCgroupNames() {
		if _, err := e.cli.NetworkInspect(ctx, n, network.InspectOptions{}); !cerrdefs.IsNotFound(err) {
			continue
		}
		err := removeStackCgroups(n)
		if err == nil {
			fmt.Fprintf(progress, "swept a leftover: cgroup %s (its stack's network is gone)\n", target.Sanitize(n))
		}
		errs = append(errs, err)
	}
	// Volumes last: one in use by a container cannot be removed.
	vs, err := e.cli.VolumeList(ctx, volume.ListOptions{Filters: ours})
	errs = append(errs, err)
	for _, v := range vs.Volumes {
		if !strings.HasPrefix(v.Name, namePrefix) {
			continue
		}
		created, err := time.Parse(time.RFC3339, v.CreatedAt)
		if err != nil {
			// An unknown age is no proof of an old one.
			created = time.Now()
		}
		if why := e.stale(ctx, v.Labels, created); why != "" {
			said("volume", v.Name, v.Labels, why, e.removeVolume(ctx, v.Name))
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
// may not. The owner is a target.Owner record, with "@<container ID>" when
// that benchgate ran in a container of this engine.
func (e *Env) stale(ctx context.Context, labels map[string]string, created time.Time) string {
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
	return e.me.Gone(rec)
}

func (e *Env) removeContainer(ctx context.Context, id string) error {
	err := e.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	return err
}

// removeNetwork disconnects whatever is still attached (benchgate's own
// container, or a crashed run's) before it removes the network.
func (e *Env) removeNetwork(ctx context.Context, id string) error {
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

// resolveImage inspects ref the first time the run asks for it and
// returns the same answer ever after (see images). Failures are not kept:
// a missing image is a build error, and the run ends.
func (e *Env) resolveImage(ctx context.Context, ref string) (resolvedImage, error) {
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
