package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/benchgate/benchgate/internal/dockertest"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
)

// The demo images the docker tests run: FROM scratch around the static demo
// binary, the slow one built with search=5 and a revision label.
var demoNormal, demoSlow string

const demoRev = dockertest.SlowRevision

// TestDocker runs the docker target against the real engine. The subtests
// share the demo images, built once and removed when all of them are done.
func TestDocker(t *testing.T) {
	t.Parallel()
	cli := dockertest.Client(t)
	imgs := dockertest.BuildDemoImages(t, cli, "benchgate-test/demo", "../..")
	demoNormal, demoSlow = imgs.Normal, imgs.Slow
	t.Run("PinsUsageStop", func(t *testing.T) { testDockerPinsUsageStop(t, cli) })
	t.Run("MissingImage", func(t *testing.T) { testDockerMissingImage(t, cli) })
	t.Run("HealthFailure", func(t *testing.T) { testDockerHealthFailure(t, cli) })
	t.Run("ExitBeforeHealthy", func(t *testing.T) { testDockerExitBeforeHealthy(t, cli) })
	t.Run("DiedLater", func(t *testing.T) { testDockerDiedLater(t, cli) })
	t.Run("Sweep", func(t *testing.T) { testDockerSweep(t, cli) })
	t.Run("MemoryNotPageMultiple", func(t *testing.T) { testDockerMemoryNotPageMultiple(t, cli) })
	t.Run("ImageResolvedOnce", func(t *testing.T) { testDockerImageResolvedOnce(t, cli) })
}

// newTestEnv makes an env with a run ID of its own and checks, at the end
// of the test, that Close left nothing with that run's label.
func newTestEnv(t *testing.T, cli *client.Client) *Env {
	t.Helper()
	runID := fmt.Sprintf("test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
	env, err := NewEnv(context.Background(), runID, testLog{t})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if err := env.Close(context.Background()); err != nil {
			t.Errorf("second Close: %v", err)
		}
		assertRunGone(t, cli, runID)
	})
	return env
}

// testLog is a progress writer into the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// assertRunGone fails when a container or network of the run is left.
func assertRunGone(t *testing.T, cli *client.Client, runID string) {
	t.Helper()
	ctx := context.Background()
	f := filters.NewArgs(filters.Arg("label", labelRun+"="+runID))
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		t.Errorf("container %s %v of run %s is left", c.ID[:12], c.Names, runID)
	}
	ns, err := cli.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		t.Errorf("network %s of run %s is left", n.Name, runID)
	}
}

func demoSpec(name, img string) scenario.Target {
	return scenario.Target{Name: name, Image: img, Port: 8080, Health: "/healthz", StartupTimeout: 30 * time.Second}
}

