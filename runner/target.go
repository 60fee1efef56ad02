package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/internal/environ"
	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/benchgate/benchgate/scenario"
)

// How targets are watched. Generous enough for slow CI runners, short
// enough that a broken target fails the run quickly.
const (
	buildTailLines   = 30
	serviceTailLines = 50
	healthInterval   = 50 * time.Millisecond
	healthAttempt    = time.Second // one health request may take this long
	stopGrace        = 5 * time.Second
	// defaultStartup applies when a scenario leaves StartupTimeout at zero.
	defaultStartup = 30 * time.Second
)

// Target phases named by a TargetError.
const (
	PhaseBuild  = "build"
	PhaseStart  = "start"
	PhaseHealth = "health"
	PhaseDied   = "died"
)

// TargetError is a target that could not be built, started or made healthy,
// or that died during the run. Output holds the last lines the target (or
// its build) wrote, which is usually the only clue to what went wrong.
type TargetError struct {
	Target string // "baseline" or "candidate"
	Phase  string // PhaseBuild, PhaseStart, PhaseHealth or PhaseDied
	Err    error
	Output []string
}

// Error is printed to the terminal and stored in results.json, and the
// output lines (and even the error's text, such as a status line) come from
// the PR's code: control characters are escaped, so no escape sequence can
// rewrite the terminal or hide lines, and each is capped (maxErrText,
// maxErrLine), so a 3 MB reason phrase cannot fill the log or the results.
func (e *TargetError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s target: %s: %s", e.Target, e.Phase, capText(sanitize(fmt.Sprint(e.Err)), maxErrText))
	if len(e.Output) > 0 {
		fmt.Fprintf(&b, "\nlast %d lines of its output:", len(e.Output))
		for _, l := range e.Output {
			b.WriteString("\n  | ")
			b.WriteString(capText(sanitize(l), maxErrLine))
		}
	}
	return b.String()
}

func (e *TargetError) Unwrap() error { return e.Err }

// errImage: image targets are dockerTargets; a *Target never runs one.
var errImage = errors.New("an image target runs through the docker engine, not as a process")

// Target is one side of the comparison while a run uses it. A command
// target owns a process group; everything else only has a URL.
type Target struct {
	spec   scenario.Target
	outDir string
	url    string

	log  *os.File
	tail *lineTail // the service's output; nil before Start
	// redact hides the scenario's secrets in what the target's log, its
	// errors and Info hold; nil hides nothing. The output of the process
	// reaches the log and tail through out, which redacts it.
	redact redactor
	out    *redactWriter

	cmd      *exec.Cmd
	pgid     int
	untrack  func()        // drops the group from the leftover journal
	exited   chan struct{} // closed once the process has been reaped
	waitErr  error         // valid after exited is closed
	stopping chan struct{} // closed when Stop begins: an exit is no death
	stopOnce sync.Once
	stopErr  error
	grace    time.Duration // between SIGTERM and SIGKILL; tests shorten it

	pins       *scenario.Pins // nil: nothing pinned
	applied    []string       // set by Start, see Pins
	notApplied []string
	// cg is the target's own cgroup when its memory pin took effect; the
	// target is inside it, and Usage reads it. Removed by Stop.
	cg    *targetCgroup
	usage usageState
}

// NewTarget prepares spec; nothing runs until Build and Start. The log of a
// command target goes to outDir/<name>.log.
func NewTarget(spec scenario.Target, outDir string) *Target {
	return NewPinnedTarget(spec, outDir, nil)
}

// NewPinnedTarget is NewTarget with a pin set: a command target is started
// with the pins' CPU affinity and in a cgroup with its memory limit, where
// the machine allows; Pins says what took effect.
func NewPinnedTarget(spec scenario.Target, outDir string, pins *scenario.Pins) *Target {
	return &Target{spec: spec, outDir: outDir, stopping: make(chan struct{}), grace: stopGrace, pins: pins}
}

