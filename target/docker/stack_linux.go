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

	"github.com/compose-spec/compose-go/v2/dotenv"
	"github.com/compose-spec/compose-go/v2/loader"
	composetypes "github.com/compose-spec/compose-go/v2/types"
	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/docker/go-connections/nat"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
)

// labelService names the compose service a container of a stack runs.
const labelService = "io.benchgate.service"

// MaxComposeBytes bounds each compose file of a target: a real one is a
// few KiB; the loader holds a file whole, and more than once.
const MaxComposeBytes = 4 << 20

// Stack is a compose target: the services of the user's compose files,
// unchanged, each a container of a locally built image, on a network and
// with volumes of the stack's own, started in depends_on order with its
// conditions honoured, every container under the pin set's cpuset and
// its service's memory. The load goes to one service, on its container
// port. The files are read with the compose specification's own loader
// (compose-go); the containers are created through the Engine API as an
// image target's are, so benchgate needs no docker CLI (its action's
// image has none), pins every container, and never pulls.
type Stack struct {
	env    *Env
	spec   scenario.Target
	pins   *scenario.Pins
	outDir string
	redact target.Redactor
	probe  target.Probe // Options.Probe: the load service's health check

	project *composetypes.Project
	order   []string // services in start order
	images  map[string]resolvedImage

	network string
	netID   string
	volumes map[string]string // the project's volume → the engine's

	mu       sync.Mutex
	services map[string]*Target // by service, once created
	load     *Target            // the service that receives the load

	exited     chan struct{} // closed when a service stopped on its own
	exitOnce   sync.Once
	diedSvc    string
	stopping   chan struct{}
	stopOnce   sync.Once
	stopErr    error
	applied    []string // the stack's own pins (its total memory)
	notApplied []string
	// cgroup is the stack's own group, holding the pin set's memory as
	// the stack's total; nil when there is none (see makeCgroup).
	cgroup *stackCgroup
}

var (
	_ target.Service = (*Stack)(nil)
	_ target.Parted  = (*Stack)(nil)
)

// NewStack prepares a compose target in env; nothing touches the engine
// until Build.
func NewStack(env *Env, spec scenario.Target, opts target.Options) *Stack {
	return &Stack{env: env, spec: spec, pins: opts.Pins, outDir: opts.OutDir, redact: opts.Redact, probe: opts.Probe,
		services: map[string]*Target{}, exited: make(chan struct{}), stopping: make(chan struct{})}
}

func (s *Stack) Name() string { return s.spec.Name }
func (s *Stack) Kind() string { return "compose" }

func (s *Stack) URL() string {
	if s.load == nil {
		return ""
	}
	return s.load.URL()
}

// Done is closed when any service of the stack stopped on its own.
func (s *Stack) Done() <-chan struct{} { return s.exited }

func (s *Stack) buildErr(format string, a ...any) error {
	return &target.TargetError{Target: s.spec.Name, Phase: target.PhaseBuild, Err: fmt.Errorf(format, a...)}
}

// LoadProject reads a compose target's files as docker compose would:
// the files in order (later ones override), interpolated with the project
// directory's .env, the environment over it and the target's env over
// both, the project named after the first file's directory unless the
// files name it.
func LoadProject(ctx context.Context, spec scenario.Target, getenv func(string) string) (*composetypes.Project, error) {
	if len(spec.Compose) == 0 {
		return nil, errors.New("no compose file")
	}
	for _, f := range spec.Compose {
		// The files are the project's, and a pull request's: read whole
		// by the loader, so bounded first.
		fi, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		if fi.Size() > MaxComposeBytes {
			return nil, fmt.Errorf("%s: %d bytes, more than a compose file may hold here (%d)", filepath.Base(f), fi.Size(), MaxComposeBytes)
		}
	}
	details, err := loader.LoadConfigFiles(ctx, spec.Compose, filepath.Dir(spec.Compose[0]))
	if err != nil {
		return nil, err
	}
	environ := map[string]string{}
	// The project directory's .env first, as docker compose reads it; the
	// environment and the target's env override it.
	if dot := filepath.Join(details.WorkingDir, ".env"); fileExists(dot) {
		vars, err := dotenv.Read(dot)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", dot, err)
		}
		maps.Copy(environ, vars)
	}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && getenv(k) == v {
			environ[k] = v
		}
	}
	maps.Copy(environ, spec.Env)
	details.Environment = environ
	return loader.LoadWithContext(ctx, *details, func(o *loader.Options) {
		// As docker compose names a project: after the first file's
		// directory, unless the files name it.
		o.SetProjectName(loader.NormalizeProjectName(filepath.Base(details.WorkingDir)), false)
		if o.Interpolate != nil {
			o.Interpolate.LookupValue = func(k string) (string, bool) { v, ok := environ[k]; return v, ok }
		}
	})
}