func testDockerPinsUsageStop(t *testing.T, cli *client.Client) {
	ctx := context.Background()
	env := newTestEnv(t, cli)
	out := t.TempDir()
	pins := &scenario.Pins{CPUs: "0", Memory: 256 << 20, MemoryText: "256MiB"}
	// Both sides of a pin set, as the schedule starts them.
	base := New(env, demoSpec("baseline", demoNormal), target.Options{OutDir: out, Pins: pins})
	cand := New(env, demoSpec("candidate", demoSlow), target.Options{OutDir: out, Pins: pins})
	defer base.Stop()
	defer cand.Stop()
	for _, d := range []*Target{base, cand} {
		if err := d.Build(ctx); err != nil {
			t.Fatal(err)
		}
		if err := d.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if base.URL() == cand.URL() {
		t.Fatalf("both targets at %s", base.URL())
	}

	insp, err := cli.ContainerInspect(ctx, cand.id)
	if err != nil {
		t.Fatal(err)
	}
	hc := insp.HostConfig
	if hc.CpusetCpus != "0" || hc.Memory != 268435456 || hc.MemorySwap != 268435456 {
		t.Errorf("HostConfig: CpusetCpus %q Memory %d MemorySwap %d, want \"0\" 268435456 268435456", hc.CpusetCpus, hc.Memory, hc.MemorySwap)
	}
	if insp.Config.Labels[labelRun] != env.runID || insp.Config.Labels[labelTarget] != "candidate" || insp.Config.Labels[labelOwner] != env.owner {
		t.Errorf("labels %v", insp.Config.Labels)
	}
	applied, notApplied := cand.Pins()
	want := []string{"cpuset 0 (docker)", "memory 256MiB, no swap (docker)"}
	if !slices.Equal(applied, want) || len(notApplied) != 0 {
		t.Errorf("Pins() = %q, %q; want %q, none", applied, notApplied, want)
	}

	get := func(u string) {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s", u, resp.Status)
		}
	}
	get(cand.URL() + "/healthz")

	// On the engine's host the container's cgroup is read directly; in a
	// container that cannot see it, through the engine.
	wantSource := "docker"
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/cgroup", insp.State.Pid)); err == nil {
		wantSource = "cgroup"
		if cand.cg == nil {
			t.Errorf("the container's process %d is visible, but not its cgroup", insp.State.Pid)
		}
	}
	var readings []target.Usage
	measure := func() {
		t.Helper()
		start := time.Now()
		u, ok := cand.Usage()
		t.Logf("Usage %+v in %v", u, time.Since(start).Round(time.Microsecond))
		if !ok {
			t.Fatal("Usage: not ok")
		}
		readings = append(readings, u)
	}
	measure()
	for range 3 {
		for range 10 {
			get(cand.URL() + "/search?q=benchgate")
		}
		measure()
	}
	for i, u := range readings {
		if u.Source != wantSource || u.CPUSeconds <= 0 || u.Mem <= 0 {
			t.Errorf("reading %d: %+v: want source %s, CPU and memory > 0", i, u, wantSource)
		}
		if i > 0 && u.CPUSeconds < readings[i-1].CPUSeconds {
			t.Errorf("CPU went back: %v after %v", u.CPUSeconds, readings[i-1].CPUSeconds)
		}
	}

	// The engine's own figures, which the stream fallback returns when the
	// cgroup is not visible. Their latency is logged, not asserted.
	for range 3 {
		start := time.Now()
		s, err := cand.stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mem, cache := memNoCache(s.MemoryStats)
		t.Logf("one-shot stats: CPU %v s, mem %d (cache %d), in %v", float64(s.CPUStats.CPUUsage.TotalUsage)/1e9, mem, cache, time.Since(start).Round(time.Millisecond))
	}
	streamCtx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	cand.cg = nil
	go cand.stream(streamCtx)
	var u target.Usage
	ok := false
	for end := time.Now().Add(30 * time.Second); !ok && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		u, ok = cand.Usage()
	}
	if !ok || u.Source != "docker" || u.CPUSeconds < readings[len(readings)-1].CPUSeconds || u.Mem <= 0 || u.At.IsZero() {
		t.Errorf("streamed Usage = %+v, %v; want source docker, CPU >= %v, memory > 0, the reading's time", u, ok, readings[len(readings)-1].CPUSeconds)
	}
	stopStream()

	getenv := func(k string) string {
		if k == "BENCHGATE_BASELINE_COMMIT" {
			return "fromenv"
		}
		return ""
	}
	if bi := base.Info(ctx, getenv); bi.Kind != "image" || bi.Spec != demoNormal || bi.Commit != "fromenv" || bi.URL != base.URL() {
		t.Errorf("baseline Info = %+v", bi)
	}
	if ci := cand.Info(ctx, getenv); ci.Spec != demoSlow || ci.Commit != demoRev {
		t.Errorf("candidate Info = %+v: want the image's revision label as commit", ci)
	}

	if err := cand.Died(); err != nil {
		t.Errorf("Died before Stop: %v", err)
	}
	for _, d := range []*Target{base, cand} {
		if err := d.Stop(); err != nil {
			t.Error(err)
		}
		if err := d.Stop(); err != nil {
			t.Errorf("second Stop: %v", err)
		}
		if err := d.Died(); err != nil {
			t.Errorf("Died after Stop: %v", err)
		}
		if _, ok := d.Usage(); ok {
			t.Error("Usage ok after Stop")
		}
	}
	// The targets' containers are gone already; the network goes at Close.
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", labelRun+"="+env.runID))})
	if err != nil || len(cs) != 0 {
		t.Errorf("after Stop: %d containers of the run (%v)", len(cs), err)
	}
	log, err := os.ReadFile(filepath.Join(out, "candidate.log"))
	if err != nil {
		t.Fatal(err)
	}
	// The slow build's default shows the right image ran.
	if !bytes.Contains(log, []byte(`demo: listening on 0.0.0.0:8080 (slow: "search=5")`)) {
		t.Errorf("candidate.log:\n%s", log)
	}
}