// Pins lists the pins of the target's pin set that took effect and those
// that did not, with the reason, e.g. "cpuset 0-1 (affinity)" and
// "memory 256MiB: no writable cgroup (...)". A command target knows after
// Start. Without pins both are nil.
func (t *Target) Pins() (applied, notApplied []string) {
	p := t.pins
	if p == nil {
		return nil, nil
	}
	if t.Kind() != "command" {
		why := t.Kind() + " target: not started by benchgate"
		if c := strings.TrimSpace(p.CPUs); c != "" {
			notApplied = append(notApplied, "cpuset "+c+": "+why)
		}
		if p.Memory > 0 {
			notApplied = append(notApplied, "memory "+p.MemoryText+": "+why)
		}
		return nil, notApplied
	}
	return slices.Clone(t.applied), slices.Clone(t.notApplied)
}

// Name is "baseline" or "candidate".
func (t *Target) Name() string { return t.spec.Name }

// Kind is "command", "url" or "image".
func (t *Target) Kind() string {
	switch {
	case len(t.spec.Command) > 0:
		return "command"
	case t.spec.URL != "":
		return "url"
	default:
		return "image"
	}
}

// URL is the base URL requests go to, without a trailing slash; "" before
// Start.
func (t *Target) URL() string { return t.url }

// check refuses what a process target cannot run, so a run fails before it
// builds or starts anything.
func (t *Target) check() error {
	if t.Kind() == "image" {
		return &TargetError{Target: t.spec.Name, Phase: PhaseStart, Err: errImage}
	}
	return nil
}

// Build runs the target's build command once, in its directory. A target
// without one builds trivially.
func (t *Target) Build(ctx context.Context) error {
	if err := t.check(); err != nil {
		return err
	}
	if len(t.spec.Build) == 0 || t.Kind() != "command" {
		return nil
	}
	if err := t.openLog(); err != nil {
		return &TargetError{Target: t.spec.Name, Phase: PhaseBuild, Err: err}
	}
	tail := newLineTail(buildTailLines)
	shown := redactedLine(t.redact, t.spec.Build)
	fmt.Fprintf(t.log, "# build: %s\n", shown)
	fail := func(err error) error {
		return &TargetError{Target: t.spec.Name, Phase: PhaseBuild, Err: fmt.Errorf("%s: %w", shown, err), Output: tail.Lines()}
	}
	cmd := exec.CommandContext(ctx, t.spec.Build[0], t.spec.Build[1:]...)
	cmd.Dir = t.spec.Dir
	cmd.Env = childEnv(os.Environ(), nil)
	out := newRedactWriter(t.redact, io.MultiWriter(tail, t.log))
	err := runGrouped(cmd, out)
	out.Flush()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return fail(err)
	}
	return nil
}

// runGrouped runs cmd (built with exec.CommandContext, its Dir and Env
// set) in a process group of its own, its output and errors through a
// pipe of our own to out, and returns Wait's error. The pipe is ours
// rather than one os/exec copies, so Wait returns when the command exits,
// not when the last process holding the pipe does; then whatever it left
// in its group (a daemon, a compiler server, a background job) is killed
// and reaped, since it would compete with the targets during measurement.
// Cancelling ctx kills the whole group. A process that left the group
// (setsid) is out of reach.
func runGrouped(cmd *exec.Cmd, out io.Writer) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = childAttr()
	cmd.Env = withOwnerEnv(cmd.Env)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	pw.Close() // the child has its copy; ours would keep the pipe open
	if err != nil {
		return err
	}
	untrack := trackGroup(cmd.Process.Pid)
	copied := make(chan struct{})
	go func() {
		io.Copy(out, pr)
		close(copied)
	}()
	err = cmd.Wait()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if waitGroupGone(cmd.Process.Pid) {
		untrack()
	}
	select {
	case <-copied:
	case <-time.After(time.Second):
		// Only a process outside the group can still hold the pipe.
		pr.Close()
		<-copied
	}
	return err
}