// Build reads the compose files and checks, before anything starts, that
// the stack can run as benchgate runs it: the load service, the memory
// split and the setup name services of it; every service names an image
// that is present locally (benchgate never pulls and does not build);
// nothing in it asks for what the stack cannot give (another network
// mode, replicas).
func (s *Stack) Build(ctx context.Context) error {
	if s.project != nil {
		return nil
	}
	p, err := LoadProject(ctx, s.spec, os.Getenv)
	if err != nil {
		return s.buildErr("compose: %v", err)
	}
	if err := CheckProject(s.spec, p); err != nil {
		return s.buildErr("%v", err)
	}
	names := p.ServiceNames()
	slices.Sort(names)
	s.images = map[string]resolvedImage{}
	for _, n := range names {
		svc := p.Services[n]
		switch {
		case svc.Image == "" && svc.Build != nil:
			return s.buildErr("compose: service %s has a build but no image: benchgate does not build; name its image (image: %s:pr) and build it first (docker compose build)", n, n)
		case svc.Image == "":
			return s.buildErr("compose: service %s has no image", n)
		case svc.NetworkMode != "":
			return s.buildErr("compose: service %s: network_mode %q: a stack runs on a network of its own", n, svc.NetworkMode)
		case svc.Scale != nil && *svc.Scale > 1, svc.Deploy != nil && svc.Deploy.Replicas != nil && *svc.Deploy.Replicas > 1:
			return s.buildErr("compose: service %s: more than one replica is not supported", n)
		case len(svc.Secrets) > 0, len(svc.Configs) > 0:
			return s.buildErr("compose: service %s: configs and secrets are not supported in a benchgate stack (pass them as environment or a bind mount)", n)
		case len(svc.Devices) > 0, len(svc.Gpus) > 0:
			return s.buildErr("compose: service %s: devices and GPUs are not supported in a benchgate stack", n)
		}
		img, err := s.env.resolveImage(ctx, svc.Image)
		if cerrdefs.IsNotFound(err) {
			return s.buildErr("compose: service %s: image %s not found locally: build it first (docker compose build, or docker build -t %s .); benchgate never pulls", n, svc.Image, svc.Image)
		}
		if err != nil {
			return s.buildErr("compose: service %s: inspecting image %s: %w", n, svc.Image, err)
		}
		s.images[n] = img
	}
	order, err := startOrder(p)
	if err != nil {
		return s.buildErr("compose: %v", err)
	}
	s.project, s.order = p, order
	return nil
}

// CheckProject checks what a compose target names in its project, as a
// dry run can without the engine: the load service, the services of the
// memory split and of the setup step.
func CheckProject(spec scenario.Target, p *composetypes.Project) error {
	names := p.ServiceNames()
	slices.Sort(names)
	has := func(n string) bool { return slices.Contains(names, n) }
	files := filesText(spec)
	if !has(spec.Service) {
		return fmt.Errorf("compose: service %q (targets.%s.service) is not in %s (services: %s)", spec.Service, spec.Name, files, strings.Join(names, ", "))
	}
	for _, svc := range slices.Sorted(maps.Keys(spec.Memory)) {
		if !has(svc) {
			return fmt.Errorf("compose: targets.%s.memory.%s: no such service in %s (services: %s)", spec.Name, svc, files, strings.Join(names, ", "))
		}
	}
	if st := spec.Setup; st != nil && !has(st.Service) {
		return fmt.Errorf("compose: targets.%s.setup.service %q: no such service in %s (services: %s)", spec.Name, st.Service, files, strings.Join(names, ", "))
	}
	return nil
}