func testDockerMissingImage(t *testing.T, cli *client.Client) {
	env := newTestEnv(t, cli)
	d := New(env, demoSpec("candidate", "benchgate-test/absent:nope"), target.Options{OutDir: t.TempDir()})
	err := d.Build(context.Background())
	var te *target.TargetError
	if !errors.As(err, &te) || te.Phase != target.PhaseBuild || !strings.Contains(err.Error(), "not found locally: build it first (docker build -t benchgate-test/absent:nope .)") {
		t.Fatalf("Build = %v; want a build-phase TargetError saying to build the image", err)
	}
	if err := d.Stop(); err != nil {
		t.Errorf("Stop of a target that never started: %v", err)
	}
}

func testDockerHealthFailure(t *testing.T, cli *client.Client) {
	env := newTestEnv(t, cli)
	spec := demoSpec("candidate", demoNormal)
	spec.Health = "/nope"
	spec.StartupTimeout = time.Second
	d := New(env, spec, target.Options{OutDir: t.TempDir()})
	defer d.Stop()
	err := d.Start(context.Background())
	var te *target.TargetError
	if !errors.As(err, &te) || te.Phase != target.PhaseHealth {
		t.Fatalf("Start = %v; want a health-phase TargetError", err)
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "404 Not Found") || !slices.ContainsFunc(te.Output, func(l string) bool { return strings.Contains(l, "demo: listening on") }) {
		t.Errorf("error lacks the status or the container's output:\n%v", err)
	}
	// Start cleaned up after itself; Close finds nothing but the network.
	cs, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", labelRun+"="+env.runID))})
	if err != nil || len(cs) != 0 {
		t.Errorf("after a failed Start: %d containers of the run (%v)", len(cs), err)
	}
}

func testDockerExitBeforeHealthy(t *testing.T, cli *client.Client) {
	env := newTestEnv(t, cli)
	spec := demoSpec("candidate", demoNormal)
	spec.Command = []string{"-slow", "bad"} // appended to the entrypoint: demo exits 2
	d := New(env, spec, target.Options{OutDir: t.TempDir()})
	defer d.Stop()
	err := d.Start(context.Background())
	var te *target.TargetError
	if !errors.As(err, &te) || te.Phase != target.PhaseStart {
		t.Fatalf("Start = %v; want a start-phase TargetError", err)
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "exited with code 2") || !slices.ContainsFunc(te.Output, func(l string) bool { return strings.Contains(l, `demo: -slow "bad"`) }) {
		t.Errorf("error lacks the exit code or the demo's complaint:\n%v", err)
	}
}

// testDockerDiedLater kills a healthy container behind the target's back:
// Done fires and Died says how.
func testDockerDiedLater(t *testing.T, cli *client.Client) {
	ctx := context.Background()
	env := newTestEnv(t, cli)
	d := New(env, demoSpec("baseline", demoNormal), target.Options{OutDir: t.TempDir()})
	defer d.Stop()
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done():
		t.Fatal("Done before the container ended")
	default:
	}
	if err := cli.ContainerKill(ctx, d.id, "KILL"); err != nil {
		t.Fatal(err)
	}
	<-d.Done()
	err := d.Died()
	var te *target.TargetError
	if !errors.As(err, &te) || te.Phase != target.PhaseDied || !strings.Contains(err.Error(), "exited with code 137") || len(te.Output) == 0 {
		t.Fatalf("Died = %v; want a died-phase TargetError with code 137 and output", err)
	}
	t.Log(err)
}

