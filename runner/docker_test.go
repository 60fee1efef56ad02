package runner

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"

	"github.com/benchgate/benchgate/internal/dockertest"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/docker"
	"github.com/benchgate/benchgate/target/targettest"
)

// TestDocker runs the sampler against a container of the real engine
// (target/docker tests the container target itself).
func TestDocker(t *testing.T) {
	t.Parallel()
	t.Run("WindowPeak", testDockerWindowPeak)
}

// testDockerWindowPeak is TestTargetWindowPeak for a container: the test
// server, built static into an image of its own (the demo has no way to
// make a memory spike), with a memory pin.
func testDockerWindowPeak(t *testing.T) {
	cli := dockertest.Client(t)
	ctx := context.Background()
	img := fmt.Sprintf("benchgate-test/testserver:peak-%d", os.Getpid())
	if err := dockertest.BuildScratchImage(cli, img, targettest.BuildStatic(t), []string{"/testserver", "-addr", "0.0.0.0:8080"}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), img, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
			t.Errorf("removing %s: %v", img, err)
		}
	})
	runID := fmt.Sprintf("test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
	env, err := docker.NewEnv(ctx, runID, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	spec := scenario.Target{Name: "candidate", Image: img, Port: 8080, Health: "/healthz", StartupTimeout: 30 * time.Second}
	d := docker.New(env, spec, target.Options{OutDir: t.TempDir(), Pins: &scenario.Pins{Memory: 256 << 20, MemoryText: "256MiB"}})
	defer d.Stop()
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if u, _ := d.Usage(); u.Source != "cgroup" {
		t.Skipf("the container's cgroup is not visible here (Usage reads %q): the engine's stats have no peak to reset", u.Source)
	}
	if d.ResetMemPeak() == nil {
		t.Skip("the kernel's peak of the container's cgroup cannot be reset here (cgroup v2 needs Linux 6.12)")
	}
	testWindowPeak(t, d)
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if d.ResetMemPeak() != nil {
		t.Error("ResetMemPeak after Stop: not nil")
	}
}