// childAttr puts a child in a process group of its own, so Stop and Build
// can signal everything it starts, and kills it when benchgate dies.
//
// Pdeathsig is only a backstop for a SIGKILLed benchgate, which cannot
// stop anything itself: it reaches the direct child only (not the rest of
// its group), and Linux sends it when the thread that forked the child
// exits, not the process. Go keeps its threads unless a goroutine exits
// while locked to one, which the runner does only in forkPinned, and only
// after the target it forked is gone. The rest of the group is killed by
// the next run's sweep (sweep.go), which finds it in this run's journal.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// childEnv is environ without the secrets a CI runner holds (the one list,
// environ.Secret), plus extra. Builds and targets run the PR's code, which
// has no business with the token that can write to the repository. What a
// service needs it gets through the scenario's env.
func childEnv(env []string, extra []string) []string {
	return append(environ.Without(env), extra...)
}

// Start starts a command target on a free port and waits until it is
// healthy; for a URL target it only waits for health. On error nothing is
// left running.
func (t *Target) Start(ctx context.Context) error {
	if err := t.check(); err != nil {
		return err
	}
	if t.Kind() == "url" {
		t.url = strings.TrimRight(t.spec.URL, "/")
		return t.waitHealthy(ctx)
	}
	if err := t.startProcess(); err != nil {
		return err
	}
	if err := t.waitHealthy(ctx); err != nil {
		t.Stop()
		return err
	}
	return nil
}

func (t *Target) startProcess() error {
	fail := func(err error) error {
		return &TargetError{Target: t.spec.Name, Phase: PhaseStart, Err: err}
	}
	if err := t.openLog(); err != nil {
		return fail(err)
	}
	port, err := freePort()
	if err != nil {
		return fail(err)
	}
	t.url = "http://127.0.0.1:" + strconv.Itoa(port)
	ps := strconv.Itoa(port)
	argv := make([]string, len(t.spec.Command))
	for i, a := range t.spec.Command {
		argv[i] = strings.ReplaceAll(a, "{port}", ps)
	}
	var extra []string
	for _, k := range slices.Sorted(maps.Keys(t.spec.Env)) {
		extra = append(extra, k+"="+strings.ReplaceAll(t.spec.Env[k], "{port}", ps))
	}
	env := childEnv(os.Environ(), extra)

	t.tail = newLineTail(serviceTailLines)
	t.out = newRedactWriter(t.redact, io.MultiWriter(t.tail, t.log))
	t.logHeader()
	fmt.Fprintf(t.log, "# command: %s\n", redactedLine(t.redact, argv))
	newCmd := func() *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = t.spec.Dir
		cmd.Env = withOwnerEnv(env)
		// One writer for both, so os/exec copies with one goroutine and
		// out sees whole lines of either.
		cmd.Stdout = t.out
		cmd.Stderr = t.out
		cmd.SysProcAttr = childAttr()
		// Once the group is killed its pipes close at once; the delay only
		// guards against a grandchild that escaped the group with our pipe.
		cmd.WaitDelay = time.Second
		return cmd
	}
	cpus, cg := t.preparePins()
	exited := make(chan struct{})
	cmd := newCmd()
	r := forkPinned(cmd, cpus, cg, true, exited)
	if r.err != nil && cmd.SysProcAttr.UseCgroupFD {
		// Starting straight into a cgroup takes clone3, which kernels
		// before 5.7 lack and some container seccomp filters refuse: start
		// it as usual and move it in.
		cmd = newCmd()
		r = forkPinned(cmd, cpus, cg, false, exited)
	}
	if r.err != nil {
		if cg != nil {
			cg.remove()
		}
		t.pinsFailed(cpus != nil, cg != nil, "not started")
		return fail(r.err)
	}
	t.cmd = cmd
	t.pgid = cmd.Process.Pid
	// Recorded for the sweep of a later run, should benchgate be killed
	// (see sweep.go): Pdeathsig ends the leader only.
	t.untrack = trackGroup(t.pgid)
	t.exited = exited
	go func() {
		t.waitErr = cmd.Wait()
		// Wait returns once the output is copied: the last line, even
		// unterminated, is in the tail before exited says so.
		t.out.Flush()
		close(t.exited)
	}()
	t.checkPins(cmd.Process.Pid, cpus, cg, r)
	return nil
}