// filesText are a compose target's files by name.
func filesText(spec scenario.Target) string {
	var fs []string
	for _, f := range spec.Compose {
		fs = append(fs, filepath.Base(f))
	}
	return strings.Join(fs, ", ")
}

// startOrder is the project's services, each after those it depends on
// (by name within a level, so the order is the same every run).
func startOrder(p *composetypes.Project) ([]string, error) {
	done := map[string]bool{}
	var order []string
	for len(order) < len(p.Services) {
		var ready []string
		for n, svc := range p.Services {
			if done[n] {
				continue
			}
			ok := true
			for dep := range svc.DependsOn {
				if _, exists := p.Services[dep]; exists && !done[dep] {
					ok = false
				}
			}
			if ok {
				ready = append(ready, n)
			}
		}
		if len(ready) == 0 {
			return nil, errors.New("depends_on has a cycle")
		}
		slices.Sort(ready)
		for _, n := range ready {
			done[n] = true
		}
		order = append(order, ready...)
	}
	return order, nil
}

// Start creates the stack's network and volumes and starts its services
// in order, each once what its dependants ask of those it depends on
// holds (started, healthy by its own healthcheck, or exited 0); then the
// load service must answer its health path, and the setup step must exit
// 0. On error nothing of the stack is left in the engine.
func (s *Stack) Start(ctx context.Context) error {
	if err := s.Build(ctx); err != nil {
		return err
	}
	fail := func(phase string, err error) error {
		s.Stop()
		return &target.TargetError{Target: s.spec.Name, Phase: phase, Err: err}
	}
	e := s.env
	s.network = fmt.Sprintf("%s-%s-stack-%d", e.netName, dockerName(s.spec.Name), e.seq.Add(1))
	created, err := e.cli.NetworkCreate(ctx, s.network, network.CreateOptions{Driver: "bridge",
		Labels: e.labels(map[string]string{labelTarget: s.spec.Name})})
	if err != nil {
		return fail(target.PhaseStart, fmt.Errorf("docker: creating network %s: %w", s.network, err))
	}
	s.netID = created.ID
	if e.self != "" {
		if err := e.cli.NetworkConnect(ctx, s.netID, e.self, nil); err != nil {
			return fail(target.PhaseStart, fmt.Errorf("docker: joining network %s: %w", s.network, err))
		}
	}
	s.volumes = map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(s.project.Volumes)) {
		v := s.project.Volumes[name]
		if v.External {
			return fail(target.PhaseStart, fmt.Errorf("compose: volume %s is external: a stack's volumes are its own, made anew each run", name))
		}
		engineName := s.network + "-" + dockerName(name)
		if _, err := e.cli.VolumeCreate(ctx, volume.CreateOptions{Name: engineName, Driver: v.Driver, DriverOpts: v.DriverOpts,
			Labels: e.labels(map[string]string{labelTarget: s.spec.Name})}); err != nil {
			return fail(target.PhaseStart, fmt.Errorf("docker: creating volume %s: %w", engineName, err))
		}
		s.volumes[name] = engineName
	}
	if s.pins != nil && s.pins.Memory > 0 {
		cg, err := s.makeCgroup(ctx)
		if err != nil {
			what := "no limit on the stack's total"
			if len(s.spec.Memory) > 0 {
				what = "only the split by service (targets." + s.spec.Name + ".memory) holds"
			}
			s.notApplied = append(s.notApplied, fmt.Sprintf("memory %s (the stack's total): %v; %s", s.pins.MemoryText, err, what))
		}
		s.cgroup = cg
	}
	var inGroup []string
	for _, name := range s.order {
		if err := s.startService(ctx, name); err != nil {
			var te *target.TargetError
			if errors.As(err, &te) {
				s.Stop()
				return err
			}
			return fail(target.PhaseStart, err)
		}
		if s.cgroup != nil && !s.services[name].svc.oneShot {
			if err := s.cgroup.check(s.services[name]); err != nil {
				inGroup = append(inGroup, name+": "+err.Error())
			}
		}
	}
	if s.pins != nil && s.pins.CPUs != "" {
		// Said once for the stack, as an image target says it, when every
		// long-running service holds it; each service's own line stays.
		all := true
		for _, name := range s.order {
			if t := s.services[name]; t != nil && !t.svc.oneShot {
				all = all && slices.ContainsFunc(t.applied, func(a string) bool { return strings.HasPrefix(a, "cpuset ") })
			}
		}
		if all {
			s.applied = append(s.applied, "cpuset "+s.pins.CPUs+", every container of the stack (docker)")
		}
	}
	if s.cgroup != nil {
		if len(inGroup) > 0 {
			s.notApplied = append(s.notApplied, fmt.Sprintf("memory %s (the stack's total): %s", s.pins.MemoryText, strings.Join(inGroup, "; ")))
		} else {
			s.applied = append(s.applied, fmt.Sprintf("memory %s, the stack's total, no swap (its own cgroup)", s.pins.MemoryText))
			s.mu.Lock()
			s.cgroup.meter()
			s.mu.Unlock()
		}
	}
	if st := s.spec.Setup; st != nil {
		if err := s.setup(ctx, st); err != nil {
			s.Stop()
			return err
		}
	}
	return nil
}