// testDockerSweep leaves objects as a crashed run, a live run on this
// host, a live run in another PID namespace (same host name, and its pid
// is ESRCH here), a young run of another host and others would: only
// those whose owner is verifiably dead go, and the sweep says so.
func testDockerSweep(t *testing.T, cli *client.Client) {
	ctx := context.Background()
	host, _ := os.Hostname()
	me, err := target.ThisProcess()
	if err != nil {
		t.Skipf("no owner record here: %v", err)
	}
	// A pid that surely ended: a child we waited for.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	deadPid := gone.Process.Pid
	tag := fmt.Sprintf("sweep-%d", os.Getpid())
	// Owners in containers: one that was created but never ran (as a
	// stopped one), and one that no longer exists.
	stopped, err := cli.ContainerCreate(ctx, &container.Config{Image: demoNormal}, nil, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cli.ContainerRemove(context.Background(), stopped.ID, container.RemoveOptions{Force: true}); err != nil {
			t.Error(err)
		}
	})
	goneID := strings.Repeat("0123456789abcdef", 4)
	rec := func(edit func(o *target.Owner)) string {
		o := me
		edit(&o)
		return o.String()
	}
	runs := []struct {
		run, owner, prefix string
		swept              bool
	}{
		{tag + "-crashed", rec(func(o *target.Owner) { o.PID = deadPid }), "benchgate-", true},
		// Our pid, another start time: a crashed run whose pid was
		// reused.
		{tag + "-recycled", rec(func(o *target.Owner) { o.Start++ }), "benchgate-", true},
		{tag + "-live", me.String(), "benchgate-", false},
		// A run in another PID namespace (a container of this host, under
		// its host name): its pid is nobody here, which proves nothing.
		{tag + "-other-pidns", rec(func(o *target.Owner) { o.PID, o.PIDNS = deadPid, o.PIDNS+1 }), "benchgate-", false},
		{tag + "-other-boot", rec(func(o *target.Owner) { o.PID, o.Boot = deadPid, "00000000-0000-0000-0000-000000000000" }), "benchgate-", false},
		// The older label, host:pid, cannot be checked: only age sweeps it.
		{tag + "-old-label", fmt.Sprintf("%s:%d", host, deadPid), "benchgate-", false},
		{tag + "-elsewhere", "some-other-host:1", "benchgate-", false},
		{tag + "-stopped-owner", "a-container:1@" + stopped.ID, "benchgate-", true},
		{tag + "-gone-owner", "a-container:1@" + goneID, "benchgate-", true},
		// Labelled as a crashed run's, as an image's labels would make
		// its containers, but not named as benchgate names its objects.
		{tag + "-not-ours", fmt.Sprintf("%s:%d", host, deadPid), "other-", false},
	}
	for _, r := range runs {
		labels := map[string]string{labelRun: r.run, labelOwner: r.owner}
		if _, err := cli.NetworkCreate(ctx, r.prefix+r.run, network.CreateOptions{Driver: "bridge", Labels: labels}); err != nil {
			t.Fatal(err)
		}
		_, err := cli.ContainerCreate(ctx, &container.Config{Image: demoNormal, Labels: labels},
			&container.HostConfig{NetworkMode: container.NetworkMode(r.prefix + r.run)}, nil, nil, r.prefix+r.run+"-x-1")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// What the sweep rightly kept goes here, through a client
			// of its own: Close closes the env's.
			own, err := dockertest.Connect()
			if err != nil {
				t.Fatal(err)
			}
			e := &Env{cli: own, runID: r.run}
			if err := e.Close(ctx); err != nil {
				t.Error(err)
			}
			assertRunGone(t, cli, r.run)
		})
	}
	var said strings.Builder
	runID := fmt.Sprintf("test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
	env, err := NewEnv(ctx, runID, io.MultiWriter(&said, testLog{t})) // sweeps
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Close(context.Background()); err != nil {
			t.Error(err)
		}
		assertRunGone(t, cli, runID)
	})
	if env.owner != me.String() {
		t.Errorf("owner label %q, want %q", env.owner, me.String())
	}
	for _, r := range runs {
		line := "swept a leftover of run " + r.run + ": container " + r.prefix + r.run + "-x-1 ("
		switch told := strings.Contains(said.String(), line); {
		case told && !r.swept:
			t.Errorf("run %s (owner %s) swept: %q", r.run, r.owner, said.String())
		case !told && r.swept:
			// The objects' absence is checked below; a concurrent
			// benchgate (another test binary) may have swept them first.
			t.Logf("run %s (owner %s): no line %q in the progress", r.run, r.owner, line)
		}
	}
	for _, r := range runs {
		f := filters.NewArgs(filters.Arg("label", labelRun+"="+r.run))
		cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
		if err != nil {
			t.Fatal(err)
		}
		ns, err := cli.NetworkList(ctx, network.ListOptions{Filters: f})
		if err != nil {
			t.Fatal(err)
		}
		if left := len(cs) + len(ns); r.swept && left != 0 || !r.swept && left != 2 {
			t.Errorf("run %s (owner %s): %d containers and %d networks left, want swept=%v", r.run, r.owner, len(cs), len(ns), r.swept)
		}
	}
}

