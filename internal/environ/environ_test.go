package environ

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/benchgate/benchgate/internal/dockertest"
)

func TestSecret(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"GITHUB_TOKEN":                   true,
		"GH_TOKEN":                       true,
		"ACTIONS_RUNTIME_TOKEN":          true,
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": true,
		"ACTIONS_ID_TOKEN_REQUEST_URL":   true,
		"INPUT_GITHUB-TOKEN":             true,
		"INPUT_SCENARIO":                 true,
		"INPUT_":                         true,
		"GITHUB_ACTIONS":                 false,
		"GITHUB_REPOSITORY":              false,
		"GITHUB_TOKEN_FILE":              false,
		"github_token":                   false,
		"API_KEY":                        false,
		"PATH":                           false,
		"":                               false,
	} {
		if got := Secret(name); got != want {
			t.Errorf("Secret(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestWithout(t *testing.T) {
	t.Parallel()
	in := []string{"PATH=/bin", "GITHUB_TOKEN=ghs_x", "INPUT_GITHUB-TOKEN=ghs_y", "A=1=2", "ACTIONS_RUNTIME_TOKEN=z", "NOVALUE", "GITHUB_TOKEN"}
	want := []string{"PATH=/bin", "A=1=2", "NOVALUE"}
	if got := Without(in); !slices.Equal(got, want) {
		t.Errorf("Without = %q, want %q", got, want)
	}
}

// The secrets of the process tree scrubcheck plays, each distinctive so
// that any trace of it in what the target read is found.
var treeSecrets = []string{
	"GITHUB_TOKEN=ghs_scrubcheckGitHubToken01",
	"INPUT_GITHUB-TOKEN=ghs_scrubcheckInputToken02",
	"ACTIONS_RUNTIME_TOKEN=scrubcheckRuntimeToken03",
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN=scrubcheckIDToken04",
}

// buildScrubcheck builds the static testdata program once per test.
func buildScrubcheck(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "scrubcheck")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/scrubcheck")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build scrubcheck: %v\n%s", err, out)
	}
	return bin
}

// checkTree checks scrubcheck's report: both scrubs worked, Go's copy of
// the token survived them, and no secret value (nor a secret's name, in
// the target's own environment) is anywhere the target could read. With
// mustRead, every ancestor's environ must have been readable, so that the
// scrub, not a refused read, is what kept the values out; otherwise a
// refusal is as good.
func checkTree(t *testing.T, out string, mustRead bool) {
	t.Helper()
	tokenLen := len(strings.SplitN(treeSecrets[0], "=", 2)[1])
	for _, want := range []string{
		"supervisor: scrub: ok\n",
		"child: scrub: ok\n",
		fmt.Sprintf("supervisor: getenv GITHUB_TOKEN: %d bytes\n", tokenLen),
		fmt.Sprintf("child: getenv GITHUB_TOKEN: %d bytes\n", tokenLen),
		"target: self: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in scrubcheck's output:\n%s", want, out)
		}
	}
	for _, kv := range treeSecrets {
		name, value, _ := strings.Cut(kv, "=")
		if strings.Contains(out, value) {
			t.Errorf("the target read %s's value:\n%s", name, out)
		}
	}
	ancestors := 0
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "target: self: ") && strings.Contains(line, `"GITHUB_TOKEN=`) {
			t.Errorf("the target's environment has GITHUB_TOKEN: %s", line)
		}
		rest, ok := strings.CutPrefix(line, "target: ancestor ")
		if !ok {
			continue
		}
		ancestors++
		if strings.Contains(rest, `"KEEP=kept"`) {
			continue // readable, and scrubbed of the secrets alone
		}
		if mustRead || !strings.Contains(rest, "permission denied") {
			t.Errorf("ancestor %s", rest)
		}
	}
	if ancestors < 2 {
		t.Errorf("the target saw %d ancestors, want the supervisor and its child at least:\n%s", ancestors, out)
	}
}

// TestScrubProcessTree runs the process tree here: a target cannot find
// the secrets in /proc/PID/environ of benchgate's processes.
func TestScrubProcessTree(t *testing.T) {
	t.Parallel()
	bin := buildScrubcheck(t)
	cmd := exec.Command(bin)
	cmd.Env = append(append(os.Environ(), "KEEP=kept"), treeSecrets...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scrubcheck: %v\n%s", err, out)
	}
	// Only the supervisor and its child hold KEEP: the ancestors above
	// them (this test, go test) are not benchgate's, and are left out.
	var mine []string
	for line := range strings.Lines(string(out)) {
		if !strings.HasPrefix(line, "target: ancestor ") || strings.Contains(line, `"KEEP=kept"`) || strings.Contains(line, "permission denied") {
			mine = append(mine, line)
		}
	}
	checkTree(t, strings.Join(mine, ""), false)
}

// TestScrubInScratchContainer runs the process tree as the action does:
// in a container FROM scratch, as root, under the engine's default
// capabilities (no CAP_SYS_PTRACE, so the non-dumpable processes' environ
// cannot be read at all) and with CAP_SYS_PTRACE (so it can, and only the
// scrub keeps the secrets out).
func TestScrubInScratchContainer(t *testing.T) {
	t.Parallel()
	cli := dockertest.Client(t)
	bin := buildScrubcheck(t)
	repo := "benchgate-test/scrubcheck"
	dockertest.RemoveStaleImages(t, cli, repo)
	tag := fmt.Sprintf("%s:tree-%d", repo, os.Getpid())
	if err := dockertest.BuildScratchImage(cli, tag, bin, []string{"/scrubcheck"}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true})
	})
	for _, tc := range []struct {
		name     string
		caps     []string
		mustRead bool
	}{{"default", nil, false}, {"sys_ptrace", []string{"SYS_PTRACE"}, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := cli.ContainerCreate(ctx,
				&container.Config{Image: tag, Env: append([]string{"KEEP=kept"}, treeSecrets...)},
				&container.HostConfig{CapAdd: tc.caps}, nil, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			defer cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
			if err := cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
				t.Fatal(err)
			}
			waitC, errC := cli.ContainerWait(ctx, c.ID, container.WaitConditionNotRunning)
			var code int64
			select {
			case w := <-waitC:
				code = w.StatusCode
			case err := <-errC:
				t.Fatal(err)
			}
			logs, err := cli.ContainerLogs(ctx, c.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
			if err != nil {
				t.Fatal(err)
			}
			defer logs.Close()
			var out bytes.Buffer
			stdcopy.StdCopy(&out, &out, logs)
			if code != 0 {
				t.Fatalf("scrubcheck exited %d:\n%s", code, out.String())
			}
			t.Logf("scrubcheck:\n%s", out.String())
			checkTree(t, out.String(), tc.mustRead)
		})
	}
}