// startService waits for what name's depends_on asks, then starts it.
func (s *Stack) startService(ctx context.Context, name string) error {
	svc := s.project.Services[name]
	for _, dep := range slices.Sorted(maps.Keys(svc.DependsOn)) {
		d := svc.DependsOn[dep]
		t := s.services[dep]
		if t == nil {
			continue // a service the loader dropped (a profile)
		}
		if err := s.waitFor(ctx, dep, t, d.Condition); err != nil {
			return &target.TargetError{Target: s.spec.Name, Phase: target.PhaseHealth,
				Err: fmt.Errorf("service %s (which %s depends on): %w", dep, name, err), Output: t.logTail(context.Background())}
		}
	}
	// A short-syntax bind's missing source is made, as compose makes it
	// (the Engine API refuses one that is absent).
	for _, v := range svc.Volumes {
		if v.Type == composetypes.VolumeTypeBind && v.Bind != nil && v.Bind.CreateHostPath && s.env.self == "" {
			if err := os.MkdirAll(v.Source, 0o755); err != nil {
				return fmt.Errorf("service %s: making the bind mount's source %s: %w", name, v.Source, err)
			}
		}
	}
	ss := &stackService{stack: s, service: name, cfg: svc, network: s.network, oneShot: s.oneShot(name)}
	spec := s.spec
	spec.Image = svc.Image
	t := &Target{env: s.env, spec: spec, pins: s.pins, outDir: s.outDir, redact: s.redact, probe: s.probe, stopping: make(chan struct{}),
		imageID: s.images[name].id, revision: s.images[name].revision, svc: ss}
	if name == s.spec.Service {
		t.port = nat.Port(strconv.Itoa(s.spec.Port) + "/tcp")
	}
	s.mu.Lock()
	s.services[name] = t
	if name == s.spec.Service {
		s.load = t
	}
	s.mu.Unlock()
	if err := t.Start(ctx); err != nil {
		var te *target.TargetError
		if errors.As(err, &te) {
			te.Err = fmt.Errorf("service %s: %w", name, te.Err)
		}
		return err
	}
	if !ss.oneShot {
		go func() {
			select {
			case <-t.exited:
				s.exitOnce.Do(func() {
					s.diedSvc = name
					close(s.exited)
				})
			case <-s.stopping:
			}
		}()
	}
	return nil
}

// oneShot says whether a service is one others wait to complete: it may
// exit (0) without the stack having died.
func (s *Stack) oneShot(name string) bool {
	for _, svc := range s.project.Services {
		if d, ok := svc.DependsOn[name]; ok && d.Condition == composetypes.ServiceConditionCompletedSuccessfully {
			return true
		}
	}
	return false
}

