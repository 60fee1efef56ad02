// Package scripts_test runs the release's steps here, as far as they go
// without a registry: the release workflow's own scripts make the
// binaries and checksums, build the action image from them with nothing
// pulled, and stamp action.yml with the image's version.
//
// The scripts build a stand-in for the CLI (fakeModule): what they do with
// a binary does not depend on which one it is, and all of benchgate
// compiled afresh with -trimpath took most of ten minutes on a loaded
// machine. That the real CLI says the version linked into main.version is
// cmd/benchgate's TestVersionIsLinked.
package scripts_test

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// The workflow runs these scripts; TestReleaseWorkflowRunsTheScripts
// holds it to that, the other tests run them.
var releaseScripts = []string{"scripts/release.sh", "scripts/action-image.sh", "scripts/stamp-action.sh"}

type workflow struct {
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		Steps []struct {
			Name string            `yaml:"name"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func TestReleaseWorkflowRunsTheScripts(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(src, &w); err != nil {
		t.Fatal(err)
	}
	push, _ := w.On["push"].(map[string]any)
	if fmt.Sprint(push["tags"]) != "[v*]" {
		t.Errorf("release.yml runs on %v, want a push of a v* tag", w.On)
	}
	var runs strings.Builder
	var platforms string
	for _, job := range w.Jobs {
		for _, s := range job.Steps {
			runs.WriteString(s.Run + "\n")
			if s.Env["PLATFORMS"] != "" {
				platforms = s.Env["PLATFORMS"]
			}
		}
	}
	for _, s := range releaseScripts {
		if !strings.Contains(runs.String(), s) {
			t.Errorf("release.yml does not run %s", s)
		}
	}
	for _, target := range []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"} {
		if !strings.Contains(runs.String(), "scripts/release.sh \"$GITHUB_REF_NAME\" dist") || !strings.Contains(runs.String(), " "+target) {
			t.Errorf("release.yml's release.sh does not build %s", target)
		}
	}
	if platforms != "linux/amd64,linux/arm64" {
		t.Errorf("the image is built for %q, want linux/amd64,linux/arm64", platforms)
	}
}

// fakeMain is the stand-in's cmd/benchgate: like the real one, it says
// the version release.sh links into main.version. It needs the runtime
// only, which compiles in seconds.
const fakeMain = `package main

var version = "dev"

func main() { println("benchgate", version) }
`

// fakeModule is a copy of the repository as far as the release's scripts
// read it — the scripts themselves and the Dockerfile, as they are here —
// around a module whose cmd/benchgate is fakeMain. It returns the copy's
// root; its scripts/ run as this repository's do.
func fakeModule(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                "module example.com/fake\n\ngo 1.21\n",
		"cmd/benchgate/main.go": fakeMain,
	}
	for _, f := range []string{"Dockerfile", "scripts/release.sh", "scripts/action-image.sh"} {
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = string(b)
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// moduleEnv is the environment the scripts build the stand-in in: its own
// module, with this toolchain, whatever GOFLAGS the tests run under (go
// test -p=1 would make the build serial).
func moduleEnv(extra ...string) []string {
	return append(append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local"), extra...)
}

// release runs mod's release.sh for this machine's linux target and
// returns the directory it made.
func release(t *testing.T, mod, version string) string {
	t.Helper()
	dist := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(mod, "scripts/release.sh"), version, dist, "linux/"+runtime.GOARCH)
	cmd.Env = moduleEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	return dist
}

// unpacked is the benchgate binary in a release archive.
func unpacked(t *testing.T, archive string) []byte {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: no benchgate: %v", archive, err)
		}
		if h.Name == "benchgate" {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

func docker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestReleaseImage: the image the release pushes, built here by the same
// script from the same archives, is FROM scratch (nothing pulled), holds
// exactly the released binary, and runs as the version release.sh linked
// into it.
func TestReleaseImage(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the release is built on linux")
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("no docker engine answers (%v: %s): the image cannot be built here", err, strings.TrimSpace(string(out)))
	}
	const version = "v9.9.9-rc.1"
	mod := fakeModule(t)
	dist := release(t, mod, version)
	archive := filepath.Join(dist, fmt.Sprintf("benchgate_%s_linux_%s.tar.gz", strings.TrimPrefix(version, "v"), runtime.GOARCH))
	sums, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%x  %s\n", sha256.Sum256(data), filepath.Base(archive)); string(sums) != want {
		t.Errorf("checksums.txt = %q, want %q", sums, want)
	}

	tag := "benchgate-release-test:" + version
	t.Cleanup(func() { exec.Command("docker", "image", "rm", "-f", tag).Run() })
	cmd := exec.Command("bash", filepath.Join(mod, "scripts/action-image.sh"), tag)
	cmd.Env = moduleEnv("DIST="+dist, "PLATFORMS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("action-image.sh: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != tag {
		t.Errorf("action-image.sh printed %q, want %q", got, tag)
	}
	if got := docker(t, "image", "inspect", "--format", "{{json .Config.Entrypoint}}|{{json .Config.Cmd}}|{{.Os}}/{{.Architecture}}", tag); got != "[\"/benchgate\"]|[\"gate\"]|linux/"+runtime.GOARCH {
		t.Errorf("image config = %s", got)
	}
	if got := docker(t, "run", "--rm", tag, "version"); got != "benchgate "+version {
		t.Errorf("the image's benchgate version = %q, want %q", got, "benchgate "+version)
	}
	cid := docker(t, "create", tag)
	defer exec.Command("docker", "rm", "-f", cid).Run()
	copied := t.TempDir()
	docker(t, "cp", cid+":/benchgate", copied)
	docker(t, "cp", cid+":/etc/ssl/certs/ca-certificates.crt", copied)
	inImage, err := os.ReadFile(filepath.Join(copied, "benchgate"))
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(inImage) != sha256.Sum256(unpacked(t, archive)) {
		t.Error("the image's /benchgate is not the released binary")
	}
	ca, err := os.Stat(filepath.Join(copied, "ca-certificates.crt"))
	if err != nil || ca.Size() == 0 {
		t.Fatalf("the image has no CA bundle: %v", err)
	}
	// Nothing but those two files: no base image's layers under them.
	var size int64
	fmt.Sscan(docker(t, "image", "inspect", "--format", "{{.Size}}", tag), &size)
	if extra := size - int64(len(inImage)) - ca.Size(); extra < 0 || extra > 4096 {
		t.Errorf("the image is %d bytes: %d more than its binary and CA bundle", size, extra)
	}
}

func TestReleaseImageRefusesABadDist(t *testing.T) {
	t.Parallel()
	dist := t.TempDir()
	os.WriteFile(filepath.Join(dist, "checksums.txt"), []byte(fmt.Sprintf("%064d  benchgate_1.0.0_linux_amd64.tar.gz\n", 0)), 0o644)
	os.WriteFile(filepath.Join(dist, "benchgate_1.0.0_linux_amd64.tar.gz"), []byte("not the archive the checksum names"), 0o644)
	cmd := exec.Command("bash", "action-image.sh", "benchgate-release-test:refused")
	cmd.Env = append(os.Environ(), "DIST="+dist, "PLATFORMS=linux/amd64")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "benchgate_1.0.0_linux_amd64.tar.gz: SHA-256 is not the one checksums.txt lists") {
		t.Errorf("action-image.sh with a tampered archive: %v\n%s", err, out)
	}
	os.Remove(filepath.Join(dist, "benchgate_1.0.0_linux_amd64.tar.gz"))
	cmd = exec.Command("bash", "action-image.sh", "benchgate-release-test:refused")
	cmd.Env = append(os.Environ(), "DIST="+dist, "PLATFORMS=linux/amd64")
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "want one benchgate_*_linux_amd64.tar.gz, found 0") {
		t.Errorf("action-image.sh with no archive: %v\n%s", err, out)
	}
}

// TestStampAction: the release commit's action.yml differs from main's in
// its image line only, which names the pushed image; a second stamp and a
// malformed image are refused with the file left as it was.
func TestStampAction(t *testing.T) {
	t.Parallel()
	orig, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "action.yml")
	os.WriteFile(file, orig, 0o644)
	image := "ghcr.io/acme/benchgate:v1.2.3@sha256:" + strings.Repeat("ab", 32)
	stamp := func(image string) (string, error) {
		out, err := exec.Command("bash", "stamp-action.sh", image, file).CombinedOutput()
		return string(out), err
	}
	if out, err := stamp(image); err != nil {
		t.Fatalf("stamp-action.sh: %v\n%s", err, out)
	}
	stamped, _ := os.ReadFile(file)
	var a struct {
		Runs struct {
			Using string   `yaml:"using"`
			Image string   `yaml:"image"`
			Args  []string `yaml:"args"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(stamped, &a); err != nil {
		t.Fatalf("stamped action.yml: %v", err)
	}
	if a.Runs.Using != "docker" || a.Runs.Image != "docker://"+image {
		t.Errorf("stamped runs = %+v, want docker://%s", a.Runs, image)
	}
	if got, want := strings.Replace(string(stamped), "  image: docker://"+image+"\n", "  image: Dockerfile\n", 1), string(orig); got != want {
		t.Error("stamping changed more than the image line")
	}
	for _, bad := range []string{image, "ghcr.io/acme/benchgate:latest", "ghcr.io/acme/benchgate:v1.2.3\nrm -rf /", "ghcr.io/acme/benchgate:v1.2.3|x"} {
		out, err := stamp(bad)
		if err == nil {
			t.Errorf("stamp-action.sh %q: accepted", bad)
		}
		if now, _ := os.ReadFile(file); string(now) != string(stamped) {
			t.Errorf("stamp-action.sh %q changed the file: %s", bad, out)
		}
	}
}