// preparePins resolves the pin set before the fork: the CPU set to fork
// with and the cgroup to fork into. What cannot be had is recorded as not
// applied; a pin that fails never fails the start, the report says so.
func (t *Target) preparePins() (cpus *unix.CPUSet, cg *targetCgroup) {
	t.applied, t.notApplied = nil, nil
	p := t.pins
	if p == nil {
		return nil, nil
	}
	if c := strings.TrimSpace(p.CPUs); c != "" {
		set, err := parseCPUSet(c)
		if err == nil {
			err = checkOnline(set)
		}
		if err != nil {
			t.notApplied = append(t.notApplied, "cpuset "+c+": "+err.Error())
		} else {
			cpus = &set
		}
	}
	if p.Memory > 0 {
		var err error
		if cg, err = newTargetCgroup(t.spec.Name, p.Memory); err != nil {
			t.notApplied = append(t.notApplied, "memory "+p.MemoryText+": "+err.Error())
		}
	}
	return cpus, cg
}

func (t *Target) pinsFailed(cpus, mem bool, why string) {
	if cpus {
		t.notApplied = append(t.notApplied, "cpuset "+strings.TrimSpace(t.pins.CPUs)+": "+why)
	}
	if mem {
		t.notApplied = append(t.notApplied, "memory "+t.pins.MemoryText+": "+why)
	}
}

// checkPins finds out what the started target really got: its affinity as
// the kernel reports it (the kernel narrows a mask to the CPUs benchgate's
// own cpuset allows, silently), and whether it is in the cgroup.
func (t *Target) checkPins(pid int, cpus *unix.CPUSet, cg *targetCgroup, r forkResult) {
	if cpus != nil {
		c := strings.TrimSpace(t.pins.CPUs)
		var got unix.CPUSet
		switch err := unix.SchedGetaffinity(pid, &got); {
		case r.cpuErr != nil:
			t.notApplied = append(t.notApplied, "cpuset "+c+": setting the affinity: "+r.cpuErr.Error())
		case err != nil:
			t.notApplied = append(t.notApplied, "cpuset "+c+": reading the target's affinity: "+err.Error())
		case got != *cpus:
			t.notApplied = append(t.notApplied, "cpuset "+c+": the target's affinity is "+formatCPUSet(got))
		default:
			t.applied = append(t.applied, "cpuset "+c+" (affinity)")
		}
	}
	if cg != nil {
		m := t.pins.MemoryText
		var err error
		if !r.joined {
			err = cg.joinAfterStart(pid)
		}
		if err == nil && !cg.contains(pid) {
			err = errors.New("the target is not in it")
		}
		if err != nil {
			// The group must still go, and only Stop knows when the
			// target is gone; Usage must not read it.
			t.cg = cg
			t.notApplied = append(t.notApplied, fmt.Sprintf("memory %s: moving the target into cgroup v%d: %v", m, cg.version, err))
			cg.cpuDir = ""
			return
		}
		t.cg = cg
		t.applied = append(t.applied, fmt.Sprintf("memory %s (cgroup v%d)", m, cg.version))
	}
}

// forkResult is how a pinned start went.
type forkResult struct {
	err    error // cmd.Start's
	cpuErr error // the forking thread's affinity could not be set
	joined bool  // the child started inside the cgroup
}

