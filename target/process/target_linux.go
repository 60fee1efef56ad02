// Package process runs the targets benchgate starts as processes (a
// scenario's command targets) and watches those it finds running (url
// targets): each command target in a process group of its own, started
// with its pin set's CPU affinity and inside a cgroup with its memory
// limit from its first instruction (see forkPinned), its output kept in a
// log and a tail, its resources read from that cgroup or from /proc, and
// everything it started killed when it stops. The same process groups
// and pins serve the other commands a run starts (builds, pre-flight
// commands, gobench's test binaries) through RunGrouped and ExecGroup.
package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
)

// errImage: image targets run as containers (target/docker); a *Target
// never runs one.
var errImage = errors.New("an image target runs through the docker engine, not as a process")

// Target is one side of the comparison while a run uses it. A command
// target owns a process group; everything else only has a URL.
type Target struct {
	spec   scenario.Target
	outDir string
	url    string
	probe  target.Probe // Options.Probe: the health check, nil for a GET

	log  *os.File
	tail *target.Tail // the service's output; nil before Start
	// redact hides the scenario's secrets in what the target's log, its
	// errors and Info hold; nil hides nothing. The output of the process
	// reaches the log and tail through out, which redacts it.
	redact target.Redactor
	out    *target.RedactWriter

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
	cg    *Cgroup
	usage usageState
}

// New prepares spec; nothing runs until Build and Start. A command
// target is started with the pins' CPU affinity and in a cgroup with
// their memory limit, where the machine allows; Pins says what took
// effect. Its log goes to opts.OutDir/<name>.log.
func New(spec scenario.Target, opts target.Options) *Target {
	return &Target{spec: spec, outDir: opts.OutDir, redact: opts.Redact, stopping: make(chan struct{}), grace: target.StopGrace, pins: opts.Pins, probe: opts.Probe}
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
		return &target.TargetError{Target: t.spec.Name, Phase: target.PhaseStart, Err: errImage}
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
		return &target.TargetError{Target: t.spec.Name, Phase: target.PhaseBuild, Err: err}
	}
	tail := target.NewTail(target.BuildTailLines)
	shown := target.RedactedLine(t.redact, t.spec.Build)
	fmt.Fprintf(t.log, "# build: %s\n", shown)
	fail := func(err error) error {
		return &target.TargetError{Target: t.spec.Name, Phase: target.PhaseBuild, Err: fmt.Errorf("%s: %w", shown, err), Output: tail.Lines()}
	}
	cmd := exec.CommandContext(ctx, t.spec.Build[0], t.spec.Build[1:]...)
	cmd.Dir = t.spec.Dir
	cmd.Env = target.ChildEnv(os.Environ(), nil)
	out := target.NewRedactWriter(t.redact, io.MultiWriter(tail, t.log))
	err := RunGrouped(cmd, out)
	out.Flush()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return fail(err)
	}
	return nil
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
		return &target.TargetError{Target: t.spec.Name, Phase: target.PhaseStart, Err: err}
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
	env := target.ChildEnv(os.Environ(), extra)

	t.tail = target.NewTail(target.ServiceTailLines)
	t.out = target.NewRedactWriter(t.redact, io.MultiWriter(t.tail, t.log))
	t.logHeader()
	fmt.Fprintf(t.log, "# command: %s\n", target.RedactedLine(t.redact, argv))
	newCmd := func() *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = t.spec.Dir
		cmd.Env = target.WithOwnerEnv(env)
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
	if r.Err != nil && cmd.SysProcAttr.UseCgroupFD {
		// Starting straight into a cgroup takes clone3, which kernels
		// before 5.7 lack and some container seccomp filters refuse: start
		// it as usual and move it in.
		cmd = newCmd()
		r = forkPinned(cmd, cpus, cg, false, exited)
	}
	if r.Err != nil {
		if cg != nil {
			cg.Remove()
		}
		t.pinsFailed(cpus != nil, cg != nil, "not started")
		return fail(r.Err)
	}
	t.cmd = cmd
	t.pgid = cmd.Process.Pid
	// Recorded for the sweep of a later run, should benchgate be killed
	// (see target.TrackGroup): Pdeathsig ends the leader only.
	t.untrack = target.TrackGroup(t.pgid)
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

// waitHealthy waits until the target is healthy (see
// target.WaitHealthy), its process exits, the startup timeout passes or
// ctx ends.
func (t *Target) waitHealthy(ctx context.Context) error {
	return target.WaitHealthy(ctx, t.spec, t.url, t.probe, t.exited, func() error {
		return &target.TargetError{Target: t.spec.Name, Phase: target.PhaseStart, Err: fmt.Errorf("exited before it was healthy: %v", ExitText(t.waitErr)), Output: t.output()}
	}, func(why error) error {
		// The check's error quotes the URL, which a url target may have
		// from ${VAR}.
		return &target.TargetError{Target: t.spec.Name, Phase: target.PhaseHealth, Err: target.RedactErr(t.redact, why), Output: t.output()}
	})
}

// Done is closed when a command target's process has exited for any
// reason. It is nil for targets without a process, a channel that never
// fires, so selects need no special case.
func (t *Target) Done() <-chan struct{} { return t.exited }

// Died returns a *target.TargetError when the target's process exited while it
// should have been serving, and nil otherwise.
func (t *Target) Died() error {
	return target.DiedError(t.spec.Name, t.exited, t.stopping, func() (error, []string) { return errors.New(ExitText(t.waitErr)), t.output() })
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
			if cgErr = t.cg.Remove(); cgErr != nil {
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
func (t *Target) Info(ctx context.Context, getenv func(string) string) benchdata.TargetInfo {
	// A url target's URL may hold a ${VAR}: it is shown as "reached at".
	ti := benchdata.TargetInfo{Name: t.spec.Name, Kind: t.Kind(), URL: target.RedactText(t.redact, t.url)}
	switch {
	case t.spec.Shown != "":
		// As written, before ${VAR} expansion: results and reports end up
		// in PR comments, and a secret may have been expanded into argv.
		ti.Spec = t.spec.Shown
	case ti.Kind == "command":
		ti.Spec = target.RedactedLine(t.redact, t.spec.Command)
	case ti.Kind == "url":
		ti.Spec = target.RedactText(t.redact, t.spec.URL)
	case ti.Kind == "image":
		ti.Spec = t.spec.Image
	}
	if c := getenv("BENCHGATE_" + strings.ToUpper(t.spec.Name) + "_COMMIT"); c != "" {
		ti.Commit = c
	} else if ti.Kind == "command" && t.spec.Dir != "" {
		if c, dirty, err := target.GitCommit(ctx, t.spec.Dir); err == nil {
			ti.Commit, ti.Dirty = c, dirty
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