// waitFor waits until the service meets condition, within the target's
// startup timeout.
func (s *Stack) waitFor(ctx context.Context, name string, t *Target, condition string) error {
	ctx, cancel := context.WithTimeout(ctx, s.spec.StartupTimeout)
	defer cancel()
	for {
		insp, err := s.env.cli.ContainerInspect(ctx, t.id)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("not %s within %v", conditionText(condition), s.spec.StartupTimeout)
			}
			return fmt.Errorf("docker: inspecting its container: %w", err)
		}
		st := insp.State
		switch condition {
		case composetypes.ServiceConditionCompletedSuccessfully:
			if st != nil && !st.Running && st.Status == "exited" {
				if st.ExitCode != 0 {
					return fmt.Errorf("exited with code %d; service_completed_successfully asks for 0", st.ExitCode)
				}
				return nil
			}
		case composetypes.ServiceConditionHealthy:
			if st != nil && !st.Running {
				return fmt.Errorf("exited with code %d before it was healthy", st.ExitCode)
			}
			if st != nil && st.Health == nil {
				return errors.New("has no healthcheck, and service_healthy asks for one")
			}
			if st != nil && st.Health.Status == "healthy" {
				return nil
			}
			if st != nil && st.Health.Status == "unhealthy" {
				return errors.New("its healthcheck says unhealthy")
			}
		default: // service_started
			if st != nil && !st.Running && !(t.svc.oneShot && st.ExitCode == 0) {
				// A one-shot service (one others wait to complete) that
				// completed was started, as compose counts it.
				return fmt.Errorf("stopped (exit code %d) before the services depending on it started", st.ExitCode)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not %s within %v", conditionText(condition), s.spec.StartupTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func conditionText(c string) string {
	switch c {
	case composetypes.ServiceConditionCompletedSuccessfully:
		return "completed"
	case composetypes.ServiceConditionHealthy:
		return "healthy"
	}
	return "started"
}

// setup runs the setup step: a new container of the step's service (its
// image, environment, volumes and network, under the same pins), the
// step's command, which must exit 0 within its timeout. Its output goes
// to <outDir>/<target>-setup.log; a failure quotes the output's tail.
func (s *Stack) setup(ctx context.Context, st *scenario.Setup) error {
	failed := func(err error, tail []string) error {
		return &target.TargetError{Target: s.spec.Name, Phase: target.PhaseSetup, Err: err, Output: tail}
	}
	svc := s.project.Services[st.Service]
	ss := &stackService{stack: s, service: st.Service, cfg: svc, network: s.network, command: st.Command, noAlias: true}
	name := fmt.Sprintf("%s-setup-%d", s.network, s.env.seq.Add(1))
	cfg, hc, nc := ss.config(s.images[st.Service].id, s.env.labels(map[string]string{labelTarget: s.spec.Name, labelService: st.Service}))
	if s.pins != nil {
		hc.Resources.CpusetCpus = s.pins.CPUs
	}
	if s.cgroup != nil {
		hc.CgroupParent = s.cgroup.parent
	}
	if mem := s.spec.Memory[st.Service]; mem > 0 {
		hc.Resources.Memory, hc.Resources.MemorySwap = mem, mem
	}
	ctx, cancel := context.WithTimeout(ctx, st.Timeout)
	defer cancel()
	created, err := s.env.cli.ContainerCreate(ctx, cfg, hc, nc, nil, name)
	if err != nil {
		return failed(fmt.Errorf("docker: creating the setup container: %w", err), nil)
	}
	defer func() {
		rctx, rcancel := context.WithTimeout(context.Background(), engineCall)
		defer rcancel()
		s.env.removeContainer(rctx, created.ID)
	}()
	resC, errC := s.env.cli.ContainerWait(ctx, created.ID, container.WaitConditionNextExit)
	if err := s.env.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return failed(fmt.Errorf("docker: starting the setup container: %w", err), nil)
	}
	var code int64 = -1
	select {
	case r := <-resC:
		code = r.StatusCode
	case err := <-errC:
		if ctx.Err() != nil {
			err = fmt.Errorf("did not finish within %v (targets.%s.setup.timeout)", st.Timeout, s.spec.Name)
		}
		tail, _ := s.saveSetupLog(created.ID, st)
		return failed(err, tail)
	}
	tail, lerr := s.saveSetupLog(created.ID, st)
	if code != 0 {
		return failed(fmt.Errorf("the setup step (%s in service %s) exited with code %d", target.RedactText(s.redact, strings.Join(st.Command, " ")), st.Service, code), tail)
	}
	if lerr != nil {
		return failed(fmt.Errorf("saving the setup step's output: %w", lerr), tail)
	}
	return nil
}