// forkPinned starts cmd so that the target and everything it starts has
// the affinity cpus and runs in cg from its first instruction: a child
// inherits the affinity and the cgroups of the thread that forks it, so a
// thread of ours takes them on for the fork. Setting them in the child
// after the start would miss whatever it forked meanwhile, such as the
// server a shell wrapper starts. On cgroup v2 the kernel puts the child
// into the group itself (clone3 CLONE_INTO_CGROUP) when useFD; on v1 the
// thread joins the group through its "tasks" file (which moves one
// thread, unlike cgroup.procs) and leaves it after the fork.
//
// The borrowed thread gets its mask and groups back and is returned to
// the runtime rather than discarded: discarding it (a goroutine exiting
// locked) would fire the target's Pdeathsig, which is tied to the thread
// that forked it, and kill the target at once. Should restoring fail, the
// thread must serve nobody else with the target's mask, so its goroutine
// stays locked to it until the target has exited, then exits locked and
// the runtime ends the thread.
func forkPinned(cmd *exec.Cmd, cpus *unix.CPUSet, cg *targetCgroup, useFD bool, exited <-chan struct{}) forkResult {
	if cpus == nil && cg == nil {
		return forkResult{err: cmd.Start()}
	}
	if cg != nil && cg.version == 2 && useFD {
		fd, err := unix.Open(cg.memDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			defer unix.Close(fd)
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		}
	}
	done := make(chan forkResult)
	go func() {
		runtime.LockOSThread()
		r, clean := forkOnThisThread(cmd, cpus, cg)
		done <- r
		if !clean {
			if r.err == nil {
				<-exited
			}
			return
		}
		runtime.UnlockOSThread()
	}()
	return <-done
}

// forkOnThisThread is forkPinned's work on the locked thread; clean is
// false when the thread could not be put back as it was.
func forkOnThisThread(cmd *exec.Cmd, cpus *unix.CPUSet, cg *targetCgroup) (r forkResult, clean bool) {
	// pinGenerator must not rewrite this thread's mask meanwhile.
	affinityMu.Lock()
	defer affinityMu.Unlock()
	clean = true
	var prev unix.CPUSet
	pinned := false
	if cpus != nil {
		if err := unix.SchedGetaffinity(0, &prev); err != nil {
			r.cpuErr = err
		} else if err := unix.SchedSetaffinity(0, cpus); err != nil {
			r.cpuErr = err
		} else {
			pinned = true
		}
	}
	var homes []*os.File
	if cg != nil && cg.version == 1 {
		homes, r.joined = cg.enterV1()
	}
	r.err = cmd.Start()
	if cg != nil && cg.version == 2 {
		r.joined = cmd.SysProcAttr.UseCgroupFD
	}
	if r.err != nil {
		r.joined = false
	}
	tid := strconv.Itoa(unix.Gettid())
	for _, h := range homes {
		if _, err := h.WriteString(tid); err != nil {
			clean = false
		}
		h.Close()
	}
	if pinned {
		if err := unix.SchedSetaffinity(0, &prev); err != nil {
			clean = false
		}
	}
	return r, clean
}

// waitHealthy polls the health path until it answers 2xx, the process
// exits, the startup timeout passes or ctx ends.
func (t *Target) waitHealthy(ctx context.Context) error {
	limit := t.spec.StartupTimeout
	if limit <= 0 {
		limit = defaultStartup
	}
	deadline := time.Now().Add(limit)
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: healthAttempt}
	tick := time.NewTicker(healthInterval)
	defer tick.Stop()
	var last error
	for {
		last = t.probe(ctx, client)
		if last == nil {
			return nil
		}
		if t.exited != nil {
			select {
			case <-t.exited:
				return &TargetError{Target: t.spec.Name, Phase: PhaseStart, Err: fmt.Errorf("exited before it was healthy: %v", exitText(t.waitErr)), Output: t.output()}
			default:
			}
		}
		if !time.Now().Before(deadline) {
			// The check's error quotes the URL, which a url target may
			// have from ${VAR}.
			return &TargetError{Target: t.spec.Name, Phase: PhaseHealth, Err: redactErr(t.redact, fmt.Errorf("not healthy after %v: %v", limit, last)), Output: t.output()}
		}
		select {
		case <-ctx.Done():
			return &TargetError{Target: t.spec.Name, Phase: PhaseHealth, Err: ctx.Err(), Output: t.output()}
		case <-t.Done():
		case <-tick.C:
		}
	}
}

