package target

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestChildEnvDropsSecrets: a build's, target's or pre-flight command's
// environment has none of environ's secrets, the action's inputs among
// them, and keeps the rest in order, extra last.
func TestChildEnvDropsSecrets(t *testing.T) {
	t.Parallel()
	in := []string{"PATH=/bin", "GITHUB_TOKEN=ghs_a", "INPUT_GITHUB-TOKEN=ghs_b", "ACTIONS_RUNTIME_TOKEN=c",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN=d", "GH_ENTERPRISE_TOKEN=e", "HOME=/root", "GITHUB_ACTIONS=true"}
	got := ChildEnv(in, []string{"PORT=8080"})
	want := []string{"PATH=/bin", "HOME=/root", "GITHUB_ACTIONS=true", "PORT=8080"}
	if !slices.Equal(got, want) {
		t.Errorf("ChildEnv = %q, want %q", got, want)
	}
}

// TestGitCommit: the commit a work tree has checked out, dirty when a
// tracked file differs from it; an untracked file (a run's own output
// directory) is not a change; outside any work tree an error.
func TestGitCommit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		if _, err := Git(ctx, dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644)
	git("add", "a.go")
	git("commit", "-q", "-m", "a")
	head, _ := Git(ctx, dir, "rev-parse", "HEAD")
	check := func(what string, wantDirty bool) {
		t.Helper()
		c, dirty, err := GitCommit(ctx, dir)
		if err != nil || c != head || dirty != wantDirty {
			t.Errorf("%s: %q %v %v, want %q %v", what, c, dirty, err, head, wantDirty)
		}
	}
	check("clean", false)
	os.MkdirAll(filepath.Join(dir, "benchgate-results"), 0o755)
	os.WriteFile(filepath.Join(dir, "benchgate-results", "results.json"), []byte("{}"), 0o644)
	check("untracked output", false)
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a // changed\n"), 0o644)
	check("edited", true)
	if _, _, err := GitCommit(ctx, t.TempDir()); err == nil {
		t.Error("no work tree: no error")
	}
}