// saveSetupLog writes the setup container's output to
// <outDir>/<target>-setup.log and returns its last lines.
func (s *Stack) saveSetupLog(id string, st *scenario.Setup) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), engineCall)
	defer cancel()
	if err := os.MkdirAll(s.outDir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.outDir, s.spec.Name+"-setup.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fmt.Fprintf(f, "# setup of %s: %s in a new container of service %s\n", s.spec.Name, target.RedactText(s.redact, strings.Join(st.Command, " ")), st.Service)
	rc, err := s.env.cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	tail := target.NewTail(target.ServiceTailLines)
	w := multiLine{f, tail}
	stdout, stderr := target.NewRedactWriter(s.redact, w), target.NewRedactWriter(s.redact, w)
	_, err = stdcopy.StdCopy(stdout, stderr, rc)
	err = errors.Join(err, stdout.Flush(), stderr.Flush())
	return tail.Lines(), err
}

// multiLine writes each line to both writers.
type multiLine struct {
	a *os.File
	b *target.Tail
}

func (m multiLine) Write(p []byte) (int, error) {
	if _, err := m.a.Write(p); err != nil {
		return 0, err
	}
	return m.b.Write(p)
}

// Died is the first service that stopped on its own, as a
// *target.TargetError naming it, or nil.
func (s *Stack) Died() error {
	select {
	case <-s.exited:
	default:
		return nil
	}
	s.mu.Lock()
	t := s.services[s.diedSvc]
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	err := t.Died()
	var te *target.TargetError
	if errors.As(err, &te) {
		te.Err = fmt.Errorf("service %s: %w", s.diedSvc, te.Err)
	}
	return err
}

// Usage is the stack's total: read from the stack's own cgroup where it
// has one that holds every container (exact, see stackCgroup.meter), else
// the CPU and memory of every service's container added up, when every
// one of them can be read.
func (s *Stack) Usage() (target.Usage, bool) {
	s.mu.Lock()
	ts := slices.Collect(maps.Values(s.services))
	cg := s.cgroup
	var dirs *target.CgroupDirs
	if cg != nil {
		dirs = cg.dirs
	}
	s.mu.Unlock()
	if dirs != nil {
		select {
		case <-s.stopping:
			return target.Usage{}, false
		case <-s.exited:
			return target.Usage{}, false
		default:
		}
		return cg.usage.Usage(*dirs)
	}
	var u target.Usage
	for _, t := range ts {
		if t.svc != nil && t.svc.oneShot {
			continue
		}
		su, ok := t.Usage()
		if !ok {
			return target.Usage{}, false
		}
		if u.Source != "" && su.Source != u.Source {
			return target.Usage{}, false
		}
		u.Source = su.Source
		u.CPUSeconds += su.CPUSeconds
		u.Mem += su.Mem
		u.MemCache += su.MemCache
		if su.At.After(u.At) {
			u.At = su.At
		}
	}
	return u, u.Source != ""
}

// Parts are the stack's long-running services, in start order: each is
// measured on its own too.
func (s *Stack) Parts() []target.Part {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ps []target.Part
	for _, name := range s.order {
		if t := s.services[name]; t != nil && !t.svc.oneShot {
			ps = append(ps, target.Part{Name: name, Service: t})
		}
	}
	return ps
}

// ResetMemPeak resets the watermark of the stack's own cgroup, where
// Usage reads it; otherwise nil: the peak of a sum is not the sum of the
// services' peaks.
func (s *Stack) ResetMemPeak() func() (int64, bool) {
	s.mu.Lock()
	cg := s.cgroup
	var dirs *target.CgroupDirs
	if cg != nil {
		dirs = cg.dirs
	}
	s.mu.Unlock()
	if dirs == nil {
		return nil
	}
	select {
	case <-s.stopping:
		return nil
	default:
	}
	return cg.usage.ResetPeak(*dirs)
}