// probe makes one health check, a GET of the health path at the URL the
// load goes to (see origin).
func (t *Target) probe(ctx context.Context, client *http.Client) error {
	base, err := url.Parse(t.url)
	if err != nil {
		return err
	}
	u := origin(base)
	// The scenario's default is "/"; a Target built by hand may lack it.
	return probeTarget(ctx, client, u.String(), t.spec.Health)
}

// Done is closed when a command target's process has exited for any
// reason. It is nil for targets without a process, a channel that never
// fires, so selects need no special case.
func (t *Target) Done() <-chan struct{} { return t.exited }

// Died returns a *TargetError when the target's process exited while it
// should have been serving, and nil otherwise.
func (t *Target) Died() error {
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
		return &TargetError{Target: t.spec.Name, Phase: PhaseDied, Err: fmt.Errorf("exited during the run: %v", exitText(t.waitErr)), Output: t.output()}
	default:
		return nil
	}
}

// Stop ends a command target: SIGTERM to its process group, SIGKILL after
// a grace period, and always reaps it. Then it removes the target's
// cgroup, if it has one, killing what is still in it: a process that left
// the group (setsid) cannot leave the cgroup. It is safe to call more than
// once and on targets that never started.
func (t *Target) Stop() error {
	t.stopOnce.Do(func() {
		close(t.stopping)
		if t.exited != nil {
			// ESRCH only means the group is already gone.
			syscall.Kill(-t.pgid, syscall.SIGTERM)
			select {
			case <-t.exited:
			case <-time.After(t.grace):
				fmt.Fprintf(t.log, "# still running %v after SIGTERM: SIGKILL\n", t.grace)
			}
			// The leader may have gone on SIGTERM while children it
			// started stay in the group: they go too.
			syscall.Kill(-t.pgid, syscall.SIGKILL)
			<-t.exited
			if waitGroupGone(t.pgid) {
				t.untrack()
			}
		}
		t.usage.close()
		var cgErr error
		if t.cg != nil {
			if cgErr = t.cg.remove(); cgErr != nil {
				cgErr = fmt.Errorf("removing the cgroup of the %s target: %w", t.spec.Name, cgErr)
				if t.log != nil {
					fmt.Fprintf(t.log, "# %v\n", cgErr)
				}
			}
		}
		if t.log != nil {
			t.stopErr = t.log.Close()
		}
		if cgErr != nil {
			t.stopErr = cgErr
		}
	})
	return t.stopErr
}

// Info identifies the target for the results file. The commit comes from
// BENCHGATE_BASELINE_COMMIT / BENCHGATE_CANDIDATE_COMMIT when set, else
// from git in the target's directory when that works.
func (t *Target) Info(ctx context.Context, getenv func(string) string) baselines.TargetInfo {
	// A url target's URL may hold a ${VAR}: it is shown as "reached at".
	ti := baselines.TargetInfo{Name: t.spec.Name, Kind: t.Kind(), URL: redactText(t.redact, t.url)}
	switch {
	case t.spec.Shown != "":
		// As written, before ${VAR} expansion: results and reports end up
		// in PR comments, and a secret may have been expanded into argv.
		ti.Spec = t.spec.Shown
	case ti.Kind == "command":
		ti.Spec = redactedLine(t.redact, t.spec.Command)
	case ti.Kind == "url":
		ti.Spec = redactText(t.redact, t.spec.URL)
	case ti.Kind == "image":
		ti.Spec = t.spec.Image
	}
	if c := getenv("BENCHGATE_" + strings.ToUpper(t.spec.Name) + "_COMMIT"); c != "" {
		ti.Commit = c
	} else if ti.Kind == "command" && t.spec.Dir != "" {
		if out, err := git(ctx, t.spec.Dir, "rev-parse", "HEAD"); err == nil {
			ti.Commit = out
		}
	}
	return ti
}