// testDockerMemoryNotPageMultiple pins memory to 1G, 10^9 bytes, which the
// kernel rounds down to a page: the pin still holds.
func testDockerMemoryNotPageMultiple(t *testing.T, cli *client.Client) {
	env := newTestEnv(t, cli)
	pins := &scenario.Pins{Memory: 1_000_000_000, MemoryText: "1G"}
	d := New(env, demoSpec("baseline", demoNormal), target.Options{OutDir: t.TempDir(), Pins: pins})
	defer d.Stop()
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	applied, notApplied := d.Pins()
	if want := []string{"memory 1G, no swap (docker)"}; !slices.Equal(applied, want) || len(notApplied) != 0 {
		t.Errorf("Pins() = %q, %q; want %q, none", applied, notApplied, want)
	}
	if d.cg != nil {
		limit, err := target.CgroupMemLimit(*d.cg)
		t.Logf("the cgroup's limit: %d (%v)", limit, err)
	}
}

// testDockerImageResolvedOnce moves a tag between two pin sets' Builds:
// the later target still runs the image the first Build found.
func testDockerImageResolvedOnce(t *testing.T, cli *client.Client) {
	ctx := context.Background()
	tag := fmt.Sprintf("benchgate-test/demo:moving-%d", os.Getpid())
	if err := cli.ImageTag(ctx, demoNormal, tag); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), tag, image.RemoveOptions{}); err != nil {
			t.Errorf("removing %s: %v", tag, err)
		}
	})
	normal, err := cli.ImageInspect(ctx, demoNormal)
	if err != nil {
		t.Fatal(err)
	}
	env := newTestEnv(t, cli)
	first := New(env, demoSpec("candidate", tag), target.Options{OutDir: t.TempDir()})
	if err := first.Build(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cli.ImageTag(ctx, demoSlow, tag); err != nil {
		t.Fatal(err)
	}
	later := New(env, demoSpec("candidate", tag), target.Options{OutDir: t.TempDir()})
	if err := later.Build(ctx); err != nil {
		t.Fatal(err)
	}
	if first.imageID != normal.ID || later.imageID != normal.ID {
		t.Errorf("image IDs %s then %s, want %s (the tag's image at the first Build)", first.imageID, later.imageID, normal.ID)
	}
	if ci := later.Info(ctx, func(string) string { return "" }); ci.Commit != "" {
		t.Errorf("Info commit %q: the slow image's revision, not the resolved image's", ci.Commit)
	}
}