// Pins is every service's, each named by its service.
func (s *Stack) Pins() (applied, notApplied []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range s.order {
		t := s.services[name]
		if t == nil {
			continue
		}
		a, n := t.Pins()
		for _, x := range a {
			applied = append(applied, name+": "+x)
		}
		for _, x := range n {
			notApplied = append(notApplied, name+": "+x)
		}
	}
	return append(applied, s.applied...), append(notApplied, s.notApplied...)
}

// Stop stops the services in the reverse of their start order, saving
// each one's log to <outDir>/<target>-<service>.log, then removes the
// stack's volumes and network. Safe to call more than once and before
// Start.
func (s *Stack) Stop() error {
	s.stopOnce.Do(func() {
		close(s.stopping)
		var errs []error
		s.mu.Lock()
		order := slices.Clone(s.order)
		s.mu.Unlock()
		slices.Reverse(order)
		for _, name := range order {
			s.mu.Lock()
			t := s.services[name]
			s.mu.Unlock()
			if t != nil {
				errs = append(errs, t.Stop())
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), engineCall)
		defer cancel()
		if s.netID != "" {
			errs = append(errs, s.env.removeNetwork(ctx, s.netID))
		}
		for _, v := range slices.Sorted(maps.Values(s.volumes)) {
			errs = append(errs, s.env.removeVolume(ctx, v))
		}
		if s.cgroup != nil {
			// Empty once its containers are gone, which the engine
			// finishes just after it says they are.
			var err error
			for try := 0; try < 50; try++ {
				if err = s.cgroup.remove(); err == nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			s.stopErr = fmt.Errorf("docker: stopping stack %s: %w", s.network, err)
		}
	})
	return s.stopErr
}

// Info identifies the stack: its files and service as written, the load
// service's address, and the commit from BENCHGATE_<NAME>_COMMIT or the
// load service's image revision label.
func (s *Stack) Info(ctx context.Context, getenv func(string) string) benchdata.TargetInfo {
	ti := benchdata.TargetInfo{Name: s.spec.Name, Kind: "compose", Spec: s.spec.Shown, URL: target.RedactText(s.redact, s.URL())}
	ti.Commit = getenv("BENCHGATE_" + strings.ToUpper(s.spec.Name) + "_COMMIT")
	if ti.Commit == "" && s.images != nil {
		ti.Commit = s.images[s.spec.Service].revision
	}
	return ti
}

// stackService is what a service of a stack adds to its container.
type stackService struct {
	stack   *Stack
	service string
	cfg     composetypes.ServiceConfig
	network string
	// oneShot: a service others wait to complete (it may exit 0).
	oneShot bool
	// command, when set, replaces the service's (the setup step);
	// noAlias keeps such a container out of the service's DNS name.
	command []string
	noAlias bool
}

// memory is the container's memory limit: its service's share of a
// stack, else the pin set's.
func (t *Target) memory() int64 {
	if t.svc != nil {
		return t.svc.stack.spec.Memory[t.svc.service]
	}
	if t.pins != nil {
		return t.pins.Memory
	}
	return 0
}

func (t *Target) memoryText() string {
	if t.svc != nil {
		return t.svc.stack.spec.MemoryText[t.svc.service]
	}
	if t.pins != nil {
		return t.pins.MemoryText
	}
	return ""
}

// config is the service's container as docker compose would create it,
// less what the stack decides (pins, published ports): its image,
// entrypoint, command, environment, working directory, user, hostname,
// volumes and tmpfs, healthcheck, labels, init, read-only root, shm size,
// capabilities, sysctls, ulimits and extra hosts, on the stack's network
// under its service name.
func (ss *stackService) config(imageID string, labels map[string]string) (*container.Config, *container.HostConfig, *network.NetworkingConfig) {
	c := ss.cfg
	var env []string
	for _, k := range slices.Sorted(maps.Keys(c.Environment)) {
		if v := c.Environment[k]; v != nil {
			env = append(env, k+"="+*v)
		}
	}
	for k, v := range c.Labels {
		if _, ours := labels[k]; !ours {
			labels[k] = v
		}
	}
	cfg := &container.Config{
		Image:      imageID,
		Env:        env,
		Entrypoint: []string(c.Entrypoint),
		Cmd:        []string(c.Command),
		WorkingDir: c.WorkingDir,
		User:       c.User,
		Hostname:   c.Hostname,
		StopSignal: c.StopSignal,
		Labels:     labels,
	}
	if ss.command != nil {
		cfg.Cmd = ss.command
	}
	if h := c.HealthCheck; h != nil && ss.command == nil {
		hc := &container.HealthConfig{Test: []string(h.Test)}
		if h.Disable {
			hc.Test = []string{"NONE"}
		}
		if h.Interval != nil {
			hc.Interval = time.Duration(*h.Interval)
		}
		if h.Timeout != nil {
			hc.Timeout = time.Duration(*h.Timeout)
		}
		if h.StartPeriod != nil {
			hc.StartPeriod = time.Duration(*h.StartPeriod)
		}
		if h.Retries != nil {
			hc.Retries = int(*h.Retries)
		}
		cfg.Healthcheck = hc
	}
	hc := &container.HostConfig{NetworkMode: container.NetworkMode(ss.network), Init: c.Init, ReadonlyRootfs: c.ReadOnly,
		CapAdd: c.CapAdd, CapDrop: c.CapDrop, Sysctls: map[string]string(c.Sysctls)}
	if c.ShmSize > 0 {
		hc.ShmSize = int64(c.ShmSize)
	}
	if len(c.ExtraHosts) > 0 {
		hc.ExtraHosts = c.ExtraHosts.AsList(":")
		slices.Sort(hc.ExtraHosts)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Ulimits)) {
		u := c.Ulimits[name]
		soft, hard := int64(u.Soft), int64(u.Hard)
		if u.Single != 0 {
			soft, hard = int64(u.Single), int64(u.Single)
		}
		hc.Ulimits = append(hc.Ulimits, &container.Ulimit{Name: name, Soft: soft, Hard: hard})
	}
	for _, v := range c.Volumes {
		m := mount.Mount{Target: v.Target, ReadOnly: v.ReadOnly}
		switch v.Type {
		case composetypes.VolumeTypeVolume:
			m.Type = mount.TypeVolume
			m.Source = ss.stack.volumes[v.Source]
			if v.Source == "" {
				m.Source = "" // anonymous: removed with the container
			}
		case composetypes.VolumeTypeBind:
			m.Type, m.Source = mount.TypeBind, v.Source
		case composetypes.VolumeTypeTmpfs:
			m.Type = mount.TypeTmpfs
		default:
			continue
		}
		hc.Mounts = append(hc.Mounts, m)
	}
	for _, t := range c.Tmpfs {
		path, _, _ := strings.Cut(t, ":")
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeTmpfs, Target: path})
	}
	var aliases []string
	if !ss.noAlias {
		aliases = []string{ss.service}
		if c.ContainerName != "" {
			aliases = append(aliases, c.ContainerName)
		}
		// Every network of the file is folded into the stack's one:
		// the names a service has on any of them, and its links'.
		for _, net := range slices.Sorted(maps.Keys(c.Networks)) {
			if n := c.Networks[net]; n != nil {
				aliases = append(aliases, n.Aliases...)
			}
		}
		if p := ss.stack.project; p != nil {
			for _, other := range slices.Sorted(maps.Keys(p.Services)) {
				for _, l := range p.Services[other].Links {
					if target, alias, ok := strings.Cut(l, ":"); ok && target == ss.service && !slices.Contains(aliases, alias) {
						aliases = append(aliases, alias)
					}
				}
			}
		}
	}
	nc := &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{ss.network: {Aliases: aliases}}}
	return cfg, hc, nc
}

// fileExists says whether path is a regular file.
func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// removeVolume removes a volume of the run; a gone one is no error.
func (e *Env) removeVolume(ctx context.Context, name string) error {
	err := e.cli.VolumeRemove(ctx, name, true)
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	return err
}