func (t *Target) output() []string {
	if t.tail == nil {
		return nil
	}
	return t.tail.Lines()
}

func (t *Target) openLog() error {
	if t.log != nil {
		return nil
	}
	if err := os.MkdirAll(t.outDir, 0o755); err != nil {
		return err
	}
	// Appended to, not truncated: the target runs once per pin set, each
	// time as a new Target on the same file, and every run's output may
	// hold the clue to a failure (as saveLogs does for containers).
	f, err := os.OpenFile(filepath.Join(t.outDir, t.spec.Name+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	t.log = f
	return nil
}

// logHeader starts a process's part of the log: which start, under which
// pins, so the parts of several pin sets can be told apart.
func (t *Target) logHeader() {
	line := "# start " + time.Now().Format(time.RFC3339)
	if t.pins != nil {
		line += " pins " + t.pins.Name
	}
	fmt.Fprintln(t.log, line)
}

// freePort asks the kernel for a free port. Another process may take it
// before the target binds it; the health check then fails with the
// target's own complaint in its output.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitGroupGone waits until the kernel has removed every process of the
// group: SIGKILL is delivered asynchronously, and orphans are reaped by
// init, not by us. It gives up after a few seconds rather than hang a run,
// and says whether the group is gone.
func waitGroupGone(pgid int) bool {
	for i := 0; i < 300; i++ {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// commandLine renders argv so that a reader can paste it into a shell.
func commandLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// lineTail keeps the last n lines written to it. The process's output is
// copied in by os/exec's goroutine while the runner reads it.
type lineTail struct {
	mu      sync.Mutex
	n       int
	lines   []string
	partial []byte
}

func newLineTail(n int) *lineTail { return &lineTail{n: n} }

func (w *lineTail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rest := p
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		w.push(string(append(w.partial, rest[:i]...)))
		w.partial = w.partial[:0]
		rest = rest[i+1:]
	}
	w.partial = append(w.partial, rest...)
	// A process writing without newlines must not grow this without bound.
	if len(w.partial) > 4096 {
		w.push(string(w.partial))
		w.partial = w.partial[:0]
	}
	return len(p), nil
}

// push keeps l escaped (see sanitize): the lines are shown on terminals and
// stored in results.json.
func (w *lineTail) push(l string) {
	l = sanitize(strings.TrimRight(l, "\r"))
	if len(w.lines) == w.n {
		copy(w.lines, w.lines[1:])
		w.lines = w.lines[:w.n-1]
	}
	w.lines = append(w.lines, l)
}

// Lines returns the kept lines, an unterminated last line included.
func (w *lineTail) Lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.lines)
	if len(w.partial) > 0 {
		out = append(out, sanitize(string(w.partial)))
		if len(out) > w.n {
			out = out[1:]
		}
	}
	return out
}

// sanitize replaces what a terminal could act on, or what would reorder or
// hide text, with a visible escape, by textsafe's one rule: tabs pass (a
// tail of go test output keeps its columns), every other control is shown
// as \x1b, \r or \u009b, bidi and invisible characters as \u202e, and
// bytes that are not UTF-8 (a lone 0x9b is CSI to some terminals) as \x9b.
// Text that needs none is returned as is, without allocating.
func sanitize(s string) string {
	return textsafe.Escape(s, textsafe.Tab)
}
