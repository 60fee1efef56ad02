//go:build linux

package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// StackImages are the images of the compose-stack example: a Redis, and
// the API of examples/stack/api in its normal build and in its regressed
// build, whose /list fetches a category's items one GET each (an N+1)
// for the same answers. The API images listen on container port 8080 and
// look for Redis at db:6379; the Redis image listens on 6379.
type StackImages struct {
	Redis, API, APISlow string
}

// redisCmd runs Redis as a throwaway cache: no persistence, and reachable
// from the other containers of its network.
var redisCmd = []string{"/usr/bin/redis-server", "--save", "", "--appendonly", "no", "--protected-mode", "no", "--bind", "0.0.0.0"}

// BuildStackImages builds the three images, tagged under prefix with this
// process's id as BuildDemoImages tags its own (prefix/redis:test-<pid>,
// prefix/api:normal-<pid>, prefix/api:nplus1-<pid>), and removes them when
// the test ends. No image can be pulled, so the Redis image is this
// machine's redis-server and the shared libraries it loads, FROM scratch:
// without redis-server the test skips, or fails under CI=true, whose
// .ci/run installs it. repoRoot is the path of the benchgate module from
// the test's directory.
func BuildStackImages(t testing.TB, cli *client.Client, prefix, repoRoot string) StackImages {
	t.Helper()
	redisFiles := redisServerFiles(t)
	RemoveStaleImages(t, cli, prefix+"/redis")
	RemoveStaleImages(t, cli, prefix+"/api")
	pid := os.Getpid()
	imgs := StackImages{
		Redis:   fmt.Sprintf("%s/redis:test-%d", prefix, pid),
		API:     fmt.Sprintf("%s/api:normal-%d", prefix, pid),
		APISlow: fmt.Sprintf("%s/api:nplus1-%d", prefix, pid),
	}
	// Registered first, so that a build failing half way leaves nothing.
	t.Cleanup(func() {
		for _, ref := range []string{imgs.Redis, imgs.API, imgs.APISlow} {
			_, err := cli.ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true, PruneChildren: true})
			if err != nil && !cerrdefs.IsNotFound(err) {
				t.Errorf("removing %s: %v", ref, err)
			}
		}
	})

	cmd, _ := json.Marshal(redisCmd)
	// Redis runs as an unprivileged user that owns its working directory,
	// as Debian's package runs it.
	dockerfile := "FROM scratch\n" +
		"COPY root/ /\n" +
		"COPY --chown=999:999 data /data\n" +
		"WORKDIR /data\n" +
		"USER 999:999\n" +
		"EXPOSE 6379\n" +
		"CMD " + string(cmd) + "\n"
	files := append([]contextFile{
		{name: "Dockerfile", mode: 0o644, data: []byte(dockerfile)},
		{name: "root/etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nredis:x:999:999:redis:/data:/sbin/nologin\n")},
		{name: "root/etc/group", mode: 0o644, data: []byte("root:x:0:\nredis:x:999:\n")},
		{name: "data/", dir: true, mode: 0o755},
	}, redisFiles...)
	if err := buildContext(cli, imgs.Redis, files); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	for _, b := range []struct{ tag, ldflags string }{
		{imgs.API, ""},
		{imgs.APISlow, "-X main.defaultNPlusOne=true"},
	} {
		bin := StaticBinary(t, repoRoot, "./examples/stack/api", b.ldflags, filepath.Join(dir, "api"))
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		// No HEALTHCHECK: scratch has no shell or client to run one; a
		// compose file waits on the API's /healthz from outside.
		dockerfile := "FROM scratch\nCOPY api /api\nUSER 65534:65534\nEXPOSE 8080\nENTRYPOINT [\"/api\"]\n"
		if err := buildContext(cli, b.tag, []contextFile{
			{name: "Dockerfile", mode: 0o644, data: []byte(dockerfile)},
			{name: "api", mode: 0o755, data: data},
		}); err != nil {
			t.Fatal(err)
		}
	}
	return imgs
}

// redisServerFiles returns the context files of the Redis image: the
// redis-server on PATH as /usr/bin/redis-server (Debian's is a symlink to
// redis-check-rdb, which chooses its mode by the name it runs as, so the
// file goes in under the server's name), and every library ldd says it
// loads, the dynamic loader among them, under root/ at the absolute path
// ldd prints, each symlink resolved to its file.
func redisServerFiles(t testing.TB) []contextFile {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not on PATH, and CI=true: .ci/run installs redis-server, which the stack's Redis image is built from")
		}
		t.Skip("redis-server is not on PATH: the stack's Redis image is built from it (apt-get install redis-server)")
	}
	out, err := exec.Command("ldd", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("ldd %s: %v\n%s", bin, err, out)
	}
	paths, err := lddPaths(string(out))
	if err != nil {
		t.Fatalf("ldd %s: %v", bin, err)
	}
	files := []contextFile{}
	for _, f := range append([][2]string{{bin, "/usr/bin/redis-server"}}, paths...) {
		real, err := filepath.EvalSymlinks(f[0])
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(real)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(real)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, contextFile{name: "root" + f[1], mode: int64(st.Mode().Perm()), data: data})
	}
	return files
}

// lddPaths reads ldd's output into the files to copy: (path on this
// machine, path in the image), the same here. The vDSO has no file; a
// library ldd could not find is an error; a static binary needs none.
func lddPaths(out string) ([][2]string, error) {
	if strings.Contains(out, "not a dynamic executable") || strings.Contains(out, "statically linked") {
		return nil, nil
	}
	var paths [][2]string
	for _, line := range strings.Split(out, "\n") {
		// "libssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x...)"
		// "/lib64/ld-linux-x86-64.so.2 (0x...)"
		// "linux-vdso.so.1 (0x...)"
		// "libfoo.so.1 => not found"
		line = strings.TrimSpace(line)
		name, target, arrow := strings.Cut(line, "=>")
		if arrow {
			line = strings.TrimSpace(target)
		}
		if strings.HasPrefix(line, "not found") {
			return nil, fmt.Errorf("library %s not found", strings.TrimSpace(name))
		}
		if p, _, _ := strings.Cut(line, " "); strings.HasPrefix(p, "/") && !slices.Contains(paths, [2]string{p, p}) {
			paths = append(paths, [2]string{p, p})
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no libraries in its output:\n%s", out)
	}
	return paths, nil
}

// contextFile is one entry of a build context: a file, or a directory
// (a name ending in /).
type contextFile struct {
	name string
	mode int64
	dir  bool
	data []byte
}

// buildContext builds tag from a context of files, its Dockerfile among
// them, as BuildScratchImage builds its own.
func buildContext(cli *client.Client, tag string, files []contextFile) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}
		if f.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return imageBuild(cli, &buf, tag, nil)
}
