//go:build linux

// Package dockertest gives benchgate's tests what they need from the real
// Docker engine of the machine: a client (or a skip with the reason when no
// engine answers), and images built FROM scratch around a static binary of
// the bundled demo, since no image can be pulled here.
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
)

// RevisionLabel is the OCI label benchgate reads an image's commit from;
// SlowRevision is the value the slowed demo image carries.
const (
	RevisionLabel = "org.opencontainers.image.revision"
	SlowRevision  = "0123456789abcdef0123456789abcdef01234567"
)

// Client connects as benchgate does (DOCKER_HOST or the default socket), or
// skips the test with the reason when no engine answers. The client is
// closed when the test ends.
func Client(t testing.TB) *client.Client {
	t.Helper()
	cli, err := Connect()
	if err != nil {
		t.Skipf("docker: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// Connect returns a client of an engine that answered a ping.
func Connect() (*client.Client, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("no client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		cli.Close()
		return nil, fmt.Errorf("no engine answers at %s: %w", cli.DaemonHost(), err)
	}
	return cli, nil
}

// DemoImages are the two images of the bundled demo service: the normal
// build, and the build whose /search does 5× the work (with RevisionLabel
// set to SlowRevision). Both listen on container port 8080.
type DemoImages struct {
	Normal, Slow string
}

// BuildDemoImages builds both demo images under repo, tagged with this
// process's id so that test binaries running at once never remove each
// other's images, and removes them when the test ends. Images of earlier
// test processes that died before their cleanup are removed first.
// moduleRoot is the path of the benchgate module from the test's directory.
func BuildDemoImages(t testing.TB, cli *client.Client, repo, moduleRoot string) DemoImages {
	t.Helper()
	RemoveStaleImages(t, cli, repo)
	imgs := DemoImages{
		Normal: fmt.Sprintf("%s:normal-%d", repo, os.Getpid()),
		Slow:   fmt.Sprintf("%s:slow-%d", repo, os.Getpid()),
	}
	dir := t.TempDir()
	for _, b := range []struct {
		tag, ldflags string
		labels       map[string]string
	}{
		{imgs.Normal, "", nil},
		{imgs.Slow, "-X main.defaultSlow=search=5", map[string]string{RevisionLabel: SlowRevision}},
	} {
		bin := StaticBinary(t, moduleRoot, "./examples/demo", b.ldflags, filepath.Join(dir, "demo"))
		if err := BuildScratchImage(cli, b.tag, bin, []string{"/demo", "-addr", "0.0.0.0:8080"}, b.labels); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, ref := range []string{imgs.Normal, imgs.Slow} {
			if _, err := cli.ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
				t.Errorf("removing %s: %v", ref, err)
			}
		}
	})
	return imgs
}

// RemoveStaleImages removes the images of repo whose tag ends in the id of
// a process that no longer exists.
func RemoveStaleImages(t testing.TB, cli *client.Client, repo string) {
	t.Helper()
	ctx := context.Background()
	imgs, err := cli.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("reference", repo))})
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range imgs {
		for _, ref := range img.RepoTags {
			i := strings.LastIndexByte(ref, '-')
			if i < 0 {
				continue
			}
			pid, err := strconv.Atoi(ref[i+1:])
			if err != nil || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
				continue
			}
			if _, err := cli.ImageRemove(ctx, ref, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil && !cerrdefs.IsNotFound(err) {
				t.Logf("removing %s: %v", ref, err)
			}
		}
	}
}

// BuildScratchImage builds tag FROM scratch holding the file bin as
// /<its base name>, with the given entrypoint and labels.
func BuildScratchImage(cli *client.Client, tag, bin string, entrypoint []string, labels map[string]string) error {
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	name := filepath.Base(bin)
	ep, _ := json.Marshal(entrypoint)
	dockerfile := fmt.Sprintf("FROM scratch\nCOPY %s /%s\nENTRYPOINT %s\n", name, name, ep)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"Dockerfile", 0o644, []byte(dockerfile)}, {name, 0o755, data}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return imageBuild(cli, &buf, tag, labels)
}

// imageBuild builds with the classic builder (no BuildKit session needed)
// and reads the stream to the end: the build's failure arrives in it, not
// as the call's error.
func imageBuild(cli *client.Client, buildCtx io.Reader, tag string, labels map[string]string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	resp, err := cli.ImageBuild(ctx, buildCtx, build.ImageBuildOptions{
		Tags:        []string{tag},
		Labels:      labels,
		Remove:      true,
		ForceRemove: true,
		Version:     build.BuilderV1,
	})
	if err != nil {
		return fmt.Errorf("docker build %s: %w", tag, err)
	}
	defer resp.Body.Close()
	var out strings.Builder
	dec := json.NewDecoder(resp.Body)
	for {
		var m jsonmessage.JSONMessage
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("docker build %s: reading its output: %w", tag, err)
		}
		out.WriteString(m.Stream)
		if m.Error != nil {
			return fmt.Errorf("docker build %s: %s\n%s", tag, m.Error.Message, out.String())
		}
	}
}

// BuildGRPCDemoImages builds two images FROM scratch around the static
// gRPC demo (examples/grpcdemo): the normal build and one whose Search does
// 5× the work, serving on the container's port 50051. They are removed
// when the test ends.
func BuildGRPCDemoImages(t testing.TB, cli *client.Client, repo, moduleRoot string) DemoImages {
	t.Helper()
	RemoveStaleImages(t, cli, repo)
	imgs := DemoImages{
		Normal: fmt.Sprintf("%s:normal-%d", repo, os.Getpid()),
		Slow:   fmt.Sprintf("%s:slow-%d", repo, os.Getpid()),
	}
	dir := t.TempDir()
	for _, b := range []struct{ tag, ldflags string }{
		{imgs.Normal, ""},
		{imgs.Slow, "-X main.defaultSlow=Search=5"},
	} {
		bin := StaticBinary(t, moduleRoot, "./examples/grpcdemo", b.ldflags, filepath.Join(dir, "grpcdemo"))
		if err := BuildScratchImage(cli, b.tag, bin, []string{"/grpcdemo", "-addr", "0.0.0.0:50051"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, ref := range []string{imgs.Normal, imgs.Slow} {
			if _, err := cli.ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
				t.Errorf("removing %s: %v", ref, err)
			}
		}
	})
	return imgs
}

// StaticBinary builds the package pkg of the module at moduleRoot with
// ldflags into out, static (CGO_ENABLED=0), so that an image FROM scratch
// needs nothing but the binary, and returns out.
func StaticBinary(t testing.TB, moduleRoot, pkg, ldflags, out string) string {
	t.Helper()
	cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", out, pkg)
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s (ldflags %q): %v\n%s", pkg, ldflags, err, b)
	}
	return out
}
